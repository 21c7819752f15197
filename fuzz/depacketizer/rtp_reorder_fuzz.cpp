// Fuzz harness: the reorder buffer's window and timeout paths under a fake clock, fed
// through the sequence tracker as the session feeds it. Input: a list of 4-byte operations
//   [op][a][b][c]: op % 6 = 0..2 push (sequence a<<8|b, then the clock advances c × 100 µs),
//                   3 tick after c ms, 4 tick far past every deadline, 5 flush / reset / new delay.
#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "depacketizer/rtp.hpp"
#include "depacketizer/rtp_reorder.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace j2k::depacketizer;
  using Clock = std::chrono::steady_clock;
  if (size < 2) return 0;
  ReorderConfig config;
  config.max_packets = 1 + data[0] % 64;
  config.max_delay = std::chrono::milliseconds(1 + data[1] % 50);
  config.adaptive = data[0] & 0x80;
  config.adaptive_max_packets = 256;
  std::uint64_t last_released = 0;
  bool any_released = false;
  std::map<std::uint64_t, int> released_count;  // each extended sequence leaves at most once
  Clock::time_point now{};
  RtpReorderBuffer buffer(config, [&](j2k::Bytes packet, std::uint64_t seq, bool, Clock::time_point arrival) {
    if (any_released && static_cast<std::int64_t>(seq - last_released) <= 0) __builtin_trap();  // in order
    if (packet.size() != 4 + seq % 13 || packet[0] != static_cast<std::uint8_t>(seq)) __builtin_trap();  // its own bytes
    if (arrival > now) __builtin_trap();
    if (++released_count[seq] > 1) __builtin_trap();
    last_released = seq;
    any_released = true;
  });
  RtpSequenceTracker tracker;
  std::vector<std::uint8_t> packet;
  for (std::size_t i = 2; i + 4 <= size; i += 4) {
    const std::uint8_t op = data[i], a = data[i + 1], b = data[i + 2], c = data[i + 3];
    switch (op % 6) {
      case 0: case 1: case 2: {
        const auto verdict = tracker.accept(static_cast<std::uint16_t>(a << 8 | b));
        if (verdict == RtpSequenceTracker::Verdict::restart) {
          buffer.reset();
          any_released = false;
          released_count.clear();
        }
        if (verdict != RtpSequenceTracker::Verdict::duplicate && verdict != RtpSequenceTracker::Verdict::stray) {
          const std::uint64_t seq = tracker.last_extended();
          packet.assign(4 + seq % 13, static_cast<std::uint8_t>(seq));
          buffer.push(packet, seq, now);
        }
        now += std::chrono::microseconds(100 * c);
        break;
      }
      case 3:
        now += std::chrono::milliseconds(c);
        buffer.tick(now);
        break;
      case 4:
        // Past every deadline (the adaptive ceiling included): nothing may still wait.
        now += config.adaptive_max_delay + std::chrono::milliseconds(1);
        buffer.tick(now);
        if (buffer.waiting() != 0) __builtin_trap();
        break;
      default:
        if (c % 3 == 0) buffer.flush();
        else if (c % 3 == 1) { buffer.reset(); any_released = false; released_count.clear(); tracker.restart(); }
        else buffer.set_delay(std::chrono::milliseconds(a));
        if (c % 3 != 2 && buffer.waiting() != 0) __builtin_trap();
        break;
    }
    if (buffer.waiting() > buffer.depth() || buffer.undecided() > buffer.depth()) __builtin_trap();
    if (buffer.delay() < config.max_delay) __builtin_trap();
  }
  buffer.flush();
  if (buffer.waiting() != 0) __builtin_trap();
  return 0;
}
