#include "depacketizer/rtp_session.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "depacketizer/codestream_tools.hpp"

#include "core/log.hpp"

namespace j2k::depacketizer {

namespace {
constexpr double kTicksPerSecond = 90000.0;  // RTP video clock
constexpr std::size_t kMaxCandidates = 8;    // unfollowed SSRCs tracked at once (least recent evicted)
constexpr std::size_t kMaxHeldPackets = 2048;  // per candidate, from its first unit start on
constexpr std::size_t kMaxHeldBytes = 16u << 20;  // all candidates together
constexpr std::uint16_t kConfirmWithin = 64; // a packet this close after the unit start confirms it
// A new stream displaces the followed one only once that one has been quiet this long (a
// sender that restarts comes back with a new SSRC; its packets are held meanwhile). A count
// of the new stream's packets would not do: a hostile sender fills a gap between two frames.
constexpr auto kQuietBeforeSwitch = std::chrono::milliseconds(100);
// Plausibility of a followed packet (RFC 3550 A.1: MAX_DROPOUT / MAX_MISORDER, and the
// probation that confirms a new place in the number space by a second packet in sequence).
// Tighter than A.1's 3000 forward so that a spoofed SSRC with random numbers almost never
// lands inside: 512 ahead, the duplicate window (1024) behind, timestamps within 2 s.
constexpr std::int32_t kMaxForwardJump = 512;
constexpr std::int32_t kMaxBackward = 1024;
constexpr std::int64_t kMaxTimestampStep = 2 * 90000;
constexpr std::size_t kProbationSlots = 8;

bool timestamps_close(std::uint32_t a, std::uint32_t b) {
  const auto d = static_cast<std::int32_t>(a - b);
  return d >= -kMaxTimestampStep && d <= kMaxTimestampStep;
}

/// A counter's value for readers on other threads (statistics: no ordering needed).
template <typename T>
T relaxed(const std::atomic<T>& counter) noexcept {
  return counter.load(std::memory_order_relaxed);
}
}  // namespace

RtpSession::RtpSession(Sink sink, SessionConfig config)
    : sink_(std::move(sink)),
      reorder_config_(config.reorder),
      format_(config.format),
      format_stated_(config.format.has_value()),
      reorder_(config.reorder, [this](Bytes d, std::uint64_t seq, bool loss, std::chrono::steady_clock::time_point t) {
        on_ordered(d, seq, loss, t);
      }),
      probation_(kProbationSlots) {
  reorder_delay_ms_.store(std::chrono::duration<double, std::milli>(reorder_.delay()).count());
  on_event_ = std::move(config.on_event);
  on_audio_ = std::move(config.on_audio);
  // A stated format has its depacketizer at once (plain UDP TS needs it before any stream
  // is followed); a detected one gets it when the first stream is followed.
  if (format_) make_payload();
}

void RtpSession::make_payload() {
  interlaced_rfc5371_ = *format_ == PayloadFormat::rfc5371;
  auto& made = payloads_[static_cast<std::size_t>(*format_)];
  if (!made) {
    made = make_depacketizer(*format_, [this](CodestreamUnit&& u) { on_unit(std::move(u)); });
    if (auto* ts = dynamic_cast<TsDepacketizer*>(made.get())) ts_ = ts;
    if (on_audio_) made->set_audio_sink(on_audio_);
  }
  payload_ = made.get();
}

void RtpSession::note_ssrc(const RtpPacket& packet, std::size_t size, PayloadLook look) {
  std::lock_guard lock(descriptor_mutex_);
  for (auto& e : ssrcs_)
    if (e.ssrc == packet.ssrc) {
      ++e.datagrams;
      e.bytes += size;
      if (look != PayloadLook::none) e.look = look;
      return;
    }
  if (ssrcs_.size() >= kMaxListedSsrcs) {
    ++ssrcs_unlisted_;
    return;
  }
  SsrcStats e;
  e.ssrc = packet.ssrc;
  e.datagrams = 1;
  e.bytes = size;
  e.look = look;
  ssrcs_.push_back(e);
}

std::optional<TsSnapshot> RtpSession::ts_snapshot() const {
  if (!ts_) return std::nullopt;
  return ts_->snapshot();
}

void RtpSession::set_reorder_floor(std::chrono::microseconds floor) {
  if (floor == path_floor_) return;
  path_floor_ = floor;
  adapt_reorder_delay();
}

void RtpSession::on_datagram(Bytes datagram, std::chrono::steady_clock::time_point arrival, bool timing) {
  timing_sample_ = timing;
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
  if (ssrc_ && packet->ssrc == *ssrc_) {
    // The hot path: no lock and no payload probe per packet of the followed stream (its
    // datagrams join its ssrcs entry when a snapshot is taken).
    followed_datagrams_.fetch_add(1, std::memory_order_relaxed);
    followed_bytes_.fetch_add(datagram.size(), std::memory_order_relaxed);
    followed_last_arrival_ = arrival;
    on_followed(*packet, datagram, arrival);
    return;
  }
  const PayloadLook look = probe_payload(packet->payload);
  note_ssrc(*packet, datagram.size(), look);
  foreign_.fetch_add(1, std::memory_order_relaxed);
  on_candidate(*packet, look, datagram, arrival);
}

void RtpSession::on_candidate(const RtpPacket& packet, PayloadLook look, Bytes datagram,
                              std::chrono::steady_clock::time_point arrival) {
  // Any SSRC may be a sender or junk: follow one only when its payload shows the start of a
  // unit of the format (stated, or decided here), so that a stream of valid RTP headers with
  // random payloads can never capture or displace the session.
  std::size_t index = candidates_.size();
  for (std::size_t i = 0; i < candidates_.size(); ++i)
    if (candidates_[i].ssrc == packet.ssrc) index = i;
  if (index == candidates_.size()) {
    if (candidates_.size() >= kMaxCandidates) {
      // Evict the least recent that showed nothing of the format (junk rotating its SSRC must
      // not push out a real sender between its first two packets), else the least recent.
      auto oldest = std::min_element(candidates_.begin(), candidates_.end(), [](const Candidate& a, const Candidate& b) {
        return a.evidence != b.evidence ? !a.evidence : a.last_arrival < b.last_arrival;
      });
      held_bytes_ -= oldest->held_bytes;
      candidates_.erase(oldest);
      index = candidates_.size();
    }
    candidates_.emplace_back();
    candidates_.back().ssrc = packet.ssrc;
  }
  Candidate& c = candidates_[index];
  c.last_arrival = arrival;
  // A detected format is detected again once the followed stream is quiet (a sender that
  // started again with another payload format); a stated one holds.
  const bool redetect = !format_stated_ && (!ssrc_ || arrival - followed_last_arrival_ >= kQuietBeforeSwitch);
  const bool wanted = format_ && !redetect ? look == look_of(*format_) : format_of(look).has_value();
  if (look != PayloadLook::none && !wanted && !c.mismatch) {
    // Say once per stream what it looks like instead (issue: a wrong format= was silent).
    c.mismatch = true;
    if (candidate_log_.allow()) {
      if (format_ && format_stated_)
        logger("depacketizer")->warn("SSRC 0x{:08X}: payload does not look like {} (stated: format={}); it looks like {}",
                                     packet.ssrc, describe(look_of(*format_)), to_string(*format_), describe(look));
      else if (format_)  // detected from the stream followed: this one is another stream
        logger("depacketizer")->warn("SSRC 0x{:08X}: a stream of {} besides the stream followed ({}): not followed "
                                     "(counted under its SSRC)",
                                     packet.ssrc, describe(look), describe(look_of(*format_)));
      else
        logger("depacketizer")->warn("SSRC 0x{:08X}: payload looks like {}: ignored", packet.ssrc, describe(look));
    }
  }
  if (wanted) c.mismatch = false;
  // Wrong format is a stated format's: with a detected one this is another stream (its SSRC's counts).
  if (c.mismatch && format_stated_) wrong_format_.fetch_add(1, std::memory_order_relaxed);
  if (!c.evidence) {
    if (!wanted) return;  // junk, a continuation, or another format: nothing is kept
    c.evidence = true;
    c.evidence_sequence = packet.sequence;
    c.evidence_timestamp = packet.timestamp;
    c.format = format_of(look);
  } else if (!c.confirmed) {
    const auto d = static_cast<std::uint16_t>(packet.sequence - c.evidence_sequence);
    if (d >= 1 && d <= kConfirmWithin && timestamps_close(packet.timestamp, c.evidence_timestamp)) {
      c.confirmed = true;
    } else if (c.held.size() >= kConfirmWithin) {
      // Nothing in sequence after the unit start: start over (it was a lucky junk payload).
      c.evidence = false;
      held_bytes_ -= c.held_bytes;
      c.held.clear();
      c.held_bytes = 0;
      if (!wanted) return;
      c.evidence = true;
      c.evidence_sequence = packet.sequence;
      c.evidence_timestamp = packet.timestamp;
      c.format = format_of(look);
    }
  }
  // Keep its packets from the unit start on, so that the stream's first frame is not lost
  // when it is followed (bounded: oldest dropped).
  c.held.push_back(Held{std::vector<std::uint8_t>(datagram.begin(), datagram.end()), arrival});
  c.held_bytes += datagram.size();
  held_bytes_ += datagram.size();
  auto drop_oldest = [this](Candidate& from) {
    from.held_bytes -= from.held.front().data.size();
    held_bytes_ -= from.held.front().data.size();
    from.held.pop_front();
  };
  while (c.held.size() > kMaxHeldPackets) drop_oldest(c);
  while (held_bytes_ > kMaxHeldBytes) {
    // Over the bound for all candidates together: the one holding most gives way, so that a
    // busy stream cannot starve a real sender's first packets.
    auto most = std::max_element(candidates_.begin(), candidates_.end(),
                                 [](const Candidate& a, const Candidate& b) { return a.held_bytes < b.held_bytes; });
    drop_oldest(*most);
  }
  if (!c.confirmed || c.held.empty()) return;
  if (ssrc_ && arrival - followed_last_arrival_ < kQuietBeforeSwitch) return;
  follow(index);
}

void RtpSession::follow_quiet_successor(std::chrono::steady_clock::time_point now) {
  // The followed stream has been quiet since before `now`: a confirmed candidate that sent
  // after its last packet takes over, with the packets it held (a low-rate successor whose
  // own packets stopped before the quiet time passed).
  if (!ssrc_ || now - followed_last_arrival_ < kQuietBeforeSwitch) return;
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < candidates_.size(); ++i) {
    const Candidate& c = candidates_[i];
    if (c.confirmed && !c.held.empty() && c.last_arrival > followed_last_arrival_ &&
        (!best || c.last_arrival > candidates_[*best].last_arrival))
      best = i;
  }
  if (best) follow(*best);
}

