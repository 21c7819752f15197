#include "depacketizer/ts_depacketizer.hpp"

namespace j2k::depacketizer {

TsDepacketizer::TsDepacketizer(Sink sink, ts::DemuxConfig config)
    : sink_(std::move(sink)), demux_([this](ts::AccessUnit&& au) { on_access_unit(std::move(au)); }, config) {
  demux_.set_audio_sink([this](ts::AudioPes&& pes) { on_audio_pes(std::move(pes)); });
}

void TsDepacketizer::feed(Bytes packets, bool loss_before, std::optional<std::uint32_t> rtp_timestamp,
                          std::chrono::steady_clock::time_point arrival) {
  if (!unit_started_) {
    unit_started_ = true;
    unit_first_arrival_ = arrival;
    if (rtp_timestamp) rtp_timestamp_ = *rtp_timestamp;
  }
  last_arrival_ = arrival;
  {
    std::lock_guard lock(mutex_);
    demux_.push(packets, loss_before);
  }
  emit_ready();
}

void TsDepacketizer::emit_ready() {
  // Outside the lock: the sink may wait for a decoder, and statistics must not wait on it.
  for (auto& unit : ready_) sink_(std::move(unit));
  ready_.clear();
  for (auto& block : ready_audio_)
    if (audio_sink_) audio_sink_(std::move(block));
  ready_audio_.clear();
}

void TsDepacketizer::push(const RtpPacket& packet, bool loss_before, std::chrono::steady_clock::time_point arrival) {
  feed(packet.payload, loss_before, packet.timestamp, arrival);
}

void TsDepacketizer::push_plain(Bytes datagram, std::chrono::steady_clock::time_point arrival) {
  {
    std::lock_guard lock(mutex_);
    ++plain_datagrams_;
  }
  feed(datagram, false, std::nullopt, arrival);
}

void TsDepacketizer::flush() {
  {
    std::lock_guard lock(mutex_);
    demux_.flush();
  }
  emit_ready();
}

void TsDepacketizer::on_access_unit(ts::AccessUnit&& au) {
  CodestreamUnit unit;
  unit.codestreams = std::move(au.codestreams);
  // The PTS is on the 90 kHz clock RTP video uses; RTP/MP2T timestamps are transmission
  // times (RFC 2250), so the PTS is the better frame clock when present.
  unit.rtp_timestamp = au.pts ? static_cast<std::uint32_t>(*au.pts) : rtp_timestamp_;
  unit.index = next_index_++;
  unit.complete = au.complete;
  unit.missing_bytes = au.missing_bytes;
  unit.problem = au.complete ? std::string() : au.problem;
  unit.expected_elements = au.elsm && au.elsm->interlaced ? 2 : 1;
  if (au.descriptor || au.elsm) {
    descriptor_ = ts::picture_descriptor(au.descriptor, au.elsm);
  }
  unit.descriptor = descriptor_;
  unit.pts_90khz = au.pts;
  unit.pcr_27mhz = au.pcr;
  if (au.elsm) unit.time_code = au.elsm->time_code.describe();
  unit.first_arrival = unit_first_arrival_;
  unit.last_arrival = last_arrival_;
  unit_started_ = false;
  ready_.push_back(std::move(unit));
}

void TsDepacketizer::on_audio_pes(ts::AudioPes&& pes) {
  // Under the demux lock (called from push): decode and count, hand on after the push.
  if (!pes.complete) {
    ++audio_counters_.damaged;  // a gap in the sound rather than samples that may be noise
    return;
  }
  auto block = decode_s302m(pes.data);
  if (!block) {
    ++audio_counters_.malformed;
    return;
  }
  if (block->samples.empty()) return;
  // The PTS is the 90 kHz time of the first sample, on the clock the video's PTS uses.
  block->pts = pes.pts;
  block->rtp_timestamp = pes.pts ? static_cast<std::uint32_t>(*pes.pts) : rtp_timestamp_;
  block->index = audio_counters_.blocks;
  count_block(audio_counters_, audio_sequence_, last_audio_format_, *block);
  ready_audio_.push_back(std::move(block).value());
}

PayloadCounters TsDepacketizer::payload_counters() const {
  std::lock_guard lock(mutex_);
  const auto& c = demux_.counters();
  return {c.units_complete, c.units_incomplete, c.waiting_for_pmt,
          c.pes_malformed + c.elsm_malformed + c.section_malformed + c.section_crc_errors + c.pes_oversize};
}

TsSnapshot TsDepacketizer::snapshot() const {
  std::lock_guard lock(mutex_);
  TsSnapshot s;
  s.counters = demux_.counters();
  s.pids = demux_.pids();
  s.video_pid = demux_.video_pid();
  s.audio_pid = demux_.audio_pid();
  s.last_pcr = demux_.last_pcr();
  s.plain_datagrams = plain_datagrams_;
  return s;
}

}  // namespace j2k::depacketizer
