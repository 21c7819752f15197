#pragma once
// A test's thread narrowed to one CPU, as under `taskset -c N` (usable_cpus and what the
// pipeline sizes by it).
#include <sched.h>

namespace j2k::test {

/// This thread's affinity narrowed to the CPU it runs on while the object lives; restored
/// however the scope ends.
class OnOneCpu {
 public:
  OnOneCpu() {
    if (sched_getaffinity(0, sizeof before_, &before_) != 0) return;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu(), &one);
    narrowed_ = sched_setaffinity(0, sizeof one, &one) == 0;
  }
  ~OnOneCpu() {
    if (narrowed_) sched_setaffinity(0, sizeof before_, &before_);
  }
  OnOneCpu(const OnOneCpu&) = delete;
  OnOneCpu& operator=(const OnOneCpu&) = delete;
  bool narrowed() const { return narrowed_; }

 private:
  cpu_set_t before_{};
  bool narrowed_ = false;
};

}  // namespace j2k::test