void RtpSession::close_followed() {
  // What waits is released, pending units end, and the stream's counts join the totals.
  reorder_.flush();
  for (auto& p : probation_) p.used = false;
  drop_move();
  payload_->flush();
  publish_counters();
  const std::uint64_t complete_now = complete_.load(), incomplete_now = incomplete_.load();
  {
    std::lock_guard lock(descriptor_mutex_);
    for (auto& e : ssrcs_)
      if (e.ssrc == *ssrc_) {
        e.datagrams += followed_datagrams_.exchange(0);
        e.bytes += followed_bytes_.exchange(0);
        e.packets_received += sequence_.received();
        e.packets_lost += sequence_.lost() + reorder_.counters().late;
        e.frames_complete += complete_now - stream_start_complete_;
        e.frames_incomplete += incomplete_now - stream_start_incomplete_;
      }
  }
  prior_received_ += sequence_.received();
  prior_lost_ += sequence_.lost() + reorder_.counters().late;  // a late packet stays lost
  prior_duplicates_ += sequence_.duplicates();
  prior_out_of_window_ += sequence_.strays();
  prior_recovered_ += reorder_.counters().recovered;
  prior_late_ += reorder_.counters().late;
  // The next stream's sequence numbers, timestamps and arrival times start afresh.
  last_released_.reset();
  reorder_ = RtpReorderBuffer(reorder_config_, [this](Bytes d, std::uint64_t seq, bool loss, std::chrono::steady_clock::time_point t) {
    on_ordered(d, seq, loss, t);
  });
  late_seen_ = 0;
  sequence_ = RtpSequenceTracker{};
  jitter_ = JitterEstimator{};
  last_unit_timestamp_.reset();
  recent_steps_.fill(0);  // the next stream's interval is learnt afresh
  stream_start_complete_ = complete_now;
  stream_start_incomplete_ = incomplete_now;
}

