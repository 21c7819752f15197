// ReceivePipeline itself, with a fake packet source, fake decoders and a fake clock:
// ordering, the drop and degrade policies, the frame limit, and stopping while each of its
// threads is blocked. No sockets, no real decoding, no timing assertions.
#include <gtest/gtest.h>

#include <future>

#include "fakes.hpp"

namespace j2k::test {
namespace {

using namespace std::chrono_literals;

/// A pipeline over a FakeSource, collecting what its sink receives.
struct Harness {
  FakeClock clock;
  DecoderScript script;
  FakeSource* source = nullptr;
  std::unique_ptr<pipeline::ReceivePipeline> pipe;
  Rfc5371Stream stream;
  Gate sink_gate;

  std::mutex m;
  std::condition_variable cv;
  std::vector<pipeline::DecodedFrame> got;  // guarded by m

  pipeline::PipelineConfig config() {
    pipeline::PipelineConfig c;
    c.url.format = "rfc5371";
    c.decode_workers = 1;
    c.packet_source = [this](net::PacketQueue& q) -> Result<std::unique_ptr<net::PacketSource>> {
      auto s = std::make_unique<FakeSource>(q);
      source = s.get();
      return std::unique_ptr<net::PacketSource>(std::move(s));
    };
    c.decoder_factory = [this]() -> Result<std::unique_ptr<decoder::Decoder>> {
      return std::unique_ptr<decoder::Decoder>(std::make_unique<FakeDecoder>(script));
    };
    c.now = [this] { return clock.now(); };
    script.clock = &clock;
    return c;
  }

  void open(const pipeline::PipelineConfig& c) {
    auto p = pipeline::ReceivePipeline::open(c, [this](pipeline::DecodedFrame&& f) {
      sink_gate.pass();
      std::lock_guard l(m);
      got.push_back(std::move(f));
      cv.notify_all();
    });
    ASSERT_TRUE(p.ok()) << p.error().message;
    pipe = std::move(p).value();
  }

  /// Sends frame i, its packets arriving now (fake time).
  void send(int i) {
    for (const auto& d : stream.frame(i)) source->push(d, clock.now());
  }
  /// Sends only the first packet of frame i (the rest is "still on its way").
  void send_first_packet(int i) { source->push(stream.frame(i).front(), clock.now()); }

  void wait_for_frames(std::size_t n) {
    std::unique_lock l(m);
    cv.wait(l, [&] { return got.size() >= n; });
  }
};

/// What a stop without draining delivered: frames 0, 1, … k-1 in order, none skipped.
void expect_in_order_prefix(const std::vector<pipeline::DecodedFrame>& got) {
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i].rtp_timestamp, static_cast<std::uint32_t>(i * 3600));
}

TEST(ReceivePipeline, DeliversEveryFrameInOrderWhenWorkersFinishOutOfOrder) {
  Harness h;
  auto c = h.config();
  c.decode_workers = 4;
  c.drop_when_behind = false;
  constexpr int kFrames = 12;
  // The first decode waits until every other frame has been decoded: results come back
  // with frame 0 last, and the sink must still see 0, 1, 2, …
  Gate first;
  first.close();
  h.script.before = [&](int call) {
    if (call == 0) first.pass();
    else if (call == kFrames - 1) first.release();
  };
  h.open(c);
  ASSERT_TRUE(h.pipe->start().ok());
  for (int i = 0; i < kFrames; ++i) h.send(i);
  h.wait_for_frames(kFrames);
  h.pipe->stop(true);
  ASSERT_EQ(h.got.size(), static_cast<std::size_t>(kFrames));
  for (int i = 0; i < kFrames; ++i) {
    EXPECT_EQ(h.got[static_cast<std::size_t>(i)].rtp_timestamp, static_cast<std::uint32_t>(i * 3600));
    EXPECT_TRUE(h.got[static_cast<std::size_t>(i)].decoded) << h.got[static_cast<std::size_t>(i)].error;
  }
  EXPECT_EQ(h.pipe->decode().decoded, static_cast<std::uint64_t>(kFrames));
  EXPECT_EQ(h.pipe->decode().receive_to_decoded.count(), static_cast<std::uint64_t>(kFrames));
}

TEST(ReceivePipeline, StartFailsWhenADecoderCannotBeMadeAndStopsCleanly) {
  // Issue 9 item 11: a worker that could not make its decoder used to return quietly; the
  // depacketizer then blocked for good on the full unit queue.
  Harness h;
  auto c = h.config();
  c.decode_workers = 3;
  int made = 0;
  c.decoder_factory = [&]() -> Result<std::unique_ptr<decoder::Decoder>> {
    if (++made == 2) return make_error(ErrorKind::unsupported, "no usable CUDA device");
    return std::unique_ptr<decoder::Decoder>(std::make_unique<FakeDecoder>(h.script));
  };
  h.open(c);
  auto st = h.pipe->start();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("no usable CUDA device"), std::string::npos) << st.error().message;
  h.pipe->stop(true);  // nothing was started: returns at once
  h.pipe.reset();
}

