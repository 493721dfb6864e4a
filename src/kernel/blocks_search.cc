// Blocks::search_all (kernel_search): one query over memory blocks,
// conversation blocks (in memory) and the workspace's files (the fs layer's
// grep, then the matched files searched again for lines and context).
#include <re2/re2.h>

#include <algorithm>
#include <unordered_map>

#include "kernel/blocks_impl.h"
#include "weft/text/search.h"

namespace weft::kernel {

namespace {

// Most grep matches fetched to find the matching files.
constexpr int64_t kFileScanMatches = 100'000;

bool wants(const KernelSearchRequest& r, BlockKind kind) {
  if (r.kinds.empty()) return !r.path_prefix || kind == BlockKind::kFile;
  return std::find(r.kinds.begin(), r.kinds.end(), kind) != r.kinds.end();
}

bool cancelled(const KernelSearchRequest& r) {
  return r.cancel && r.cancel->load(std::memory_order_relaxed);
}

}  // namespace

Result<KernelSearchResult> Blocks::search_all(const source::Attribution& who,
                                              const KernelSearchRequest& request) {
  Impl& b = *impl_;
  if (request.max_blocks == 0 || request.max_blocks > kMaxKernelSearchBlocks) {
    return invalid_argument("max_blocks must be 1 to " + std::to_string(kMaxKernelSearchBlocks));
  }
  SearchOptions per_block;
  per_block.context_lines = request.context_lines;
  per_block.max_matches = request.max_matches_per_block;
  // Validates the query and the limits, and tells whether it is a regex.
  WEFT_ASSIGN_OR_RETURN(BlockSearch probe, search_text("", {}, request.query, per_block));
  KernelSearchResult out;
  out.literal = probe.literal;
  out.note = probe.note;
  std::string pattern = out.literal ? RE2::QuoteMeta(request.query) : request.query;
  RE2::Options re_options;
  re_options.set_log_errors(false);
  RE2 re("(?m)" + pattern, re_options);  // as text::find_all_regex reads it
  if (!re.ok()) return invalid_argument("cannot compile the query: " + re.error());
  bool stop = false;  // max_blocks reached and one more block matched
  // Searches one text; adds a hit when it matches.
  auto search_one = [&](std::string_view text, const std::vector<size_t>* starts,
                        KernelSearchHit hit) -> Status {
    if (!RE2::PartialMatch(text, re)) return Status();
    if (out.hits.size() >= request.max_blocks) {
      out.truncated = stop = true;
      return Status();
    }
    std::vector<size_t> own;
    if (!starts) {
      own = line_starts(text);
      starts = &own;
    }
    // The query as it matched (literal already decided above).
    WEFT_ASSIGN_OR_RETURN(BlockSearch found, search_text(text, *starts, pattern, per_block));
    if (found.matches.empty()) return Status();
    hit.matches = std::move(found.matches);
    hit.truncated = found.truncated;
    out.hits.push_back(std::move(hit));
    return Status();
  };

  // The caller's memory blocks.
  if (wants(request, BlockKind::kMemory)) {
    std::string agent = agent_name_of(who.origin);
    auto listed = b.memory->list(store::BlockFilter{agent, std::nullopt, std::nullopt, false, 0});
    if (!listed.ok()) return listed.status();
    for (const auto& info : listed->blocks) {
      if (cancelled(request)) return cancelled_error("kernel_search was cancelled");
      BlockId id;
      id.type = BlockId::Type::kMemory;
      id.agent = agent;
      id.label = info.label;
      auto d = b.memory_doc(id);
      if (!d.ok()) continue;
      auto text = b.memory_text(**d);
      if (!text.ok()) continue;
      ++out.blocks_searched;
      KernelSearchHit hit;
      hit.block_id = memory_block_id(agent, info.label);
      hit.kind = BlockKind::kMemory;
      hit.role = BlockRole::kSystem;
      WEFT_RETURN_IF_ERROR(search_one(*text, nullptr, std::move(hit)));
      if (stop) return out;
    }
  }

  // Conversation blocks, in creation order.
  bool any_conversation = false;
  for (BlockKind k : {BlockKind::kText, BlockKind::kThinking, BlockKind::kToolCall,
                      BlockKind::kToolResult}) {
    any_conversation = any_conversation || wants(request, k);
  }
  if (any_conversation) {
    std::vector<std::shared_ptr<ConvEntry>> all;
    {
      std::lock_guard lock(b.index_mu);
      all.reserve(b.by_id.size());
      for (const auto& [id, e] : b.by_id) {
        if (wants(request, e->kind) && !e->deleted) all.push_back(e);
      }
    }
    std::sort(all.begin(), all.end(),
              [](const auto& x, const auto& y) { return x->order < y->order; });
    for (const auto& e : all) {
      if (cancelled(request)) return cancelled_error("kernel_search was cancelled");
      std::lock_guard lock(e->mu);
      WEFT_RETURN_IF_ERROR(b.flush_locked(*e));
      WEFT_RETURN_IF_ERROR(b.ensure_loaded(*e));
      ++out.blocks_searched;
      KernelSearchHit hit;
      hit.block_id = e->id;
      hit.kind = e->kind;
      hit.role = e->role;
      if (auto it = e->meta.find("path"); it != e->meta.end() && it->is_string()) {
        hit.path = it->get<std::string>();
      }
      WEFT_RETURN_IF_ERROR(search_one(e->text, &e->starts, std::move(hit)));
      if (stop) return out;
    }
  }

  // Files: the fs layer's grep finds the matching files (ignore rules and
  // binary detection as fs_grep); file blocks not yet written to disk are
  // searched in their block text.
  if (wants(request, BlockKind::kFile)) {
    std::string base = request.path_prefix.value_or(".");
    while (base.size() > 1 && base.back() == '/') base.pop_back();
    if (base.empty()) base = ".";
    std::unordered_map<std::string, bool> dirty;  // path -> searched from its block
    auto statuses = b.kernel->status(base == "." ? std::nullopt : std::optional<std::string>(base));
    if (statuses.ok()) {
      for (const FileStatus& f : *statuses) {
        if (f.is_block && f.dirty && !f.deleted) dirty.emplace(f.path, false);
      }
    }
    fs::GrepOptions options;
    options.max_matches = kFileScanMatches;
    options.cancel = request.cancel;
    options.threads = 0;
    options.max_line_bytes = 16;  // only the paths are used
    auto found = b.kernel->fs().grep(pattern, base, options);
    if (!found.ok()) {
      if (found.status().code() == StatusCode::kCancelled) return found.status();
      if (found.status().code() != StatusCode::kNotFound || dirty.empty()) return found.status();
      found = std::vector<fs::GrepMatch>{};
    }
    if (static_cast<int64_t>(found->size()) >= kFileScanMatches) out.truncated = true;
    std::vector<std::string> paths;
    for (const fs::GrepMatch& m : *found) {
      if (paths.empty() || paths.back() != m.path) paths.push_back(m.path);
    }
    auto search_file = [&](const std::string& path, std::string_view text) -> Status {
      KernelSearchHit hit;
      hit.block_id = file_block_id(path);
      hit.kind = BlockKind::kFile;
      hit.role = BlockRole::kSystem;
      hit.path = path;
      return search_one(text, nullptr, std::move(hit));
    };
    auto dirty_block_text = [&](const std::string& path) -> Result<std::string> {
      WEFT_ASSIGN_OR_RETURN(BlockContent c, read(file_block_id(path), ReadOptions{false, {}}));
      return std::move(c.content);
    };
    for (const std::string& path : paths) {
      if (cancelled(request)) return cancelled_error("kernel_search was cancelled");
      if (stop) break;
      auto d = dirty.find(path);
      if (d != dirty.end()) {
        d->second = true;
        auto text = dirty_block_text(path);
        if (text.ok()) WEFT_RETURN_IF_ERROR(search_file(path, *text));
        continue;
      }
      auto bytes = b.kernel->fs().read_bytes(path);
      if (!bytes.ok()) continue;  // gone or grown past the limits since the scan
      WEFT_RETURN_IF_ERROR(search_file(path, bytes->content));
    }
    // Dirty blocks whose file did not match may match in their text.
    std::vector<std::string> rest;
    for (const auto& [path, searched] : dirty) {
      if (!searched) rest.push_back(path);
    }
    std::sort(rest.begin(), rest.end());
    for (const std::string& path : rest) {
      if (stop) break;
      auto text = dirty_block_text(path);
      if (text.ok()) WEFT_RETURN_IF_ERROR(search_file(path, *text));
    }
  }
  return out;
}

}  // namespace weft::kernel
