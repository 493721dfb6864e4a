// Private: BlockStore's state and the row helpers shared by its .cc files.
#ifndef WEFT_SRC_STORE_BLOCK_STORE_IMPL_H_
#define WEFT_SRC_STORE_BLOCK_STORE_IMPL_H_

#include <mutex>
#include <random>
#include <string>

#include "store/sqlite_db.h"
#include "weft/store/block_store.h"

namespace weft::store {

struct BlockStore::Impl {
  std::mutex mu;  // guards everything below and every use of db
  sqlite::Db db;
  std::string path;
  StoreOptions options;
  std::mt19937_64 rng{std::random_device{}()};

  // The columns read_info() expects, in order.
  static constexpr const char* kInfoColumns =
      "id, agent_id, label, description, block_type, schema_json, permission, char_limit, "
      "metadata_json, created_at, updated_at, deleted_at, last_seq, persisted_version";

  // Reads one blocks row selected with kInfoColumns. Errors: kDataLoss naming
  // the label when a column holds something this build cannot read.
  static Result<BlockInfo> read_info(const sqlite::Stmt& row);
  Result<BlockInfo> info_by_id(std::string_view id);
  std::string new_id();
};

// Checksums stored beside every blob (xxHash3, low 32 bits).
int64_t blob_checksum(std::string_view data);

// OK for a metadata text that is a JSON object within kMaxJsonDepth;
// kInvalidArgument saying what is wrong otherwise.
Status check_block_metadata(std::string_view metadata_json);

}  // namespace weft::store

#endif  // WEFT_SRC_STORE_BLOCK_STORE_IMPL_H_
