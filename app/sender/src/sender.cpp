#include "sender/sender.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <random>
#include <thread>

#include "core/log.hpp"
#include "packetizer/mxf_writer.hpp"
#include "packetizer/rtp_j2k_packetizer.hpp"
#include "packetizer/rtp_packetizer.hpp"
#include "net/udp_sender.hpp"

namespace j2k::sender {

using Clock = std::chrono::steady_clock;

namespace {
/// One packet's send time.
struct Due {
  Clock::time_point at;
  std::uint32_t packet = 0;
  bool dropped = false;
};
}  // namespace

Sender::Sender(SendConfig config, PictureFormat format, std::vector<EncodedFrame> frames)
    : config_(std::move(config)), format_(format), frames_(std::move(frames)) {}

Result<SendTotals> Sender::run(const std::atomic<bool>& stop) {
  auto log = logger("sender");
  if (frames_.empty()) return make_error(ErrorKind::corrupt, "no frames to send");
  net::SenderConfig sc;
  sc.address = config_.to.host;
  sc.port = config_.to.port;
  sc.iface = config_.to.iface;
  sc.ttl = config_.to.ttl;
  if (auto it = config_.to.query.find("bind"); it != config_.to.query.end()) sc.bind_address = it->second;
  auto socket = net::UdpSender::open(sc);
  if (!socket) return socket.error();

  std::random_device rd;
  const std::uint32_t ssrc = config_.ssrc ? config_.ssrc : rd();
  const std::uint32_t ts_base = rd();
  const auto first_sequence = static_cast<std::uint16_t>(rd());
  packetizer::RtpPacketizer packetizer(ssrc, 96, first_sequence, config_.max_payload);
  packetizer::Rfc5371Packetizer j2k_packetizer(ssrc, 96, first_sequence, config_.max_payload);
  packetizer::RtpPacketizer stream_packetizer(ssrc, 96, first_sequence, config_.max_payload);

  packetizer::MxfPictureParams mp;
  mp.width = static_cast<std::uint32_t>(format_.width);
  mp.height = static_cast<std::uint32_t>(format_.height);
  mp.depth = static_cast<std::uint32_t>(format_.bits);
  mp.chroma_dx = static_cast<std::uint32_t>(format_.chroma_dx);
  if (config_.interlace) {
    mp.frame_layout = 1;  // separate fields
    mp.field_dominance = 1;
    mp.height = static_cast<std::uint32_t>((format_.height + 1) / 2);  // stored height is the field's
  }
  mp.rate_num = config_.fps_num;
  mp.rate_den = config_.fps_den;
  const auto primer = packetizer::mxf_primer_pack();
  const auto descriptor = packetizer::mxf_cdci_descriptor(mp);
  const int frames_per_second = std::max(1, (config_.fps_num + config_.fps_den - 1) / config_.fps_den);

  const auto period = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(static_cast<double>(config_.fps_den) / config_.fps_num));
  SendTotals totals;
  std::vector<std::vector<std::uint8_t>> packets;
  std::vector<Due> schedule;
  const Impairments& imp = config_.impair;
  std::mt19937 rng(imp.seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  int burst_left = 0;
  // Decides the fate of each packet of one frame; returns true when a packet was dropped.
  auto apply_impairments = [&](std::vector<std::vector<std::uint8_t>>& pkts, std::vector<Due>& due,
                               Clock::duration slot, SendTotals& t) {
    bool dropped_any = false;
    const std::size_t n = due.size();
    std::vector<Due> extra;
    for (std::size_t i = 0; i < n; ++i) {
      Due& d = due[i];
      if (burst_left > 0 || (imp.loss > 0 && uniform(rng) < imp.loss)) {
        if (burst_left == 0) burst_left = std::max(1, imp.burst);
        --burst_left;
        d.dropped = true;
        ++t.dropped;
        dropped_any = true;
        continue;
      }
      if (imp.corrupt > 0 && uniform(rng) < imp.corrupt && pkts[d.packet].size() > 12) {
        auto& bytes = pkts[d.packet];
        const std::size_t at = 12 + rng() % (bytes.size() - 12);
        bytes[at] = static_cast<std::uint8_t>(bytes[at] ^ (1u + rng() % 255));
        ++t.corrupted;
      }
      if (imp.reorder_depth > 0 && i + 1 < n && uniform(rng) < imp.reorder) {
        // Send it just after the packet `reorder_depth` places later (or the frame's last).
        const std::size_t j = std::min(n - 1, i + static_cast<std::size_t>(imp.reorder_depth));
        d.at = due[j].at + slot / 2;
        ++t.reordered;
      }
      if (imp.jitter_ms > 0)
        d.at += std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::milli>(uniform(rng) * imp.jitter_ms));
      if (imp.duplicate > 0 && uniform(rng) < imp.duplicate) {
        extra.push_back({d.at + std::chrono::microseconds(1), d.packet, false});
        ++t.duplicated;
      }
    }
    due.erase(std::remove_if(due.begin(), due.end(), [](const Due& d) { return d.dropped; }), due.end());
    due.insert(due.end(), extra.begin(), extra.end());
    return dropped_any;
  };
  const auto start = Clock::now() + std::chrono::milliseconds(20);
  log->info("sending to {} at {}/{} fps, SSRC 0x{:08X}", config_.to.describe(), config_.fps_num, config_.fps_den, ssrc);

