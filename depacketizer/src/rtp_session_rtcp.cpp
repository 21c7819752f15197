// RtpSession's RTCP side: sender reports and BYE from the control port account for the
// packets and frames a stream lost at its very end (RFC 3550 6.4.1, 6.6, A.3).
#include <algorithm>

#include "core/log.hpp"
#include "depacketizer/rtp_session.hpp"

namespace j2k::depacketizer {

void RtpSession::on_rtcp(Bytes datagram, std::optional<std::chrono::steady_clock::time_point> arrival) {
  ++rtcp_.datagrams;
  auto compound = parse_rtcp(datagram);
  if (!compound) {
    ++rtcp_.malformed;
    if (rtcp_log_.allow()) logger("depacketizer")->warn("dropped malformed RTCP datagram: {}", compound.error().message);
  } else {
    if (compound->sender_report) on_sender_report(*compound->sender_report, arrival);
    for (std::uint32_t ssrc : compound->bye) on_bye(ssrc);
  }
  publish_rtcp();
}

void RtpSession::on_sender_report(const SenderReport& report, std::optional<std::chrono::steady_clock::time_point> arrival) {
  if (!ssrc_ || report.ssrc != *ssrc_) {
    ++rtcp_.foreign;  // not (yet) the stream we follow: its counts are not ours to use
    return;
  }
  // A new stream, or a new run of sequence numbers, has a new relation of count to sequence.
  if (tail_ssrc_ != ssrc_ || tail_restarts_ != sequence_.restarts()) {
    tail_.reset();
    tail_ssrc_ = ssrc_;
    tail_restarts_ = sequence_.restarts();
  }
  // The highest sequence among frames sampled no later than the report's instant: packets of
  // later frames were sent after it, even when the receiver happened to read them first.
  std::optional<std::uint64_t> highest;
  for (std::size_t i = 0; i < std::min(recent_count_, recent_frames_.size()); ++i) {
    const auto [timestamp, sequence] = recent_frames_[i];
    if (static_cast<std::int32_t>(timestamp - report.rtp_timestamp) <= 0 && (!highest || sequence > *highest))
      highest = sequence;
  }
  // With its arrival time, also no packet that arrived after the report: a sender running
  // late stamps its report past a frame it has not finished sending, and the report's own
  // socket may be read after the data that followed it.
  if (arrival && highest) {
    const std::size_t n = std::min(arrivals_count_, recent_arrivals_.size());
    std::optional<std::uint64_t> before;
    for (std::size_t i = 0; i < n; ++i) {
      const auto& [at, sequence] = recent_arrivals_[i];
      if (at <= *arrival && (!before || sequence > *before)) before = sequence;
    }
    // None: every packet remembered came after the report, which then gives no bound.
    highest = before ? std::optional(std::min(*highest, *before)) : std::nullopt;
  }
  // A report is believed only as far as the stream could have sent: a forged or broken
  // packet count must not add 2^31 packets "lost at the end" (and set off the loss alarm).
  SenderTail trial = tail_;
  trial.on_report(report, highest);
  if (sequence_.received() > 0) {
    const std::uint64_t unseen = trial.lost_after(sequence_.highest_extended());
    if (const std::uint64_t most = plausible_unseen(report.rtp_timestamp); unseen > most) {
      ++rtcp_.implausible;
      if (rtcp_log_.allow())
        logger("depacketizer")->warn("sender report ignored: it counts {} packets sent after the last one received, "
                                     "more than the stream's rate allows ({})", unseen, most);
      return;
    }
  }
  tail_ = trial;
  ++rtcp_.sender_reports;  // the run's total: a restart starts the tail afresh, not this count
  logger("depacketizer")->debug("sender report: {} packets sent, highest sequence received {}", report.packet_count,
                                highest ? static_cast<std::int64_t>(*highest) : -1);
}

std::uint64_t RtpSession::plausible_unseen(std::uint32_t timestamp) const {
  constexpr std::uint64_t kSlack = 1024;
  constexpr std::int64_t kMostTicks = 60 * 90000;  // a minute at 90 kHz
  const std::size_t n = std::min(recent_count_, recent_frames_.size());
  if (n < 2 || !newest_timestamp_) return kSlack;
  const auto& newest = recent_frames_[(recent_count_ - 1) % recent_frames_.size()];
  const auto& oldest = recent_frames_[(recent_count_ - n) % recent_frames_.size()];
  const auto ticks = static_cast<std::int32_t>(newest.first - oldest.first);  // RFC 3550 modular
  if (ticks <= 0 || newest.second <= oldest.second) return kSlack;
  const double per_tick = static_cast<double>(newest.second - oldest.second) / ticks;
  const std::int64_t lead = std::clamp<std::int64_t>(static_cast<std::int32_t>(timestamp - *newest_timestamp_), 0, kMostTicks);
  return kSlack + static_cast<std::uint64_t>(2.0 * per_tick * static_cast<double>(lead));
}

void RtpSession::on_bye(std::uint32_t ssrc) {
  if (!ssrc_ || ssrc != *ssrc_ || tail_ssrc_ != ssrc_) return;
  if (!tail_.bye()) logger("depacketizer")->info("sender of SSRC 0x{:08X} said BYE after {} packets", ssrc, tail_.packet_count());
  tail_.on_bye();
}

void RtpSession::note_for_rtcp(std::uint32_t timestamp, bool newest, std::chrono::steady_clock::time_point arrival) {
  if (newest) newest_timestamp_ = timestamp;
  const std::pair<std::uint32_t, std::uint64_t> stream{ssrc_.value_or(0), sequence_.restarts()};
  if (stream != recent_stream_) {  // a new stream or run of sequence numbers: forget the old frames
    recent_stream_ = stream;
    recent_count_ = 0;
    arrivals_count_ = 0;
  }
  const std::uint64_t sequence = sequence_.last_extended();
  recent_arrivals_[arrivals_count_++ % recent_arrivals_.size()] = {arrival, sequence};
  const std::size_t n = std::min(recent_count_, recent_frames_.size());
  for (std::size_t i = 0; i < n; ++i) {
    auto& entry = recent_frames_[(recent_count_ - 1 - i) % recent_frames_.size()];  // newest first
    if (entry.first == timestamp) {
      entry.second = std::max(entry.second, sequence);
      return;
    }
  }
  recent_frames_[recent_count_ % recent_frames_.size()] = {timestamp, sequence};
  ++recent_count_;
}

void RtpSession::publish_rtcp() {
  RtcpSnapshot r = rtcp_;
  // The reports speak for the run of sequence numbers they came in: after a restart (a looped
  // capture's next pass, a sender numbering afresh) the last run's final report says nothing
  // of this one's end (its BYE and counts would read as packets lost after the new numbers).
  if (tail_ssrc_ && tail_ssrc_ == ssrc_ && tail_restarts_ == sequence_.restarts()) {
    r.sender_packets = tail_.packet_count();
    r.sender_octets = tail_.octet_count();
    r.bye = tail_.bye();
    if (sequence_.received() > 0) r.packets_lost_at_end = tail_.lost_after(sequence_.highest_extended());
    // The frame interval as the stream showed it (smoothed), else none: no guess.
    if (newest_timestamp_) r.frames_missing_at_end = tail_.frames_after(*newest_timestamp_, frame_interval_ticks_);
  }
  std::lock_guard lock(rtcp_mutex_);
  rtcp_copy_ = r;
}

}  // namespace j2k::depacketizer
