// Session state (see include/weft/server/session.h).
#include "weft/server/session.h"

#include <algorithm>
#include <utility>

namespace weft::server {

void CancelGroup::add(const std::shared_ptr<std::atomic<bool>>& flag) {
  std::lock_guard lock(mu_);
  if (cancelled_) flag->store(true);
  flags_.push_back(flag);
}

void CancelGroup::remove(const std::shared_ptr<std::atomic<bool>>& flag) {
  std::lock_guard lock(mu_);
  flags_.erase(std::remove(flags_.begin(), flags_.end(), flag), flags_.end());
}

void CancelGroup::cancel() {
  std::lock_guard lock(mu_);
  cancelled_ = true;
  for (const auto& flag : flags_) flag->store(true);
}

bool CancelGroup::cancelled() const {
  std::lock_guard lock(mu_);
  return cancelled_;
}

Session::Session(Sender to_client) : to_client_(std::move(to_client)) {}

void Session::set_initialized(std::string protocol_version, Json client_capabilities) {
  std::lock_guard lock(mu_);
  protocol_version_ = std::move(protocol_version);
  client_capabilities_ =
      client_capabilities.is_object() ? std::move(client_capabilities) : Json::object();
}

void Session::set_client_name(std::string name) {
  // Printable ASCII without spaces, at most 64 bytes: it ends up in commit
  // messages and history listings.
  std::string clean;
  for (char c : name) {
    if (clean.size() >= 64) break;
    unsigned char u = static_cast<unsigned char>(c);
    clean.push_back(u > 0x20 && u < 0x7f ? c : '_');
  }
  std::lock_guard lock(mu_);
  client_name_ = clean.empty() ? "unknown" : std::move(clean);
}

std::string Session::client_name() const {
  std::lock_guard lock(mu_);
  return client_name_;
}

void Session::mark_client_ready() {
  std::lock_guard lock(mu_);
  client_ready_ = true;
}

std::string Session::protocol_version() const {
  std::lock_guard lock(mu_);
  return protocol_version_;
}

Json Session::client_capabilities() const {
  std::lock_guard lock(mu_);
  return client_capabilities_;
}

bool Session::client_ready() const {
  std::lock_guard lock(mu_);
  return client_ready_;
}

void Session::set_log_level(LogLevel level) {
  std::lock_guard lock(mu_);
  log_level_ = level;
}

std::optional<LogLevel> Session::log_level() const {
  std::lock_guard lock(mu_);
  return log_level_;
}

void Session::set_roots(std::vector<std::string> prefixes) {
  std::lock_guard lock(mu_);
  roots_ = std::move(prefixes);
}

std::vector<std::string> Session::roots() const {
  std::lock_guard lock(mu_);
  return roots_;
}

std::shared_ptr<std::atomic<bool>> Session::begin_request(const Json& id) {
  std::lock_guard lock(mu_);
  auto [it, inserted] = in_flight_.emplace(id_key(id), nullptr);
  if (!inserted) return nullptr;
  const auto early = std::find(early_cancels_.begin(), early_cancels_.end(), it->first);
  const bool cancelled = early != early_cancels_.end();
  if (cancelled) early_cancels_.erase(early);
  it->second = std::make_shared<std::atomic<bool>>(cancelled);
  return it->second;
}

void Session::end_request(const Json& id) {
  std::lock_guard lock(mu_);
  in_flight_.erase(id_key(id));
}

bool Session::cancel_request(const Json& id) {
  std::lock_guard lock(mu_);
  std::string key = id_key(id);
  auto it = in_flight_.find(key);
  if (it == in_flight_.end()) {
    if (std::find(early_cancels_.begin(), early_cancels_.end(), key) == early_cancels_.end()) {
      if (early_cancels_.size() == kEarlyCancelsKept) early_cancels_.pop_front();
      early_cancels_.push_back(std::move(key));
    }
    return false;
  }
  it->second->store(true);
  return true;
}

size_t Session::in_flight() const {
  std::lock_guard lock(mu_);
  return in_flight_.size();
}

void Session::send_request(const std::string& method, Json params, ResponseHandler on_response) {
  Json id;
  {
    std::lock_guard lock(mu_);
    id = "weft-" + std::to_string(next_request_++);
    pending_[id_key(id)] = std::move(on_response);
  }
  send(make_request(id, method, std::move(params)));
}

bool Session::take_response(const Message& response) {
  ResponseHandler handler;
  {
    std::lock_guard lock(mu_);
    auto it = pending_.find(id_key(response.id));
    if (it == pending_.end()) return false;
    handler = std::move(it->second);
    pending_.erase(it);
  }
  if (handler) handler(response);
  return true;
}

void Session::send(const Json& message) const {
  if (to_client_) to_client_(message);
}

}  // namespace weft::server
