// PackWriter: writes the new objects of one snapshot into ONE git pack file
// (plus its .idx) instead of one loose object file each. On this kind of
// machine creating a file costs far more than compressing it, so a first
// snapshot of 24,000 files goes from 24,000 file creations to two, and an
// incremental one from ~4 to two. Private to fs/.
//
// It is also a libgit2 object-database backend (registered with the highest
// priority), so the trees and the commit libgit2 writes during a snapshot
// land in the same pack, and objects of the pack being written can be read
// back before it is finished. Outside begin()..finish() it passes writes on
// to the loose backend.
//
// Thread safety: none; the snapshot store serialises all calls.
#ifndef WEFT_SRC_FS_GIT_PACK_H_
#define WEFT_SRC_FS_GIT_PACK_H_

#include <git2.h>

#include <string>
#include <string_view>

#include "weft/base/status.h"

namespace weft::fs::internal {

class PackWriter;

// Creates a PackWriter and adds it to `odb` (which owns it from then on).
// `objects_dir` is the repository's objects directory.
Result<PackWriter*> attach_pack_writer(git_odb* odb, const std::string& objects_dir);

// Starts collecting objects (a temporary pack under objects/pack).
Status pack_begin(PackWriter* w);
// Stores a blob unless the database has it already; sets `*oid`. Hashes
// with OpenSSL's SHA-1 (libgit2's collision-detecting one is ~3x slower).
Status pack_add_blob(PackWriter* w, std::string_view data, git_oid* oid);
// Completes the pack and its index and makes them visible to `odb`
// (nothing is written when no object was added). When the store holds too
// many packs, the small ones are merged into this one and deleted; then
// `*removed_packs` is set and the caller must reopen the repository (libgit2
// keeps the deleted packs in its list).
Status pack_finish(PackWriter* w, git_odb* odb, bool* removed_packs);
// Drops the temporary pack (after a failed snapshot). Safe to call anytime.
void pack_abort(PackWriter* w);

}  // namespace weft::fs::internal

#endif  // WEFT_SRC_FS_GIT_PACK_H_
