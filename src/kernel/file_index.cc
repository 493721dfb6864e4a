// The kernel's index of the files it knows, and how their blocks are kept
// in the store: loaded on demand, stored change by change (with a snapshot
// now and then), and let go of by LRU when clean.
#include <algorithm>
#include <unordered_set>
#include <nlohmann/json.hpp>

#include "kernel/kernel_impl.h"

namespace weft::kernel {

using Json = nlohmann::json;

std::string file_block_id(std::string_view path) {
  return std::string(kFileBlockPrefix) + std::string(path);
}

std::optional<std::string> path_of_block_id(std::string_view block_id) {
  if (block_id.substr(0, kFileBlockPrefix.size()) != kFileBlockPrefix) return std::nullopt;
  return std::string(block_id.substr(kFileBlockPrefix.size()));
}

namespace {

// Snapshot the block after this many updates.
constexpr uint64_t kCompactAfterUpdates = 256;

bool is_under(std::string_view path, std::string_view dir) {
  if (dir == "." || dir.empty()) return true;
  return path == dir ||
         (path.size() > dir.size() && path.substr(0, dir.size()) == dir && path[dir.size()] == '/');
}

}  // namespace

// ---------------------------------------------------------------- the index

std::shared_ptr<FileEntry> Kernel::Impl::find_entry(const std::string& path) {
  std::lock_guard lock(index_mu);
  auto it = files.find(path);
  return it == files.end() ? nullptr : it->second;
}

Result<std::shared_ptr<FileEntry>> Kernel::Impl::entry(const std::string& path,
                                                       const store::BlockInfo* stored) {
  std::shared_ptr<FileEntry> e;
  {
    std::lock_guard lock(index_mu);
    auto& slot = files[path];
    if (!slot) {
      slot = std::make_shared<FileEntry>();
      slot->path = path;
    }
    e = slot;
  }
  e->last_used = ++clock;
  std::lock_guard lock(e->mu);
  if (!e->known_in_store) {
    auto info = stored ? Result<store::BlockInfo>(*stored)
                       : store->get_block(kWorkspaceOwner, file_block_id(path));
    if (info.ok()) {
      e->store_id = info->id;
      WEFT_RETURN_IF_ERROR(read_metadata(*e, info->metadata_json));
    } else if (info.status().code() != StatusCode::kNotFound) {
      return info.status();
    }
    e->known_in_store = true;
  }
  return e;
}

std::vector<std::shared_ptr<FileEntry>> Kernel::Impl::entries_under(const std::string& dir) {
  std::vector<std::shared_ptr<FileEntry>> out;
  // Blocks in the store that are not in the index yet.
  store::BlockFilter filter;
  filter.agent_id = std::string(kWorkspaceOwner);
  filter.label_prefix =
      file_block_id(dir == "." ? std::string() : dir);  // "file:dir" also catches "file:dir2"
  auto listed = store->list_blocks(filter);
  if (listed.ok()) {
    for (const auto& info : listed->blocks) {
      auto path = path_of_block_id(info.label);
      if (path && is_under(*path, dir)) {
        auto e = entry(*path, &info);
        if (e.ok()) out.push_back(*e);
      }
    }
  }
  std::unordered_set<const FileEntry*> listed_already;
  for (const auto& e : out) listed_already.insert(e.get());
  std::lock_guard lock(index_mu);
  for (auto& [path, e] : files) {
    if (is_under(path, dir) && !listed_already.count(e.get())) out.push_back(e);
  }
  return out;
}

void Kernel::Impl::forget_entry(const std::string& path) {
  std::lock_guard lock(index_mu);
  files.erase(path);
}

void Kernel::Impl::rekey_entry(const std::string& from, const std::string& to) {
  std::lock_guard lock(index_mu);
  auto it = files.find(from);
  if (it == files.end()) return;
  auto e = it->second;
  files.erase(it);
  e->path = to;
  files[to] = std::move(e);
}

void Kernel::Impl::notify(const FileEntry& e, const std::string& origin) {
  if (e.block) notify_listeners(file_block_id(e.path), e.block->version(), origin);
}

void Kernel::Impl::evict_if_needed() {
  std::vector<std::shared_ptr<FileEntry>> loaded;
  size_t bytes = 0;
  {
    std::lock_guard lock(index_mu);
    // The walk costs a try-lock per known file: it runs when the index grew
    // and on every kEvictCheckEvery-th call (blocks reloaded, texts grown).
    bool grew = files.size() != files_at_last_evict_check;
    if (!grew && ++calls_since_evict_check < kEvictCheckEvery) return;
    calls_since_evict_check = 0;
    files_at_last_evict_check = files.size();
    for (auto& [path, e] : files) loaded.push_back(e);
  }
  std::vector<std::pair<uint64_t, std::shared_ptr<FileEntry>>> candidates;
  for (auto& e : loaded) {
    std::unique_lock lock(e->mu, std::try_to_lock);
    if (!lock.owns_lock() || !e->block) continue;
    // The CRDT doc costs several times its text (ids, history).
    bytes += e->block->text_bytes() * 6 + 4096;
    if (!e->block->ahead_of_disk() && e->persisted == e->block->doc().oplog_version()) {
      candidates.emplace_back(e->last_used.load(), e);
    }
  }
  if (bytes <= options.memory_budget_bytes) return;
  std::sort(candidates.begin(), candidates.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [used, e] : candidates) {
    if (bytes <= options.memory_budget_bytes * 3 / 4) break;
    std::unique_lock lock(e->mu, std::try_to_lock);
    if (!lock.owns_lock() || !e->block) continue;
    if (e->block->ahead_of_disk() || e->persisted != e->block->doc().oplog_version()) continue;
    if (e->meta_stale && !persist(*e).ok()) continue;
    bytes -= std::min(bytes, e->block->text_bytes() * 6 + 4096);
    e->synced_version = e->block->synced_version();
    e->disk = e->block->disk();
    e->block.reset();
    e->persisted = {};
  }
}

// ---------------------------------------------------------------- persistence

std::string Kernel::Impl::metadata_of(const FileEntry& e) const {
  const source::DiskState& disk = e.block ? e.block->disk() : e.disk;
  Json undo = Json::object();
  auto newest = [](const std::vector<UndoStep>& steps) {
    Json out = Json::array();
    size_t from = steps.size() > kMaxStoredUndoEntries ? steps.size() - kMaxStoredUndoEntries : 0;
    for (size_t i = from; i < steps.size(); ++i) out.push_back({steps[i].before, steps[i].after});
    return out;
  };
  for (const auto& [author, stacks] : e.undo) {
    undo[author] = {{"undo", newest(stacks.undo)}, {"redo", newest(stacks.redo)}};
  }
  Json meta = {{"kind", "file"},
               {"path", e.path},
               {"synced", e.block ? e.block->synced_version() : e.synced_version},
               {"disk",
                {{"hash", disk.hash},
                 {"size", disk.size},
                 {"mtime_ns", disk.mtime_ns},
                 {"inode", disk.inode}}},
               {"frozen", e.frozen},
               {"deleted", e.deleted},
               {"undo", undo}};
  if (e.writing) meta["writing"] = {{"version", e.writing->version}, {"hash", e.writing->hash}};
  return meta.dump();
}

Status Kernel::Impl::read_metadata(FileEntry& e, const std::string& metadata_json) {
  Json meta = Json::parse(metadata_json, nullptr, false);
  auto corrupt = [&](const std::string& what) {
    return data_loss("the kernel's record of '" + e.path + "' is damaged (" + what +
                     "); remove the block with `weft block` tools or the state directory");
  };
  if (!meta.is_object()) return corrupt("metadata is not a JSON object");
  try {
    e.synced_version = meta.value("synced", std::string("v0"));
    const Json& d = meta.at("disk");
    e.disk.hash = d.value("hash", std::string());
    e.disk.size = d.value("size", int64_t{-1});
    e.disk.mtime_ns = d.value("mtime_ns", int64_t{0});
    e.disk.inode = d.value("inode", uint64_t{0});
    e.frozen = meta.value("frozen", std::string());
    e.writing.reset();
    if (meta.contains("writing") && meta["writing"].is_object()) {
      e.writing = FileEntry::Writing{meta["writing"].value("version", std::string()),
                                     meta["writing"].value("hash", std::string())};
    }
    e.deleted = meta.value("deleted", false);
    e.undo.clear();
    if (meta.contains("undo") && meta["undo"].is_object()) {
      for (const auto& [author, stacks] : meta["undo"].items()) {
        UndoStacks s;
        for (const auto& step : stacks.value("undo", Json::array())) {
          s.undo.push_back({step.at(0).get<std::string>(), step.at(1).get<std::string>()});
        }
        for (const auto& step : stacks.value("redo", Json::array())) {
          s.redo.push_back({step.at(0).get<std::string>(), step.at(1).get<std::string>()});
        }
        e.undo[author] = std::move(s);
      }
    }
  } catch (const Json::exception& ex) {
    return corrupt(ex.what());
  }
  return Status();
}

Status Kernel::Impl::ensure_loaded(FileEntry& e) {
  if (e.block || e.store_id.empty()) return Status();
  WEFT_ASSIGN_OR_RETURN(store::LoadedBlock loaded, store->load(e.store_id));
  for (const auto& p : loaded.problems) log("kernel: " + p);
  std::vector<std::string_view> blobs;
  if (loaded.snapshot) blobs.push_back(loaded.snapshot->data);
  for (const auto& u : loaded.updates) blobs.push_back(u.data);
  WEFT_RETURN_IF_ERROR(read_metadata(e, loaded.info.metadata_json));
  auto block = source::FileBlock::load(blobs, e.synced_version, e.disk);
  if (!block.ok()) {
    return Status(block.status().code(), "the block of '" + e.path +
                                             "' cannot be loaded: " +
                                             std::string(block.status().message()));
  }
  e.block.emplace(std::move(*block));
  e.persisted = e.block->doc().oplog_version();
  e.updates_since_snapshot = loaded.updates.size();
  return Status();
}

Status Kernel::Impl::persist(FileEntry& e) {
  WEFT_RETURN_IF_ERROR(persist_now(e));
  e.meta_stale = false;
  return Status();
}

Status Kernel::Impl::persist_now(FileEntry& e) {
  std::string meta = metadata_of(e);
  if (!e.block) {
    if (e.store_id.empty()) return Status();
    store::BlockPatch patch;
    patch.metadata_json = meta;
    return store->update_block(e.store_id, patch).status();
  }
  std::string version = e.block->version();
  if (e.store_id.empty()) {
    store::NewBlock nb;
    nb.agent_id = std::string(kWorkspaceOwner);
    nb.label = file_block_id(e.path);
    nb.description = "the file " + e.path;
    nb.metadata_json = meta;
    nb.initial_update = e.block->export_snapshot();
    nb.initial_version = version;
    WEFT_ASSIGN_OR_RETURN(store::BlockInfo info, store->create_block(nb));
    e.store_id = info.id;
    e.known_in_store = true;
    e.persisted = e.block->doc().oplog_version();
    e.updates_since_snapshot = 1;
    return Status();
  }
  crdt::VersionVector now = e.block->doc().oplog_version();
  if (now == e.persisted) {
    store::BlockPatch patch;
    patch.metadata_json = meta;
    return store->update_block(e.store_id, patch).status();
  }
  std::string update = e.block->export_updates(e.persisted);
  WEFT_ASSIGN_OR_RETURN(uint64_t seq, store->append_update(e.store_id, update, version, meta));
  e.persisted = std::move(now);
  if (++e.updates_since_snapshot >= kCompactAfterUpdates) {
    Status s = store->write_snapshot(e.store_id, seq, e.block->export_snapshot(), version);
    if (s.ok()) {
      e.updates_since_snapshot = 0;
    } else {
      log("kernel: could not compact the block of '" + e.path + "': " + std::string(s.message()));
    }
  }
  return Status();
}

}  // namespace weft::kernel
