// Write modes, time formatting and the snapshot record's JSON form.
#include "weft/fs/types.h"

#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>

#include "weft/base/json_depth.h"

namespace weft::fs {

std::string_view write_mode_name(WriteMode mode) {
  switch (mode) {
    case WriteMode::kCreate:
      return "create";
    case WriteMode::kOverwrite:
      return "overwrite";
    case WriteMode::kAppend:
      return "append";
  }
  return "overwrite";
}

Result<WriteMode> parse_write_mode(std::string_view name) {
  if (name == "create") return WriteMode::kCreate;
  if (name == "overwrite") return WriteMode::kOverwrite;
  if (name == "append") return WriteMode::kAppend;
  return invalid_argument("write mode '" + std::string(name) +
                          "' is not one of create, overwrite, append");
}

std::string_view file_type_name(FileType type) {
  switch (type) {
    case FileType::kFile:
      return "file";
    case FileType::kDirectory:
      return "directory";
    case FileType::kSymlink:
      return "symlink";
    case FileType::kFifo:
      return "fifo";
    case FileType::kSocket:
      return "socket";
    case FileType::kCharDevice:
      return "char_device";
    case FileType::kBlockDevice:
      return "block_device";
    case FileType::kOther:
      return "other";
  }
  return "other";
}

std::string_view file_type_mark(FileType type) {
  switch (type) {
    case FileType::kDirectory:
      return "/";
    case FileType::kSymlink:
      return "@";
    case FileType::kFifo:
      return "|";
    case FileType::kSocket:
      return "=";
    default:
      return "";
  }
}

std::string format_time(TimePoint t) {
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
  int64_t secs = us / 1'000'000;
  int64_t frac = us % 1'000'000;
  if (frac < 0) {
    frac += 1'000'000;
    --secs;
  }
  std::time_t tt = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<long long>(frac));
  return buf;
}

Result<TimePoint> parse_time(std::string_view text) {
  std::tm tm{};
  int year = 0, mon = 0, day = 0, hour = 0, min = 0, sec = 0, consumed = 0;
  std::string s(text);
  if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &year, &mon, &day, &hour, &min, &sec,
                  &consumed) != 6) {
    return invalid_argument("time '" + s + "' is not ISO-8601 (YYYY-MM-DDTHH:MM:SS[.ffffff]Z)");
  }
  // system_clock counts nanoseconds in 64 bits: years past 2262 would overflow.
  if (year < 1970 || year > 2200 || mon < 1 || mon > 12 || day < 1 || day > 31 || hour < 0 ||
      hour > 23 || min < 0 || min > 59 || sec < 0 || sec > 60) {
    return invalid_argument("time '" + s + "' is out of range (years 1970-2200)");
  }
  int64_t micros = 0;
  size_t i = static_cast<size_t>(consumed);
  if (i < s.size() && s[i] == '.') {
    int digits = 0;
    for (++i; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i) {
      if (digits++ < 6) micros = micros * 10 + (s[i] - '0');
    }
    for (; digits < 6; ++digits) micros *= 10;
  }
  if (i < s.size() && (s[i] == 'Z' || s.substr(i) == "+00:00")) {
    i = s.size();
  }
  if (i != s.size()) return invalid_argument("time '" + s + "' must be UTC (end in 'Z')");
  tm.tm_year = year - 1900;
  tm.tm_mon = mon - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = min;
  tm.tm_sec = sec;
  std::time_t secs = timegm(&tm);
  return TimePoint(std::chrono::duration_cast<Clock::duration>(std::chrono::seconds(secs) +
                                                               std::chrono::microseconds(micros)));
}

std::string snapshot_to_json(const FilesystemSnapshot& s) {
  nlohmann::json j;
  j["snapshot_id"] = s.snapshot_id;
  j["created_at"] = format_time(s.created_at);
  j["commit_ref"] = s.commit_ref;
  j["root_path"] = s.root_path;
  j["git_dir"] = s.git_dir ? nlohmann::json(*s.git_dir) : nlohmann::json(nullptr);
  j["tag"] = s.tag ? nlohmann::json(*s.tag) : nlohmann::json(nullptr);
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Result<FilesystemSnapshot> snapshot_from_json(std::string_view json) {
  WEFT_RETURN_IF_ERROR(check_json_depth(json).with_context("snapshot record"));
  nlohmann::json j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return invalid_argument("snapshot record is not a JSON object");
  }
  FilesystemSnapshot s;
  auto get_string = [&](const char* key, std::string* out) -> Status {
    auto it = j.find(key);
    if (it == j.end() || !it->is_string()) {
      return invalid_argument(std::string("snapshot record lacks string field '") + key + "'");
    }
    *out = it->get<std::string>();
    return Status();
  };
  auto get_optional = [&](const char* key, std::optional<std::string>* out) -> Status {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return Status();
    if (!it->is_string()) {
      return invalid_argument(std::string("snapshot field '") + key + "' must be a string or null");
    }
    *out = it->get<std::string>();
    return Status();
  };
  std::string created;
  WEFT_RETURN_IF_ERROR(get_string("snapshot_id", &s.snapshot_id));
  WEFT_RETURN_IF_ERROR(get_string("created_at", &created));
  WEFT_RETURN_IF_ERROR(get_string("commit_ref", &s.commit_ref));
  WEFT_RETURN_IF_ERROR(get_string("root_path", &s.root_path));
  WEFT_RETURN_IF_ERROR(get_optional("git_dir", &s.git_dir));
  WEFT_RETURN_IF_ERROR(get_optional("tag", &s.tag));
  WEFT_ASSIGN_OR_RETURN(s.created_at, parse_time(created));
  return s;
}

}  // namespace weft::fs
