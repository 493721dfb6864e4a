// Internal: LocalEdit, a DocCore's uncommitted local edit. It takes one of
// three forms at a time (or none), and changes form only through the named
// transitions below, each of which checks its pre- and postconditions with
// WEFT_DCHECK:
//
//   kTyping  typed-on ASCII keys held back as bytes (the typing buffer): the
//            op log and the state do not hold them yet. begin_typing,
//            type_on_end, count_committed; end_typing when DocCore applies
//            them (flush_typing_now), which leaves kNone or kDirect.
//   kDirect  a keystroke written straight into this peer's last change,
//            beyond the change's len (the direct keystroke): begin_direct,
//            extend; end_direct when the commit publishes it, or
//            direct_to_txn when the general path needs it as a transaction.
//   kTxn     an open transaction: ops applied to the live state and held in
//            `ops`, not in the op log: begin_txn, extend, end_txn (the
//            commit folds them into the op log).
//
// What each form means for the op log and the state (the units it adds, the
// frontiers) is DocCore's: see core.h and DocCore::check, which verifies
// check() here ("one form at a time") and the versions.
//
// Thread safety: none (the Doc's rule applies).
#ifndef WEFT_SRC_CRDT_LOCAL_EDIT_H_
#define WEFT_SRC_CRDT_LOCAL_EDIT_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "crdt/dcheck.h"
#include "crdt/op.h"
#include "weft/crdt/ids.h"
#include "weft/crdt/value.h"
#include "weft/crdt/version.h"

namespace weft::crdt::detail {

class LocalEdit {
 public:
  enum class Form : uint8_t { kNone, kTyping, kDirect, kTxn };

  static constexpr uint32_t kTypingMax = 128;
  static_assert(kTypingMax >= 8, "the flush reads 8 bytes of the buffer at once");
  // kTyping: the keys held back.
  struct TypingBuffer {
    uint32_t n = 0;          // bytes held (0: empty, the fields below unused)
    uint32_t committed = 0;  // how many of them default commits covered
    uint32_t idx = 0;        // the Text container
    bool fresh = false;      // the bytes start a new op (else they extend the last one)
    size_t pos = 0;          // unicode position of bytes[0]
    char bytes[kTypingMax];
  };
  // kDirect: how to take the keystroke back out of the change (direct_to_txn).
  struct DirectTxn {
    bool pushed = false;  // its op was appended to the change (else it extended the last op)
    int32_t keep = 0;     // extended insert: code points the last op had before
    // Extended delete: the last op's len / start_id before, and the keystroke's delete.
    int32_t run_len = 0;
    ID run_start;
    int32_t pos = 0, len = 0;
    ID start;
  };

  Form form() const {
    if (typing_.n != 0) return Form::kTyping;
    if (direct_) return Form::kDirect;
    if (!ops_.empty()) return Form::kTxn;
    return Form::kNone;
  }
  // A direct keystroke or transaction ops: units in the state beyond the op
  // log's (kTyping adds none until applied).
  bool open() const { return direct_ || !ops_.empty(); }
  bool direct() const { return direct_; }
  bool typing() const { return typing_.n != 0; }
  // The counter of the open edit's first unit and how many it holds.
  Counter start() const { return start_; }
  Counter len() const { return len_; }
  Counter next() const { return start_ + len_; }
  const TypingBuffer& buffer() const { return typing_; }
  const DirectTxn& direct_txn() const { return direct_txn_; }
  // kTxn's ops (an OpList: the commit hands its array to the change), the
  // previous values of its map ops (aligned with ops; may end early) and the
  // frontiers it was opened on. DocCore appends to and merges into them
  // while the transaction is open.
  OpList& ops() { return ops_; }
  const OpList& ops() const { return ops_; }
  std::vector<std::optional<Value>>& map_prev() { return map_prev_; }
  Frontiers& deps() { return deps_; }
  const Frontiers& deps() const { return deps_; }

  // The rules every form keeps: nullptr when they hold, else the one broken.
  const char* check() const {
    if (direct_ && !ops_.empty()) return "a direct keystroke and transaction ops at once";
    if (typing_.n > kTypingMax || typing_.committed > typing_.n)
      return "typing buffer counts out of range";
    if (typing_.n != 0 && (direct_ || !ops_.empty()))
      return "typing buffer beside an open transaction or direct keystroke";
    if (!open() && len_ != 0) return "units counted for a closed transaction";
    return nullptr;
  }

