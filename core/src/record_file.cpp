#include "core/record_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace j2k {

namespace {

/// write(2) until done; the errno of the failure, or 0, and `done` the bytes written. A
/// write that makes no progress without an error (a full disk can answer 0) is ENOSPC.
int write_all(int fd, const std::uint8_t* data, std::size_t size, std::size_t& done) {
  done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd, data + done, size - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return ENOSPC;
    done += static_cast<std::size_t>(n);
  }
  return 0;
}

}  // namespace

Result<RecordFile> RecordFile::open(const std::string& path, bool append) {
  const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC);
  const int fd = ::open(path.c_str(), flags, 0644);
  if (fd < 0) return make_error(ErrorKind::io, std::strerror(errno));
  struct stat st {};
  const std::uint64_t size = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? static_cast<std::uint64_t>(st.st_size) : 0;
  return RecordFile(fd, size);
}

RecordFile::RecordFile(RecordFile&& other) noexcept { *this = std::move(other); }

RecordFile& RecordFile::operator=(RecordFile&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = std::exchange(other.fd_, -1);
    settled_ = std::exchange(other.settled_, 0);
    preamble_ = std::move(other.preamble_);
    buffer_ = std::move(other.buffer_);
    ends_ = std::move(other.ends_);
  }
  return *this;
}

RecordFile::~RecordFile() { close(); }

bool RecordFile::set_preamble(std::vector<std::uint8_t> bytes) {
  preamble_ = std::move(bytes);
  if (fd_ < 0 || settled_ != 0 || preamble_.empty()) return true;
  std::size_t done = 0;
  if (write_all(fd_, preamble_.data(), preamble_.size(), done) == 0) {
    settled_ = preamble_.size();
    return true;
  }
  if (::ftruncate(fd_, 0) == 0) ::lseek(fd_, 0, SEEK_SET);  // whatever part got in
  return false;
}

void RecordFile::append(std::span<const std::uint8_t> record) {
  buffer_.insert(buffer_.end(), record.begin(), record.end());
  ends_.push_back(buffer_.size());
}

void RecordFile::append(std::string_view record) {
  append(std::span(reinterpret_cast<const std::uint8_t*>(record.data()), record.size()));
}

std::uint64_t RecordFile::size() const noexcept {
  const std::uint64_t preamble = settled_ == 0 && !ends_.empty() ? preamble_.size() : 0;
  return settled_ + preamble + buffer_.size();
}

RecordFile::Settled RecordFile::settle() {
  Settled s;
  if (ends_.empty()) return s;
  if (fd_ < 0) {
    s.lost = ends_.size();
    s.error = EBADF;
  } else {
    std::size_t lead = 0;  // the preamble's bytes in front of the records
    if (settled_ == 0 && !preamble_.empty()) {
      buffer_.insert(buffer_.begin(), preamble_.begin(), preamble_.end());
      lead = preamble_.size();
    }
    std::size_t done = 0;
    s.error = write_all(fd_, buffer_.data(), buffer_.size(), done);
    // The records that got in whole stay; what part of the next one got in is cut off, so
    // that the next records start at a record's end. (Not a regular file, such as a pipe
    // or /dev/full: nothing to cut.)
    std::size_t keep = 0;
    if (done >= lead)
      while (s.written < ends_.size() && lead + ends_[s.written] <= done) keep = lead + ends_[s.written++];
    s.lost = ends_.size() - s.written;
    if (s.error && ::ftruncate(fd_, static_cast<off_t>(settled_ + keep)) == 0)
      ::lseek(fd_, static_cast<off_t>(settled_ + keep), SEEK_SET);
    settled_ += keep;
  }
  ends_.clear();
  buffer_.clear();
  return s;
}

void RecordFile::close() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  buffer_.clear();
  ends_.clear();
}

}  // namespace j2k
