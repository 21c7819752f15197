#include "depacketizer/protected_stream.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace j2k::depacketizer {

ProtectedStream::ProtectedStream(RtpSession& session, ProtectionConfig config) : session_(session), config_(config) {
  if (config_.fec) {
    fec::FecConfig fc = config_.fec_config;
    fc.restart_on_strays = !config_.two_paths;  // behind the merge, the merge says when
    // Behind the merge, a packet the leading path lost is rebuilt only once the lagging
    // path's copy has had its time: FEC counts what both paths lost, not what 2022-7 saved.
    if (config_.two_paths)
      fc.awaited = [this](std::uint16_t sequence) { return merger_ && merger_->awaited(sequence, now_, copy_wait_); };
    fec_.emplace(
        [this](Bytes d) {
          // A rebuilt packet takes its number in the merge (a path's later copy is then
          // redundant) and is no sample of the network's jitter.
          if (merger_) merger_->claim(d, now_);
          session_.on_datagram(d, now_, /*timing=*/false);
        },
        fc);
  }
  if (config_.two_paths)
    merger_.emplace([this](Bytes d, std::chrono::steady_clock::time_point t, bool timing) { to_session(d, t, timing); },
                    config_.merge, [this](const PathEvent& e) { on_path_event(e); });
  published_.two_paths = config_.two_paths;
  published_.fec = config_.fec;
}

void ProtectedStream::to_session(Bytes datagram, std::chrono::steady_clock::time_point arrival, bool timing) {
  if (fec_) {
    // The FEC decoder follows the stream the session chose (behind the merge, the SSRC the
    // merge follows), at once rather than after a run of packets of its own: a busy other
    // sender on the group whose packet came first must not hold it.
    if (merger_ && merger_->ssrc()) fec_->follow(*merger_->ssrc());
    else if (!merger_)
      if (const auto s = session_.followed_ssrc()) fec_->follow(*s);
    if (merger_ && merger_->restarts() != merge_restarts_seen_) {
      merge_restarts_seen_ = merger_->restarts();
      fec_->restart_at_next();
    }
    fec_->on_media(datagram, arrival);  // kept for recovery (a copy in the FEC window)
  }
  session_.on_datagram(datagram, arrival, timing);
}

void ProtectedStream::flush() {
  if (merger_) merger_->finish();
  if (fec_) fec_->finish();
  if (merger_ || fec_) publish();
  session_.flush();
}

void ProtectedStream::finish_paths() {
  if (!merger_) return;
  merger_->finish();
  publish();
}

void ProtectedStream::on_path_event(const PathEvent& e) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(e.length).count();
  SessionEvent out;
  out.kind = e.down ? SessionEvent::Kind::path_down : SessionEvent::Kind::path_back;
  out.first = static_cast<std::uint64_t>(e.path + 1);
  out.count = e.lost;
  out.message = e.down ? fmt::format("ST 2022-7 path {} down: nothing from it for {:.1f} s while path {} delivers",
                                     e.path + 1, ms / 1000.0, 2 - e.path)
                       : fmt::format("ST 2022-7 path {} back after {:.1f} s ({} packets it did not bring)", e.path + 1,
                                     ms / 1000.0, e.lost);
  if (path_log_.allow()) logger("depacketizer")->warn("{}", out.message);
  if (config_.on_event) config_.on_event(out);
}

void ProtectedStream::restart() {
  if (merger_) merger_->reset();
  if (fec_) fec_->reset();
  session_.restart();
  if (merger_ || fec_) publish();
}

void ProtectedStream::on_datagram(int channel, Bytes datagram, std::chrono::steady_clock::time_point arrival) {
  now_ = arrival;
  switch (channel) {
    case kMediaPath1:
    case kMediaPath2:
      if (merger_) {
        merger_->push(channel, datagram, arrival);
        // A rebuild that waited for the lagging path's copy is due by now (the copies the
        // merge drops as redundant move the clock too).
        if (fec_) fec_->retry_waiting();
        // The session chooses the stream by what its packets carry; the merge follows it.
        if (const auto s = session_.followed_ssrc(); s && merger_->ssrc() != s) merger_->follow(*s);
        // A gap waits in the session's reorder window until the lagging path's copy can have
        // come: the paths' skew and a quarter more, plus 5 ms, at most the merge's skew window
        // (in whole milliseconds, so that the window is not set again for every packet).
        const double skew = std::max(std::abs(merger_->counters(0).skew_ms), std::abs(merger_->counters(1).skew_ms));
        const auto most = std::chrono::duration_cast<std::chrono::milliseconds>(config_.merge.max_skew);
        copy_wait_ = std::min(most, std::chrono::milliseconds(static_cast<std::int64_t>(skew * 1.25 + 5.0)));
        session_.set_reorder_floor(copy_wait_);
      }
      else if (channel == kMediaPath1) to_session(datagram, arrival);
      break;
    case kFecColumn:
    case kFecRow:
      if (fec_) fec_->on_fec(datagram);
      break;
    default:
      break;
  }
  if (merger_ || fec_) publish();
}

void ProtectedStream::publish() {
  // A copy for other threads, taken after the packet was handled: the handling itself may
  // wait (a full decode queue in analysis mode) and statistics must not wait with it.
  ProtectionSnapshot s;
  s.two_paths = merger_.has_value();
  s.fec = fec_.has_value();
  if (merger_) {
    for (int p = 0; p < PathMerger::kPaths; ++p) s.paths[p] = merger_->counters(p);
    s.merge_restarts = merger_->restarts();
  }
  if (fec_) {
    s.fec_counters = fec_->counters();
    s.fec_columns = fec_->columns();
    s.fec_rows = fec_->rows();
  }
  std::lock_guard lock(mutex_);
  published_ = s;
}

ProtectionSnapshot ProtectedStream::snapshot() const {
  std::lock_guard lock(mutex_);
  return published_;
}

ReorderConfig reorder_for_paths(ReorderConfig base, std::chrono::microseconds max_skew) {
  const auto seconds = std::chrono::duration<double>(max_skew).count();
  base.adaptive_max_packets = std::max<std::uint32_t>(base.adaptive_max_packets, static_cast<std::uint32_t>(90000 * seconds));
  base.adaptive_max_delay = std::max<std::chrono::microseconds>(base.adaptive_max_delay, max_skew + std::chrono::milliseconds(20));
  return base;
}

ReorderConfig reorder_for_fec(ReorderConfig base) {
  // 2022-1 matrices hold at most L × D = 100 packets (L, D ≤ 20); column FEC follows its
  // matrix. Twice that in packets, and time for a slow stream to send it.
  base.max_packets = std::max<std::uint32_t>(base.max_packets, 512);
  base.max_delay = std::max<std::chrono::microseconds>(base.max_delay, std::chrono::milliseconds(1500));
  return base;
}

}  // namespace j2k::depacketizer
