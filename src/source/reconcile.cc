// FileBlock::reconcile: seed 000's fork-and-compare. The synced version is the
// common ancestor of the block and the file; a fork of it takes the disk's
// text, and the permission decides what the memory doc does with it.
#include <string>

#include "weft/base/utf.h"
#include "weft/source/file_block.h"
#include "weft/text/unified_diff.h"

namespace weft::source {
namespace {

using Action = ReconcileResult::Action;

std::string labelled_diff(std::string_view base, std::string_view text, std::string_view label) {
  text::MakeDiffOptions options;
  options.old_label = "base";
  options.new_label = std::string(label);
  return text::make_unified_diff(base, text, options);
}

}  // namespace

Result<ReconcileResult> FileBlock::reconcile(std::string_view disk_text, const DiskState& disk,
                                             doc::MemoryPermission level,
                                             const Attribution& disk_origin) {
  if (Status st = validate_utf8(disk_text); !st.ok()) {
    return invalid_argument("the file on disk is not valid UTF-8 text: " +
                            std::string(st.message()));
  }
  ReconcileResult out;
  std::string current = text();
  if (disk_text == current) {
    mark_synced(disk);
    return out;
  }
  // The disk wins, as a change on top (history is kept).
  auto take_disk = [&]() -> Result<ReconcileResult> {
    WEFT_RETURN_IF_ERROR(commit_text(disk_text, disk_origin).status());
    mark_synced(disk);
    ReconcileResult took;
    took.action = Action::kTookDisk;
    return took;
  };
  // Only the disk changed (the synced text is the current one), or the path
  // is read-only.
  if (!ahead_of_disk() || level == doc::MemoryPermission::kReadOnly) return take_disk();
  // The block changed. The file still holding the synced bytes means only
  // the block did; the hash says so without rebuilding the synced text.
  out.action = Action::kTookMemory;
  out.write_file = true;
  if (!disk_.hash.empty() && content_hash(disk_text) == disk_.hash) return out;
  WEFT_ASSIGN_OR_RETURN(crdt::Doc fork, fork_writer(synced_, true));
  std::string base = fork.get_text(kContentContainer).to_string();
  if (base == disk_text) return out;
  if (base == current) return take_disk();  // the block's changes cancel out

  // Both changed.
  if (level == doc::MemoryPermission::kHuman) {
    out.action = Action::kConflict;
    out.write_file = false;
    out.base_version = encode_version(synced_);
    out.block_diff = labelled_diff(base, current, "block");
    out.disk_diff = labelled_diff(base, disk_text, "disk");
    out.proposed_text = std::move(current);
    WEFT_RETURN_IF_ERROR(commit_text(disk_text, disk_origin).status());
    mark_synced(disk);
    return out;
  }
  // Merged: the disk's change goes in as made on the synced version, by a
  // disk-side peer, so the block's insertions come first where both inserted.
  out.action = Action::kMerged;
  WEFT_RETURN_IF_ERROR(merge_fork_text(fork, synced_, disk_text, disk_origin));
  if (text() == disk_text) {
    // The block's changes were already in the file's: nothing to write.
    mark_synced(disk);
    out.write_file = false;
  }
  return out;
}

}  // namespace weft::source