void RtpSession::restart() {
  if (!ssrc_) return;  // nothing followed yet: the next packets are judged as usual
  close_followed();
  // The sender's reports spoke for the run that ended: its final report and BYE say nothing
  // of the new run's end (read against its numbers they were packets "lost at the end").
  tail_.reset();
  tail_ssrc_.reset();
  publish_rtcp();
  {
    std::lock_guard lock(descriptor_mutex_);
    prior_received_seen_ = prior_received_;
    prior_lost_seen_ = prior_lost_;
    stream_start_complete_seen_ = stream_start_complete_;
    stream_start_incomplete_seen_ = stream_start_incomplete_;
  }
  publish_counters();
  new_timeline_ = true;  // after close_followed(): the old run's last units are not marked
  post_event(SessionEvent{SessionEvent::Kind::restart, 0, 0, 0, std::nullopt,
                          fmt::format("the source started again (SSRC 0x{:08X}): sequence numbers begin afresh", *ssrc_)});
}

void RtpSession::follow(std::size_t index) {
  Candidate c = std::move(candidates_[index]);
  candidates_.erase(candidates_.begin() + static_cast<std::ptrdiff_t>(index));
  held_bytes_ -= c.held_bytes;
  auto log = logger("depacketizer");
  if (!format_) {
    // Detected from the payload (no format= given): the first confirmed stream decides.
    auto first = parse_rtp(c.held.front().data);
    format_ = format_of(probe_payload(first->payload));
  }
  if (!payload_) make_payload();
  const std::uint64_t complete = complete_.load(), incomplete = incomplete_.load();
  if (ssrc_) {
    close_followed();
    std::string format_note;
    if (!format_stated_ && c.format && *c.format != *format_) {
      // The new stream carries another payload format (detected, not stated): its own
      // depacketizer, after the old one has handed on what it held.
      log->info("payload format now {} (detected from SSRC 0x{:08X}'s payload; it was {})", describe(look_of(*c.format)),
                c.ssrc, describe(look_of(*format_)));
      format_note = fmt::format(" (payload now {}, was {})", describe(look_of(*c.format)), describe(look_of(*format_)));
      format_ = c.format;
      make_payload();
    }
    ssrc_changes_.fetch_add(1, std::memory_order_relaxed);
    new_timeline_ = true;
    post_event(SessionEvent{SessionEvent::Kind::ssrc_change, 0, 0, 0, std::nullopt,
                      fmt::format("stream changed from SSRC 0x{:08X} to 0x{:08X}{}", *ssrc_, c.ssrc, format_note)});
    // At most one line a second: a sender hopping SSRCs must not flood the log (every change
    // is counted, and is an event).
    if (ssrc_change_log_.allow())
      log->warn("stream changed from SSRC 0x{:08X} to 0x{:08X} (the old one quiet for {} ms){}", *ssrc_, c.ssrc,
                std::chrono::duration_cast<std::chrono::milliseconds>(c.held.back().arrival - followed_last_arrival_).count(),
                ssrc_change_log_.suppressed() ? fmt::format("; {} more changes in the last second", ssrc_change_log_.suppressed())
                                              : std::string());
  } else {
    stream_start_complete_ = complete;
    stream_start_incomplete_ = incomplete;
    auto first = parse_rtp(c.held.front().data);
    log->info("following RTP stream SSRC 0x{:08X}, payload type {}, payload {} ({})", c.ssrc, first->payload_type,
              describe(look_of(*format_)), format_stated_ ? "as stated" : "detected from the payload");
  }
  ssrc_ = c.ssrc;
  ssrc_value_.store(c.ssrc);
  epoch_ = c.held.front().arrival;
  followed_last_arrival_ = c.held.back().arrival;
  {
    std::lock_guard lock(descriptor_mutex_);
    format_copy_ = to_string(*format_);
    // The followed SSRC always has its entry (the list may have filled with others first).
    if (std::none_of(ssrcs_.begin(), ssrcs_.end(), [&](const SsrcStats& e) { return e.ssrc == c.ssrc; })) {
      if (ssrcs_.size() >= kMaxListedSsrcs) {
        auto least = std::min_element(ssrcs_.begin(), ssrcs_.end(), [](const SsrcStats& a, const SsrcStats& b) {
          return a.followed != b.followed ? !a.followed : a.datagrams < b.datagrams;
        });
        ssrcs_unlisted_ += least->datagrams;
        ssrcs_.erase(least);
      }
      SsrcStats e;
      e.ssrc = c.ssrc;
      e.look = look_of(*format_);
      ssrcs_.push_back(e);
    }
    prior_received_seen_ = prior_received_;
    prior_lost_seen_ = prior_lost_;
    stream_start_complete_seen_ = stream_start_complete_;
    stream_start_incomplete_seen_ = stream_start_incomplete_;
    for (auto& e : ssrcs_)
      if (e.ssrc == c.ssrc) e.followed = true;
  }
  // Its packets were counted as foreign while it was a candidate: now they are its own.
  foreign_.fetch_sub(std::min<std::uint64_t>(foreign_.load(), c.held.size()), std::memory_order_relaxed);
  for (const Held& h : c.held) {
    auto packet = parse_rtp(h.data);
    on_followed(*packet, h.data, h.arrival);
  }
}

