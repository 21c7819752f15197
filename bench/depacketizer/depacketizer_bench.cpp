// What one depacketizer thread reads in a second of a VSF TR-01 stream (RTP/MP2T: 7 TS
// packets a datagram) through RtpSession: RTP checks, the reorder window, the TS demux
// (continuity, PAT/PMT, PES), frame assembly. Frames of realistic sizes (a 1080 frame at
// 150 Mbit/s and 50 fps is ~375 kB); the payload bytes are arbitrary (no decoding here).
// Reported as bytes/s and as a multiple of the stream's own rate: the headroom the thread
// has over the link. Public API only, so the same source builds against older trees.
#include <benchmark/benchmark.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdint>
#include <vector>

#include "depacketizer/rtp_session.hpp"
#include "packetizer/ts_mux.hpp"

namespace {

using namespace j2k;

struct Stream {
  std::vector<std::vector<std::uint8_t>> datagrams;
  std::size_t payload_bytes = 0;
  int frames = 0;
};

Stream tr01_stream(std::size_t frame_bytes, int frames) {
  packetizer::TsMuxConfig mc;
  mc.descriptor.horizontal_size = 1920;
  mc.descriptor.vertical_size = 1080;
  mc.descriptor.num_frame_rate = 50;
  mc.descriptor.den_frame_rate = 1;
  packetizer::TsMuxer muxer(mc);
  packetizer::RtpMp2tPacketizer rtp(0x5EED, 1000);
  Stream s;
  s.frames = frames;
  std::vector<std::uint8_t> cs(frame_bytes);
  for (int f = 0; f < frames; ++f) {
    for (std::size_t i = 0; i < cs.size(); ++i) cs[i] = static_cast<std::uint8_t>(i * 131 + static_cast<std::size_t>(f));
    cs[0] = 0xFF;
    cs[1] = 0x4F;
    std::vector<std::uint8_t> ts;
    muxer.mux_frame({Bytes(cs)}, 1800u * static_cast<std::uint64_t>(f), {}, ts);
    rtp.packetize(ts, 1800u * static_cast<std::uint32_t>(f), s.datagrams);
  }
  for (const auto& d : s.datagrams) s.payload_bytes += d.size();
  return s;
}

void Tr01Session(benchmark::State& state) {
  spdlog::set_level(spdlog::level::warn);
  const Stream s = tr01_stream(static_cast<std::size_t>(state.range(0)), 50);
  depacketizer::SessionConfig sc;
  sc.format = depacketizer::PayloadFormat::ts;
  std::size_t units = 0;
  auto t = std::chrono::steady_clock::time_point(std::chrono::hours(1));
  for (auto _ : state) {
    depacketizer::RtpSession session([&](depacketizer::CodestreamUnit&& u) { units += u.complete ? 1 : 0; }, sc);
    for (const auto& d : s.datagrams) {
      t += std::chrono::microseconds(20);
      session.on_datagram(d, t);
    }
    session.flush();
  }
  if (units != static_cast<std::size_t>(s.frames) * state.iterations()) state.SkipWithError("frames lost in the benchmark");
  state.SetBytesProcessed(static_cast<std::int64_t>(s.payload_bytes) * state.iterations());
  state.SetItemsProcessed(static_cast<std::int64_t>(s.datagrams.size()) * state.iterations());
  // 50 frames a second: the stream's rate is 50 × its frame; this is how many such streams
  // one thread keeps up with.
  state.counters["x_realtime"] = benchmark::Counter(
      static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(Tr01Session)->Arg(100'000)->Arg(375'000)->Arg(1'250'000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
