#include "source/coalescer.h"

#include <algorithm>
#include <utility>

namespace weft::source::internal {

using Kind = FileChange::Kind;

Coalescer::Coalescer(Clock::duration quiet, Clock::duration max_delay,
                     Clock::duration max_open_delay, size_t max_pending)
    : quiet_(quiet),
      max_delay_(std::max(max_delay, quiet)),
      max_open_delay_(std::max(max_open_delay, max_delay_)),
      max_pending_(std::max<size_t>(max_pending, 1)) {}

void Coalescer::check_bound(TimePoint now) {
  if (order_.size() >= max_pending_) rescan(now);
}

Coalescer::Entry& Coalescer::touch(const std::string& path, Before before, TimePoint now) {
  auto it = entries_.find(path);
  if (it != entries_.end()) {
    it->second.last = now;
    return it->second;
  }
  check_bound(now);
  Entry e;
  e.id = next_id_++;
  e.seq = next_seq_++;
  e.first = e.last = now;
  e.before = before;
  e.exists = before != Before::kNo;
  order_[e.seq] = Slot{false, path, {}, {}};
  by_id_[e.id] = path;
  return entries_.emplace(path, e).first->second;
}

void Coalescer::seal(std::vector<FileChange> changes, TimePoint now) {
  check_bound(now);
  order_[next_seq_++] = Slot{true, "", std::move(changes), now + quiet_};
}

void Coalescer::expire(Entry& e) {
  if (!e.awaiting) return;
  // A carry of original content leaves the entry not existing and not new:
  // it reports kDeleted; a carry of new content leaves nothing to report.
  cookies_.erase(e.cookie);
  moved_out_.push_back(e.cookie);
  e.awaiting = false;
  e.cookie = 0;
  if (e.is_dir) freeze_children(by_id_.at(e.id));
}

void Coalescer::freeze_children(const std::string& path) {
  const std::string prefix = path + "/";
  std::vector<std::string> keys;
  for (auto it = entries_.lower_bound(prefix);
       it != entries_.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
    keys.push_back(it->first);
  }
  for (const auto& key : keys) {
    auto it = entries_.find(key);
    if (it == entries_.end()) continue;  // frozen with a directory above it
    expire(it->second);
    freeze(key);
  }
}

void Coalescer::resequence(const std::string& path, Entry& e) {
  order_.erase(e.seq);
  e.seq = next_seq_++;
  order_[e.seq] = Slot{false, path, {}, {}};
}

void Coalescer::drop(const std::string& path) {
  auto it = entries_.find(path);
  if (it == entries_.end()) return;
  order_.erase(it->second.seq);
  by_id_.erase(it->second.id);
  entries_.erase(it);
}

void Coalescer::freeze(const std::string& path) {
  auto it = entries_.find(path);
  if (it == entries_.end()) return;
  std::vector<FileChange> changes;
  emit(path, it->second, &changes);
  if (changes.empty()) {
    drop(path);
    return;
  }
  order_[it->second.seq] = Slot{true, "", std::move(changes), deadline(it->second)};
  by_id_.erase(it->second.id);
  entries_.erase(it);
}

Coalescer::Entry& Coalescer::touch_for_content(const std::string& path, Before before,
                                                TimePoint now) {
  if (auto it = entries_.find(path); it != entries_.end()) {
    expire(it->second);
    // A directory that went away must be told before anything new appears
    // there: kCreated would not make the receiver forget its old subtree.
    if (!it->second.exists && it->second.is_dir) freeze(path);
  }
  return touch(path, before, now);
}

void Coalescer::created(const std::string& path, bool is_dir, TimePoint now) {
  Entry& e = touch_for_content(path, Before::kNo, now);
  if (!e.exists || !e.fresh_content) {
    e.exists = true;
    e.fresh_content = true;
  }
  e.is_dir = is_dir;
  e.open = false;  // a new file (or one moved in): not what a writer had open
}

void Coalescer::changed(const std::string& path, bool is_dir, TimePoint now) {
  Entry& e = touch_for_content(path, Before::kYes, now);
  if (!e.exists) {
    e.exists = true;
    e.fresh_content = true;
  }
  e.modified = true;
  e.is_dir = is_dir;
}

void Coalescer::written(const std::string& path, TimePoint now) {
  changed(path, false, now);
  entries_.at(path).open = true;
}

void Coalescer::closed(const std::string& path, TimePoint now) {
  changed(path, false, now);
  Entry& e = entries_.at(path);
  if (!e.open) return;
  e.open = false;
  e.was_open = true;
  e.closed_at = now;
}

void Coalescer::deleted(const std::string& path, bool is_dir, TimePoint now) {
  Entry& e = touch(path, Before::kYes, now);
  expire(e);
  if (is_dir) {
    resequence(path, e);
    freeze_children(path);
  }
  e.exists = false;
  e.fresh_content = false;
  e.modified = false;
  e.is_dir = is_dir;
  e.open = false;
}

void Coalescer::moved_from(const std::string& path, bool is_dir, uint32_t cookie, TimePoint now) {
  if (auto old = cookies_.find(cookie); old != cookies_.end()) {
    auto id = by_id_.find(old->second.source_id);
    if (id != by_id_.end()) expire(entries_.at(id->second));
    cookies_.erase(cookie);
  }
  Entry& e = touch(path, Before::kYes, now);
  expire(e);
  resequence(path, e);
  // A directory's rename is always kept: the receiver may know paths under
  // it (renamed into it) even when the directory itself is new.
  const bool original = e.exists && !e.fresh_content;
  cookies_[cookie] =
      Carry{e.id, original || is_dir, e.modified, is_dir, e.exists && !original, e.open};
  e.exists = false;
  e.fresh_content = false;
  e.modified = false;
  e.open = false;
  e.is_dir = is_dir;
  e.awaiting = true;
  e.cookie = cookie;
}

bool Coalescer::moved_to(const std::string& path, bool is_dir, uint32_t cookie, TimePoint now) {
  auto found = cookies_.find(cookie);
  auto id = found == cookies_.end() ? by_id_.end() : by_id_.find(found->second.source_id);
  if (id == by_id_.end()) {
    if (found != cookies_.end()) cookies_.erase(found);
    created(path, is_dir, now);
    return false;
  }
  const Carry carry = found->second;
  const std::string source = id->second;
  cookies_.erase(found);
  {
    Entry& s = entries_.at(source);
    s.awaiting = false;
    s.cookie = 0;
    if (source == path) {  // back onto itself: nothing moved
      s.last = now;
      s.exists = true;
      s.fresh_content = !carry.original;
      s.modified = carry.modified;
      s.open = carry.open;
      return true;
    }
  }
  if (carry.original) {
    // What the receiver knows of `source` now belongs at `path`: fix the
    // rename here; both paths start over after it.
    drop(source);
    if (auto d = entries_.find(path); d != entries_.end()) {
      expire(d->second);
      drop(path);
    }
    // What was pending under a directory replaced here stays before the rename.
    if (carry.is_dir) freeze_children(path);
    seal({FileChange{Kind::kRenamed, path, source, carry.is_dir}}, now);
    Entry& d = touch(path, Before::kYes, now);
    d.modified = carry.modified;
    d.is_dir = carry.is_dir;
    d.fresh_content = carry.fresh;  // a new directory: kCreated after the rename
    d.open = carry.open;             // a file renamed while written: held until closed
  } else {
    // Content made in the window (a temp file): it simply appears at `path`.
    Entry& d = touch_for_content(path, Before::kUnknown, now);
    d.exists = true;
    d.fresh_content = true;
    d.modified = true;
    d.is_dir = carry.is_dir;
    d.open = carry.open;
  }
  if (carry.is_dir || is_dir) rekey_children(source, path);
  return true;
}

void Coalescer::rekey_children(const std::string& from, const std::string& to) {
  const std::string prefix = from + "/";
  std::vector<std::pair<uint64_t, std::string>> moving;
  for (auto it = entries_.lower_bound(prefix);
       it != entries_.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
    moving.emplace_back(it->second.seq, it->first);
  }
  std::sort(moving.begin(), moving.end());
  for (const auto& [seq, key] : moving) {
    auto node = entries_.extract(key);
    order_.erase(seq);
    std::string new_key = to + "/" + key.substr(prefix.size());
    if (auto old = entries_.find(new_key); old != entries_.end()) {
      expire(old->second);
      freeze(new_key);
    }
    node.key() = new_key;
    node.mapped().seq = next_seq_++;
    order_[node.mapped().seq] = Slot{false, new_key, {}, {}};
    by_id_[node.mapped().id] = new_key;
    entries_.insert(std::move(node));
  }
}

void Coalescer::rescan(TimePoint now) {
  for (const auto& [cookie, carry] : cookies_) moved_out_.push_back(cookie);
  cookies_.clear();
  entries_.clear();
  order_.clear();
  by_id_.clear();
  if (!rescan_) rescan_at_ = now;
  rescan_ = true;
}

Coalescer::TimePoint Coalescer::deadline(const Entry& e) const {
  const TimePoint open_cap = e.first + max_open_delay_;
  if (e.open) return open_cap;
  TimePoint cap = e.first + max_delay_;
  // A write that took longer than max_delay still gets its quiet period
  // after the close (a temp file closed, then renamed over its target).
  if (e.was_open) cap = std::min(std::max(cap, e.closed_at + quiet_), open_cap);
  return std::min(e.last + quiet_, cap);
}

void Coalescer::emit(const std::string& path, const Entry& e, std::vector<FileChange>* out) const {
  if (e.exists) {
    if (e.fresh_content) {
      bool created = e.is_dir || e.before == Before::kNo;
      out->push_back(FileChange{created ? Kind::kCreated : Kind::kChanged, path, "", e.is_dir});
    } else if (e.modified && !e.is_dir) {
      out->push_back(FileChange{Kind::kChanged, path, "", false});
    }
  } else if (e.before != Before::kNo || e.is_dir) {
    // A directory the receiver never heard of may still have known paths
    // under it (renamed into it): its loss is always told.
    out->push_back(FileChange{Kind::kDeleted, path, "", e.is_dir});
  }
}

Coalescer::Due Coalescer::take_due(TimePoint now) {
  Due out;
  uint64_t cutoff = 0;
  for (const auto& [seq, slot] : order_) {
    TimePoint due = slot.is_sealed ? slot.due : deadline(entries_.at(slot.path));
    if (due <= now) cutoff = seq;
  }
  if (rescan_) {
    out.changes.push_back(FileChange{Kind::kRescan, "", "", false});
    rescan_ = false;
  }
  for (auto it = order_.begin(); it != order_.end() && it->first <= cutoff;) {
    Slot& slot = it->second;
    if (slot.is_sealed) {
      for (auto& change : slot.sealed) out.changes.push_back(std::move(change));
      it = order_.erase(it);
      continue;
    }
    auto entry = entries_.find(slot.path);
    if (held(entry->second, now)) {  // a file being written keeps its place
      ++it;
      continue;
    }
    expire(entry->second);
    emit(slot.path, entry->second, &out.changes);
    by_id_.erase(entry->second.id);
    entries_.erase(entry);
    it = order_.erase(it);
  }
  out.moved_out = std::move(moved_out_);
  moved_out_.clear();
  return out;
}

std::optional<Coalescer::TimePoint> Coalescer::next_deadline() const {
  std::optional<TimePoint> next;
  if (rescan_) next = rescan_at_;
  for (const auto& [seq, slot] : order_) {
    TimePoint due = slot.is_sealed ? slot.due : deadline(entries_.at(slot.path));
    if (!next || due < *next) next = due;
  }
  return next;
}

}  // namespace weft::source::internal