namespace {
/// Does a packet at (sequence, timestamp) fit a place whose highest number is `highest` and
/// newest timestamp `timestamp`? 0: no; else how far ahead it is (negative: behind).
std::optional<std::int32_t> fits_place(std::uint16_t sequence, std::uint32_t ts, std::uint16_t highest,
                                       std::uint32_t timestamp) {
  const auto ahead = static_cast<std::int16_t>(static_cast<std::uint16_t>(sequence - highest));
  const bool sequence_fits = ahead > 0 ? ahead <= kMaxForwardJump : -ahead < kMaxBackward;
  if (!sequence_fits || !timestamps_close(ts, timestamp)) return std::nullopt;
  return ahead;
}
}  // namespace

void RtpSession::on_followed(const RtpPacket& packet, Bytes datagram, std::chrono::steady_clock::time_point arrival) {
  if (!sequence_.started()) {
    last_timestamp_ = packet.timestamp;
    place_last_arrival_ = arrival;
    process(packet, datagram, arrival);
    return;
  }
  // Does it fit where the stream is? (Sequence near the highest seen, timestamp near the
  // newest.) Anything else — a restart, a long outage, a clock jump, or a spoofed packet
  // with this SSRC — waits in probation until a second packet in sequence confirms it, and
  // then until the old place has gone quiet (PendingMove).
  if (auto ahead = fits_place(packet.sequence, packet.timestamp, static_cast<std::uint16_t>(sequence_.highest_extended()),
                              last_timestamp_)) {
    if (*ahead > 0) last_timestamp_ = packet.timestamp;
    place_last_arrival_ = arrival;
    process(packet, datagram, arrival);
    // The stream goes on where it was, and the new place has said nothing for as long as a
    // switch waits: it was not the stream moving.
    if (move_.active && arrival - move_.held.back().arrival >= kQuietBeforeSwitch) drop_move();
    return;
  }
  if (move_.active && fits_place(packet.sequence, packet.timestamp, move_.highest, move_.timestamp)) {
    hold_for_move(packet, datagram, arrival);
    settle_move(arrival);
    return;
  }
  for (auto& p : probation_) {
    if (!p.used || static_cast<std::uint16_t>(packet.sequence - p.sequence) != 1 ||
        !timestamps_close(packet.timestamp, p.timestamp))
      continue;
    // Two packets in sequence at a new place: the stream may have moved there (RFC 3550 A.1).
    for (auto& q : probation_) q.used = false;
    begin_move(std::move(p.packet), p.sequence, packet, datagram, arrival);
    settle_move(arrival);
    return;
  }
  Probation& slot = probation_[probation_next_++ % probation_.size()];
  slot.used = true;
  slot.sequence = packet.sequence;
  slot.timestamp = packet.timestamp;
  slot.packet.data.assign(datagram.begin(), datagram.end());
  slot.packet.arrival = arrival;
  suspect_.fetch_add(1, std::memory_order_relaxed);
}

