#include "sender/sender.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <thread>

#include "core/log.hpp"
#include "packetizer/mxf_writer.hpp"
#include "packetizer/rtp_j2k_packetizer.hpp"
#include "packetizer/rtcp_writer.hpp"
#include "packetizer/fec_encoder.hpp"
#include "packetizer/rtp_packetizer.hpp"
#include "packetizer/ts_mux.hpp"
#include "net/udp_sender.hpp"

namespace j2k::sender {

using Clock = std::chrono::steady_clock;

namespace {
/// One packet's send time.
struct Due {
  enum Kind : std::uint8_t { media, fec_column, fec_row };
  Clock::time_point at;
  std::uint32_t packet = 0;  // index into the frame's media packets, or into its FEC packets of `kind`
  bool dropped = false;
  int path = 0;  // 1: the 2022-7 second path
  Kind kind = media;
};

/// The packetizers of one stream: KLVs (RFC 6597), RFC 5371, and the re-cut of mxf-stream.
/// The packetizers of one stream: KLVs (RFC 6597), RFC 5371, the re-cut of mxf-stream, and
/// TR-01 (the TS muxer and RTP/MP2T). Copyable: --end-loss counts packets on copies.
struct Packetizers {
  packetizer::RtpPacketizer klv;
  packetizer::Rfc5371Packetizer j2k;
  packetizer::RtpPacketizer stream;
  packetizer::TsMuxer ts;
  packetizer::RtpMp2tPacketizer mp2t;
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
  // RTCP goes to the next port from the same source (RFC 3550 11), so SSM filters pass it too.
  std::unique_ptr<net::UdpSender> control;
  if (config_.rtcp && sc.port < 65535) {
    net::SenderConfig cc = sc;
    cc.port = static_cast<std::uint16_t>(sc.port + 1);
    auto opened = net::UdpSender::open(cc);
    if (!opened) return opened.error();
    control = std::move(opened).value();
  }
  const std::string cname = "j2ksend@" + (!sc.bind_address.empty() ? sc.bind_address
                                          : !sc.iface.empty()       ? sc.iface
                                                                    : std::string("localhost"));
  // ST 2022-7 second path and ST 2022-1 FEC streams (column port+2, row port+4).
  std::unique_ptr<net::UdpSender> socket2, fec_column_socket, fec_row_socket, fec_column_socket2, fec_row_socket2;
  auto open_extra = [&](const StreamUrl& u, int port, std::unique_ptr<net::UdpSender>& out) -> Status {
    net::SenderConfig xc = sc;
    xc.address = u.host;
    xc.port = static_cast<std::uint16_t>(port);
    xc.iface = u.iface;
    xc.ttl = u.ttl;
    auto s2 = net::UdpSender::open(xc);
    if (!s2) return s2.error();
    out = std::move(s2).value();
    return {};
  };
  if (config_.to2)
    if (auto st = open_extra(*config_.to2, config_.to2->port, socket2); !st) return st.error();
  std::optional<packetizer::FecEncoder> fec;
  if (config_.fec_columns > 0) {
    fec.emplace(config_.fec_columns, config_.fec_rows);
    if (config_.fec_rows > 0)
      if (auto st = open_extra(config_.to, config_.to.port + 2, fec_column_socket); !st) return st.error();
    if (auto st = open_extra(config_.to, config_.to.port + 4, fec_row_socket); !st) return st.error();
    // ST 2022-7 with FEC: each path carries the FEC too (its port + 2 and + 4), as
    // contribution senders do, so that a receiver that loses one path keeps its FEC.
    if (config_.to2) {
      if (config_.fec_rows > 0)
        if (auto st = open_extra(*config_.to2, config_.to2->port + 2, fec_column_socket2); !st) return st.error();
      if (auto st = open_extra(*config_.to2, config_.to2->port + 4, fec_row_socket2); !st) return st.error();
    }
  }

