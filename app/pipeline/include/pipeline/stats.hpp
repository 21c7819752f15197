#pragma once
// Live statistics: what a monitoring engineer reads once a second, and the JSON summary.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "pipeline/presenter.hpp"
#include "pipeline/receive_pipeline.hpp"

namespace j2k::pipeline {

/// Everything counted so far, read at one moment.
struct StatsSample {
  std::chrono::steady_clock::time_point at{};
  std::uint64_t datagrams = 0;
  std::uint64_t socket_bytes = 0;
  std::uint64_t receiver_dropped = 0;  ///< queue full or pool empty inside j2kplay
  /// Dropped by the kernel before j2kplay could read them: a socket's receive buffer was full
  /// (this host too slow to read, or the buffer too small: net.core.rmem_max).
  std::uint64_t socket_dropped = 0;
  std::uint64_t truncated = 0;         ///< datagrams larger than a receive buffer (cut)
  /// A capture's frames without a usable datagram: IPv4 fragments, other traffic (other
  /// protocols and ports), frames cut short; and its silences replayed shorter.
  std::uint64_t capture_fragments = 0, capture_not_udp = 0, capture_cut = 0, capture_gaps_shortened = 0;
  std::uint64_t capture_reassembled = 0, capture_fragments_lost = 0, capture_cut_matching = 0, capture_ipv6 = 0,
                capture_read_errors = 0, capture_malformed = 0;
  depacketizer::StreamSnapshot stream;
  DecodeSnapshot decode;
  std::string transport;                           ///< url format: mxf, rfc5371, ts
  depacketizer::ProtectionSnapshot protection;     ///< 2022-7 paths, 2022-1 FEC
  depacketizer::SourceGuardCounters sources;       ///< one SSRC from two sources (RFC 3550 8.2)
  std::optional<depacketizer::TsSnapshot> ts;      ///< MPEG-2 TS layer, when TS
  std::vector<ReceivePipeline::Silence> silences;  ///< the pipeline's recent silences between packets

  static StatsSample take(const ReceivePipeline& pipeline);
};

/// Rates between two samples, per second of the time between them (the per-second line and
/// the player's overlay both show these).
struct Rates {
  double packets = 0, frames = 0, mbit = 0, decoded = 0;
};
Rates rates_between(const StatsSample& now, const StatsSample& before);

/// SMPTE ST 377-1 FrameLayout by name ("progressive", "separate fields", …); "" when absent.
std::string frame_layout_name(int layout);

/// "1280x720 4:2:2 10-bit, separate fields, MXF (RFC 6597)": the decoded picture, the
/// descriptor's frame layout (when there is one) and the payload format the session follows
/// (the URL's, `payload_format`, before it follows one); "" before any frame.
std::string stream_format(const StatsSample& s, const std::string& payload_format);

/// Seconds of stream the counters cover, on the stream's own clock: units over the frame rate
/// measured from RTP timestamps; `elapsed_s` (first to last packet) when no rate is known.
double stream_seconds(const StatsSample& s, double elapsed_s);

/// "t=   3s  pkts 10842/s  frames 50.0/s  35.2 Mbit/s  decoded 50.0/s  1280x720 4:2:2 8-bit  jitter 0.12 ms
///  total: lost 0, incomplete 0" — rates marked "/s", counts since the start after "total:".
std::string per_second_line(const StatsSample& now, const StatsSample& before, double elapsed_s);

/// {"count", "p50", "p95", "p99"} of a latency histogram, in ms.
nlohmann::json latency_json(const LatencyHistogram& h);

/// The player's presentation in a summary: "display" {shown, late, repeated, skipped,
/// delay_ms} and latency.receive_to_display_ms {count, p50, p95, p99}.
void add_display_json(nlohmann::json& summary, const FramePresenter::Figures& display);

/// "display: shown 25.0/s  late 0  repeated 0  skipped 0  delay 25 ms  receive->display p50/p99 40/52 ms"
/// between two readings of the presenter's figures `seconds` apart (counts since the start).
std::string display_line(const FramePresenter::Figures& now, const FramePresenter::Figures& before, double seconds);

/// The final summary (j2kprobe --json). `elapsed_s` is the receive duration (first to last
/// packet); `payload_format` the URL's (mxf, rfc5371, ts), named until the session follows a
/// stream (then the format it follows, detected or stated, is named).
nlohmann::json summary_json(const StatsSample& s, double elapsed_s, const std::string& payload_format = "");

}  // namespace j2k::pipeline
