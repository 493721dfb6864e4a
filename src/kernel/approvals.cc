// The approval queue: changes the rules sent to a person, kept in the
// kernel's database (one store row each, label "approval:<id>") so that a
// restart keeps them; approve applies the change merged with what happened
// since, reject drops it.
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>

#include "kernel/kernel_impl.h"

namespace weft::kernel {

using Json = nlohmann::json;

std::string approval_to_json(const Approval& a) {
  Json j = {{"kind", "approval"},
            {"id", a.id},
            {"path", a.path},
            {"author", a.author},
            {"what", a.what},
            {"op", a.op},
            {"rule", a.rule},
            {"base_version", a.base_version},
            {"target_path", a.target_path},
            {"overwrite", a.overwrite},
            {"diff", a.diff},
            {"disk_diff", a.disk_diff},
            {"created_at_ms", a.created_at_ms},
            {"state", a.state},
            {"decided_by", a.decided_by},
            {"decided_at_ms", a.decided_at_ms}};
  j["proposed_text"] = a.proposed_text ? Json(*a.proposed_text) : Json(nullptr);
  return j.dump();
}

Result<Approval> approval_from_json(std::string_view text) {
  Json j = Json::parse(text, nullptr, false);
  if (!j.is_object()) return data_loss("an approval record is not a JSON object");
  Approval a;
  try {
    a.id = j.at("id").get<std::string>();
    a.path = j.at("path").get<std::string>();
    a.author = j.value("author", std::string());
    a.what = j.value("what", std::string());
    a.op = j.value("op", std::string());
    a.rule = j.value("rule", std::string());
    a.base_version = j.value("base_version", std::string("v0"));
    a.target_path = j.value("target_path", std::string());
    a.overwrite = j.value("overwrite", false);
    a.diff = j.value("diff", std::string());
    a.disk_diff = j.value("disk_diff", std::string());
    a.created_at_ms = j.value("created_at_ms", int64_t{0});
    a.state = j.value("state", std::string("pending"));
    a.decided_by = j.value("decided_by", std::string());
    a.decided_at_ms = j.value("decided_at_ms", int64_t{0});
    if (j.contains("proposed_text") && j["proposed_text"].is_string()) {
      a.proposed_text = j["proposed_text"].get<std::string>();
    }
  } catch (const Json::exception& ex) {
    return data_loss(std::string("an approval record is damaged: ") + ex.what());
  }
  return a;
}

Status Kernel::Impl::load_approvals() {
  store::BlockFilter filter;
  filter.agent_id = std::string(kWorkspaceOwner);
  filter.label_prefix = std::string(kApprovalPrefix);
  WEFT_ASSIGN_OR_RETURN(store::BlockList listed, store->list_blocks(filter));
  std::lock_guard lock(approvals_mu);
  for (const auto& info : listed.blocks) {
    auto a = approval_from_json(info.metadata_json);
    if (!a.ok()) {
      log("kernel: approval " + info.label + ": " + std::string(a.status().message()));
      continue;
    }
    approval_rows[a->id] = info.id;
    approvals[a->id] = std::move(*a);
  }
  return Status();
}

Result<Approval> Kernel::Impl::add_approval(Approval a) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  char id[32];
  std::snprintf(id, sizeof id, "apr_%012llx",
                static_cast<unsigned long long>(rng() & 0xffffffffffffull));
  a.id = id;
  a.created_at_ms = store::now_ms();
  a.state = "pending";
  store::NewBlock nb;
  nb.agent_id = std::string(kWorkspaceOwner);
  nb.label = std::string(kApprovalPrefix) + a.id;
  nb.description = "approval of " + a.op + " of " + a.path + " by " + a.author;
  nb.block_type = store::BlockType::kLog;
  nb.metadata_json = approval_to_json(a);
  WEFT_ASSIGN_OR_RETURN(store::BlockInfo info, store->create_block(nb));
  std::lock_guard lock(approvals_mu);
  approval_rows[a.id] = info.id;
  approvals[a.id] = a;
  log("kernel: pending approval " + a.id + ": " + a.op + " of '" + a.path + "' by " + a.author);
  return a;
}

Status Kernel::Impl::save_approval(const Approval& a) {
  std::string row;
  {
    std::lock_guard lock(approvals_mu);
    approvals[a.id] = a;
    row = approval_rows[a.id];
  }
  store::BlockPatch patch;
  patch.metadata_json = approval_to_json(a);
  return store->update_block(row, patch).status();
}

