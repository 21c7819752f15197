#pragma once
// A full disk that fills up and then gets space again, for one test: RLIMIT_FSIZE limits the
// size of the files this process writes (SIGXFSZ ignored meanwhile, so that a write past
// the limit fails with EFBIG instead of ending the process). A write that crosses the limit
// is cut short, as one that meets ENOSPC is.
#include <gtest/gtest.h>

#include <sys/resource.h>

#include <csignal>

namespace j2k::test {

class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    getrlimit(RLIMIT_FSIZE, &saved_);
    old_handler_ = std::signal(SIGXFSZ, SIG_IGN);
    set(bytes);
  }
  /// RLIM_INFINITY: space again.
  void set(rlim_t bytes) {
    rlimit r = saved_;
    r.rlim_cur = bytes;
    EXPECT_EQ(setrlimit(RLIMIT_FSIZE, &r), 0);
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, old_handler_);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;

 private:
  rlimit saved_{};
  void (*old_handler_)(int) = nullptr;
};

}  // namespace j2k::test
