#pragma once
// A file of whole records (capture blocks, event-log lines), appended through a buffer of
// our own instead of stdio's.
//
// A full disk (or a file size limit) shows when the buffer is written: the records that did
// not get in whole are then lost, and counted by the owner, and whatever part of one reached
// the file is cut off again. The file therefore always ends at a record's end. Readers (libpcap, Wireshark,
// jq, tail -f) read it to its end, including the records written after the space came back.
// With stdio, a flush that failed half-way left a torn record. Readers stopped there, and
// every record written later was on disk but unreadable.
//
// One thread owns a RecordFile.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace j2k {

class RecordFile {
 public:
  /// Creates (truncates) `path`, or with `append` adds to what it holds. The error's
  /// message is the system's reason ("Permission denied"); callers name the file.
  static Result<RecordFile> open(const std::string& path, bool append = false);
  RecordFile() = default;
  RecordFile(RecordFile&& other) noexcept;
  RecordFile& operator=(RecordFile&& other) noexcept;
  RecordFile(const RecordFile&) = delete;
  RecordFile& operator=(const RecordFile&) = delete;
  ~RecordFile();  ///< closes without writing what is pending (call settle() first)

  bool is_open() const noexcept { return fd_ >= 0; }
  /// Bytes the file starts with (a capture's header): written now when the file is empty (a
  /// file that gets no record is still a valid one), and again before the next records if
  /// a failure leaves it empty, so that the file never holds records without it. False when
  /// the write now failed (it is tried again with the first records).
  bool set_preamble(std::vector<std::uint8_t> bytes);
  /// Adds one record; it reaches the file at the next settle().
  void append(std::span<const std::uint8_t> record);
  void append(std::string_view record);
  std::size_t pending_records() const noexcept { return ends_.size(); }
  /// The file's size once the pending records are written.
  std::uint64_t size() const noexcept;

  struct Settled {
    std::uint64_t written = 0;  ///< records now in the file
    std::uint64_t lost = 0;     ///< records the file refused (cut back to the last whole one)
    int error = 0;              ///< errno of the failure, 0 when none
  };
  /// Writes the pending records. When the file refuses some (a full disk), those that got
  /// in whole stay and the rest are lost, the file cut back to the last whole record.
  Settled settle();
  void close() noexcept;

 private:
  explicit RecordFile(int fd, std::uint64_t size) : fd_(fd), settled_(size) {}

  int fd_ = -1;
  std::uint64_t settled_ = 0;  ///< file size after the last whole record
  std::vector<std::uint8_t> preamble_;
  std::vector<std::uint8_t> buffer_;
  std::vector<std::size_t> ends_;  ///< where each pending record ends in buffer_
};

}  // namespace j2k