  std::random_device rd;
  const std::uint32_t ssrc = config_.ssrc ? config_.ssrc : rd();
  const std::uint32_t ts_base = config_.timestamp_base ? *config_.timestamp_base : rd();
  const auto first_sequence = static_cast<std::uint16_t>(rd());
  // 2022-1 encoders (GStreamer's) require SSRC 0 on the media; ours accepts any, but follows.
  const std::uint32_t media_ssrc = fec ? 0u : ssrc;
  // TR-01: the TS muxer's descriptor says what the frames are.
  packetizer::TsMuxConfig tmc;
  tmc.descriptor.horizontal_size = static_cast<std::uint32_t>(format_.width);
  tmc.descriptor.vertical_size = static_cast<std::uint32_t>(format_.height);
  tmc.descriptor.den_frame_rate = static_cast<std::uint16_t>(config_.fps_den);
  tmc.descriptor.num_frame_rate = static_cast<std::uint16_t>(config_.fps_num);
  // BT.709, what the test sources are converted with; HDR: ST 2084 (PQ), or BT.2020 (the basic
  // descriptor has no code for HLG).
  tmc.descriptor.color_specification = format_.transfer == TransferFunction::pq    ? 7
                                        : format_.transfer == TransferFunction::hlg ? 6
                                                                                    : 3;
  tmc.descriptor.interlaced_video = config_.interlace != 0;
  if (config_.sound.any()) tmc.audio_pid = 0x0201;
  // The frame's packets go out over `spread` of its period: the seconds they take, and the PCR's
  // lead on the PTS, at least the usual 100 ms and always more than that spread (below 10 fps
  // a frame's last packets came after its PTS, an underflow for a conforming decoder).
  const double frame_seconds = static_cast<double>(config_.fps_den) / config_.fps_num;
  const double send_seconds = frame_seconds * config_.spread;
  tmc.pcr_lead_90khz = std::max<std::uint64_t>(9000, static_cast<std::uint64_t>(std::ceil(send_seconds * 90000.0)) + 900);
  Packetizers pk{{ssrc, 96, first_sequence, config_.max_payload},
                 {ssrc, 96, first_sequence, config_.max_payload},
                 {ssrc, 96, first_sequence, config_.max_payload},
                 packetizer::TsMuxer(tmc),
                 {media_ssrc, first_sequence}};
  std::vector<std::vector<std::uint8_t>> fec_column_packets, fec_row_packets;
  std::uint64_t fec_media_packets = 0;  // media packets given to the FEC encoder so far
  std::mt19937 rng2(config_.impair.seed * 7919u + 1);
  int burst2_left = 0;

  packetizer::MxfPictureParams mp;
  mp.width = static_cast<std::uint32_t>(format_.width);
  mp.height = static_cast<std::uint32_t>(format_.height);
  mp.depth = static_cast<std::uint32_t>(format_.bits);
  mp.chroma_dx = static_cast<std::uint32_t>(format_.chroma_dx);
  if (format_.transfer != TransferFunction::sdr) {
    mp.coding = ColourCoding::ycbcr_bt2020;
    mp.transfer = format_.transfer;
  }
  if (config_.interlace) {
    mp.frame_layout = 1;  // separate fields
    mp.field_dominance = 1;
    mp.height = static_cast<std::uint32_t>((format_.height + 1) / 2);  // stored height is the field's
  }
  mp.rate_num = config_.fps_num;
  mp.rate_den = config_.fps_den;
  const auto primer = packetizer::mxf_primer_pack();
  const auto descriptor = packetizer::mxf_cdci_descriptor(mp);
  const bool make_sound = config_.sound.kind == SoundKind::tone || config_.sound.kind == SoundKind::click;
  const auto sound_descriptor = make_sound ? packetizer::mxf_sound_descriptor(config_.sound.format, config_.fps_num, config_.fps_den)
                                           : packetizer::KlvBytes{};
  // The sound of frame f: generated, or the frame's own (from a file), or none.
  auto sound_of = [&](long long f, const EncodedFrame& frame) -> std::optional<depacketizer::AudioBlock> {
    if (make_sound) return generated_sound(config_.sound, config_.fps_num, config_.fps_den, static_cast<std::uint64_t>(f));
    if (config_.sound.kind == SoundKind::file) return frame.sound;
    return std::nullopt;
  };
  const int frames_per_second = std::max(1, (config_.fps_num + config_.fps_den - 1) / config_.fps_den);