  for (long long f = 0; config_.frames < 0 || f < config_.frames; ++f) {
    if (stop.load(std::memory_order_relaxed)) break;
    const EncodedFrame& frame = frames_[static_cast<std::size_t>(f % static_cast<long long>(frames_.size()))];
    // 90 kHz timestamp of frame f, exact for fractional rates (f·90000·den/num).
    const auto ts = static_cast<std::uint32_t>(ts_base + static_cast<std::uint64_t>(f) * 90000u * config_.fps_den /
                                                             static_cast<std::uint64_t>(config_.fps_num));
    packets.clear();
    if (config_.rfc5371) {
      if (frame.parts.empty()) {
        if (auto st = j2k_packetizer.packetize(frame.codestream, ts, 0, packets); !st) return st.error();
      } else {
        for (std::size_t k = 0; k < frame.parts.size(); ++k)  // fields: tp 1 then tp 2
          if (auto st = j2k_packetizer.packetize(frame.parts[k], ts, static_cast<int>(k) + 1, packets); !st) return st.error();
      }
    } else if (f % frames_per_second == 0 && !config_.mxf_header.empty()) {
      for (const auto& klv : config_.mxf_header) packetizer.packetize(klv, ts, packets);
    } else if (f % frames_per_second == 0) {
      // Partition pack + header metadata once a second so late joiners learn the format.
      packetizer.packetize(packetizer::mxf_partition_pack(f == 0, 0, primer.size() + descriptor.size()), ts, packets);
      packetizer.packetize(primer, ts, packets);
      packetizer.packetize(descriptor, ts, packets);
    }
    if (!frame.klvs.empty()) {
      for (const auto& klv : frame.klvs) packetizer.packetize(klv, ts, packets);
    } else if (!config_.rfc5371) {
      packetizer.packetize(packetizer::mxf_system_item(static_cast<std::uint16_t>(f)), ts, packets);
      if (frame.parts.empty()) {
        packetizer.packetize(packetizer::mxf_picture_element(frame.codestream), ts, packets);
      } else if (config_.interlace == 2) {
        // I2: every codestream of the frame in one KLV, back to back.
        std::vector<std::uint8_t> joined;
        for (const auto& part : frame.parts) joined.insert(joined.end(), part.begin(), part.end());
        packetizer.packetize(packetizer::mxf_picture_element(joined), ts, packets);
      } else {
        // I1 and/or dual codestreams: one picture element per codestream (cc = their count).
        const int count = static_cast<int>(frame.parts.size());
        for (int k = 0; k < count; ++k)
          packetizer.packetize(packetizer::mxf_picture_element(frame.parts[static_cast<std::size_t>(k)], count, k + 1), ts, packets);
      }
    }

    if (config_.mxf_stream && !config_.rfc5371) {
      // Re-cut the frame's KLV packets as one stream: strip the RTP headers, join, cut again.
      std::vector<std::uint8_t> stream;
      for (const auto& p : packets) stream.insert(stream.end(), p.begin() + 12, p.end());
      packets.clear();
      stream_packetizer.packetize(stream, ts, packets);
    }
    const auto frame_start = start + f * period;
    const auto slot = std::chrono::duration_cast<Clock::duration>(period * config_.spread / packets.size());
    if (Clock::now() > frame_start + period) ++totals.late_frames;
    const bool impair = imp.any() && f > 0 && (config_.frames < 0 || f + 1 < config_.frames);
    schedule.clear();
    for (std::size_t i = 0; i < packets.size(); ++i)
      schedule.push_back({frame_start + static_cast<long long>(i) * slot, static_cast<std::uint32_t>(i), false});
    bool damaged = false;
    if (impair) damaged = apply_impairments(packets, schedule, slot, totals);
    // Send in due order; ties keep their order (a duplicate follows its original).
    std::stable_sort(schedule.begin(), schedule.end(), [](const Due& a, const Due& b) { return a.at < b.at; });
    for (const Due& d : schedule) {
      // Sleep when the next slot is far; otherwise send now (a sleep costs ~60 µs).
      if (const auto now = Clock::now(); d.at - now > std::chrono::microseconds(200)) std::this_thread::sleep_until(d.at);
      const auto& pkt = packets[d.packet];
      if (!socket.value()->send(pkt)) ++totals.send_errors;
      ++totals.packets;
      totals.bytes += pkt.size();
    }
    if (damaged) ++totals.damaged_frames;
    sent_frames_.push_back({ts, frame.checksum, damaged});
    ++totals.frames;
    if (f > 0 && f % (10 * frames_per_second) == 0)
      log->info("sent {} frames, {} packets", totals.frames, totals.packets);
  }
  return totals;
}

}  // namespace j2k::sender
