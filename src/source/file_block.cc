// FileBlock: creation, loading, changes and history (reconcile is in
// reconcile.cc, version strings in file_version.cc).
#include "weft/source/file_block.h"

#include <algorithm>
#include <chrono>
#include <random>
#include <utility>

#include "weft/base/diff.h"
#include "weft/base/utf.h"
#include "weft/text/unified_diff.h"

namespace weft::source {
namespace {

// Peer ids with this bit set are disk-side writers (see fork_writer).
constexpr uint64_t kDiskPeerBit = uint64_t{1} << 63;
// Every commit stays its own change (one history entry per tool call): a
// negative interval makes Loro's commit-merge rule never apply.
constexpr int64_t kNeverMerge = -1;

crdt::PeerId random_peer(bool disk_side) {
  thread_local std::mt19937_64 gen([] {
    std::random_device rd;
    return (uint64_t{rd()} << 32) ^ rd();
  }());
  uint64_t p = gen();
  if (!disk_side) return p & ~kDiskPeerBit;
  p |= kDiskPeerBit;
  return p == crdt::kReservedPeer ? p - 1 : p;
}

crdt::Doc new_doc(bool disk_side) {
  crdt::Doc doc(random_peer(disk_side));
  doc.set_change_merge_interval(kNeverMerge);
  return doc;
}

// The commit message "<origin>\n<what>" must parse back.
Status check_attribution(const Attribution& who) {
  if (who.origin.find('\n') != std::string::npos) {
    return invalid_argument("a change's origin cannot hold a line break: \"" +
                            who.origin.substr(0, 80) + "\"");
  }
  if (!is_valid_utf8(who.origin) || !is_valid_utf8(who.what)) {
    return invalid_argument("a change's origin and description must be valid UTF-8");
  }
  return Status();
}

crdt::CommitOptions commit_options(const Attribution& who) {
  crdt::CommitOptions options;
  options.message = who.origin + "\n" + who.what;
  options.timestamp = who.timestamp ? *who.timestamp
                                    : std::chrono::duration_cast<std::chrono::seconds>(
                                          std::chrono::system_clock::now().time_since_epoch())
                                          .count();
  options.origin = who.origin;
  return options;
}

// A changed line longer than this is diffed by character (see write_text).
constexpr size_t kCharDiffAbove = 4096;

bool one_line(std::string_view text) {
  size_t nl = text.find('\n');
  return nl == std::string_view::npos || nl + 1 == text.size();
}

// Makes the content `new_text` (valid UTF-8) by replacing whole changed
// lines: merged with a concurrent change, a line one side changed and the
// other deleted or changed too comes out whole (both versions kept), where
// a character diff would interleave the two or join the line to the next.
// A single very long line (minified code, data) is diffed by character so a
// small edit stays small.
Status write_text(crdt::Doc& doc, std::string_view new_text) {
  crdt::TextRef t = doc.get_text(kContentContainer);
  const std::string old = t.to_string();
  TextDiffOptions whole_lines;
  whole_lines.max_refine_bytes = 0;
  std::vector<TextReplacement> reps;
  for (const TextReplacement& r : diff_text(old, new_text, whole_lines)) {
    std::string_view from = std::string_view(old).substr(r.old_offset, r.old_length);
    std::string_view to = new_text.substr(r.new_offset, r.new_length);
    if (from.size() + to.size() <= kCharDiffAbove || from.empty() || to.empty() ||
        !one_line(from) || !one_line(to)) {
      reps.push_back(r);
      continue;
    }
    for (const TextReplacement& c : diff_text(from, to)) {
      reps.push_back(
          {r.old_offset + c.old_offset, c.old_length, r.new_offset + c.new_offset, c.new_length});
    }
  }
  // Back to front: earlier byte offsets stay valid.
  for (auto it = reps.rbegin(); it != reps.rend(); ++it) {
    if (it->old_length != 0) {
      WEFT_RETURN_IF_ERROR(t.erase(it->old_offset, it->old_length, PosUnit::kBytes));
    }
    if (it->new_length != 0) {
      WEFT_RETURN_IF_ERROR(t.insert(it->old_offset, new_text.substr(it->new_offset, it->new_length),
                                    PosUnit::kBytes));
    }
  }
  return Status();
}

crdt::TextRef content(const crdt::Doc& doc) {
  // get_text only names the root (it creates nothing a reader would see).
  return const_cast<crdt::Doc&>(doc).get_text(kContentContainer);
}

Status check_text(std::string_view text, std::string_view what) {
  Status st = validate_utf8(text);
  if (st.ok()) return st;
  return invalid_argument(std::string(what) +
                          " is not valid UTF-8 text: " + std::string(st.message()));
}

// The last op of a change: the version right after it.
crdt::ID change_end(const crdt::ChangeMeta& change) {
  return crdt::ID{change.id.peer, change.id.counter + change.len - 1};
}

FileHistoryEntry history_entry(const crdt::ChangeMeta& change) {
  FileHistoryEntry entry;
  entry.version = encode_version(crdt::Frontiers{change_end(change)});
  entry.before = encode_version(crdt::Frontiers(change.deps));
  entry.timestamp = change.timestamp;
  if (change.message) {
    const std::string& m = *change.message;
    size_t nl = m.find('\n');
    entry.author = m.substr(0, nl);
    if (nl != std::string::npos) entry.message = m.substr(nl + 1);
  }
  return entry;
}

}  // namespace

FileBlock::FileBlock(crdt::Doc doc, crdt::Frontiers synced, DiskState disk)
    : doc_(std::move(doc)), synced_(std::move(synced)), disk_(std::move(disk)) {}
FileBlock::FileBlock(FileBlock&&) noexcept = default;
FileBlock& FileBlock::operator=(FileBlock&&) noexcept = default;
FileBlock::~FileBlock() = default;

Result<FileBlock> FileBlock::create(std::string_view text, const DiskState& disk,
                                    const Attribution& origin) {
  WEFT_RETURN_IF_ERROR(check_text(text, "the file's content"));
  WEFT_RETURN_IF_ERROR(check_attribution(origin));
  crdt::Doc doc = new_doc(false);
  crdt::TextRef t = doc.get_text(kContentContainer);
  if (!text.empty()) {
    WEFT_RETURN_IF_ERROR(t.insert(0, text, PosUnit::kBytes));
    WEFT_RETURN_IF_ERROR(doc.commit(commit_options(origin)));
  }
  crdt::Frontiers synced = doc.frontiers();
  return FileBlock(std::move(doc), std::move(synced), disk);
}

Result<FileBlock> FileBlock::load(const std::vector<std::string_view>& blobs,
                                  std::string_view synced_version, const DiskState& disk) {
  crdt::Doc doc = new_doc(false);
  std::vector<crdt::IdSpan> pending;
  for (size_t i = 0; i < blobs.size(); ++i) {
    auto imported = doc.import(blobs[i]);
    if (!imported.ok()) {
      return data_loss("stored history blob " + std::to_string(i + 1) + " of " +
                       std::to_string(blobs.size()) +
                       " of this file does not load: " + std::string(imported.status().message()));
    }
    pending.insert(pending.end(), imported->pending.begin(), imported->pending.end());
  }
  // A change parked for a missing dependency (a later blob may bring it).
  crdt::VersionVector loaded = doc.oplog_version();
  for (const crdt::IdSpan& span : pending) {
    if (loaded.get(span.peer) < span.end) {
      return data_loss("the stored history of this file lacks changes that others build on");
    }
  }
  crdt::Value root = doc.to_json();
  if (root.kind() == crdt::Value::Kind::kMap) {
    auto it = root.as_map().find(std::string(kContentContainer));
    if (it != root.as_map().end() && it->second.kind() != crdt::Value::Kind::kString) {
      return data_loss("the stored block's \"content\" is not a text: not a file block");
    }
  }
  auto synced = decode_version(synced_version);
  if (!synced.ok() || !doc.frontiers_to_vv(*synced).ok()) {
    return data_loss("the stored synced version \"" + std::string(synced_version.substr(0, 80)) +
                     "\" is not in the stored history of this file");
  }
  return FileBlock(std::move(doc), std::move(*synced), disk);
}

std::string FileBlock::text() const { return content(doc_).to_string(); }
size_t FileBlock::text_bytes() const { return content(doc_).len(PosUnit::kBytes); }
std::string FileBlock::version() const { return encode_version(doc_.frontiers()); }
std::string FileBlock::synced_version() const { return encode_version(synced_); }
bool FileBlock::ahead_of_disk() const { return doc_.frontiers() != synced_; }

void FileBlock::mark_synced(const DiskState& disk) {
  synced_ = doc_.frontiers();
  disk_ = disk;
}

Result<ChangeResult> FileBlock::commit_text(std::string_view new_text, const Attribution& who) {
  WEFT_RETURN_IF_ERROR(check_attribution(who));
  ChangeResult out;
  crdt::Frontiers before = doc_.frontiers();
  out.before = encode_version(before);
  WEFT_RETURN_IF_ERROR(write_text(doc_, new_text));
  WEFT_RETURN_IF_ERROR(doc_.commit(commit_options(who)));
  crdt::Frontiers after = doc_.frontiers();
  out.changed = after != before;
  out.after = out.changed ? encode_version(after) : out.before;
  return out;
}

Result<ChangeResult> FileBlock::change(std::string_view new_text, const Attribution& who) {
  WEFT_RETURN_IF_ERROR(check_text(new_text, "the new text"));
  return commit_text(new_text, who);
}

Result<crdt::Doc> FileBlock::fork_writer(const crdt::Frontiers& at, bool disk_side) const {
  WEFT_ASSIGN_OR_RETURN(crdt::Doc fork, doc_.fork_at(at));
  WEFT_RETURN_IF_ERROR(fork.set_peer_id(random_peer(disk_side)));
  fork.set_change_merge_interval(kNeverMerge);
  return fork;
}

Status FileBlock::merge_fork_text(crdt::Doc& fork, const crdt::Frontiers& at,
                                  std::string_view new_text, const Attribution& who) {
  WEFT_RETURN_IF_ERROR(check_attribution(who));
  WEFT_RETURN_IF_ERROR(write_text(fork, new_text));
  WEFT_RETURN_IF_ERROR(fork.commit(commit_options(who)));
  WEFT_ASSIGN_OR_RETURN(crdt::VersionVector base, fork.frontiers_to_vv(at));
  if (fork.oplog_version() == base) return Status();  // the fork held that text already
  auto imported = doc_.import(fork.export_updates(base));
  if (!imported.ok()) return imported.status();
  return Status();
}

Result<crdt::Frontiers> FileBlock::known_version(std::string_view version) const {
  WEFT_ASSIGN_OR_RETURN(crdt::Frontiers frontiers, decode_version(version));
  if (!doc_.frontiers_to_vv(frontiers).ok()) {
    return not_found("version " + std::string(version) + " is not in the history of this file");
  }
  return frontiers;
}

Result<ChangeResult> FileBlock::merge_on(const crdt::Frontiers& at, std::string_view new_text,
                                         const Attribution& who) {
  // Made on the current version: a plain change.
  if (at == doc_.frontiers()) return commit_text(new_text, who);
  ChangeResult out;
  crdt::Frontiers before = doc_.frontiers();
  out.before = encode_version(before);
  WEFT_ASSIGN_OR_RETURN(crdt::Doc fork, fork_writer(at, false));
  WEFT_RETURN_IF_ERROR(merge_fork_text(fork, at, new_text, who));
  crdt::Frontiers after = doc_.frontiers();
  out.changed = after != before;
  out.after = encode_version(after);
  return out;
}

std::vector<FileHistoryEntry> FileBlock::history(size_t limit) const {
  std::vector<crdt::ChangeMeta> changes = doc_.changes();
  size_t n = limit == 0 ? changes.size() : std::min(limit, changes.size());
  std::vector<FileHistoryEntry> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) out.push_back(history_entry(changes[changes.size() - 1 - i]));
  return out;
}