TEST(ReceivePipeline, LiveDropsOnlyFramesThatWaitedPastTheirBudget) {
  Harness h;
  auto c = h.config();
  c.degrade = false;
  c.latency_budget = 100ms;
  Gate decoding;
  decoding.close();
  h.script.before = [&](int call) {
    if (call == 0) decoding.pass();
  };
  h.open(c);
  ASSERT_TRUE(h.pipe->start().ok());
  h.send(0);
  decoding.wait_for_waiting(1);  // frame 0 is being decoded, the only decoder is busy
  for (int i = 1; i <= 5; ++i) {
    h.clock.advance(40ms);
    h.send(i);
  }
  h.clock.advance(1s);  // frames 1–5 have now waited far beyond the budget
  decoding.release();
  for (int i = 6; i <= 9; ++i) {
    h.wait_for_frames(static_cast<std::size_t>(i));  // the decoder is idle when each arrives
    h.clock.advance(40ms);
    h.send(i);
  }
  h.wait_for_frames(10);
  h.pipe->stop(true);
  ASSERT_EQ(h.got.size(), 10u);
  for (int i = 0; i < 10; ++i) {
    const auto& f = h.got[static_cast<std::size_t>(i)];
    EXPECT_EQ(f.rtp_timestamp, static_cast<std::uint32_t>(i * 3600));
    EXPECT_EQ(f.decoded, i == 0 || i >= 6) << i << ": " << f.error;
  }
  const auto d = h.pipe->decode();
  EXPECT_EQ(d.dropped_late, 5u);
  EXPECT_EQ(d.dropped_queue_full, 5u);
  EXPECT_EQ(d.decoded, 5u);
}

TEST(ReceivePipeline, DegradesResolutionWhenTheDecoderIsSlowerThanTheStream) {
  Harness h;
  auto c = h.config();
  c.latency_budget = std::chrono::hours(1);  // nothing is late: the degrade policy alone acts
  c.unit_queue = 64;
  constexpr int kFrames = 30;
  // 25 frames/s (40 ms apart) against 100 ms per frame at full resolution, 25 ms at half.
  h.script.cost = [](int reduce) { return reduce == 0 ? 100ms : reduce == 1 ? 25ms : 8ms; };
  h.open(c);
  ASSERT_TRUE(h.pipe->start().ok());
  for (int i = 0; i < kFrames; ++i) h.send(i);
  h.wait_for_frames(kFrames);
  h.pipe->stop(true);
  ASSERT_EQ(h.got.size(), static_cast<std::size_t>(kFrames));
  int degraded = 0;
  for (int i = 0; i < kFrames; ++i) {
    const auto& f = h.got[static_cast<std::size_t>(i)];
    EXPECT_EQ(f.rtp_timestamp, static_cast<std::uint32_t>(i * 3600));
    EXPECT_TRUE(f.decoded) << f.error;
    if (f.reduce > 0) {
      ++degraded;
      EXPECT_EQ(f.image.width, (64 + (1 << f.reduce) - 1) >> f.reduce);
    }
  }
  const auto d = h.pipe->decode();
  EXPECT_EQ(d.dropped_queue_full, 0u);
  EXPECT_EQ(d.decoded, static_cast<std::uint64_t>(kFrames));
  EXPECT_GT(degraded, kFrames / 2);
  EXPECT_EQ(d.degraded, static_cast<std::uint64_t>(degraded));
  EXPECT_EQ(h.got.front().reduce, 0) << "the first frame is decoded before anything is known";
}

TEST(ReceivePipeline, AnalysisModeNeverDegradesNorDrops) {
  Harness h;
  auto c = h.config();
  c.drop_when_behind = false;  // --no-drop
  c.unit_queue = 2;
  h.script.cost = [](int) { return 500ms; };
  h.open(c);
  ASSERT_TRUE(h.pipe->start().ok());
  for (int i = 0; i < 10; ++i) h.send(i);
  h.wait_for_frames(10);
  h.pipe->stop(true);
  for (const auto& f : h.got) {
    EXPECT_TRUE(f.decoded);
    EXPECT_EQ(f.reduce, 0);
  }
  EXPECT_EQ(h.pipe->decode().degraded, 0u);
}

TEST(ReceivePipeline, FrameLimitHandsOnAndCountsExactlyN) {
  // Issue 10 item 5: --frames 20 used to stop at 21–23 and report an incomplete frame.
  Harness h;
  auto c = h.config();
  c.max_frames = 3;
  c.drop_when_behind = false;
  h.open(c);
  ASSERT_TRUE(h.pipe->start().ok());
  for (int i = 0; i < 8; ++i) h.send(i);
  h.send_first_packet(8);
  h.wait_for_frames(3);
  EXPECT_TRUE(h.pipe->frame_limit_reached());
  h.pipe->stop(true);
  EXPECT_EQ(h.got.size(), 3u);
  const auto s = h.pipe->stream();
  EXPECT_EQ(s.frames_complete, 3u);
  EXPECT_EQ(s.frames_incomplete, 0u);
  EXPECT_EQ(h.pipe->decode().decoded, 3u);
}