void RtpSession::begin_move(Held&& first, std::uint16_t first_sequence, const RtpPacket& packet, Bytes datagram,
                            std::chrono::steady_clock::time_point arrival) {
  drop_move();  // an earlier pair's place, not confirmed: this one replaces it
  move_.active = true;
  move_.highest = first_sequence;
  move_.bytes = first.data.size();
  move_.held.push_back(std::move(first));  // counted as suspect when it came
  hold_for_move(packet, datagram, arrival);
}

void RtpSession::hold_for_move(const RtpPacket& packet, Bytes datagram, std::chrono::steady_clock::time_point arrival) {
  if (static_cast<std::int16_t>(static_cast<std::uint16_t>(packet.sequence - move_.highest)) > 0 ||
      move_.held.size() == 1) {
    move_.highest = packet.sequence;
    move_.timestamp = packet.timestamp;
  }
  move_.held.push_back(Held{std::vector<std::uint8_t>(datagram.begin(), datagram.end()), arrival});
  move_.bytes += datagram.size();
  suspect_.fetch_add(1, std::memory_order_relaxed);
  // Bounded as a candidate's packets are: the oldest give way (they stay counted as suspect).
  while (move_.held.size() > 1 && (move_.held.size() > kMaxHeldPackets || move_.bytes > kMaxHeldBytes)) {
    move_.bytes -= move_.held.front().data.size();
    move_.held.pop_front();
  }
}

void RtpSession::settle_move(std::chrono::steady_clock::time_point now) {
  if (move_.active && now - place_last_arrival_ >= kQuietBeforeSwitch) complete_move();
}

void RtpSession::drop_move() {
  // Its packets stay counted as suspect (a spoofed pair, or a place the stream left again).
  move_ = PendingMove{};
}

