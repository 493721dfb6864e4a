// The Blocks facade: every operation routed by the kind of block its id
// names (conversation, file through the kernel's file operations, memory).
#include <algorithm>
#include <deque>

#include "kernel/blocks_impl.h"
#include "weft/text/patch.h"
#include "weft/text/unified_diff.h"

namespace weft::kernel {

namespace {

BlockWrite file_write(const std::string& path, const ChangeOutcome& out) {
  BlockWrite w;
  w.block_id = file_block_id(path);
  w.version = out.version;
  w.changed = out.applied && (out.created || out.removed || out.old_text != out.new_text);
  w.pending_approval = out.pending_approval;
  w.rule = out.rule;
  w.status = BlockStatus::kDone;
  return w;
}

// One splice turning `old_text` into `new_text`, widened to whole lines.
TextSplice diff_splice(std::string_view old_text, std::string_view new_text) {
  size_t p = 0;
  size_t max = std::min(old_text.size(), new_text.size());
  while (p < max && old_text[p] == new_text[p]) ++p;
  size_t nl = p == 0 ? std::string_view::npos : old_text.rfind('\n', p - 1);
  p = nl == std::string_view::npos ? 0 : nl + 1;
  size_t s = 0;
  while (s < max - p && old_text[old_text.size() - 1 - s] == new_text[new_text.size() - 1 - s]) ++s;
  while (s > 0 && old_text[old_text.size() - s - 1] != '\n') --s;
  return TextSplice{p, old_text.size() - s - p,
                    std::string(new_text.substr(p, new_text.size() - s - p))};
}

Result<text::FilePatch> one_patch(std::string_view patch, std::string_view block_id) {
  if (patch.size() > kMaxContentBytes) {
    return resource_exhausted("the patch is over " + std::to_string(kMaxContentBytes) + " bytes");
  }
  auto parsed = text::parse_unified_diff(patch);
  if (!parsed.ok()) return parsed.status().with_context("cannot parse the patch");
  if (parsed->size() != 1) {
    return invalid_argument("a block patch holds the diff of exactly one text (this one has " +
                            std::to_string(parsed->size()) + "); '" + std::string(block_id) +
                            "' is patched alone, whatever file names its headers give");
  }
  return std::move((*parsed)[0]);
}

PatchResult patch_failure(const text::PatchPlan& plan) {
  PatchResult r;
  for (const auto& h : plan.hunks) {
    if (!h.applies) r.errors.push_back("hunk " + std::to_string(h.index + 1) + " (" + h.header +
                                       "): " + h.message);
  }
  if (r.errors.empty()) r.errors.push_back(plan.summary());
  return r;
}

Status check_list_filter(const ListFilter& f) {
  if (f.limit == 0 || f.limit > kMaxListLimit) {
    return invalid_argument("limit must be 1 to " + std::to_string(kMaxListLimit));
  }
  if (f.depth == 0 || f.depth > 64) return invalid_argument("depth must be 1 to 64");
  return Status();
}

}  // namespace

Blocks::Blocks(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Blocks::~Blocks() {
  impl_->stop_flusher();
  flush_all();
}

// ---------------------------------------------------------------- lifecycle

Result<BlockWrite> Blocks::create(const source::Attribution& who, const CreateBlock& request) {
  Impl& b = *impl_;
  if (request.kind == BlockKind::kMemory) {
    return invalid_argument("a memory block is created with memory_create (label and schema)");
  }
  if (request.kind != BlockKind::kFile) return b.conv_create(who, request);
  auto it = request.metadata.find("path");
  if (!request.metadata.is_object() || it == request.metadata.end() || !it->is_string()) {
    return invalid_argument("a file block needs metadata.path: the file to create");
  }
  WEFT_ASSIGN_OR_RETURN(BlockId id, parse_block_id(file_block_id(it->get<std::string>())));
  WEFT_RETURN_IF_ERROR(check_block_text(request.content, "the content", kMaxContentBytes));
  std::string content = request.content;
  WEFT_ASSIGN_OR_RETURN(
      ChangeOutcome out,
      b.kernel->change_text(id.path, who, source::FileOp::kCreate,
                            [&](const std::optional<std::string>& old) -> Result<std::string> {
                              if (old) {
                                return already_exists("'" + id.path +
                                                      "' exists: change it with block_edit on "
                                                      "file:" + id.path);
                              }
                              return content;
                            }));
  BlockWrite w = file_write(id.path, out);
  w.changed = out.applied;
  return w;
}

Result<BlockRemoval> Blocks::remove(const source::Attribution& who, std::string_view block_id,
                                    bool recursive) {
  Impl& b = *impl_;
  WEFT_ASSIGN_OR_RETURN(BlockId id, parse_block_id(block_id));
  BlockRemoval r;
  if (id.type == BlockId::Type::kFile) {
    WEFT_ASSIGN_OR_RETURN(ChangeOutcome out, b.kernel->remove(id.path, who, recursive));
    r.block_id = file_block_id(id.path);
    r.version = out.version;
    r.pending_approval = out.pending_approval;
    r.rule = out.rule;
    r.changed = out.applied;
    if (out.applied) r.removed.push_back(r.block_id);
    return r;
  }
  if (id.type == BlockId::Type::kMemory) {
    r.block_id = memory_block_id(id.agent, id.label);
    // A person is the "system" of seed 002: not bound by the block's permission.
    Status s = b.memory->delete_block(id.agent, id.label, is_person(who.origin));
    if (s.code() == StatusCode::kNotFound) {
      return not_found("no memory block '" + id.label + "' of agent " + id.agent +
                       " (block_list kind memory shows them)");
    }
    WEFT_RETURN_IF_ERROR(s);
    r.removed.push_back(r.block_id);
    r.changed = true;
    b.notify(r.block_id, "", who.origin);
    return r;
  }
  WEFT_ASSIGN_OR_RETURN(auto e, b.conv(std::string(block_id)));
  std::lock_guard tree(b.tree_mu);
  std::lock_guard lock(e->mu);
  return b.conv_remove(who, *e, recursive, true);
}

Result<BlockWrite> Blocks::set_status(const source::Attribution& who, std::string_view block_id,
                                      BlockStatus status) {
  Impl& b = *impl_;
  WEFT_ASSIGN_OR_RETURN(BlockId id, parse_block_id(block_id));
  if (id.type != BlockId::Type::kConversation) {
    return failed_precondition("'" + std::string(block_id) +
                               "' is a " + (id.type == BlockId::Type::kFile ? "file" : "memory") +
                               " block: only conversation blocks have a status (theirs is "
                               "always done)");
  }
  WEFT_ASSIGN_OR_RETURN(auto e, b.conv(std::string(block_id)));
  std::lock_guard lock(e->mu);
  WEFT_RETURN_IF_ERROR(b.flush_locked(*e));
  WEFT_RETURN_IF_ERROR(b.check_write(*e, doc::MemoryOp::kAppend, &who));
  e->open_unit_author.clear();
  BlockWrite w = b.write_of(*e);
  if (e->status == status) return w;
  e->status = status;
  e->wrote_since_create = true;
  WEFT_RETURN_IF_ERROR(b.store_meta(*e));
  b.notify(e->id, e->version, who.origin);
  w.status = status;
  w.changed = true;
  return w;
}

// ---------------------------------------------------------------- content writes

Result<BlockWrite> Blocks::append(const source::Attribution& who, std::string_view block_id,
                                  std::string_view text) {
  Impl& b = *impl_;
  WEFT_ASSIGN_OR_RETURN(BlockId id, parse_block_id(block_id));
  if (id.type == BlockId::Type::kConversation) {
    WEFT_ASSIGN_OR_RETURN(auto e, b.conv(std::string(block_id)));
    std::lock_guard lock(e->mu);
    return b.conv_append(who, *e, text);
  }
  WEFT_RETURN_IF_ERROR(check_block_text(text, "the appended text", kMaxAppendBytes));
  if (id.type == BlockId::Type::kMemory) {
    return b.memory_text_write(
        id, who, [&](std::string old) -> Result<std::string> { return old + std::string(text); },
        true, text);
  }
  WEFT_ASSIGN_OR_RETURN(
      ChangeOutcome out,
      b.kernel->change_text(id.path, who, source::FileOp::kAppend,
                            [&](const std::optional<std::string>& old) -> Result<std::string> {
                              if (!old) {
                                return not_found("'" + id.path + "' does not exist: create it "
                                                 "with block_create (kind file)");
                              }
                              return *old + std::string(text);
                            }));
  return file_write(id.path, out);
}

Result<BlockWrite> Blocks::flush(std::string_view block_id) {
  Impl& b = *impl_;
  WEFT_ASSIGN_OR_RETURN(BlockId id, parse_block_id(block_id));
  if (id.type != BlockId::Type::kConversation) {
    BlockWrite w;
    w.block_id = std::string(block_id);
    w.status = BlockStatus::kDone;
    return w;
  }
  WEFT_ASSIGN_OR_RETURN(auto e, b.conv(std::string(block_id)));
  std::lock_guard lock(e->mu);
  WEFT_RETURN_IF_ERROR(b.flush_locked(*e));
  return b.write_of(*e);
}

void Blocks::flush_all() {
  Impl& b = *impl_;
  std::vector<std::shared_ptr<ConvEntry>> pending;
  {
    std::lock_guard lock(b.flush_mu);
    pending.assign(b.pending_set.begin(), b.pending_set.end());
  }
  for (auto& e : pending) {
    std::lock_guard lock(e->mu);
    Status s = b.flush_locked(*e);
    if (!s.ok()) b.k->log("blocks: '" + e->id + "': append batch: " + std::string(s.message()));
  }
}

namespace {

// A text change on any kind of block: `plan` turns the current text (and its
// line starts) into splices; conversation blocks commit the splices, files
// and memory take the resulting text.
using Planner =
    std::function<Result<std::vector<TextSplice>>(std::string_view, const std::vector<size_t>&)>;

Result<BlockWrite> change_block(Blocks::Impl& b, const source::Attribution& who,
                                std::string_view block_id, const Planner& plan) {
  WEFT_ASSIGN_OR_RETURN(BlockId id, parse_block_id(block_id));
  if (id.type == BlockId::Type::kConversation) {
    WEFT_ASSIGN_OR_RETURN(auto e, b.conv(std::string(block_id)));
    std::lock_guard lock(e->mu);
    WEFT_RETURN_IF_ERROR(b.flush_locked(*e));
    WEFT_RETURN_IF_ERROR(b.ensure_loaded(*e));
    WEFT_RETURN_IF_ERROR(b.check_write(*e, doc::MemoryOp::kOverwrite, &who));
    WEFT_ASSIGN_OR_RETURN(std::vector<TextSplice> splices, plan(e->text, e->starts));
    return b.commit_splices(*e, splices, who, false);
  }
  auto transform = [&](std::string old) -> Result<std::string> {
    std::vector<size_t> starts = line_starts(old);
    WEFT_ASSIGN_OR_RETURN(std::vector<TextSplice> splices, plan(old, starts));
    return apply_splices(old, splices);
  };
  if (id.type == BlockId::Type::kMemory) return b.memory_text_write(id, who, transform, false, "");
  WEFT_ASSIGN_OR_RETURN(
      ChangeOutcome out,
      b.kernel->change_text(id.path, who, source::FileOp::kOverwrite,
                            [&](const std::optional<std::string>& old) -> Result<std::string> {
                              if (!old) return not_found("'" + id.path + "' does not exist");
                              return transform(*old);
                            }));
  return file_write(id.path, out);
}

}  // namespace

Result<BlockWrite> Blocks::edit(const source::Attribution& who, std::string_view block_id,
                                const std::vector<LineEdit>& ops) {
  return change_block(*impl_, who, block_id,
                      [&](std::string_view text, const std::vector<size_t>& starts) {
                        return plan_line_edits(text, starts, ops, block_id);
                      });
}

Result<BlockWrite> Blocks::splice(const source::Attribution& who, std::string_view block_id,
                                  uint64_t offset, uint64_t delete_count,
                                  std::string_view insert) {
  return change_block(
      *impl_, who, block_id,
      [&](std::string_view text, const std::vector<size_t>&) -> Result<std::vector<TextSplice>> {
        WEFT_ASSIGN_OR_RETURN(TextSplice s,
                              plan_splice(text, offset, delete_count, insert, block_id));
        if (s.erase == 0 && s.insert.empty()) return std::vector<TextSplice>{};
        return std::vector<TextSplice>{std::move(s)};
      });
}

Result<PatchResult> Blocks::apply_patch(const source::Attribution& who,
                                        std::string_view block_id, std::string_view patch,
                                        bool dry_run) {
  WEFT_ASSIGN_OR_RETURN(text::FilePatch fp, one_patch(patch, block_id));
  if (dry_run) {
    WEFT_ASSIGN_OR_RETURN(BlockContent now, read(block_id, ReadOptions{false, std::nullopt}));
    text::PatchPlan plan = text::plan_patch(now.content, fp);
    if (!plan.ok) return patch_failure(plan);
    PatchResult r;
    r.success = true;
    r.version = now.version;
    r.diff = path_diff(now.content, plan.new_text, block_id);
    return r;
  }
  std::optional<text::PatchPlan> failed;
  auto written = change_block(
      *impl_, who, block_id,
      [&](std::string_view text, const std::vector<size_t>&) -> Result<std::vector<TextSplice>> {
        text::PatchPlan plan = text::plan_patch(text, fp);
        if (!plan.ok) {
          failed = plan;
          return failed_precondition(plan.summary());
        }
        if (plan.new_text == text) return std::vector<TextSplice>{};
        return std::vector<TextSplice>{diff_splice(text, plan.new_text)};
      });
  if (failed) return patch_failure(*failed);
  if (!written.ok()) return written.status();
  PatchResult r;
  r.success = true;
  r.version = written->version;
  r.pending_approval = written->pending_approval;
  return r;
}

// ---------------------------------------------------------------- reading

namespace {

// The text of a file block with what read() shows about it.
Result<BlockContent> file_content(Blocks::Impl& b, const BlockId& id, std::string* text) {
  WEFT_ASSIGN_OR_RETURN(*text, b.kernel->read_text(id.path));
  BlockContent c;
  c.block_id = file_block_id(id.path);
  c.role = BlockRole::kSystem;
  c.kind = BlockKind::kFile;
  c.status = BlockStatus::kDone;
  c.metadata = {{"path", id.path}};
  auto st = b.kernel->status(id.path);
  if (st.ok() && !st->empty()) {
    c.version = (*st)[0].version;
    c.dirty = (*st)[0].dirty;
    c.permission = (*st)[0].permission;
  }
  return c;
}

}  // namespace

Result<BlockContent> Blocks::read(std::string_view block_id, const ReadOptions& options) {
  Impl& b = *impl_;
  WEFT_ASSIGN_OR_RETURN(BlockId id, parse_block_id(block_id));
  if (id.type == BlockId::Type::kMemory) return b.memory_read_block(id, options);
  if (id.type == BlockId::Type::kFile) {
    std::string text;
    WEFT_ASSIGN_OR_RETURN(BlockContent c, file_content(b, id, &text));
    WEFT_RETURN_IF_ERROR(render_lines(text, line_starts(text), options, c));
    return c;
  }
  WEFT_ASSIGN_OR_RETURN(auto e, b.conv(std::string(block_id)));
  std::lock_guard lock(e->mu);
  WEFT_RETURN_IF_ERROR(b.flush_locked(*e));
  WEFT_RETURN_IF_ERROR(b.ensure_loaded(*e));
  BlockContent c;
  c.block_id = e->id;
  c.parent_id = e->parent;
  c.role = e->role;
  c.kind = e->kind;
  c.status = e->status;
  c.metadata = e->meta;
  c.version = e->version;
  c.permission = e->permission;
  c.deleted = e->deleted;
  c.deleted_by = e->deleted_by;
  c.deleted_at = e->deleted_at;
  WEFT_RETURN_IF_ERROR(render_lines(e->text, e->starts, options, c));
  return c;
}

Result<BlockSearch> Blocks::search(std::string_view block_id, std::string_view query,
                                   const SearchOptions& options) {
  Impl& b = *impl_;
  WEFT_ASSIGN_OR_RETURN(BlockId id, parse_block_id(block_id));
  if (id.type != BlockId::Type::kConversation) {
    WEFT_ASSIGN_OR_RETURN(BlockContent c, read(block_id, ReadOptions{false, std::nullopt}));
    return search_text(c.content, line_starts(c.content), query, options);
  }
  WEFT_ASSIGN_OR_RETURN(auto e, b.conv(std::string(block_id)));
  std::lock_guard lock(e->mu);
  WEFT_RETURN_IF_ERROR(b.flush_locked(*e));
  WEFT_RETURN_IF_ERROR(b.ensure_loaded(*e));
  return search_text(e->text, e->starts, query, options);
}

Result<BlockListing> Blocks::list(const source::Attribution& who, const ListFilter& filter) {
  Impl& b = *impl_;
  WEFT_RETURN_IF_ERROR(check_list_filter(filter));
  BlockListing out;
  auto full = [&] {
    if (out.blocks.size() < filter.limit) return false;
    out.truncated = true;
    return true;
  };
  bool conversations = !filter.kind || (*filter.kind != BlockKind::kFile &&
                                        *filter.kind != BlockKind::kMemory);
  if (filter.parent_id) {
    WEFT_ASSIGN_OR_RETURN(BlockId pid, parse_block_id(*filter.parent_id));
    if (pid.type == BlockId::Type::kConversation && !b.find(*filter.parent_id)) {
      return not_found("no block '" + *filter.parent_id + "' to list the children of");
    }
  }
  // Conversation blocks: breadth first from the parent (or the roots).
  std::vector<std::pair<std::shared_ptr<ConvEntry>, size_t>> found;
  if (conversations) {
    std::lock_guard lock(b.index_mu);
    std::deque<std::pair<const std::vector<std::shared_ptr<ConvEntry>>*, size_t>> queue;
    static const std::vector<std::shared_ptr<ConvEntry>> kNone;
    if (filter.parent_id) {
      auto it = b.children.find(*filter.parent_id);
      queue.push_back({it == b.children.end() ? &kNone : &it->second, 1});
    } else {
      queue.push_back({&b.roots, 1});
    }
    while (!queue.empty()) {
      auto [level, depth] = queue.front();
      queue.pop_front();
      for (const auto& e : *level) {
        found.push_back({e, depth});
        if (depth < filter.depth) {
          auto it = b.children.find(e->id);
          if (it != b.children.end()) queue.push_back({&it->second, depth + 1});
        }
      }
    }
  }
  for (auto& [e, depth] : found) {
    if (e->deleted && !filter.include_deleted) continue;
    std::lock_guard lock(e->mu);
    if (filter.kind && e->kind != *filter.kind) continue;
    if (filter.path_prefix) {
      auto it = e->meta.find("path");
      if (it == e->meta.end() || !it->is_string() ||
          it->get<std::string>().rfind(*filter.path_prefix, 0) != 0) {
        continue;
      }
    }
    if (!e->pending.empty()) {
      Status s = b.flush_locked(*e);
      if (!s.ok()) return s;
    }
    if (filter.status && e->status != *filter.status) continue;
    if (full()) return out;
    BlockSummary s;
    s.block_id = e->id;
    s.parent_id = e->parent;
    s.role = e->role;
    s.kind = e->kind;
    s.status = e->status;
    auto it = e->meta.find("path");
    if (it != e->meta.end() && it->is_string()) s.path = it->get<std::string>();
    s.summary = e->summary;
    s.version = e->version;
    s.dirty = !e->pending.empty();
    s.depth = depth;
    s.deleted = e->deleted;
    out.blocks.push_back(std::move(s));
  }
  if (filter.parent_id) return out;
  bool done_status = !filter.status || *filter.status == BlockStatus::kDone;
  // The caller's memory blocks.
  if (done_status && !filter.path_prefix && (!filter.kind || *filter.kind == BlockKind::kMemory)) {
    std::string agent = agent_name_of(who.origin);
    auto listed = b.memory->list(store::BlockFilter{agent, std::nullopt, std::nullopt, false, 0});
    if (!listed.ok()) return listed.status();
    for (const auto& info : listed->blocks) {
      if (full()) return out;
      BlockSummary s;
      s.block_id = memory_block_id(agent, info.label);
      s.role = BlockRole::kSystem;
      s.kind = BlockKind::kMemory;
      s.status = BlockStatus::kDone;
      s.summary = info.description;
      s.version = info.persisted_version;
      s.dirty = b.memory->is_dirty(agent, info.label);
      out.blocks.push_back(std::move(s));
    }
  }
  // File blocks, when asked for.
  if (done_status && (filter.path_prefix || (filter.kind && *filter.kind == BlockKind::kFile)) &&
      (!filter.kind || *filter.kind == BlockKind::kFile)) {
    std::optional<std::string> dir;
    std::string prefix = filter.path_prefix.value_or("");
    while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
    auto files = b.kernel->status(std::nullopt);
    if (!files.ok()) return files.status();
    for (const FileStatus& f : *files) {
      if (!f.is_block || f.deleted) continue;
      if (!prefix.empty() && f.path.rfind(prefix, 0) != 0) continue;
      if (full()) return out;
      BlockSummary s;
      s.block_id = file_block_id(f.path);
      s.role = BlockRole::kSystem;
      s.kind = BlockKind::kFile;
      s.status = BlockStatus::kDone;
      s.path = f.path;
      s.summary = f.frozen.empty() ? f.path : f.path + " (frozen: " + f.frozen + ")";
      s.version = f.version;
      s.dirty = f.dirty;
      out.blocks.push_back(std::move(s));
    }
  }
  return out;
}

// ---------------------------------------------------------------- history

Result<std::vector<source::FileHistoryEntry>> Blocks::history(std::string_view block_id,
                                                              size_t limit) {
  Impl& b = *impl_;
  WEFT_ASSIGN_OR_RETURN(BlockId id, parse_block_id(block_id));
  if (id.type == BlockId::Type::kFile) return b.kernel->history(id.path, limit);
  if (id.type == BlockId::Type::kMemory) return b.memory_history(id, limit);
  WEFT_ASSIGN_OR_RETURN(auto e, b.conv(std::string(block_id)));
  std::lock_guard lock(e->mu);
  WEFT_RETURN_IF_ERROR(b.flush_locked(*e));
  WEFT_RETURN_IF_ERROR(b.ensure_loaded(*e));
  return e->block->history(limit);
}

Result<std::string> Blocks::diff(std::string_view block_id, std::optional<std::string> from,
                                 std::optional<std::string> to) {
  Impl& b = *impl_;
  WEFT_ASSIGN_OR_RETURN(BlockId id, parse_block_id(block_id));
  if (id.type == BlockId::Type::kFile) return b.kernel->diff(id.path, from, to);
  if (id.type == BlockId::Type::kMemory) {
    WEFT_ASSIGN_OR_RETURN(auto entries, b.memory_history(id, 0));
    if (entries.empty()) return std::string();
    std::string to_v = to.value_or(entries[0].version);
    std::string from_v;
    if (from) {
      from_v = *from;
    } else {
      for (size_t i = 0; i < entries.size(); ++i) {
        if (entries[i].version == to_v) from_v = i + 1 < entries.size() ? entries[i + 1].version : "v0";
      }
      if (from_v.empty()) return not_found("'" + to_v + "' is no version of '" +
                                           std::string(block_id) + "': see block_history");
    }
    WEFT_ASSIGN_OR_RETURN(std::string a, b.memory_text_at(id, from_v));
    WEFT_ASSIGN_OR_RETURN(std::string c, b.memory_text_at(id, to_v));
    return path_diff(a, c, block_id);
  }
  WEFT_ASSIGN_OR_RETURN(auto e, b.conv(std::string(block_id)));
  std::lock_guard lock(e->mu);
  WEFT_RETURN_IF_ERROR(b.flush_locked(*e));
  WEFT_RETURN_IF_ERROR(b.ensure_loaded(*e));
  std::string to_version = to.value_or(e->version);
  std::string from_version;
  if (from) {
    from_version = *from;
  } else {
    WEFT_ASSIGN_OR_RETURN(from_version, e->block->previous_version(to_version));
  }
  return e->block->diff(from_version, to_version, block_id);
}

Result<BlockWrite> Blocks::rollback(const source::Attribution& who, std::string_view block_id,
                                    std::string_view version) {
  Impl& b = *impl_;
  WEFT_ASSIGN_OR_RETURN(BlockId id, parse_block_id(block_id));
  if (id.type == BlockId::Type::kFile) {
    WEFT_ASSIGN_OR_RETURN(ChangeOutcome out, b.kernel->rollback(id.path, version, who));
    return file_write(id.path, out);
  }
  if (id.type == BlockId::Type::kMemory) {
    WEFT_ASSIGN_OR_RETURN(std::string target, b.memory_text_at(id, version));
    return b.memory_text_write(
        id, who, [&](std::string) -> Result<std::string> { return target; }, false, "");
  }
  WEFT_ASSIGN_OR_RETURN(auto e, b.conv(std::string(block_id)));
  std::lock_guard lock(e->mu);
  WEFT_RETURN_IF_ERROR(b.flush_locked(*e));
  return b.conv_rollback(who, *e, version);
}

namespace {

Result<BlockWrite> undo_or_redo(Blocks::Impl& b, const source::Attribution& who,
                                std::string_view block_id, bool redo) {
  WEFT_ASSIGN_OR_RETURN(BlockId id, parse_block_id(block_id));
  if (id.type == BlockId::Type::kFile) {
    WEFT_ASSIGN_OR_RETURN(ChangeOutcome out, redo ? b.kernel->redo(id.path, who)
                                                  : b.kernel->undo(id.path, who));
    return file_write(id.path, out);
  }
  if (id.type == BlockId::Type::kMemory) {
    return failed_precondition("memory blocks keep no undo log: change '" +
                               std::string(block_id) +
                               "' back with memory_update, or block_rollback to a version from "
                               "block_history");
  }
  WEFT_ASSIGN_OR_RETURN(auto e, b.conv(std::string(block_id)));
  std::lock_guard tree(b.tree_mu);  // the unit may be a delete
  std::lock_guard lock(e->mu);
  WEFT_RETURN_IF_ERROR(b.flush_locked(*e));
  return b.conv_undo(who, *e, redo);
}

}  // namespace

Result<BlockWrite> Blocks::undo(const source::Attribution& who, std::string_view block_id) {
  return undo_or_redo(*impl_, who, block_id, false);
}

Result<BlockWrite> Blocks::redo(const source::Attribution& who, std::string_view block_id) {
  return undo_or_redo(*impl_, who, block_id, true);
}

}  // namespace weft::kernel