  // The packets of frame f (header metadata once a second, then the picture), in order.
  // `pts`: the frame's 90 kHz time unwrapped (the TS's 33-bit PTS and PCR follow it; the
  // 32-bit RTP timestamp `ts` wraps every 13.3 hours, 2^32 ticks where the PTS does not).
  auto build_frame = [&](long long f, std::uint32_t ts, std::uint64_t pts, std::vector<std::vector<std::uint8_t>>& out,
                         Packetizers& to) -> Status {
    const EncodedFrame& frame = frames_[static_cast<std::size_t>(f % static_cast<long long>(frames_.size()))];
    if (config_.ts) {
      // One PES per frame (both fields of an interlaced frame in it), PTS = the frame's 90 kHz time.
      std::vector<std::uint8_t> ts_bytes;
      std::vector<Bytes> streams;
      if (frame.parts.empty()) streams.push_back(frame.codestream);
      for (const auto& part : frame.parts) streams.push_back(part);
      const auto fps_int = static_cast<std::uint64_t>(frames_per_second);
      const auto seconds = static_cast<std::uint64_t>(f) / fps_int;
      const depacketizer::ts::TimeCode tc{static_cast<std::uint8_t>(seconds / 3600 % 24), static_cast<std::uint8_t>(seconds / 60 % 60),
                                          static_cast<std::uint8_t>(seconds % 60), static_cast<std::uint8_t>(static_cast<std::uint64_t>(f) % fps_int)};
      // PCRs at most ~30 ms of sending apart (13818-1 asks 100 ms, DVB's TR 101 290 40: one per
      // frame was 41.7 ms at 24 fps): every pcr_every-th packet of the picture's PES, from an
      // estimate of the frame's packets; each then carries its own sending time (below).
      std::size_t bytes = 0;
      for (Bytes s : streams) bytes += s.size();
      const double packets_estimate = static_cast<double>(bytes + 100) / 184.0 + 3.0;
      const std::size_t pcr_every =
          send_seconds > 0.035 ? std::max<std::size_t>(1, static_cast<std::size_t>(0.030 * packets_estimate / send_seconds)) : 0;
      std::vector<std::size_t> pcr_at;
      to.ts.mux_frame(streams, pts, tc, ts_bytes, pcr_every, &pcr_at);
      // Its sound: one ST 302M PES whose first sample is due with the picture (the same PTS).
      if (auto sound = sound_of(f, frame)) to.ts.mux_audio(*sound, pts, ts_bytes);
      // The frame's datagrams (7 TS packets each) go out evenly over send_seconds, the first at
      // the frame's time: a PCR tells its datagram's time on the clock whose PTS is pts.
      const std::size_t datagrams = (ts_bytes.size() + 7 * 188 - 1) / (7 * 188);
      const double slot_27mhz = send_seconds * 27e6 / static_cast<double>(std::max<std::size_t>(datagrams, 1));
      const std::uint64_t pcr0 = (pts - std::min(pts, to.ts.config().pcr_lead_90khz)) * 300;
      for (const std::size_t at : pcr_at) {
        const auto datagram = static_cast<double>(at / 188 / 7);
        packetizer::write_pcr(ts_bytes.data() + at, pcr0 + static_cast<std::uint64_t>(std::llround(datagram * slot_27mhz)));
      }
      to.mp2t.packetize(ts_bytes, ts, out);
      return {};
    }
    if (config_.rfc5371) {
      if (frame.parts.empty()) {
        if (auto st = to.j2k.packetize(frame.codestream, ts, 0, out); !st) return st.error();
      } else {
        for (std::size_t k = 0; k < frame.parts.size(); ++k)  // fields: tp 1 then tp 2
          if (auto st = to.j2k.packetize(frame.parts[k], ts, static_cast<int>(k) + 1, out); !st) return st.error();
      }
    } else if (f % frames_per_second == 0 && !config_.mxf_header.empty()) {
      for (const auto& klv : config_.mxf_header) to.klv.packetize(klv, ts, out);
    } else if (f % frames_per_second == 0) {
      // Partition pack + header metadata once a second so late joiners learn the format.
      to.klv.packetize(packetizer::mxf_partition_pack(f == 0, 0, primer.size() + descriptor.size() + sound_descriptor.size()),
                       ts, out);
      to.klv.packetize(primer, ts, out);
      to.klv.packetize(descriptor, ts, out);
      if (!sound_descriptor.empty()) to.klv.packetize(sound_descriptor, ts, out);
    }
    if (!frame.klvs.empty()) {
      for (const auto& klv : frame.klvs) to.klv.packetize(klv, ts, out);
    } else if (!config_.rfc5371) {
      {
        // Time code from the frame number at the nominal rate (non-drop), from 00:00:00:00.
        const auto n = static_cast<std::uint64_t>(f);
        const auto fps = static_cast<std::uint64_t>(frames_per_second);
        depacketizer::TimeCode tc;
        tc.frames = static_cast<int>(n % fps);
        tc.seconds = static_cast<int>(n / fps % 60);
        tc.minutes = static_cast<int>(n / fps / 60 % 60);
        tc.hours = static_cast<int>(n / fps / 3600 % 24);
        to.klv.packetize(packetizer::mxf_system_item(static_cast<std::uint16_t>(f), tc,
                                                     static_cast<double>(config_.fps_num) / config_.fps_den),
                         ts, out);
      }
      if (frame.parts.empty()) {
        to.klv.packetize(packetizer::mxf_picture_element(frame.codestream), ts, out);
      } else if (config_.interlace == 2) {
        // I2: every codestream of the frame in one KLV, back to back.
        std::vector<std::uint8_t> joined;
        for (const auto& part : frame.parts) joined.insert(joined.end(), part.begin(), part.end());
        to.klv.packetize(packetizer::mxf_picture_element(joined), ts, out);
      } else {
        // I1 and/or dual codestreams: one picture element per codestream (cc = their count).
        const int count = static_cast<int>(frame.parts.size());
        for (int k = 0; k < count; ++k)
          to.klv.packetize(packetizer::mxf_picture_element(frame.parts[static_cast<std::size_t>(k)], count, k + 1), ts, out);
      }
      // The content package's sound follows its pictures (ST 379 generic container order).
      if (make_sound) to.klv.packetize(packetizer::mxf_sound_element(*sound_of(f, frame)), ts, out);
    }

    if (config_.mxf_stream && !config_.rfc5371) {
      // Re-cut the frame's KLV packets as one stream: strip the RTP headers, join, cut again.
      std::vector<std::uint8_t> stream;
      for (const auto& p : out) stream.insert(stream.end(), p.begin() + 12, p.end());
      out.clear();
      to.stream.packetize(stream, ts, out);
    }
    return {};
  };

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
  // Records an impaired packet for the manifest (bounded: a sender may run for days).
  auto record = [&](std::vector<PacketEvent>& list, const std::vector<std::uint8_t>& pkt, std::uint32_t offset) {
    if (list.size() >= ImpairmentLog::kMaxPerList) { events_.truncated = true; return; }
    list.push_back({static_cast<std::uint16_t>(pkt[2] << 8 | pkt[3]), offset});
  };
  // Decides the fate of each packet of one frame, counting in `t` and in the frame's record.
  auto apply_impairments = [&](std::vector<std::vector<std::uint8_t>>& pkts, std::vector<Due>& due,
                               Clock::duration slot, SendTotals& t, SentFrame& sent) {
    const std::size_t n = due.size();
    std::vector<Due> extra;
    for (std::size_t i = 0; i < n; ++i) {
      Due& d = due[i];
      if (burst_left > 0 || (imp.loss > 0 && uniform(rng) < imp.loss)) {
        if (burst_left == 0) burst_left = std::max(1, imp.burst);
        --burst_left;
        d.dropped = true;
        continue;
      }
      if (imp.corrupt > 0 && uniform(rng) < imp.corrupt && pkts[d.packet].size() > 12) {
        // Per packet: one byte after the RTP header changes (the payload header or data).
        auto& bytes = pkts[d.packet];
        const std::size_t at = 12 + rng() % (bytes.size() - 12);
        bytes[at] = static_cast<std::uint8_t>(bytes[at] ^ (1u + rng() % 255));
        ++t.corrupted;
        ++sent.corrupted;
        record(events_.corrupted, bytes, static_cast<std::uint32_t>(at));
      }
      if (imp.reorder_depth > 0 && i + 1 < n && uniform(rng) < imp.reorder) {
        // Send it just after the packet `reorder_depth` places later (or the frame's last).
        const std::size_t j = std::min(n - 1, i + static_cast<std::size_t>(imp.reorder_depth));
        d.at = due[j].at + slot / 2;
        ++t.reordered;
        ++sent.reordered;
        record(events_.reordered, pkts[d.packet], 0);
      }
      if (imp.jitter_ms > 0)
        d.at += std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::milli>(uniform(rng) * imp.jitter_ms));
      if (imp.duplicate > 0 && uniform(rng) < imp.duplicate) {
        extra.push_back({d.at + std::chrono::microseconds(1), d.packet, false});
        ++t.duplicated;
        ++sent.duplicated;
        record(events_.duplicated, pkts[d.packet], 0);
      }
    }
    due.insert(due.end(), extra.begin(), extra.end());
  };
  const auto start = Clock::now() + std::chrono::milliseconds(20);
  // What RTCP reports: every RTP packet made (those the impairments drop are lost "in the
  // network", so they count; duplicates are the network's, so they do not) and its payload.
  std::uint64_t rtp_packets = 0, rtp_octets = 0;
  auto send_report = [&](bool bye) {
    if (!control) return;
    const auto now = Clock::now();
    depacketizer::SenderReport sr;
    sr.ssrc = config_.ts ? media_ssrc : ssrc;  // the media's SSRC (0 for TS under 2022-1 FEC)
    sr.ntp_timestamp = packetizer::ntp_timestamp(std::chrono::system_clock::now());
    // The media clock at this instant: frame f's timestamp belongs to the instant start + f·period.
    const double since_start = std::chrono::duration<double>(now - start).count();
    sr.rtp_timestamp = static_cast<std::uint32_t>(ts_base + static_cast<std::int64_t>(std::llround(since_start * 90000.0)));
    sr.packet_count = static_cast<std::uint32_t>(rtp_packets);
    sr.octet_count = static_cast<std::uint32_t>(rtp_octets);
    if (control->send(packetizer::rtcp_sender_report(sr, cname, bye))) ++totals.rtcp_reports;
  };
  // --end-loss N: the last N packets of the stream are dropped. Find where they start by
  // packetizing the last frames ahead of time (copies of the packetizers: counts only).
  struct { long long frame = std::numeric_limits<long long>::max(); std::uint32_t packet = 0; } end_loss;
  if (imp.end_loss > 0 && config_.frames > 0) {
    std::uint64_t left = imp.end_loss;
    std::vector<std::vector<std::uint8_t>> scratch;
    for (long long g = config_.frames - 1; g >= 0 && left > 0; --g) {
      Packetizers copy = pk;
      scratch.clear();
      if (auto st = build_frame(g, 0, 0, scratch, copy); !st) return st.error();
      end_loss.frame = g;
      end_loss.packet = left >= scratch.size() ? 0 : static_cast<std::uint32_t>(scratch.size() - left);
      left -= std::min<std::uint64_t>(left, scratch.size());
    }
  }
  log->info("sending to {} at {}/{} fps, SSRC 0x{:08X}", config_.to.describe(), config_.fps_num, config_.fps_den, ssrc);

