#pragma once
// VSF TR-01 receive: MPEG-2 TS carried in RTP (SMPTE ST 2022-2 / RFC 2250: payload type 33,
// usually 7 × 188-byte TS packets per datagram) or in plain UDP datagrams, demultiplexed into
// the same CodestreamUnits the MXF and RFC 5371 depacketizers produce.
#include <chrono>
#include <mutex>
#include <optional>
#include <vector>

#include "depacketizer/payload.hpp"
#include "depacketizer/ts.hpp"

namespace j2k::depacketizer {

/// A consistent copy of the TS layer's state, readable from any thread.
struct TsSnapshot {
  ts::TsCounters counters;
  std::vector<ts::PidInfo> pids;
  std::optional<std::uint16_t> video_pid;
  std::optional<std::uint16_t> audio_pid;   ///< the ST 302M stream followed
  std::optional<std::uint64_t> last_pcr;
  std::uint64_t plain_datagrams = 0;  ///< datagrams that arrived as TS without RTP
};

class TsDepacketizer final : public PayloadDepacketizer {
 public:
  explicit TsDepacketizer(Sink sink, ts::DemuxConfig config = {});

  /// An RTP/MP2T packet in sequence order (the payload is whole TS packets).
  void push(const RtpPacket& packet, bool loss_before, std::chrono::steady_clock::time_point arrival) override;
  /// A datagram of plain TS (no RTP header): no sequence numbers, so loss shows only in the
  /// continuity counters.
  void push_plain(Bytes datagram, std::chrono::steady_clock::time_point arrival);
  void flush() override;
  PayloadCounters payload_counters() const override;
  const std::optional<PictureDescriptor>& descriptor() const override { return descriptor_; }

  void set_audio_sink(AudioSink sink) override { audio_sink_ = std::move(sink); }
  AudioCounters audio_counters() const override { return audio_counters_; }

  /// Thread-safe.
  TsSnapshot snapshot() const;

 private:
  void on_access_unit(ts::AccessUnit&& au);
  void on_audio_pes(ts::AudioPes&& pes);
  void emit_ready();
  void feed(Bytes packets, bool loss_before, std::optional<std::uint32_t> rtp_timestamp,
            std::chrono::steady_clock::time_point arrival);

  Sink sink_;
  mutable std::mutex mutex_;  // guards demux_ and plain_datagrams_ (the session thread feeds, stats threads read)
  ts::TsDemux demux_;
  std::uint64_t plain_datagrams_ = 0;
  std::optional<PictureDescriptor> descriptor_;  // session thread only
  std::vector<CodestreamUnit> ready_;            // units finished by the last push (session thread only)
  std::vector<AudioBlock> ready_audio_;          // sound blocks finished by the last push (session thread only)
  AudioSink audio_sink_;
  AudioCounters audio_counters_;                 // session thread only
  AudioSequenceCheck audio_sequence_;
  std::optional<AudioFormat> last_audio_format_;
  std::uint64_t next_index_ = 0;
  std::uint32_t rtp_timestamp_ = 0;
  std::chrono::steady_clock::time_point unit_first_arrival_{}, last_arrival_{};
  bool unit_started_ = false;
};

}  // namespace j2k::depacketizer
