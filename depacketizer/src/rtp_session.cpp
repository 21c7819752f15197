#include "depacketizer/rtp_session.hpp"

#include <cmath>

#include <fmt/format.h>

#include "depacketizer/codestream_tools.hpp"

#include "core/log.hpp"

namespace j2k::depacketizer {

namespace {
constexpr double kTicksPerSecond = 90000.0;  // RTP video clock
constexpr int kSsrcSwitchPackets = 50;       // consecutive packets of a new SSRC before following it
}  // namespace

RtpSession::RtpSession(Sink sink, SessionConfig config)
    : sink_(std::move(sink)),
      interlaced_rfc5371_(config.format == PayloadFormat::rfc5371),
      payload_(make_depacketizer(config.format, [this](CodestreamUnit&& u) { on_unit(std::move(u)); })),
      reorder_(config.reorder, [this](Bytes d, std::uint32_t, bool loss, std::chrono::steady_clock::time_point t) {
        on_ordered(d, loss, t);
      }) {
  ts_ = dynamic_cast<TsDepacketizer*>(payload_.get());
}

std::optional<TsSnapshot> RtpSession::ts_snapshot() const {
  if (!ts_) return std::nullopt;
  return ts_->snapshot();
}

void RtpSession::on_datagram(Bytes datagram, std::chrono::steady_clock::time_point arrival) {
  if (ts_ && ts::looks_like_ts(datagram)) {
    // Plain UDP TS (no RTP header: an RTP first byte is 0x80–0xBF, never the sync byte 0x47).
    payload_bytes_.fetch_add(datagram.size(), std::memory_order_relaxed);
    ts_->push_plain(datagram, arrival);
    publish_counters();
    return;
  }
  auto packet = parse_rtp(datagram);
  if (!packet.ok()) {
    malformed_.fetch_add(1, std::memory_order_relaxed);
    if (malformed_log_.allow()) logger("depacketizer")->warn("dropped malformed datagram: {}", packet.error().message);
    return;
  }
  if (!ssrc_) {
    // Follow a stream only once two packets of one SSRC arrived in a row, so that a stray
    // datagram that happens to look like RTP cannot capture the session. The first packet
    // is kept (one copy, once per stream) and processed when the second confirms it.
    if (!first_packet_.empty() && first_ssrc_ == packet->ssrc) {
      ssrc_ = packet->ssrc;
      epoch_ = arrival;
      ssrc_value_.store(packet->ssrc);
      logger("depacketizer")->info("following RTP stream SSRC 0x{:08X}, payload type {}", packet->ssrc,
                                   packet->payload_type);
      std::vector<std::uint8_t> first = std::move(first_packet_);
      first_packet_.clear();
      process(*parse_rtp(first), first, first_arrival_);
      process(*packet, datagram, arrival);
      return;
    }
    if (!first_packet_.empty()) foreign_.fetch_add(1, std::memory_order_relaxed);
    first_packet_.assign(datagram.begin(), datagram.end());
    first_ssrc_ = packet->ssrc;
    first_arrival_ = arrival;
    return;
  }
  if (packet->ssrc != *ssrc_) {
    foreign_.fetch_add(1, std::memory_order_relaxed);
    // A sender that restarts comes back with a new SSRC: follow it once it persists.
    if (packet->ssrc == candidate_ssrc_) ++candidate_count_;
    else { candidate_ssrc_ = packet->ssrc; candidate_count_ = 1; }
    if (candidate_count_ < kSsrcSwitchPackets) return;
    logger("depacketizer")->warn("stream changed to SSRC 0x{:08X}", packet->ssrc);
    reorder_.reset();
    payload_->flush();
    ssrc_ = packet->ssrc;
    ssrc_value_.store(packet->ssrc);
    sequence_ = RtpSequenceTracker{};
    jitter_ = JitterEstimator{};
    last_unit_timestamp_.reset();
  } else {
    candidate_count_ = 0;
  }
  process(*packet, datagram, arrival);
}

void RtpSession::process(const RtpPacket& packet, Bytes datagram, std::chrono::steady_clock::time_point arrival) {
  using Verdict = RtpSequenceTracker::Verdict;
  const auto verdict = sequence_.accept(packet.sequence);
  if (verdict == Verdict::restart) reorder_.reset();
  if (verdict != Verdict::duplicate && verdict != Verdict::stray) {
    // Jitter uses arrival order (RFC 3550 A.8); the depacketizer sees sequence order.
    const double arrival_ticks = std::chrono::duration<double>(arrival - epoch_).count() * kTicksPerSecond;
    jitter_.update(packet.timestamp, arrival_ticks);
    reorder_.push(datagram, sequence_.last_extended(), arrival);
    if (reorder_.waiting()) reorder_.tick(arrival);
  }
  publish_counters();
}

void RtpSession::on_ordered(Bytes datagram, bool loss_before, std::chrono::steady_clock::time_point arrival) {
  auto packet = parse_rtp(datagram);  // validated before it entered the reorder buffer
  if (!packet.ok()) return;
  payload_bytes_.fetch_add(packet->payload.size(), std::memory_order_relaxed);
  payload_->push(*packet, loss_before, arrival);
}

void RtpSession::publish_counters() {
  received_.store(sequence_.received(), std::memory_order_relaxed);
  lost_.store(sequence_.lost(), std::memory_order_relaxed);
  duplicates_.store(sequence_.duplicates(), std::memory_order_relaxed);
  out_of_window_.store(sequence_.strays(), std::memory_order_relaxed);
  recovered_.store(reorder_.counters().recovered, std::memory_order_relaxed);
  late_.store(reorder_.counters().late, std::memory_order_relaxed);
  jitter_ticks_.store(jitter_.jitter_ticks(), std::memory_order_relaxed);
  const auto c = payload_->payload_counters();
  resync_skipped_.store(c.resync_skipped_packets, std::memory_order_relaxed);
  klv_malformed_.store(c.malformed, std::memory_order_relaxed);
}

void RtpSession::tick(std::chrono::steady_clock::time_point now) {
  reorder_.tick(now);
  publish_counters();
}

void RtpSession::flush() {
  reorder_.flush();
  payload_->flush();
  publish_counters();
}

void normalize_unit(CodestreamUnit& unit, bool interlaced_payload) {
  std::vector<Bytes> streams;
  for (const auto& element : unit.codestreams) {
    auto parts = split_codestreams(element);
    if (!parts) {
      unit.problem = parts.error().message;
      return;
    }
    streams.insert(streams.end(), parts->begin(), parts->end());
  }
  // Separate luma (Csiz 1) and chroma (Csiz 2) codestreams are told apart by Csiz, not order.
  std::vector<Bytes> luma, chroma, whole;
  for (Bytes s : streams) {
    auto n = component_count(s);
    if (!n) {
      unit.problem = n.error().message;
      return;
    }
    (*n == 1 ? luma : *n == 2 ? chroma : whole).push_back(s);
  }
  std::vector<std::vector<std::uint8_t>> pictures;
  if (!chroma.empty()) {
    if (chroma.size() != luma.size() || !whole.empty()) {
      unit.problem = fmt::format("{} luma and {} chroma codestreams do not pair up", luma.size(), chroma.size());
      return;
    }
    for (std::size_t i = 0; i < luma.size(); ++i) {
      auto merged = merge_luma_chroma(luma[i], chroma[i]);
      if (!merged) {
        unit.problem = merged.error().message;
        return;
      }
      pictures.push_back(std::move(merged).value());
    }
    unit.merged = true;
  } else {
    for (Bytes s : luma.empty() ? whole : luma) pictures.emplace_back(s.begin(), s.end());
    for (Bytes s : luma.empty() ? std::vector<Bytes>{} : whole) pictures.emplace_back(s.begin(), s.end());
  }
  const bool separate_fields =
      interlaced_payload || (unit.descriptor && (unit.descriptor->frame_layout == 1 || unit.descriptor->frame_layout == 3));
  unit.fields = separate_fields && pictures.size() == 2 ? 2 : 1;
  unit.first_field_is_top = !(unit.descriptor && unit.descriptor->field_dominance == 2);
  unit.codestreams = std::move(pictures);
}

void RtpSession::on_unit(CodestreamUnit&& unit) {
  if (unit.complete && !unit.codestreams.empty()) {
    normalize_unit(unit, unit.expected_elements == 2 && interlaced_rfc5371_);
    if (unit.merged) merged_.fetch_add(1, std::memory_order_relaxed);
    if (!unit.problem.empty()) {
      unusable_.fetch_add(1, std::memory_order_relaxed);
      if (unit_log_.allow()) logger("depacketizer")->warn("frame at {} unusable: {}", unit.rtp_timestamp, unit.problem);
    }
  }
  if (unit.complete) complete_.fetch_add(1, std::memory_order_relaxed);
  else incomplete_.fetch_add(1, std::memory_order_relaxed);
  if (last_unit_timestamp_) {
    // Frame rate from the timestamp step between consecutive units (smoothed).
    const auto step = static_cast<std::uint32_t>(unit.rtp_timestamp - *last_unit_timestamp_);
    if (step > 0 && step < 90000) {
      frame_interval_ticks_ = frame_interval_ticks_ == 0 ? step : 0.9 * frame_interval_ticks_ + 0.1 * step;
      frame_rate_.store(kTicksPerSecond / frame_interval_ticks_, std::memory_order_relaxed);
    }
  }
  last_unit_timestamp_ = unit.rtp_timestamp;
  if (unit.descriptor) {
    std::lock_guard lock(descriptor_mutex_);
    descriptor_copy_ = unit.descriptor;
  }
  sink_(std::move(unit));
}

StreamSnapshot RtpSession::snapshot() const {
  StreamSnapshot s;
  s.packets_received = received_.load(std::memory_order_relaxed);
  s.packets_lost = lost_.load(std::memory_order_relaxed);
  s.packets_duplicate = duplicates_.load(std::memory_order_relaxed);
  s.packets_recovered = recovered_.load(std::memory_order_relaxed);
  s.packets_late = late_.load(std::memory_order_relaxed);
  s.packets_out_of_window = out_of_window_.load(std::memory_order_relaxed);
  s.packets_malformed = malformed_.load(std::memory_order_relaxed);
  s.packets_foreign = foreign_.load(std::memory_order_relaxed);
  s.payload_bytes = payload_bytes_.load(std::memory_order_relaxed);
  s.frames_complete = complete_.load(std::memory_order_relaxed);
  s.frames_incomplete = incomplete_.load(std::memory_order_relaxed);
  s.resync_skipped = resync_skipped_.load(std::memory_order_relaxed);
  s.klv_malformed = klv_malformed_.load(std::memory_order_relaxed);
  s.units_merged = merged_.load(std::memory_order_relaxed);
  s.units_unusable = unusable_.load(std::memory_order_relaxed);
  s.jitter_ms = jitter_ticks_.load(std::memory_order_relaxed) / 90.0;
  s.frame_rate = frame_rate_.load(std::memory_order_relaxed);
  s.ssrc = ssrc_value_.load();
  std::lock_guard lock(descriptor_mutex_);
  s.descriptor = descriptor_copy_;
  return s;
}

}  // namespace j2k::depacketizer
