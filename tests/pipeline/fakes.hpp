#pragma once
// Fakes for ReceivePipeline tests: a packet source the test feeds, a decoder the test steers
// (gates, costs on a fake clock, failures), and RFC 5371 packets of a real photograph.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <new>
#include <optional>
#include <vector>

#include "packetizer/openjpeg_encoder.hpp"
#include "packetizer/rtp_j2k_packetizer.hpp"
#include "pipeline/receive_pipeline.hpp"
#include "syntax/locate.hpp"
#include "test_images.hpp"

namespace j2k::test {

using Clock = std::chrono::steady_clock;

/// Time that moves only when a test or the fake decoder moves it.
struct FakeClock {
  std::atomic<std::int64_t> ns{1'000'000'000};
  Clock::time_point now() const { return Clock::time_point(std::chrono::nanoseconds(ns.load())); }
  void advance(std::chrono::nanoseconds d) { ns.fetch_add(d.count()); }
  /// Moves to `t` unless time is already past it.
  void advance_to(Clock::time_point t) {
    const std::int64_t target = t.time_since_epoch().count();
    for (std::int64_t cur = ns.load(); cur < target && !ns.compare_exchange_weak(cur, target);) {}
  }
};

/// A gate threads wait at until the test opens it; counts who arrived.
struct Gate {
  std::mutex m;
  std::condition_variable cv;
  bool open = true;
  int waiting = 0;
  int passed = 0;
  void close() {
    std::lock_guard l(m);
    open = false;
  }
  void release() {
    {
      std::lock_guard l(m);
      open = true;
    }
    cv.notify_all();
  }
  void pass() {
    std::unique_lock l(m);
    ++waiting;
    cv.notify_all();
    cv.wait(l, [&] { return open; });
    --waiting;
    ++passed;
    cv.notify_all();
  }
  /// Waits until `n` threads are held at the gate.
  void wait_for_waiting(int n) {
    std::unique_lock l(m);
    cv.wait(l, [&] { return waiting >= n; });
  }
};

/// Datagrams the test hands to the pipeline as if a socket received them.
class FakeSource final : public net::PacketSource {
 public:
  explicit FakeSource(net::PacketQueue& out) : out_(out), pool_(4096, 2048) {}
  void start() override {}
  void stop() override {}
  const net::ReceiverCounters& counters() const noexcept override { return counters_; }
  std::uint16_t port() const noexcept override { return 5004; }
  bool finished() const noexcept override { return finished_.load(); }

  void push(const std::vector<std::uint8_t>& datagram, Clock::time_point arrival) {
    auto p = pool_.acquire();
    ASSERT_TRUE(p) << "fake source pool exhausted";
    std::copy(datagram.begin(), datagram.end(), p->storage.begin());
    p->size = datagram.size();
    p->received = arrival;
    counters_.datagrams.fetch_add(1);
    ASSERT_TRUE(out_.push_wait(std::move(p)));
  }
  /// A datagram larger than a buffer, as a socket hands it on: its first `keep` bytes, flagged.
  void push_cut(const std::vector<std::uint8_t>& datagram, std::size_t keep, Clock::time_point arrival, bool restart = false) {
    auto p = pool_.acquire();
    ASSERT_TRUE(p) << "fake source pool exhausted";
    keep = std::min(keep, datagram.size());
    std::copy(datagram.begin(), datagram.begin() + static_cast<std::ptrdiff_t>(keep), p->storage.begin());
    p->size = keep;
    p->truncated = true;
    p->restart = restart;
    p->received = arrival;
    counters_.datagrams.fetch_add(1);
    counters_.truncated.fetch_add(1);
    ASSERT_TRUE(out_.push_wait(std::move(p)));
  }
  void finish() { finished_.store(true); }

 private:
  net::PacketQueue& out_;
  net::PacketPool pool_;
  net::ReceiverCounters counters_;
  std::atomic<bool> finished_{false};
};

/// What the fake decoders do, shared by all of them.
struct DecoderScript {
  FakeClock* clock = nullptr;
  /// Fake time one decode takes at a reduce level (advances `clock`).
  std::function<std::chrono::milliseconds(int reduce)> cost = [](int) { return std::chrono::milliseconds(0); };
  /// Called with the running call number before decoding; may block or throw.
  std::function<void(int call)> before = [](int) {};
  /// An error to return instead of a picture (after the cost is paid), or nullopt.
  std::function<std::optional<Error>(int call, int reduce)> fail = [](int, int) { return std::optional<Error>(); };
  std::atomic<int> calls{0};
  std::mutex m;
  std::vector<int> reduces;  // guarded by m
};

class FakeDecoder final : public decoder::Decoder {
 public:
  explicit FakeDecoder(DecoderScript& script) : script_(script) {}
  decoder::Backend backend() const noexcept override { return decoder::Backend::own; }
  Result<PlanarImage> decode(Bytes codestream, const decoder::DecodeOptions& options) override {
    const int call = script_.calls.fetch_add(1);
    script_.before(call);
    {
      std::lock_guard l(script_.m);
      script_.reduces.push_back(options.reduce);
    }
    if (script_.clock) script_.clock->advance(script_.cost(options.reduce));
    if (auto error = script_.fail(call, options.reduce)) return *error;
    auto shape = syntax::read_geometry(codestream);
    if (!shape) return shape.error();
    PlanarImage img = std::move(shape).value();
    const int r = options.reduce;
    img.width = (img.width + (1 << r) - 1) >> r;
    img.height = (img.height + (1 << r) - 1) >> r;
    for (Plane& p : img.planes) {
      p.width = (p.width + (1 << r) - 1) >> r;
      p.height = (p.height + (1 << r) - 1) >> r;
      p.samples.assign(static_cast<std::size_t>(p.width) * p.height, call);
    }
    return img;
  }

 private:
  DecoderScript& script_;
};

/// One small lossy codestream of a photograph, encoded once.
inline const std::vector<std::uint8_t>& photo_codestream() {
  static const std::vector<std::uint8_t> bytes = [] {
    packetizer::EncodeParams p;
    p.resolutions = 3;
    auto cs = packetizer::encode_openjpeg(photo_ycbcr(64, 32, 8, 2), p);
    if (!cs) throw std::runtime_error(cs.error().message);
    return std::move(cs).value();
  }();
  return bytes;
}

/// The RFC 5371 packets of frame `i` (timestamp i × 3600: 25 frames/s at 90 kHz), cut
/// small so that each frame spans several packets.
class Rfc5371Stream {
 public:
  /// The codestream every frame carries (null: photo_codestream()); a test may change it
  /// between frames (the sender's format changing).
  const std::vector<std::uint8_t>* codestream = nullptr;

  std::vector<std::vector<std::uint8_t>> frame(int i) { return frame_at(static_cast<std::uint32_t>(i) * 3600); }
  /// A frame at RTP timestamp `timestamp` (90 kHz).
  std::vector<std::vector<std::uint8_t>> frame_at(std::uint32_t timestamp) {
    std::vector<std::vector<std::uint8_t>> out;
    auto st = packetizer_.packetize(codestream ? *codestream : photo_codestream(), timestamp, 0, out);
    EXPECT_TRUE(st.ok());
    return out;
  }

 private:
  packetizer::Rfc5371Packetizer packetizer_{0x1234, 96, 100, 300};
};

}  // namespace j2k::test