  for (long long f = 0; config_.frames < 0 || f < config_.frames; ++f) {
    if (stop.load(std::memory_order_relaxed)) break;
    const EncodedFrame& frame = frames_[static_cast<std::size_t>(f % static_cast<long long>(frames_.size()))];
    // 90 kHz time of frame f, exact for fractional rates (f·90000·den/num): the RTP timestamp
    // is its low 32 bits; the TS's PTS (a second later) is taken before that truncation.
    const std::uint64_t media_time = ts_base + static_cast<std::uint64_t>(f) * 90000u * config_.fps_den /
                                                   static_cast<std::uint64_t>(config_.fps_num);
    const auto ts = static_cast<std::uint32_t>(media_time);
    packets.clear();
    if (auto st = build_frame(f, ts, media_time + 90000, packets, pk); !st) return st.error();
    const auto frame_start = start + f * period;
    const auto slot = std::chrono::duration_cast<Clock::duration>(period * config_.spread / packets.size());
    if (config_.ts) {
      // RTP/MP2T: a datagram's timestamp is when its first byte is due to be sent (RFC 2250
      // 2.1), on the same clock: the frame's time plus the datagram's slot. (One timestamp for
      // the whole frame made receivers that follow RFC 3550 see the frame's spread as jitter.)
      const double slot_ticks = std::chrono::duration<double>(slot).count() * 90000.0;
      for (std::size_t i = 0; i < packets.size(); ++i)
        if (packets[i].size() >= 8) {
          const auto t = static_cast<std::uint32_t>(ts + static_cast<std::uint32_t>(std::llround(static_cast<double>(i) * slot_ticks)));
          packets[i][4] = static_cast<std::uint8_t>(t >> 24);
          packets[i][5] = static_cast<std::uint8_t>(t >> 16);
          packets[i][6] = static_cast<std::uint8_t>(t >> 8);
          packets[i][7] = static_cast<std::uint8_t>(t);
        }
    }
    if (Clock::now() > frame_start + period) ++totals.late_frames;
    // Random impairments spare the first and last frame (so counters compare exactly) and the
    // frames of the end burst (so that no packet is both reordered and dropped).
    const bool spared = f == 0 || (config_.frames >= 0 && f + 1 >= config_.frames) || f >= end_loss.frame;
    const bool impair = imp.any() && !spared;
    const bool impair2 = config_.loss2 > 0 && !spared;  // path 2's loss alone (a path failing) is an impairment too
    schedule.clear();
    for (std::size_t i = 0; i < packets.size(); ++i)
      schedule.push_back({frame_start + static_cast<long long>(i) * slot, static_cast<std::uint32_t>(i), false});
    // FEC over the packets as built (before any loss), interleaved with them as ST 2022-1
    // senders send it: a row's FEC right after the row's last packet; the columns' FEC, which
    // a matrix's last row completes one by one, spread over the next L·D packets' slots (one
    // every D packets), so that a burst that hits the matrix's end does not take its columns'
    // FEC too. Never later than the frame's own period (the spread leaves a tail for it). Sent
    // after the whole frame, the FEC of a frame of more than a few hundred packets came
    // too long after its first packets for a receiver's FEC window (ours: 512 packets).
    fec_column_packets.clear();
    fec_row_packets.clear();
    std::vector<Due> fec_due;
    if (fec) {
      const int rows = config_.fec_rows;
      for (std::size_t i = 0; i < packets.size(); ++i) {
        const std::size_t columns_before = fec_column_packets.size(), rows_before = fec_row_packets.size();
        fec->add(packets[i], fec_column_packets, fec_row_packets);
        const std::uint64_t position = fec_media_packets++;  // in the stream: matrices run on across frames
        const auto sent_at = frame_start + static_cast<long long>(i) * slot;
        const auto cap = frame_start + period;
        for (std::size_t k = rows_before; k < fec_row_packets.size(); ++k)
          fec_due.push_back({sent_at, static_cast<std::uint32_t>(k), false, 0, Due::fec_row});
        for (std::size_t k = columns_before; k < fec_column_packets.size(); ++k) {
          // The packet that completes a column is that column's in the matrix's last row.
          const auto c = static_cast<long long>(position % static_cast<std::uint64_t>(config_.fec_columns));
          fec_due.push_back({std::min<Clock::time_point>(sent_at + c * std::max(rows - 1, 0) * slot, cap),
                             static_cast<std::uint32_t>(k), false, 0, Due::fec_column});
        }
      }
    }
    // Path 2 (2022-7): every packet again, with its own independent loss.
    std::vector<Due> path2;
    if (socket2) {
      for (std::size_t i = 0; i < packets.size(); ++i) {
        if (impair2 && (burst2_left > 0 || uniform(rng2) < config_.loss2)) {
          if (burst2_left == 0) burst2_left = std::max(1, config_.burst2);
          --burst2_left;
          ++totals.dropped2;
          record(events_.dropped_path2, packets[i], 0);
          continue;
        }
        path2.push_back({schedule[i].at, static_cast<std::uint32_t>(i), false, 1});
      }
    }
    rtp_packets += packets.size();
    for (const auto& p : packets) rtp_octets += p.size() - packetizer::RtpPacketizerBase::kHeaderBytes;
    SentFrame sent{ts, frame.checksum};
    sent.first_sequence = static_cast<std::uint16_t>(packets.front()[2] << 8 | packets.front()[3]);
    sent.packets = static_cast<std::uint32_t>(packets.size());
    if (impair) apply_impairments(packets, schedule, slot, totals, sent);
    // The burst at the very end (--end-loss): every packet from the chosen one on.
    for (Due& d : schedule)
      if (f > end_loss.frame || (f == end_loss.frame && d.packet >= end_loss.packet)) d.dropped = true;
    for (const Due& d : schedule) {
      if (!d.dropped) continue;
      ++totals.dropped;
      ++sent.dropped;
      record(events_.dropped, packets[d.packet], 0);
    }
    schedule.erase(std::remove_if(schedule.begin(), schedule.end(), [](const Due& d) { return d.dropped; }), schedule.end());
    sent.damaged = sent.dropped > 0 || sent.corrupted > 0;
    if (socket2) {
      std::vector<bool> sent1(packets.size(), false), sent2(packets.size(), false);
      for (const Due& d : schedule) sent1[d.packet] = true;
      for (const Due& d : path2) sent2[d.packet] = true;
      for (std::size_t i = 0; i < packets.size(); ++i) {
        const bool lost = !sent1[i] && !sent2[i];
        totals.dropped_both += lost;
        sent.dropped_both += lost;
        sent.dropped_path2 += !sent2[i];
      }
    }
    schedule.insert(schedule.end(), path2.begin(), path2.end());
    schedule.insert(schedule.end(), fec_due.begin(), fec_due.end());  // after the media they follow
    // Send in due order; ties keep their order (a duplicate follows its original).
    std::stable_sort(schedule.begin(), schedule.end(), [](const Due& a, const Due& b) { return a.at < b.at; });
    for (const Due& d : schedule) {
      // Sleep when the next slot is far; otherwise send now (a sleep costs ~60 µs).
      if (const auto now = Clock::now(); d.at - now > std::chrono::microseconds(200)) std::this_thread::sleep_until(d.at);
      if (d.kind == Due::fec_column) {
        const auto& p = fec_column_packets[d.packet];
        if (fec_column_socket && !fec_column_socket->send(p)) ++totals.send_errors;
        if (fec_column_socket2 && !fec_column_socket2->send(p)) ++totals.send_errors;
        continue;
      }
      if (d.kind == Due::fec_row) {
        const auto& p = fec_row_packets[d.packet];
        if (!fec_row_socket->send(p)) ++totals.send_errors;
        if (fec_row_socket2 && !fec_row_socket2->send(p)) ++totals.send_errors;
        continue;
      }
      const auto& pkt = packets[d.packet];
      if (!(d.path ? socket2 : socket.value())->send(pkt)) ++totals.send_errors;
      ++totals.packets;
      totals.bytes += pkt.size();
    }
    totals.fec_packets += fec_column_packets.size() + fec_row_packets.size();
    if (sent.damaged) ++totals.damaged_frames;
    if (make_sound) totals.sound_samples += static_cast<std::uint64_t>(depacketizer::samples_in_frame(
                        config_.sound.format.sample_rate, config_.fps_num, config_.fps_den, static_cast<std::uint64_t>(f)));
    else if (config_.sound.kind == SoundKind::file && frame.sound) totals.sound_samples += frame.sound->frames();
    // Kept for the manifest only, and bounded: a looping sender runs for days.
    if (config_.record_frames) {
      if (sent_frames_.size() < kMaxRecordedFrames) sent_frames_.push_back(sent);
      else frames_truncated_ = true;
    }
    ++totals.frames;
    if (f > 0 && f % (10 * frames_per_second) == 0)
      log->info("sent {} frames, {} packets", totals.frames, totals.packets);
    if (f % frames_per_second == 0) send_report(false);  // after the first frame, then once a second
  }
  // The final report is sent in the slot of the frame that would follow the last one, so its
  // RTP timestamp lies one period past the last frame's and tells how many frames went out.
  if (!stop.load(std::memory_order_relaxed)) std::this_thread::sleep_until(start + static_cast<long long>(totals.frames) * period);
  send_report(true);
  return totals;
}

}  // namespace j2k::sender
