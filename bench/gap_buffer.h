// The benchmark floor: a plain UTF-8 gap buffer addressed in Unicode code
// points, applying the same splices a CRDT replays. No history, no ids: the
// cheapest reasonable way to hold an edited text. Used only by benchmarks.
//
// Thread safety: none (one buffer per thread).
#ifndef WEFT_BENCH_GAP_BUFFER_H_
#define WEFT_BENCH_GAP_BUFFER_H_

#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace weft::bench {

class GapBuffer {
 public:
  explicit GapBuffer(size_t capacity = 1024) : buf_(capacity < 16 ? 16 : capacity) {
    gap_end_ = buf_.size();
  }

  // Deletes `del` code points at code point `pos`, then inserts `text` there.
  // REQUIRES: the range lies inside the text.
  void splice(size_t pos, size_t del, std::string_view text) {
    move_gap(pos);
    for (size_t i = 0; i < del; ++i) gap_end_ += seq_len(buf_[gap_end_]);
    if (text.size() > gap_end_ - gap_start_) grow(text.size());
    std::memcpy(buf_.data() + gap_start_, text.data(), text.size());
    gap_start_ += text.size();
    gap_chars_ += count_chars(text);
  }

  std::string to_string() const {
    std::string out(buf_.data(), gap_start_);
    out.append(buf_.data() + gap_end_, buf_.size() - gap_end_);
    return out;
  }

  size_t capacity_bytes() const { return buf_.size(); }

 private:
  static size_t seq_len(char lead) {
    unsigned char c = static_cast<unsigned char>(lead);
    return c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
  }
  static size_t count_chars(std::string_view s) {
    size_t n = 0;
    for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    return n;
  }

  // Moves the gap so that `pos` code points precede it, walking from the
  // current gap (edits are local, so the walk is short).
  void move_gap(size_t pos) {
    if (pos > gap_chars_) {
      size_t bytes = 0;
      for (size_t n = gap_chars_; n < pos; ++n) bytes += seq_len(buf_[gap_end_ + bytes]);
      std::memmove(buf_.data() + gap_start_, buf_.data() + gap_end_, bytes);
      gap_start_ += bytes;
      gap_end_ += bytes;
    } else if (pos < gap_chars_) {
      size_t bytes = 0;
      for (size_t n = gap_chars_; n > pos;) {
        ++bytes;
        if ((static_cast<unsigned char>(buf_[gap_start_ - bytes]) & 0xC0) != 0x80) --n;
      }
      std::memmove(buf_.data() + gap_end_ - bytes, buf_.data() + gap_start_ - bytes, bytes);
      gap_start_ -= bytes;
      gap_end_ -= bytes;
    }
    gap_chars_ = pos;
  }

  void grow(size_t need) {
    size_t tail = buf_.size() - gap_end_;
    size_t size = buf_.size() * 2 + need;
    std::vector<char> next(size);
    std::memcpy(next.data(), buf_.data(), gap_start_);
    std::memcpy(next.data() + size - tail, buf_.data() + gap_end_, tail);
    buf_.swap(next);
    gap_end_ = size - tail;
  }

  std::vector<char> buf_;
  size_t gap_start_ = 0, gap_end_ = 0;
  size_t gap_chars_ = 0;  // code points before the gap
};

}  // namespace weft::bench

#endif  // WEFT_BENCH_GAP_BUFFER_H_