std::vector<std::string> Kernel::Impl::pending_for(const std::string& path) {
  std::vector<std::string> out;
  std::lock_guard lock(approvals_mu);
  for (const auto& [id, a] : approvals) {
    if (a.state == "pending" && a.path == path) out.push_back(id);
  }
  return out;
}

std::vector<Approval> Kernel::approvals(bool include_decided) {
  std::vector<Approval> out;
  std::lock_guard lock(impl_->approvals_mu);
  for (const auto& [id, a] : impl_->approvals) {
    if (include_decided || a.state == "pending") out.push_back(a);
  }
  std::sort(out.begin(), out.end(), [](const Approval& x, const Approval& y) {
    return x.created_at_ms != y.created_at_ms ? x.created_at_ms < y.created_at_ms : x.id < y.id;
  });
  return out;
}

Result<Approval> Kernel::approval(std::string_view id) {
  std::lock_guard lock(impl_->approvals_mu);
  auto it = impl_->approvals.find(std::string(id));
  if (it == impl_->approvals.end()) {
    return not_found("no approval '" + std::string(id) +
                     "'; `weft approvals list` shows the pending ones");
  }
  return it->second;
}

namespace {

Result<Approval> pending_approval(Kernel& kernel, std::string_view id) {
  WEFT_ASSIGN_OR_RETURN(Approval a, kernel.approval(id));
  if (a.state != "pending") {
    return failed_precondition("approval " + a.id + " was already " + a.state + " by " +
                               a.decided_by);
  }
  return a;
}

}  // namespace

Result<ChangeOutcome> Kernel::approve(std::string_view id, std::string_view person) {
  Impl& k = *impl_;
  std::lock_guard decide(k.decide_mu);
  WEFT_ASSIGN_OR_RETURN(Approval a, pending_approval(*this, id));
  std::string approver = "human:" + std::string(person.empty() ? "unknown" : person);
  source::Attribution who{a.author, a.what + " (approved by " + approver + ")", {}};
  ChangeOutcome out;
  if (a.op == "delete") {
    WEFT_RETURN_IF_ERROR(k.apply_remove(a.path, true, a.author));
    out.removed = true;
  } else if (a.op == "move") {
    WEFT_RETURN_IF_ERROR(k.apply_move(a.path, a.target_path, a.overwrite));
  } else if (a.op == "copy") {
    WEFT_RETURN_IF_ERROR(k.apply_copy(a.path, a.target_path, a.overwrite));
  } else if (a.op == "shell") {
    WEFT_RETURN_IF_ERROR(k.run_approved_shell(a));
  } else if (a.proposed_text) {
    WEFT_ASSIGN_OR_RETURN(auto e, k.entry(a.path));
    std::lock_guard lock(e->mu);
    WEFT_RETURN_IF_ERROR(k.ensure_loaded(*e));
    Status synced = k.sync_from_disk(*e);
    if (!synced.ok()) return synced;
    if (!e->frozen.empty()) {
      return failed_precondition("'" + a.path + "' is no longer a text file (" + e->frozen +
                                 "); reject the approval");
    }
    source::ChangeResult change;
    if (!e->block) {
      WEFT_ASSIGN_OR_RETURN(source::FileBlock block,
                            source::FileBlock::create(*a.proposed_text, source::DiskState{}, who));
      e->block.emplace(std::move(block));
      change.changed = true;
      change.before = "v0";
      change.after = e->block->version();
    } else {
      out.old_text = e->block->text();
      WEFT_ASSIGN_OR_RETURN(change, e->block->apply_on_base(a.base_version, *a.proposed_text, who));
    }
    e->deleted = false;
    if (change.changed) k.record_undo(*e, a.author, change, false);
    WEFT_RETURN_IF_ERROR(k.persist(*e));
    WEFT_RETURN_IF_ERROR(k.write_block_to_disk(*e));
    out.version = e->block->version();
    out.new_text = e->block->text();
    if (change.changed) k.notify(*e, approver);
  } else {
    return data_loss("approval " + a.id + " has no change to apply (op " + a.op + ")");
  }
  a.state = "approved";
  a.decided_by = approver;
  a.decided_at_ms = store::now_ms();
  WEFT_RETURN_IF_ERROR(k.save_approval(a));
  out.applied = true;
  return out;
}

Status Kernel::reject(std::string_view id, std::string_view person) {
  std::lock_guard decide(impl_->decide_mu);
  WEFT_ASSIGN_OR_RETURN(Approval a, pending_approval(*this, id));
  a.state = "rejected";
  a.decided_by = "human:" + std::string(person.empty() ? "unknown" : person);
  a.decided_at_ms = store::now_ms();
  return impl_->save_approval(a);
}

}  // namespace weft::kernel