void RtpSession::complete_move() {
  PendingMove m = std::move(move_);
  move_ = PendingMove{};
  for (auto& q : probation_) q.used = false;
  suspect_.fetch_sub(std::min<std::uint64_t>(suspect_.load(), m.held.size()), std::memory_order_relaxed);
  auto first = parse_rtp(m.held.front().data);  // validated when it came
  const auto first_ahead =
      static_cast<std::uint16_t>(first->sequence - static_cast<std::uint16_t>(sequence_.highest_extended()));
  if (first_ahead == 0 || first_ahead >= 3000) {
    // Not a forward gap RFC 3550 would count as loss (MAX_DROPOUT): a new run of numbers.
    reorder_.reset();  // releases what waits; the new run's numbers start afresh
    sequence_.restart();
  }
  if (probation_log_.allow())
    logger("depacketizer")->info("RTP stream moved: sequence {} timestamp {} (confirmed by the next packet, "
                                 "after {} ms without one where it was)",
                                 first->sequence, first->timestamp,
                                 std::chrono::duration_cast<std::chrono::milliseconds>(m.held.back().arrival -
                                                                                       place_last_arrival_).count());
  last_timestamp_ = m.timestamp;
  place_last_arrival_ = m.held.back().arrival;
  for (const Held& h : m.held) {
    auto packet = parse_rtp(h.data);
    process(*packet, h.data, h.arrival);
  }
}

void RtpSession::process(const RtpPacket& packet, Bytes datagram, std::chrono::steady_clock::time_point arrival) {
  using Verdict = RtpSequenceTracker::Verdict;
  const auto verdict = sequence_.accept(packet.sequence);
  if (verdict == Verdict::restart) reorder_.reset();
  if (verdict != Verdict::duplicate && verdict != Verdict::stray) note_for_rtcp(packet.timestamp, verdict != Verdict::out_of_order, arrival);
  if (verdict != Verdict::duplicate && verdict != Verdict::stray) {
    // Jitter uses arrival order (RFC 3550 A.8); the depacketizer sees sequence order.
    const double arrival_ticks = std::chrono::duration<double>(arrival - epoch_).count() * kTicksPerSecond;
    if (timing_sample_) jitter_.update(packet.timestamp, arrival_ticks);
    adapt_reorder_delay();
    reorder_.push(datagram, sequence_.last_extended(), arrival, /*from_network=*/timing_sample_);
    if (reorder_.waiting()) reorder_.tick(arrival);
  }
  publish_counters();
}

void RtpSession::adapt_reorder_delay() {
  if (!reorder_config_.adaptive) return;
  // The reorder delay follows the network: four times the RFC 3550 jitter (a mean deviation;
  // reordering spans a few of them), a frame interval (below), and half again the delay in
  // force whenever a packet came after its gap was given up. Bounded by ReorderConfig (the
  // configured delay is the floor, adaptive_max_delay the ceiling).
  const std::uint64_t late = reorder_.counters().late;
  if (late > late_seen_) {
    late_seen_ = late;
    late_floor_ = std::max(late_floor_, reorder_.delay() * 3 / 2);
  }
  const auto from_jitter = std::chrono::microseconds(static_cast<std::int64_t>(4.0 * jitter_.jitter_ticks() / 0.09));
  // A sender's packets come in one burst per frame: a packet reordered near the end of a
  // burst arrives with the next burst, a frame interval later. So a gap may wait a frame
  // interval and a quarter (only gaps wait; packets in order pass at once).
  const auto from_frames = std::chrono::microseconds(static_cast<std::int64_t>(1.25 * frame_interval_ticks_ / 0.09));
  reorder_.set_delay(std::max({from_jitter, from_frames, late_floor_, path_floor_}));
  reorder_delay_ms_.store(std::chrono::duration<double, std::milli>(reorder_.delay()).count(), std::memory_order_relaxed);
}

void RtpSession::on_ordered(Bytes datagram, std::uint64_t extended_sequence, bool loss_before,
                            std::chrono::steady_clock::time_point arrival) {
  auto packet = parse_rtp(datagram);  // validated before it entered the reorder buffer
  if (!packet.ok()) return;
  ended_.store(false, std::memory_order_relaxed);  // (a looped capture goes on after its flush)
  // A gap the reorder window gave up on: the packets between the last one handed on and this.
  if (loss_before && last_released_ && extended_sequence - *last_released_ > 1 && on_event_) {
    SessionEvent e;
    e.kind = SessionEvent::Kind::sequence_gap;
    e.first = *last_released_ + 1;
    e.last = extended_sequence - 1;
    e.count = e.last - e.first + 1;
    e.rtp_timestamp = packet->timestamp;
    e.message = e.count == 1 ? fmt::format("1 packet lost ({})", e.first & 0xFFFF)
                             : fmt::format("{} packets lost ({}-{})", e.count, e.first & 0xFFFF, e.last & 0xFFFF);
    post_event(std::move(e));
  }
  last_released_ = extended_sequence;
  payload_bytes_.fetch_add(packet->payload.size(), std::memory_order_relaxed);
  payload_->push(*packet, loss_before, arrival);
}

