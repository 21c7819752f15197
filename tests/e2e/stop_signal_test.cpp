// The second Ctrl-C (app/common/stop_signal.hpp): the first SIGINT asks for an orderly stop,
// which waits for the sink to finish; a second one ends the process at once with status
// 128 + SIGINT. The probe is put where the orderly stop cannot finish: its --dump-raw sink
// writes into a FIFO that the test holds open and never reads, so the sink blocks in
// write() once the pipe is full and stop() waits for it for ever. Every step waits for a
// condition (the "listening" line, a full pipe, the first signal delivered), never a sleep.
#include <gtest/gtest.h>

#include <csignal>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "process.hpp"

using j2k::test::bin;

namespace {

using Clock = std::chrono::steady_clock;

/// Polls `done` until it is true or `limit` has passed (a generous bound that only a hang
/// reaches; nothing is timed).
template <typename F>
bool wait_for(F&& done, std::chrono::seconds limit) {
  const auto give_up = Clock::now() + limit;
  while (!done()) {
    if (Clock::now() > give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // polling interval, not a wait for an event
  }
  return true;
}

/// Whether `sig` is still pending for `pid` (sent, not yet delivered to a handler):
/// the SigPnd (thread) and ShdPnd (process) masks of /proc/PID/status.
bool signal_pending(pid_t pid, int sig) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  const unsigned long long bit = 1ull << (sig - 1);
  while (std::getline(status, line)) {
    if (line.rfind("SigPnd:", 0) == 0 || line.rfind("ShdPnd:", 0) == 0)
      if (std::stoull(line.substr(7), nullptr, 16) & bit) return true;
  }
  return false;
}

/// Starts `argv` with stderr to `err_path`; the child's pid.
pid_t spawn(const std::vector<std::string>& args, const std::string& err_path) {
  const pid_t pid = fork();
  if (pid == 0) {
    const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int null = ::open("/dev/null", O_RDWR);
    if (err < 0 || null < 0) _exit(127);
    dup2(null, 0);
    dup2(null, 1);
    dup2(err, 2);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

}  // namespace

TEST(StopSignal, SecondInterruptEndsAProbeWhoseOrderlyStopIsBlocked) {
  const std::string fifo = "stop_signal.fifo", err_path = "stop_signal.probe.err";
  std::remove(fifo.c_str());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // The read end is held open (so the probe's open for writing succeeds) and never read.
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  const int capacity = fcntl(reader, F_GETPIPE_SZ);
  ASSERT_GT(capacity, 0);

  const std::string url = "rtp://239.10.42.1:5130?iface=127.0.0.1";
  const pid_t probe = spawn({bin("j2kprobe"), url, "--wait", "120", "--timeout", "120", "--no-drop", "--dump-raw", fifo},
                            err_path);
  ASSERT_GT(probe, 0);
  bool exited = false;
  int status = 0;
  auto reaped = [&] {
    if (!exited && waitpid(probe, &status, WNOHANG) == probe) exited = true;
    return exited;
  };
  ASSERT_TRUE(wait_for([&] { return reaped() || j2k::test::slurp(err_path).find("listening on") != std::string::npos; },
                       std::chrono::seconds(120)));
  ASSERT_FALSE(exited) << j2k::test::slurp(err_path);

  // Each 320x240 4:2:2 8-bit frame is 150 KiB of raw samples: the first fills the pipe.
  std::thread sender([&] {
    j2k::test::run(bin("j2ksend") + " --to '" + url + "' --pattern --size 320x240 --fps 25 --bits 8 --lossless "
                       "--loop-frames 5 --frames 50 --cache-dir " J2K_TEST_CACHE_DIR,
                   "stop_signal.send");
  });
  int queued = 0;
  const bool full = wait_for([&] { return reaped() || (ioctl(reader, FIONREAD, &queued) == 0 && queued >= capacity); },
                             std::chrono::seconds(120));
  sender.join();
  ASSERT_TRUE(full && !exited) << "the sink never filled the pipe: " << queued << " of " << capacity << " bytes\n"
                               << j2k::test::slurp(err_path);

  // First interrupt: an orderly stop begins, and waits for the blocked sink.
  ASSERT_EQ(kill(probe, SIGINT), 0);
  ASSERT_TRUE(wait_for([&] { return reaped() || !signal_pending(probe, SIGINT); }, std::chrono::seconds(60)));
  ASSERT_FALSE(exited) << "the first interrupt ended the probe although its sink is blocked";

  // Second interrupt: the process ends at once, with 128 + SIGINT.
  ASSERT_EQ(kill(probe, SIGINT), 0);
  const bool ended = wait_for(reaped, std::chrono::seconds(60));
  if (!ended) {
    kill(probe, SIGKILL);
    waitpid(probe, &status, 0);
  }
  ::close(reader);
  std::remove(fifo.c_str());
  ASSERT_TRUE(ended) << "a second SIGINT did not end the probe\n" << j2k::test::slurp(err_path);
  ASSERT_TRUE(WIFEXITED(status)) << "ended by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGINT);
}