TEST(ReceivePipeline, FrameCutByTheStopIsNotCountedIncomplete) {
  Harness h;
  auto c = h.config();
  h.open(c);
  ASSERT_TRUE(h.pipe->start().ok());
  h.send(0);
  h.send(1);
  h.wait_for_frames(2);
  h.send_first_packet(2);  // the stop comes while frame 2 is arriving
  h.pipe->stop(true);
  EXPECT_EQ(h.got.size(), 2u);
  EXPECT_EQ(h.pipe->stream().frames_incomplete, 0u);
  EXPECT_EQ(h.pipe->stream().frames_complete, 2u);
}

TEST(ReceivePipeline, FrameCutByTheEndOfACaptureIsCountedIncomplete) {
  Harness h;
  auto c = h.config();
  c.drop_when_behind = false;
  h.open(c);
  ASSERT_TRUE(h.pipe->start().ok());
  h.send(0);
  h.send_first_packet(1);
  h.source->finish();  // the capture ends here: its last frame really is incomplete
  h.pipe->stop(true);
  EXPECT_EQ(h.pipe->stream().frames_incomplete, 1u);
  EXPECT_EQ(h.pipe->stream().frames_complete, 1u);
  EXPECT_EQ(h.got.size(), 2u);
}

TEST(ReceivePipeline, AllocationFailureFailsThatFrameAndReceptionGoesOn) {
  Harness h;
  auto c = h.config();
  c.drop_when_behind = false;
  h.script.before = [](int call) {
    if (call == 1) throw std::bad_alloc();
  };
  h.open(c);
  ASSERT_TRUE(h.pipe->start().ok());
  for (int i = 0; i < 4; ++i) h.send(i);
  h.wait_for_frames(4);
  h.pipe->stop(true);
  ASSERT_EQ(h.got.size(), 4u);
  EXPECT_FALSE(h.got[1].decoded);
  EXPECT_NE(h.got[1].error.find("out of memory"), std::string::npos) << h.got[1].error;
  const auto d = h.pipe->decode();
  EXPECT_EQ(d.decoded, 3u);
  EXPECT_EQ(d.failed, 1u);
  EXPECT_EQ(d.out_of_memory, 1u);
}

TEST(ReceivePipeline, StopReturnsWhileTheSinkIsBlocked) {
  // The sink (j2kprobe writes files there) blocks: the workers fill the results queue and
  // block, then the depacketizer blocks on the unit queue. A stop must end all of them.
  Harness h;
  auto c = h.config();
  c.drop_when_behind = false;
  c.unit_queue = 1;
  c.result_queue = 1;
  h.sink_gate.close();
  h.open(c);
  ASSERT_TRUE(h.pipe->start().ok());
  for (int i = 0; i < 10; ++i) h.send(i);
  h.sink_gate.wait_for_waiting(1);
  auto stopped = std::async(std::launch::async, [&] { h.pipe->stop(false); });
  h.sink_gate.release();  // the sink returns from the frame it holds; nothing else is delivered
  stopped.get();
  expect_in_order_prefix(h.got);
}

TEST(ReceivePipeline, StopReturnsWhileTheDepacketizerWaitsForAFullUnitQueue) {
  // Analysis mode: the depacketizer waits for room in the unit queue while the only
  // decoder is busy. The stop closes the queue before joining the depacketizer.
  Harness h;
  auto c = h.config();
  c.drop_when_behind = false;
  c.unit_queue = 1;
  Gate decoding;
  decoding.close();
  h.script.before = [&](int) { decoding.pass(); };
  h.open(c);
  ASSERT_TRUE(h.pipe->start().ok());
  for (int i = 0; i < 6; ++i) h.send(i);
  decoding.wait_for_waiting(1);
  while (h.pipe->stream().frames_complete < 3) std::this_thread::yield();  // unit 2 waits for room
  auto stopped = std::async(std::launch::async, [&] { h.pipe->stop(false); });
  decoding.release();  // the frame being decoded finishes; nothing more is started
  stopped.get();
  expect_in_order_prefix(h.got);
}

TEST(ReceivePipeline, DrainingStopDeliversEverythingAfterTheSinkCatchesUp) {
  Harness h;
  auto c = h.config();
  c.drop_when_behind = false;
  c.result_queue = 1;
  h.sink_gate.close();
  h.open(c);
  ASSERT_TRUE(h.pipe->start().ok());
  for (int i = 0; i < 6; ++i) h.send(i);
  h.sink_gate.wait_for_waiting(1);
  auto stopped = std::async(std::launch::async, [&] { h.pipe->stop(true); });
  h.sink_gate.release();
  stopped.get();
  ASSERT_EQ(h.got.size(), 6u);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(h.got[static_cast<std::size_t>(i)].rtp_timestamp, static_cast<std::uint32_t>(i * 3600));
}

}  // namespace
}  // namespace j2k::test