void RtpSession::publish_counters() {
  received_.store(prior_received_ + sequence_.received(), std::memory_order_relaxed);
  // Gaps that the reorder buffer still waits on are not lost yet (they may arrive reordered).
  // A packet that came after its gap was given up (late) counts received with the sequence
  // tracker (RFC 3550 A.3), yet its frame went on without it: it stays lost here, so that
  // the count never goes down (a counter to the metrics) and agrees with the gap events.
  const std::uint64_t lost = sequence_.lost(), undecided = reorder_.undecided();
  lost_.store(prior_lost_ + (lost > undecided ? lost - undecided : 0) + reorder_.counters().late, std::memory_order_relaxed);
  duplicates_.store(prior_duplicates_ + sequence_.duplicates(), std::memory_order_relaxed);
  out_of_window_.store(prior_out_of_window_ + sequence_.strays(), std::memory_order_relaxed);
  recovered_.store(prior_recovered_ + reorder_.counters().recovered, std::memory_order_relaxed);
  late_.store(prior_late_ + reorder_.counters().late, std::memory_order_relaxed);
  jitter_ticks_.store(jitter_.jitter_ticks(), std::memory_order_relaxed);
  if (!payload_) return;
  PayloadCounters c;
  for (const auto& made : payloads_) {
    if (!made) continue;
    const PayloadCounters one = made->payload_counters();
    c.resync_skipped_packets += one.resync_skipped_packets;
    c.malformed += one.malformed;
    c.units_capped += one.units_capped;
    c.offsets_rejected += one.offsets_rejected;
    c.descriptors_rejected += one.descriptors_rejected;
  }
  resync_skipped_.store(c.resync_skipped_packets, std::memory_order_relaxed);
  klv_malformed_.store(c.malformed, std::memory_order_relaxed);
  capped_.store(c.units_capped, std::memory_order_relaxed);
  offsets_rejected_.store(c.offsets_rejected, std::memory_order_relaxed);
  descriptors_rejected_.store(c.descriptors_rejected, std::memory_order_relaxed);
  {
    std::lock_guard lock(descriptor_mutex_);
    audio_copy_ = payload_->audio_counters();
  }
  if (rtcp_.datagrams) publish_rtcp();  // the tail shrinks as late packets arrive
}

void RtpSession::tick(std::chrono::steady_clock::time_point now) {
  settle_move(now);
  reorder_.tick(now);
  if (!candidates_.empty()) follow_quiet_successor(now);
  publish_counters();
}

void RtpSession::flush() {
  // At the end of the input a pending place is taken when the stream went on there after
  // its last packet where it was (a restart with the same SSRC); else it was not the stream.
  if (move_.active) {
    if (move_.held.back().arrival > place_last_arrival_) complete_move();
    else drop_move();
  }
  reorder_.flush();
  if (payload_) payload_->flush();
  ended_.store(true, std::memory_order_relaxed);
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
  // Separate fields (1), mixed fields (3) and a segmented frame (4, PsF: a progressive frame
  // carried as two field-like segments) all weave two codestreams into one frame.
  const int layout = unit.descriptor ? unit.descriptor->frame_layout : -1;
  const bool separate_fields = interlaced_payload || layout == 1 || layout == 3 || layout == 4;
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
    const auto step = static_cast<std::uint32_t>(unit.rtp_timestamp - *last_unit_timestamp_);
    // The frame interval: the least of the last 8 steps (a lost frame only lengthens a step;
    // a slower rate is learnt within 8 frames). A step of k intervals is k − 1 frames of
    // which nothing came (up to 10 s: beyond, a new timeline, not loss).
    std::uint32_t least = 0;
    for (std::uint32_t s : recent_steps_)
      if (s && (!least || s < least)) least = s;
    if (least && step > least + least / 2 && step < 10 * 90000) {
      const auto whole = static_cast<std::uint64_t>(std::llround(static_cast<double>(step) / least));
      if (whole > 1) missing_.fetch_add(whole - 1, std::memory_order_relaxed);
    }
    // The stream's own time (a unit at the same timestamp adds none).
    if (step < 10 * 90000) timeline_ticks_.fetch_add(step, std::memory_order_relaxed);
    else timelines_.fetch_add(1, std::memory_order_relaxed);
    if (step > 0 && step < 90000) {
      recent_steps_[recent_steps_next_++ % recent_steps_.size()] = step;
      // Frame rate from the steps between consecutive units (smoothed), a lost frame's aside.
      if (!least || step <= least + least / 2) {
        frame_interval_ticks_ = frame_interval_ticks_ == 0 ? step : 0.9 * frame_interval_ticks_ + 0.1 * step;
        frame_rate_.store(kTicksPerSecond / frame_interval_ticks_, std::memory_order_relaxed);
      }
    }
  } else {
    timelines_.fetch_add(1, std::memory_order_relaxed);  // a stream's first unit
  }
  last_unit_timestamp_ = unit.rtp_timestamp;
  if (unit.descriptor) {
    std::lock_guard lock(descriptor_mutex_);
    descriptor_copy_ = unit.descriptor;
    if (const std::string d = unit.descriptor->describe(); d != last_descriptor_.value_or(d)) {
      last_descriptor_ = d;
      post_event(SessionEvent{SessionEvent::Kind::descriptor_change, 0, 0, 0, unit.rtp_timestamp, "picture descriptor now " + d});
    } else {
      last_descriptor_ = d;
    }
  }
  unit.new_timeline = std::exchange(new_timeline_, false);
  sink_(std::move(unit));
}

