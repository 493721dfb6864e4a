// SeqState: a Text / List state's modes and their transitions (see
// seq_state.h).
#include "crdt/seq_state.h"

namespace weft::crdt::detail {

SeqState::Mode SeqState::mode() const {
  switch (rep_.index()) {
    case kPlainIndex:
      return std::get<Plain>(rep_).seq->ids_known() ? Mode::kPlain : Mode::kPlainNoIds;
    case kTrackerIndex:
      return std::get<Tracker>(rep_).temporary ? Mode::kTempTracker : Mode::kTracker;
    default:
      return Mode::kPartial;
  }
}

void SeqState::begin_partial(std::unique_ptr<Seq> tracker, PartialTracker info) {
  WEFT_DCHECK(is_plain() && tracker && !info.plain);
  WEFT_DCHECK(info.plain_vv.includes_all(info.base));
  info.plain = std::move(std::get<Plain>(rep_).seq);
  rep_ = Partial{std::move(tracker), std::move(info)};
  sync();
  WEFT_DCHECK(mode() == Mode::kPartial && partial()->plain);
}

void SeqState::materialize(SeqState&& whole, bool temporary) {
  WEFT_DCHECK(is_plain() || is_partial());
  WEFT_DCHECK(whole.mode() == Mode::kTracker);
  rep_ = Tracker{std::move(std::get<Tracker>(whole.rep_).seq), temporary};
  values_ = std::move(whole.values_);
  sync();
  WEFT_DCHECK(mode() == (temporary ? Mode::kTempTracker : Mode::kTracker));
}

void SeqState::fold(std::unique_ptr<PlainSeq> plain) {
  WEFT_DCHECK(mode() == Mode::kTempTracker && plain);
  rep_ = Plain{std::move(plain)};
  sync();
  WEFT_DCHECK(is_plain());
}

void SeqState::fold_partial() {
  WEFT_DCHECK(is_partial() && std::get<Partial>(rep_).info.plain);
  std::unique_ptr<PlainSeq> plain = std::move(std::get<Partial>(rep_).info.plain);
  rep_ = Plain{std::move(plain)};
  sync();
  WEFT_DCHECK(is_plain());
}

void SeqState::keep_tracker() {
  WEFT_DCHECK(mode() == Mode::kTempTracker);
  std::get<Tracker>(rep_).temporary = false;
}

void SeqState::recover_ids(SeqState&& with_ids) {
  WEFT_DCHECK(mode() == Mode::kPlainNoIds);
  WEFT_DCHECK(with_ids.mode() == Mode::kPlain || with_ids.mode() == Mode::kTracker);
  rep_ = std::move(with_ids.rep_);
  values_ = std::move(with_ids.values_);
  sync();
  with_ids.plain_ = nullptr;
  WEFT_DCHECK(mode() == Mode::kPlain || mode() == Mode::kTracker);
}

void SeqState::set_plain(std::unique_ptr<PlainSeq> plain, std::vector<Value> values) {
  WEFT_DCHECK(!is_partial() && plain);
  rep_ = Plain{std::move(plain)};
  values_ = std::move(values);
  sync();
  WEFT_DCHECK(is_plain());
}

size_t SeqState::utf16_len() const {
  if (PlainSeq* p = plain()) return p->utf16_len();
  return tracker()->utf16_len();
}

size_t SeqState::utf8_len() const {
  if (PlainSeq* p = plain()) return p->utf8_len();
  return tracker()->utf8_len();
}

std::string SeqState::text() const {
  if (PlainSeq* p = plain()) return p->to_utf8();
  return tracker()->to_utf8();
}

std::vector<uint32_t> SeqState::contents() const {
  if (PlainSeq* p = plain()) return p->visible_contents();
  return tracker()->visible_contents();
}

Result<Seq::Boundary> SeqState::locate(size_t n, int kind) const {
  if (PlainSeq* p = plain()) return p->locate(n, kind);
  return tracker()->locate(n, kind);
}

void SeqState::unit_runs(size_t from, size_t to, std::vector<Seq::Run>& runs) const {
  if (PlainSeq* p = plain()) return p->unit_runs(from, to, runs);
  runs = tracker()->unit_runs(from, to);
}

std::string SeqState::check(bool deep) const {
  if (const auto* p = std::get_if<Plain>(&rep_)) {
    if (!p->seq) return "no plain state";
    if (plain_ != p->seq.get()) return "the plain state's cached pointer is stale";
    std::string why = deep ? p->seq->check_structure() : "";
    return why.empty() ? why : "plain state: " + why;
  }
  const Seq* seq = tracker();
  if (!seq) return "no tracker";
  if (plain_) return "a plain state's cached pointer on a tracker";
  if (const PartialTracker* info = partial()) {
    if (!info->plain) return "a partial tracker without its plain state";
    if (!info->plain_vv.includes_all(info->base))
      return "partial tracker's base is not below its plain state";
    if (deep) {
      std::string why = info->plain->check_structure();
      if (!why.empty()) return "partial tracker's plain state: " + why;
    }
  }
  if (!deep) return "";
  Status st = seq->check_prepare(seq->prepare_is_all() ? nullptr : &seq->prepare_vv());
  if (!st.ok()) return "tracker: " + std::string(st.message());
  return "";
}

}  // namespace weft::crdt::detail
