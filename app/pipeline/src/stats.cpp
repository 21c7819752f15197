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
  s.transport = pipeline.transport();
  s.protection = pipeline.protection();
  s.ts = pipeline.ts();
  return s;
}

std::string per_second_line(const StatsSample& now, const StatsSample& before, double elapsed_s) {
  const double dt = std::chrono::duration<double>(now.at - before.at).count();
  auto rate = [dt](std::uint64_t a, std::uint64_t b) { return dt > 0 ? static_cast<double>(a - b) / dt : 0.0; };
  const auto& s = now.stream;
  const std::uint64_t frames = s.frames_complete + s.frames_incomplete;
  const std::uint64_t frames_before = before.stream.frames_complete + before.stream.frames_incomplete;
  std::string line = fmt::format(
      "t={:>4.0f}s  pkts {:>6.0f}/s  lost {}  frames {:>4.1f}/s ({} incomplete)  {:>6.1f} Mbit/s  decoded {:>4.1f}/s",
      elapsed_s, rate(s.packets_received, before.stream.packets_received), s.packets_lost, rate(frames, frames_before),
      s.frames_incomplete, rate(s.payload_bytes, before.stream.payload_bytes) * 8e-6,
      rate(now.decode.decoded, before.decode.decoded));
  if (!now.decode.format.empty()) line += "  " + now.decode.format;
  line += fmt::format("  jitter {:.2f} ms", s.jitter_ms);
  if (s.packets_duplicate) line += fmt::format("  dup {}", s.packets_duplicate);
  if (s.packets_recovered) line += fmt::format("  reordered {}", s.packets_recovered);
  if (s.packets_late) line += fmt::format("  late {}", s.packets_late);
  if (s.packets_out_of_window) line += fmt::format("  out-of-window {}", s.packets_out_of_window);
  if (s.packets_malformed) line += fmt::format("  malformed {}", s.packets_malformed);
  if (now.receiver_dropped) line += fmt::format("  rx-dropped {}", now.receiver_dropped);
  if (now.decode.dropped_queue_full) line += fmt::format("  decoder-behind {}", now.decode.dropped_queue_full);
  if (now.decode.failed) line += fmt::format("  decode-errors {}", now.decode.failed);
  if (s.units_unusable) line += fmt::format("  unusable {}", s.units_unusable);
  if (now.protection.fec) line += fmt::format("  fec-recovered {}", now.protection.fec_counters.recovered);
  if (now.protection.two_paths)
    for (int p = 0; p < depacketizer::PathMerger::kPaths; ++p)
      line += fmt::format("  path{} lost {} skew {:.1f} ms", p + 1, now.protection.paths[p].lost, now.protection.paths[p].skew_ms);
  if (now.ts && now.ts->counters.continuity_errors) line += fmt::format("  ts-cc-errors {}", now.ts->counters.continuity_errors);
  return line;
}

nlohmann::json summary_json(const StatsSample& s, double elapsed_s) {
  using nlohmann::json;
  const auto& st = s.stream;
  const auto& d = s.decode;
  double fps = st.frame_rate;
  if (st.descriptor && st.descriptor->frame_rate() > 0) fps = st.descriptor->frame_rate();
  json stream = {
      {"ssrc", st.ssrc},
      {"width", d.width},
      {"height", d.height},
      {"format", d.format},
      {"fps", fps},
      {"fps_from_timestamps", st.frame_rate},
      {"bitrate_mbps", elapsed_s > 0 ? static_cast<double>(st.payload_bytes) * 8e-6 / elapsed_s : 0.0},
      {"jitter_ms", st.jitter_ms},
  };
  if (st.descriptor) {
    const auto& de = *st.descriptor;
    stream["descriptor"] = {{"stored_width", de.stored_width},
                            {"stored_height", de.stored_height},
                            {"frame_layout", de.frame_layout},
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
  stream["transport"] = s.transport;
  json out{
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
        {"decode_ms_mean", d.decoded ? d.decode_ms_total / static_cast<double>(d.decoded) : 0.0}}},
      {"stream", stream},
  };
  // ST 2022-1 / 2022-7 / MPEG-2 TS (issue 13): packets.lost above is after FEC and merge.
  const auto& pr = s.protection;
  out["packets"]["recovered_by_fec"] = pr.fec_counters.recovered;
  if (pr.fec)
    out["fec"] = {{"columns", pr.fec_columns}, {"rows", pr.fec_rows}, {"packets", pr.fec_counters.fec_packets},
                  {"recovered", pr.fec_counters.recovered}, {"unrecoverable", pr.fec_counters.unrecoverable},
                  {"malformed", pr.fec_counters.fec_malformed}, {"rejected", pr.fec_counters.fec_rejected}};
  json paths = json::array();
  if (pr.two_paths) {
    for (const auto& p : pr.paths)
      paths.push_back({{"packets", {{"received", p.received}, {"lost", p.lost}, {"late", p.late}, {"used", p.used},
                                    {"redundant", p.redundant}, {"out_of_window", p.out_of_window}, {"malformed", p.malformed}}},
                       {"skew_ms", p.skew_ms}});
  } else {
    paths.push_back({{"packets", {{"received", st.packets_received}, {"lost", st.packets_lost}, {"late", st.packets_late}}},
                     {"skew_ms", 0.0}});
  }
  out["paths"] = paths;
  if (s.ts) {
    const auto& c = s.ts->counters;
    json pids = json::array();
    for (const auto& p : s.ts->pids)
      pids.push_back({{"pid", p.pid}, {"stream_type", p.stream_type}, {"kind", p.kind}, {"packets", p.packets},
                      {"continuity_errors", p.continuity_errors}});
    out["ts"] = {{"continuity_errors", c.continuity_errors}, {"packets", c.packets}, {"pids", pids},
                 {"sync_errors", c.sync_errors}, {"transport_errors", c.transport_errors},
                 {"section_crc_errors", c.section_crc_errors}, {"section_malformed", c.section_malformed},
                 {"pes_malformed", c.pes_malformed}, {"pes_length_mismatch", c.pes_length_mismatch},
                 {"elsm_malformed", c.elsm_malformed}, {"plain_udp_datagrams", s.ts->plain_datagrams}};
    if (s.ts->video_pid) out["ts"]["video_pid"] = *s.ts->video_pid;
  }
  return out;
}

}  // namespace j2k::pipeline
