// Loro FastSnapshot (mode 3) bodies: the SSTable of loro-kv-store (blocks,
// metadata, checksums, LZ4 frames) around the ChangeStore's change blocks
// (docs/encoding.md §3-§5, encoding-lz4.md).
#include <algorithm>
#include <cstring>

#include "crdt/loro_binary.h"

namespace weft::crdt::detail::loro {
namespace {

constexpr std::string_view kTableMagic = "LORO";
constexpr size_t kBlockSize = 4096;
// The state section of a snapshot that the importer replays (§3).
constexpr std::string_view kOmittedState = "E";

uint32_t read32(std::string_view s, size_t at) {
  uint32_t v = 0;
  for (int k = 0; k < 4; ++k) v |= uint32_t{static_cast<uint8_t>(s[at + k])} << (8 * k);
  return v;
}
uint16_t read16(std::string_view s, size_t at) {
  return static_cast<uint16_t>(static_cast<uint8_t>(s[at]) | (static_cast<uint8_t>(s[at + 1]) << 8));
}
void put_u16le(std::string& out, uint16_t v) {
  out.push_back(static_cast<char>(v & 0xFF));
  out.push_back(static_cast<char>(v >> 8));
}

// One LZ4 block (the sequence format) appended to `out`, which also holds
// what earlier blocks of the frame produced (matches may reach into it).
Status lz4_block(std::string_view in, size_t max_block, std::string& out) {
  const size_t start = out.size();
  size_t i = 0;
  auto more_len = [&](size_t& len) -> bool {
    for (;;) {
      if (i >= in.size()) return false;
      const uint8_t b = static_cast<uint8_t>(in[i++]);
      len += b;
      if (len > max_block) return false;
      if (b != 255) return true;
    }
  };
  while (i < in.size()) {
    const uint8_t token = static_cast<uint8_t>(in[i++]);
    size_t lit = token >> 4;
    if (lit == 15 && !more_len(lit)) return corrupt("bad LZ4 literal length");
    if (lit > in.size() - i || out.size() - start + lit > max_block)
      return corrupt("LZ4 literals overrun");
    out.append(in.substr(i, lit));
    i += lit;
    if (i == in.size()) break;  // the last sequence has no match
    if (in.size() - i < 2) return corrupt("truncated LZ4 match offset");
    const size_t offset = read16(in, i);
    i += 2;
    size_t match = token & 15;
    if (match == 15 && !more_len(match)) return corrupt("bad LZ4 match length");
    match += 4;
    if (offset == 0 || offset > out.size()) return corrupt("bad LZ4 match offset");
    if (out.size() - start + match > max_block) return corrupt("LZ4 block overruns its size");
    size_t from = out.size() - offset;
    for (size_t k = 0; k < match; ++k) out.push_back(out[from + k]);
  }
  return Status();
}

// A decoded SSTable entry.
struct Entry {
  std::string key;
  std::string_view value;
};

// Reads the SSTable `table` (non-empty) into `entries`.
Status read_sstable(std::string_view table, std::deque<std::string>& storage,
                    std::vector<Entry>& entries) {
  if (table.size() < 9 || table.substr(0, 4) != kTableMagic)
    return corrupt("a snapshot section is not an SSTable");
  if (table[4] != 0) return corrupt("unknown SSTable schema version");
  const size_t meta_at = read32(table, table.size() - 4);
  if (meta_at < 5 || meta_at > table.size() - 4) return corrupt("bad SSTable metadata offset");
  std::string_view meta = table.substr(meta_at, table.size() - 4 - meta_at);
  if (meta.size() < 8) return corrupt("truncated SSTable metadata");
  const uint32_t count = read32(meta, 0);
  std::string_view body = meta.substr(4, meta.size() - 8);
  if (xxhash32(body, kSeed) != read32(meta, meta.size() - 4))
    return corrupt("SSTable metadata checksum mismatch");
  // Each block's metadata takes at least 7 bytes.
  if (count == 0 || count > body.size() / 7) return corrupt("bad SSTable block count");
  struct Meta {
    size_t offset;
    std::string first_key;
    bool large;
    uint8_t compression;
  };
  std::vector<Meta> metas;
  Reader r(body);
  for (uint32_t k = 0; k < count && r.ok(); ++k) {
    Meta m;
    m.offset = r.u32le();
    m.first_key = std::string(r.raw(r.u16le()));
    const uint8_t flags = r.u8();
    m.large = flags & 0x80;
    m.compression = flags & 0x7F;
    if (!m.large) r.raw(r.u16le());  // last key
    metas.push_back(std::move(m));
  }
  if (!r.ok()) return r.status();
  if (!r.at_end()) return corrupt("trailing bytes in the SSTable metadata");
  for (size_t k = 0; k < metas.size(); ++k) {
    const size_t begin = metas[k].offset;
    const size_t end = k + 1 < metas.size() ? metas[k + 1].offset : meta_at;
    if (begin < 5 || end > meta_at || begin + 4 > end) return corrupt("bad SSTable block range");
    std::string_view stored = table.substr(begin, end - begin - 4);
    if (xxhash32(stored, kSeed) != read32(table, end - 4))
      return corrupt("SSTable block checksum mismatch");
    std::string_view block = stored;
    if (metas[k].compression == 1) {
      // LZ4 expands at most 255:1.
      WEFT_ASSIGN_OR_RETURN(std::string plain, lz4_frame_decode(stored, 255 * stored.size() + 64));
      block = storage.emplace_back(std::move(plain));
    } else if (metas[k].compression != 0) {
      return corrupt("unknown SSTable compression type");
    }
    if (metas[k].large) {
      entries.push_back({metas[k].first_key, block});
      continue;
    }
    if (block.size() < 2) return corrupt("truncated SSTable block");
    const size_t n = read16(block, block.size() - 2);
    if (n == 0 || block.size() < 2 + 2 * n) return corrupt("bad SSTable entry count");
    const size_t data_len = block.size() - 2 - 2 * n;
    std::string_view data = block.substr(0, data_len);
    for (size_t e = 0; e < n; ++e) {
      const size_t from = read16(block, data_len + 2 * e);
      const size_t to = e + 1 < n ? read16(block, data_len + 2 * e + 2) : data_len;
      if (from > to || to > data_len) return corrupt("bad SSTable entry offsets");
      std::string_view entry = data.substr(from, to - from);
      if (e == 0) {
        entries.push_back({metas[k].first_key, entry});
        continue;
      }
      if (entry.size() < 3) return corrupt("truncated SSTable entry");
      const size_t prefix = static_cast<uint8_t>(entry[0]);
      const size_t suffix = read16(entry, 1);
      if (prefix > metas[k].first_key.size() || suffix > entry.size() - 3)
        return corrupt("bad SSTable entry key");
      entries.push_back({metas[k].first_key.substr(0, prefix) + std::string(entry.substr(3, suffix)),
                         entry.substr(3 + suffix)});
    }
  }
  return Status();
}

}  // namespace

Result<std::string> lz4_frame_decode(std::string_view frame, size_t max_out) {
  Reader r(frame);
  if (r.u32le() != 0x184D2204u) return corrupt("bad LZ4 frame magic");
  const uint8_t flg = r.u8();
  const uint8_t bd = r.u8();
  if (!r.ok()) return r.status();
  if ((flg >> 6) != 1) return corrupt("unsupported LZ4 frame version");
  if (flg & 1) return corrupt("LZ4 frames with a dictionary are not supported");
  const bool block_sum = flg & 0x10, content_size = flg & 0x08, content_sum = flg & 0x04;
  const int size_code = (bd >> 4) & 7;
  if (size_code < 4) return corrupt("bad LZ4 block size code");
  const size_t max_block = size_t{1} << (8 + 2 * size_code);
  if (content_size) r.raw(8);
  r.u8();  // header checksum
  std::string out;
  for (;;) {
    const uint32_t size = r.u32le();
    if (!r.ok()) return r.status();
    if (size == 0) break;
    const bool raw = size & 0x80000000u;
    std::string_view data = r.raw(size & 0x7FFFFFFFu);
    if (block_sum) r.u32le();
    if (!r.ok()) return r.status();
    if (data.size() > max_block) return corrupt("LZ4 block larger than its frame allows");
    if (raw) {
      out.append(data);
    } else {
      WEFT_RETURN_IF_ERROR(lz4_block(data, max_block, out));
    }
    if (out.size() > max_out) return corrupt("LZ4 frame expands beyond its bound");
  }
  if (content_sum) r.u32le();
  if (!r.ok()) return r.status();
  if (!r.at_end()) return corrupt("trailing bytes after an LZ4 frame");
  return out;
}

Status snapshot_blocks(std::string_view body, std::deque<std::string>& storage,
                       std::vector<std::string_view>& blocks) {
  Reader r(body);
  std::string_view oplog = r.raw(r.u32le());
  std::string_view state = r.raw(r.u32le());
  std::string_view shallow = r.raw(r.u32le());
  if (!r.ok()) return r.status();
  if (!r.at_end()) return corrupt("trailing bytes after the snapshot sections");
  (void)state;
  std::vector<Entry> entries;
  if (!oplog.empty()) WEFT_RETURN_IF_ERROR(read_sstable(oplog, storage, entries));
  bool shallow_start = false;
  for (const Entry& e : entries) {
    if (e.key.size() == 12) {
      blocks.push_back(e.value);
    } else if (e.key == "sv" && e.value.size() > 1) {
      shallow_start = true;  // a non-empty start version: history is missing
    }
  }
  if (shallow_start || (!shallow.empty() && shallow != kOmittedState)) {
    // A shallow root with an empty frontier (what weft writes) holds no state.
    std::vector<Entry> root;
    WEFT_RETURN_IF_ERROR(read_sstable(shallow, storage, root));
    for (const Entry& e : root) {
      if (shallow_start || e.key != "fr" || e.value != std::string_view("\0", 1)) {
        return unimplemented(
            "shallow Loro snapshots (history trimmed before a version) are not supported");
      }
    }
  }
  return Status();
}

std::string write_sstable(const std::vector<std::pair<std::string, std::string>>& entries) {
  std::string out(kTableMagic);
  out.push_back(0);
  std::string meta;
  uint32_t count = 0;
  size_t i = 0;
  auto add_meta = [&](size_t offset, const std::string& first, const std::string* last) {
    put_u32le(meta, static_cast<uint32_t>(offset));
    put_u16le(meta, static_cast<uint16_t>(first.size()));
    meta += first;
    meta.push_back(static_cast<char>(last ? 0 : 0x80));  // uncompressed; large when no last key
    if (last) {
      put_u16le(meta, static_cast<uint16_t>(last->size()));
      meta += *last;
    }
    ++count;
  };
  while (i < entries.size()) {
    const size_t offset = out.size();
    const std::string& first = entries[i].first;
    if (entries[i].second.size() > kBlockSize) {
      out += entries[i].second;
      put_u32le(out, xxhash32(std::string_view(out).substr(offset), kSeed));
      add_meta(offset, first, nullptr);
      ++i;
      continue;
    }
    std::string data;
    std::vector<uint16_t> offsets;
    size_t j = i;
    while (j < entries.size()) {
      const auto& [key, value] = entries[j];
      if (j > i) {
        if (value.size() > kBlockSize) break;
        size_t prefix = 0;
        while (prefix < 255 && prefix < key.size() && prefix < first.size() &&
               key[prefix] == first[prefix])
          ++prefix;
        const size_t entry = 3 + key.size() - prefix + value.size();
        if (data.size() + entry + 2 * (offsets.size() + 2) > kBlockSize) break;
        offsets.push_back(static_cast<uint16_t>(data.size()));
        data.push_back(static_cast<char>(prefix));
        put_u16le(data, static_cast<uint16_t>(key.size() - prefix));
        data.append(key, prefix);
        data += value;
      } else {
        offsets.push_back(0);
        data += value;
      }
      ++j;
    }
    for (uint16_t o : offsets) put_u16le(data, o);
    put_u16le(data, static_cast<uint16_t>(offsets.size()));
    out += data;
    put_u32le(out, xxhash32(std::string_view(out).substr(offset), kSeed));
    add_meta(offset, first, &entries[j - 1].first);
    i = j;
  }
  const size_t meta_at = out.size();
  put_u32le(out, count);
  out += meta;
  put_u32le(out, xxhash32(meta, kSeed));
  put_u32le(out, static_cast<uint32_t>(meta_at));
  return out;
}

std::string snapshot_body(const std::vector<std::pair<ID, std::string>>& blocks,
                          const std::string& vv, const std::string& frontiers) {
  std::vector<std::pair<std::string, std::string>> entries;
  entries.emplace_back("fr", frontiers);
  entries.emplace_back("vv", vv);
  entries.emplace_back("sv", std::string(1, '\0'));
  entries.emplace_back("sf", std::string(1, '\0'));
  for (const auto& [id, block] : blocks) {
    std::string key;
    for (int k = 7; k >= 0; --k) key.push_back(static_cast<char>((id.peer >> (8 * k)) & 0xFF));
    const auto c = static_cast<uint32_t>(id.counter);
    for (int k = 3; k >= 0; --k) key.push_back(static_cast<char>((c >> (8 * k)) & 0xFF));
    entries.emplace_back(std::move(key), block);
  }
  std::sort(entries.begin(), entries.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  const std::string oplog = write_sstable(entries);
  const std::string root = write_sstable({{"fr", std::string(1, '\0')}});
  std::string body;
  put_u32le(body, static_cast<uint32_t>(oplog.size()));
  body += oplog;
  put_u32le(body, static_cast<uint32_t>(kOmittedState.size()));
  body += kOmittedState;
  put_u32le(body, static_cast<uint32_t>(root.size()));
  body += root;
  return body;
}

}  // namespace weft::crdt::detail::loro
