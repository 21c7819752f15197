// Fuzz harness: sound as receivers meet it. First byte:
//   0: an ST 302M PES payload (decode; what decodes must encode back to the same samples);
//   1: an MXF sound descriptor local set, then a PCM element read in the format it gives (or
//      in a format taken from the next bytes);
//   2: repeated [u16 length][datagram] for an MXF RTP depacketizer (sound descriptors and
//      elements among pictures);
//   3: raw TS for the TR-01 depacketizer (ST 302M on a "BSSD" PID).
// Invariants: the blocks handed on are whole sample frames of a format we play, at most a
// second long, and counted.
#include <cstddef>
#include <cstdint>

#include "core/log.hpp"
#include "datagram_input.hpp"
#include "depacketizer/audio.hpp"
#include "depacketizer/mxf_rtp_depacketizer.hpp"
#include "depacketizer/ts_depacketizer.hpp"

namespace {

using namespace j2k::depacketizer;

void check(const AudioBlock& b) {
  const auto& f = b.format;
  if (f.channels < 1 || f.channels > 16) __builtin_trap();
  if (f.bits != 16 && f.bits != 20 && f.bits != 24) __builtin_trap();
  if (b.samples.size() % static_cast<std::size_t>(f.channels) != 0) __builtin_trap();
  if (b.frames() > 192000) __builtin_trap();
  const std::int32_t top = (1 << (f.bits - 1)) - 1;
  for (std::int32_t s : b.samples)
    if (s > top || s < -top - 1) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const bool quiet = [] { j2k::set_log_level("off"); return true; }();
  (void)quiet;
  if (size < 1) return 0;
  const j2k::Bytes rest(data + 1, size - 1);
  switch (data[0] % 4) {
    case 0: {
      auto b = decode_s302m(rest);
      if (!b) return 0;
      check(*b);
      auto again = decode_s302m(encode_s302m(*b));
      if (!again || again->samples != b->samples || !(again->format == b->format)) __builtin_trap();
      return 0;
    }
    case 1: {
      auto d = parse_sound_descriptor(rest, (data[0] & 4) != 0);
      AudioFormat format{1 + (size > 1 ? data[1] % 18 : 0), 48000, size > 2 ? 12 + data[2] % 14 : 24};
      if (d)
        if (auto f = d->format()) format = *f;
      auto b = decode_pcm_element(rest, format);
      if (b) {
        check(*b);
        if (encode_pcm_element(*b).size() != rest.size()) __builtin_trap();
      }
      return 0;
    }
    case 2: {
      std::uint64_t blocks = 0;
      MxfRtpDepacketizer depack([](CodestreamUnit&&) {});
      depack.set_audio_sink([&](AudioBlock&& b) {
        check(b);
        ++blocks;
      });
      const auto t0 = std::chrono::steady_clock::now();
      j2k::fuzz::for_each_datagram(rest.data(), rest.size(), [&](j2k::Bytes datagram, int n) {
        auto p = parse_rtp(datagram);
        if (p) depack.push(*p, n % 7 == 6, t0 + std::chrono::microseconds(100 * n));
      });
      depack.flush();
      const auto c = depack.audio_counters();
      if (c.blocks != blocks) __builtin_trap();
      return 0;
    }
    default: {
      std::uint64_t blocks = 0;
      TsDepacketizer depack([](CodestreamUnit&&) {});
      depack.set_audio_sink([&](AudioBlock&& b) {
        check(b);
        if (b.format.channels % 2 != 0 || b.format.channels > 8) __builtin_trap();
        ++blocks;
      });
      depack.push_plain(rest, std::chrono::steady_clock::now());
      depack.flush();
      if (depack.audio_counters().blocks != blocks) __builtin_trap();
      if (depack.snapshot().counters.audio_pes > depack.snapshot().counters.packets) __builtin_trap();
      return 0;
    }
  }
}