Result<std::string> FileBlock::text_at(std::string_view version) const {
  WEFT_ASSIGN_OR_RETURN(crdt::Frontiers frontiers, known_version(version));
  if (frontiers == doc_.frontiers()) return text();
  if (frontiers.empty()) return std::string();
  WEFT_ASSIGN_OR_RETURN(crdt::Doc fork, doc_.fork_at(frontiers));
  return fork.get_text(kContentContainer).to_string();
}

Result<std::string> FileBlock::previous_version(std::string_view version) const {
  WEFT_ASSIGN_OR_RETURN(crdt::Frontiers frontiers, known_version(version));
  if (frontiers.size() == 1) {
    const crdt::ID& end = frontiers.ids()[0];
    for (const crdt::ChangeMeta& change : doc_.changes()) {
      if (change_end(change) != end) continue;
      // The version the change was made on: in a history without
      // concurrent changes, the next older entry.
      return encode_version(crdt::Frontiers(change.deps));
    }
  }
  return not_found("version " + std::string(version) +
                   " is not the version right after a change in history");
}

Result<std::string> FileBlock::diff(std::string_view from, std::string_view to,
                                    std::string_view label) const {
  WEFT_ASSIGN_OR_RETURN(std::string old_text, text_at(from));
  WEFT_ASSIGN_OR_RETURN(std::string new_text, text_at(to));
  text::MakeDiffOptions options;
  options.old_label = "a/" + std::string(label);
  options.new_label = "b/" + std::string(label);
  return text::make_unified_diff(old_text, new_text, options);
}

