#pragma once
// Bounds-checked big-endian reader over untrusted bytes.
//
// Every read checks the bytes left first. A read past the end returns zero and
// sets a sticky error flag, so a parser can read a whole header and check once
// (the dav1d getbits habit) without ever touching memory outside the span.
#include <cstddef>
#include <cstdint>
#include <span>

namespace j2k {

using Bytes = std::span<const std::uint8_t>;

class ByteReader {
 public:
  ByteReader() = default;
  explicit ByteReader(Bytes data) noexcept : data_(data) {}

  std::size_t size() const noexcept { return data_.size(); }
  std::size_t position() const noexcept { return pos_; }
  std::size_t remaining() const noexcept { return data_.size() - pos_; }
  bool failed() const noexcept { return failed_; }
  bool empty() const noexcept { return remaining() == 0; }
  /// True when `n` more bytes can be read.
  bool has(std::size_t n) const noexcept { return n <= remaining(); }

  std::uint8_t u8() noexcept { return static_cast<std::uint8_t>(read_be(1)); }
  std::uint16_t u16() noexcept { return static_cast<std::uint16_t>(read_be(2)); }
  std::uint32_t u24() noexcept { return static_cast<std::uint32_t>(read_be(3)); }
  std::uint32_t u32() noexcept { return static_cast<std::uint32_t>(read_be(4)); }
  std::uint64_t u64() noexcept { return read_be(8); }

  /// Peeks without consuming; zero (and no error) if fewer bytes remain.
  std::uint8_t peek_u8(std::size_t offset = 0) const noexcept {
    return offset < remaining() ? data_[pos_ + offset] : 0;
  }
  std::uint16_t peek_u16() const noexcept {
    return remaining() >= 2 ? static_cast<std::uint16_t>(data_[pos_] << 8 | data_[pos_ + 1]) : 0;
  }

  /// Returns the next `n` bytes as a sub-span, or an empty span (and the error flag).
  Bytes bytes(std::size_t n) noexcept {
    if (!has(n)) { fail(); return {}; }
    Bytes out = data_.subspan(pos_, n);
    pos_ += n;
    return out;
  }
  /// Everything not yet read.
  Bytes rest() const noexcept { return data_.subspan(pos_); }

  void skip(std::size_t n) noexcept {
    if (!has(n)) { fail(); return; }
    pos_ += n;
  }
  void seek(std::size_t pos) noexcept {
    if (pos > data_.size()) { fail(); return; }
    pos_ = pos;
  }

 private:
  std::uint64_t read_be(std::size_t n) noexcept {
    if (!has(n)) { fail(); return 0; }
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < n; ++i) v = v << 8 | data_[pos_ + i];
    pos_ += n;
    return v;
  }
  void fail() noexcept { failed_ = true; pos_ = data_.size(); }

  Bytes data_{};
  std::size_t pos_ = 0;
  bool failed_ = false;
};

/// Appends big-endian integers to a byte vector (for writers: sender, merger).
template <typename Vec>
class ByteWriter {
 public:
  explicit ByteWriter(Vec& out) : out_(out) {}
  void u8(std::uint8_t v) { out_.push_back(v); }
  void u16(std::uint16_t v) { put(v, 2); }
  void u32(std::uint32_t v) { put(v, 4); }
  void u64(std::uint64_t v) { put(v, 8); }
  void bytes(Bytes b) { out_.insert(out_.end(), b.begin(), b.end()); }
  std::size_t size() const { return out_.size(); }

 private:
  void put(std::uint64_t v, int n) {
    for (int i = n - 1; i >= 0; --i) out_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  Vec& out_;
};

}  // namespace j2k