  // ---- kTyping
  // kNone -> kTyping with key `ch` at unicode position `pos` of Text `idx`.
  void begin_typing(uint32_t idx, size_t pos, char ch, bool fresh) {
    WEFT_DCHECK(form() == Form::kNone);
    typing_.fresh = fresh;
    typing_.idx = idx;
    typing_.pos = pos;
    typing_.bytes[0] = ch;
    typing_.committed = 0;
    typing_.n = 1;
    WEFT_DCHECK(form() == Form::kTyping);
  }
  // kTyping: ASCII `ch` at the buffer's end, into the same Text (`idx` may be
  // a handle's UINT32_MAX, never the buffer's), with room left; false with
  // nothing changed otherwise (also when not kTyping).
  [[gnu::always_inline]] bool type_on_end(uint32_t idx, size_t pos, char ch) {
    TypingBuffer& t = typing_;
    if (t.n == 0 || pos != t.pos + t.n || idx != t.idx || t.n >= kTypingMax ||
        static_cast<unsigned char>(ch) >= 0x80) {
      return false;
    }
    t.bytes[t.n++] = ch;
    return true;
  }
  // kTyping: a default commit covers every key held.
  void count_committed() {
    WEFT_DCHECK(form() == Form::kTyping);
    typing_.committed = typing_.n;
  }
  // kTyping -> kNone: DocCore applies the keys; the returned buffer stays
  // readable (its bytes) until the next begin_typing.
  const TypingBuffer& end_typing() {
    WEFT_DCHECK(form() == Form::kTyping);
    typing_.n = 0;
    typing_.committed = 0;
    WEFT_DCHECK(form() == Form::kNone);
    return typing_;
  }

  // ---- kDirect
  // kNone -> kDirect: `n` units from counter `start` written into this
  // peer's last change, as `how` tells.
  void begin_direct(Counter start, Counter n, const DirectTxn& how) {
    WEFT_DCHECK(form() == Form::kNone && n > 0);
    direct_txn_ = how;
    direct_ = true;
    start_ = start;
    len_ = n;
  }
  // The lane's kNone -> kDirect for an insert that extended the change's last
  // op, which held `keep` code points before (begin_direct, inline).
  [[gnu::always_inline]] void begin_direct_extend(Counter start, int32_t keep) {
    WEFT_DCHECK(form() == Form::kNone);
    direct_txn_.pushed = false;
    direct_txn_.keep = keep;
    direct_ = true;
    start_ = start;
    len_ = 1;
  }
  // kDirect or an open transaction: `n` more units.
  [[gnu::always_inline]] void extend(Counter n) {
    WEFT_DCHECK(open() || len_ == 0);
    len_ += n;
  }
  // kDirect -> kNone: the commit publishes the keystroke; returns its units.
  Counter end_direct() {
    WEFT_DCHECK(form() == Form::kDirect);
    direct_ = false;
    return take_len();
  }
  // kDirect -> kTxn: the general path holds the keystroke as a transaction
  // opened on `dep` (this peer's unit before it); DocCore moves the op into
  // ops() right after (see DocCore::settle_direct).
  OpList& direct_to_txn(const ID& dep) {
    WEFT_DCHECK(form() == Form::kDirect && ops_.empty());
    direct_ = false;
    deps_.assign(dep);
    return ops_;
  }

  // ---- kTxn
  // kNone -> an open, still empty transaction from counter `start` (the
  // first op makes it kTxn); DocCore sets deps() to the state frontiers.
  void begin_txn(Counter start) {
    WEFT_DCHECK(form() == Form::kNone);
    start_ = start;
    len_ = 0;
  }
  // Committing: the units counted so far, zeroed (DocCore adds them to the
  // op log's change).
  Counter take_len() {
    const Counter n = len_;
    len_ = 0;
    return n;
  }
  // kTxn -> kNone once the commit moved the ops into the op log.
  void end_txn() {
    WEFT_DCHECK(!direct_ && typing_.n == 0);
    ops_.clear();
    map_prev_.clear();
    len_ = 0;
    WEFT_DCHECK(form() == Form::kNone);
  }

 private:
  TypingBuffer typing_;
  bool direct_ = false;
  DirectTxn direct_txn_;
  OpList ops_;
  std::vector<std::optional<Value>> map_prev_;
  Counter start_ = 0;
  Counter len_ = 0;
  Frontiers deps_;
};

}  // namespace weft::crdt::detail

#endif  // WEFT_SRC_CRDT_LOCAL_EDIT_H_