Result<ChangeResult> FileBlock::rollback(std::string_view version, const Attribution& who) {
  WEFT_ASSIGN_OR_RETURN(std::string target, text_at(version));
  return commit_text(target, who);
}

Result<ChangeResult> FileBlock::revert_change(std::string_view before, std::string_view after,
                                              const Attribution& who) {
  WEFT_ASSIGN_OR_RETURN(crdt::Frontiers from, known_version(before));
  WEFT_ASSIGN_OR_RETURN(crdt::Frontiers to, known_version(after));
  WEFT_ASSIGN_OR_RETURN(crdt::VersionOrder order, doc_.compare(from, to));
  if (order == crdt::VersionOrder::kGreater || order == crdt::VersionOrder::kConcurrent) {
    return invalid_argument("cannot revert from " + std::string(before) + " to " +
                            std::string(after) + ": the first version must come before the second");
  }
  // Written on the version right after the change, the text before it is
  // exactly the change's inverse; merged, it keeps what came later.
  WEFT_ASSIGN_OR_RETURN(std::string old_text, text_at(before));
  return merge_on(to, old_text, who);
}

Result<ChangeResult> FileBlock::apply_on_base(std::string_view base_version,
                                              std::string_view proposed_text,
                                              const Attribution& who) {
  WEFT_RETURN_IF_ERROR(check_text(proposed_text, "the proposed text"));
  WEFT_ASSIGN_OR_RETURN(crdt::Frontiers base, known_version(base_version));
  return merge_on(base, proposed_text, who);
}

std::string FileBlock::export_updates(const crdt::VersionVector& from) const {
  return doc_.export_updates(from);
}

std::string FileBlock::export_snapshot() const {
  return doc_.export_snapshot(crdt::SnapshotCompression::kFast);
}

}  // namespace weft::source
