#include "pipeline/stats.hpp"

#include <fmt/format.h>

namespace j2k::pipeline {

StatsSample StatsSample::take(const ReceivePipeline& pipeline) {
  StatsSample s;
  s.at = std::chrono::steady_clock::now();
  const auto& rc = pipeline.receiver_counters();
  s.datagrams = rc.datagrams.load();
  s.socket_bytes = rc.bytes.load();
  s.receiver_dropped = rc.dropped_queue_full.load() + rc.dropped_pool_empty.load();
  s.stream = pipeline.stream();
  s.decode = pipeline.decode();
  return s;
}

Rates rates_between(const StatsSample& now, const StatsSample& before) {
  const double dt = std::chrono::duration<double>(now.at - before.at).count();
  auto rate = [dt](std::uint64_t a, std::uint64_t b) { return dt > 0 && a >= b ? static_cast<double>(a - b) / dt : 0.0; };
  const auto& s = now.stream;
  Rates r;
  r.packets = rate(s.packets_received, before.stream.packets_received);
  r.frames = rate(s.frames_complete + s.frames_incomplete, before.stream.frames_complete + before.stream.frames_incomplete);
  r.mbit = rate(s.payload_bytes, before.stream.payload_bytes) * 8e-6;
  r.decoded = rate(now.decode.decoded, before.decode.decoded);
  return r;
}

std::string frame_layout_name(int layout) {
  switch (layout) {  // SMPTE ST 377-1, FrameLayout
    case 0: return "progressive";
    case 1: return "separate fields";
    case 2: return "single field";
    case 3: return "mixed fields";
    case 4: return "segmented frame";
    case -1: return "";
    default: return fmt::format("frame layout {}", layout);
  }
}

std::string stream_format(const StatsSample& s, const std::string& payload_format) {
  if (s.decode.format.empty()) return "";
  std::string text = s.decode.format;
  if (s.stream.descriptor) {
    if (auto layout = frame_layout_name(s.stream.descriptor->frame_layout); !layout.empty()) text += ", " + layout;
  }
  if (payload_format == "mxf") text += ", MXF (RFC 6597)";
  else if (payload_format == "rfc5371") text += ", RFC 5371";
  else if (!payload_format.empty()) text += ", " + payload_format;
  return text;
}

double stream_seconds(const StatsSample& s, double elapsed_s) {
  const auto units = s.stream.frames_complete + s.stream.frames_incomplete;
  if (s.stream.frame_rate > 0 && units >= 2) return static_cast<double>(units) / s.stream.frame_rate;
  return elapsed_s;
}

std::string per_second_line(const StatsSample& now, const StatsSample& before, double elapsed_s) {
  const Rates r = rates_between(now, before);
  const auto& s = now.stream;
  std::string line = fmt::format("t={:>4.0f}s  pkts {:>6.0f}/s  frames {:>4.1f}/s  {:>6.1f} Mbit/s  decoded {:>4.1f}/s",
                                 elapsed_s, r.packets, r.frames, r.mbit, r.decoded);
  if (!now.decode.format.empty()) line += "  " + now.decode.format;
  line += fmt::format("  jitter {:.2f} ms", s.jitter_ms);
  // Rates are marked "/s"; everything after "total:" counts since the start.
  const auto lat = LatencyFigures::of(now.decode.receive_to_decoded.since(before.decode.receive_to_decoded));
  if (lat.count) line += fmt::format("  latency p50/p99 {:.0f}/{:.0f} ms", lat.p50, lat.p99);
  line += fmt::format("  total: lost {}, incomplete {}", s.packets_lost, s.frames_incomplete);
  if (s.packets_duplicate) line += fmt::format(", dup {}", s.packets_duplicate);
  if (s.packets_recovered) line += fmt::format(", reordered {}", s.packets_recovered);
  if (s.packets_late) line += fmt::format(", late {}", s.packets_late);
  if (s.packets_out_of_window) line += fmt::format(", out-of-window {}", s.packets_out_of_window);
  if (s.packets_malformed) line += fmt::format(", malformed {}", s.packets_malformed);
  if (now.receiver_dropped) line += fmt::format(", rx-dropped {}", now.receiver_dropped);
  if (now.decode.dropped_queue_full) line += fmt::format(", decoder-behind {}", now.decode.dropped_queue_full);
  if (now.decode.degrade_level > 0 || now.decode.degraded)
    line += fmt::format(", degraded {} (now at 1/{} resolution)", now.decode.degraded, 1 << now.decode.degrade_level);
  if (now.decode.failed) line += fmt::format(", decode-errors {}", now.decode.failed);
  if (s.units_unusable) line += fmt::format(", unusable {}", s.units_unusable);
  return line;
}

nlohmann::json latency_json(const LatencyHistogram& h) {
  const auto f = LatencyFigures::of(h);
  return {{"count", f.count}, {"p50", f.p50}, {"p95", f.p95}, {"p99", f.p99}};
}

nlohmann::json summary_json(const StatsSample& s, double elapsed_s, const std::string& payload_format) {
  using nlohmann::json;
  const auto& st = s.stream;
  const auto& d = s.decode;
  double fps = st.frame_rate;
  if (st.descriptor && st.descriptor->frame_rate() > 0) fps = st.descriptor->frame_rate();
  json stream = {
      {"ssrc", st.ssrc},
      {"width", d.width},
      {"height", d.height},
      {"format", stream_format(s, payload_format)},
      {"picture", d.format},
      {"payload_format", payload_format},
      {"fps", fps},
      {"fps_from_timestamps", st.frame_rate},
      // Over the stream's own time (RTP timestamps), not the wall clock of the reception:
      // a fast replay or the silence before the timeout would distort it.
      {"bitrate_mbps", stream_seconds(s, elapsed_s) > 0 ? static_cast<double>(st.payload_bytes) * 8e-6 / stream_seconds(s, elapsed_s) : 0.0},
      {"stream_duration_s", stream_seconds(s, elapsed_s)},
      {"jitter_ms", st.jitter_ms},
  };
  if (st.descriptor) {
    const auto& de = *st.descriptor;
    stream["descriptor"] = {{"stored_width", de.stored_width},
                            {"stored_height", de.stored_height},
                            {"frame_layout", frame_layout_name(de.frame_layout)},
                            {"component_depth", de.component_depth},
                            {"horizontal_subsampling", de.horizontal_subsampling},
                            {"vertical_subsampling", de.vertical_subsampling},
                            {"frame_rate", de.frame_rate()},
                            {"coding", to_string(de.coding)},
                            {"full_range", de.full_range()}};
    if (d.width == 0) {
      stream["width"] = de.stored_width;
      stream["height"] = de.stored_height;
    }
  }
  return json{
      {"duration_s", elapsed_s},
      {"packets",
       {{"received", st.packets_received},
        {"lost", st.packets_lost},
        {"duplicate", st.packets_duplicate},
        {"recovered_by_reorder", st.packets_recovered},
        {"late", st.packets_late},
        {"out_of_window", st.packets_out_of_window},
        {"malformed", st.packets_malformed},
        {"foreign_ssrc", st.packets_foreign},
        {"datagrams", s.datagrams},
        {"dropped_in_receiver", s.receiver_dropped}}},
      {"frames",
       {{"complete", st.frames_complete},
        {"incomplete", st.frames_incomplete},
        {"decoded", d.decoded},
        {"decode_failed", d.failed},
        {"skipped_incomplete", d.skipped_incomplete},
        {"merged_luma_chroma", st.units_merged},
        {"unusable", st.units_unusable},
        {"dropped_decoder_behind", d.dropped_queue_full},
        {"dropped_late", d.dropped_late},
        {"degraded", d.degraded},
        {"rejected_oversize", d.rejected_oversize},
        {"out_of_memory", d.out_of_memory},
        {"decode_ms_mean", d.decoded ? d.decode_ms_total / static_cast<double>(d.decoded) : 0.0}}},
      {"stream", stream},
      {"latency", {{"receive_to_decoded_ms", latency_json(d.receive_to_decoded)}}},
      {"decoders", {{"workers", d.workers}, {"threads_per_decode", d.threads_per_decode},
                    {"degrade_level", d.degrade_level}}},
  };
}

}  // namespace j2k::pipeline