StreamSnapshot RtpSession::snapshot() const {
  StreamSnapshot s;
  s.packets_received = relaxed(received_);
  s.packets_lost = relaxed(lost_);
  s.packets_duplicate = relaxed(duplicates_);
  s.packets_recovered = relaxed(recovered_);
  s.packets_late = relaxed(late_);
  s.packets_out_of_window = relaxed(out_of_window_);
  s.packets_malformed = relaxed(malformed_);
  s.packets_foreign = relaxed(foreign_);
  s.payload_bytes = relaxed(payload_bytes_);
  s.frames_complete = relaxed(complete_);
  s.frames_incomplete = relaxed(incomplete_);
  s.frames_missing = relaxed(missing_);
  s.resync_skipped = relaxed(resync_skipped_);
  s.klv_malformed = relaxed(klv_malformed_);
  s.units_merged = relaxed(merged_);
  s.units_unusable = relaxed(unusable_);
  s.jitter_ms = relaxed(jitter_ticks_) / 90.0;
  s.frame_rate = relaxed(frame_rate_);
  if (s.frame_rate > 0)
    s.stream_seconds = static_cast<double>(relaxed(timeline_ticks_)) / kTicksPerSecond +
                       static_cast<double>(relaxed(timelines_)) / s.frame_rate;
  s.packets_suspect = relaxed(suspect_);
  s.packets_wrong_format = relaxed(wrong_format_);
  s.units_capped = relaxed(capped_);
  s.offsets_rejected = relaxed(offsets_rejected_);
  s.descriptors_rejected = relaxed(descriptors_rejected_);
  s.ssrc_changes = relaxed(ssrc_changes_);
  s.reorder_window_ms = relaxed(reorder_delay_ms_);
  s.ssrc = ssrc_value_.load();
  {
    std::lock_guard lock(rtcp_mutex_);
    s.rtcp = rtcp_copy_;
  }
  // Sent after the last packet that arrived: only once the stream has ended (its sender said
  // BYE, or the session was flushed at the end). While it runs the figure moves with every
  // report (packets still on their way) and would make a counter go down and up again.
  if (s.rtcp.bye || ended_.load(std::memory_order_relaxed)) s.packets_lost += s.rtcp.packets_lost_at_end;
  std::lock_guard lock(descriptor_mutex_);
  s.descriptor = descriptor_copy_;
  s.audio = audio_copy_;
  s.payload_format = format_copy_;
  s.format_detected = !format_stated_ && !format_copy_.empty();
  s.ssrcs = ssrcs_;
  s.ssrcs_unlisted = ssrcs_unlisted_;
  // The followed stream's share so far (the counts of its earlier turns are in the entry).
  for (auto& e : s.ssrcs)
    if (e.followed && e.ssrc == s.ssrc) {
      e.datagrams += relaxed(followed_datagrams_);
      e.bytes += relaxed(followed_bytes_);
      auto since = [](std::uint64_t now, std::uint64_t then) { return now > then ? now - then : 0; };
      e.packets_received += since(s.packets_received, prior_received_seen_);
      e.packets_lost += since(s.packets_lost, prior_lost_seen_);
      e.frames_complete += since(s.frames_complete, stream_start_complete_seen_);
      e.frames_incomplete += since(s.frames_incomplete, stream_start_incomplete_seen_);
    }
  return s;
}

}  // namespace j2k::depacketizer
