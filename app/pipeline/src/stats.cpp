#include "pipeline/stats.hpp"

#include <fmt/format.h>

namespace j2k::pipeline {

StatsSample StatsSample::take(const ReceivePipeline& pipeline) {
  StatsSample s;
  s.at = std::chrono::steady_clock::now();
  const auto rc = pipeline.receiver_counters();
  s.datagrams = rc.datagrams;
  s.socket_bytes = rc.bytes;
  s.receiver_dropped = rc.dropped_queue_full + rc.dropped_pool_empty;
  s.socket_dropped = rc.dropped_socket_buffer;
  s.truncated = rc.truncated;
  s.capture_fragments = rc.capture_fragments;
  s.capture_not_udp = rc.capture_not_udp;
  s.capture_cut = rc.capture_cut;
  s.capture_gaps_shortened = rc.capture_gaps_shortened;
  s.capture_reassembled = rc.capture_reassembled;
  s.capture_fragments_lost = rc.capture_fragments_lost;
  s.capture_cut_matching = rc.capture_cut_matching;
  s.capture_ipv6 = rc.capture_ipv6;
  s.capture_read_errors = rc.capture_read_errors;
  s.capture_malformed = rc.capture_malformed;
  s.stream = pipeline.stream();
  s.decode = pipeline.decode();
  s.transport = pipeline.transport();
  s.protection = pipeline.protection();
  s.sources = pipeline.source_guard();
  s.ts = pipeline.ts();
  s.silences = pipeline.recent_silences();
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

/// The payload format the session follows (detected or stated); the URL's before any stream.
static std::string followed_format(const StatsSample& s, const std::string& url_format) {
  return s.stream.payload_format.empty() ? url_format : s.stream.payload_format;
}

/// The frame's height as the descriptor gives it: with separate fields (layout 1) and a
/// segmented frame (4) the stored height is a field's (ST 377-1), and the frame is two.
static std::uint32_t descriptor_frame_height(const depacketizer::PictureDescriptor& d) {
  return d.frame_layout == 1 || d.frame_layout == 4 ? 2 * d.stored_height : d.stored_height;
}

/// Without a decoded picture (--no-decode), the MXF descriptor's: "1920x1080 4:2:2 10-bit" (the
/// frame's height when the fields are separate); "" when it does not give size, sampling and depth.
static std::string descriptor_picture(const StatsSample& s) {
  if (!s.stream.descriptor) return "";
  const auto& d = *s.stream.descriptor;
  if (!d.stored_width || !d.stored_height || !d.component_depth || (!d.rgba && !d.horizontal_subsampling)) return "";
  const std::uint32_t height = descriptor_frame_height(d);
  const char* sampling = d.rgba ? "RGB" : d.horizontal_subsampling == 2 ? (d.vertical_subsampling == 2 ? "4:2:0" : "4:2:2")
                                        : d.horizontal_subsampling == 4 ? "4:1:1" : "4:4:4";
  return fmt::format("{}x{} {} {}-bit", d.stored_width, height, sampling, d.component_depth);
}

std::string stream_format(const StatsSample& s, const std::string& url_format) {
  const std::string picture = s.decode.format.empty() ? descriptor_picture(s) : s.decode.format;
  if (picture.empty()) return "";
  const std::string payload_format = followed_format(s, url_format);
  std::string text = picture;
  if (s.stream.descriptor) {
    if (auto layout = frame_layout_name(s.stream.descriptor->frame_layout); !layout.empty()) text += ", " + layout;
    if (s.stream.descriptor->transfer != TransferFunction::sdr) text += fmt::format(", {}", to_string(s.stream.descriptor->transfer));
  }
  if (payload_format == "mxf") text += ", MXF (RFC 6597)";
  else if (payload_format == "rfc5371") text += ", RFC 5371";
  else if (payload_format == "ts") text += ", MPEG-2 TS (VSF TR-01)";
  else if (!payload_format.empty()) text += ", " + payload_format;
  return text;
}

double stream_seconds(const StatsSample& s, double elapsed_s) {
  const auto units = s.stream.frames_complete + s.stream.frames_incomplete;
  if (s.stream.stream_seconds > 0 && units >= 2) return s.stream.stream_seconds;
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
  if (s.frames_missing) line += fmt::format(", frames-missing {}", s.frames_missing);
  if (s.packets_duplicate) line += fmt::format(", dup {}", s.packets_duplicate);
  if (s.packets_recovered) line += fmt::format(", reordered {}", s.packets_recovered);
  if (s.packets_late) line += fmt::format(", late {}", s.packets_late);
  if (s.packets_out_of_window) line += fmt::format(", out-of-window {}", s.packets_out_of_window);
  if (s.packets_malformed) line += fmt::format(", malformed {}", s.packets_malformed);
  if (now.receiver_dropped) line += fmt::format(", rx-dropped {}", now.receiver_dropped);
  if (now.socket_dropped) line += fmt::format(", socket-buffer-dropped {}", now.socket_dropped);
  // Named as the JSON names them (frames.dropped_decoder_behind: the queue was full;
  // frames.dropped_late: it would have been shown late).
  if (now.decode.dropped_queue_full) line += fmt::format(", decoder-behind {}", now.decode.dropped_queue_full);
  if (now.decode.dropped_late) line += fmt::format(", dropped-late {}", now.decode.dropped_late);
  if (now.decode.degrade_level > 0 || now.decode.degraded)
    line += fmt::format(", degraded {} (now at 1/{} resolution)", now.decode.degraded, 1 << now.decode.degrade_level);
  if (now.decode.failed) line += fmt::format(", decode-errors {}", now.decode.failed);
  if (now.decode.codestream_damaged) line += fmt::format(", codestream-damaged {}", now.decode.codestream_damaged);
  if (now.decode.undisplayable) line += fmt::format(", undisplayable {}", now.decode.undisplayable);
  if (s.units_unusable) line += fmt::format(", unusable {}", s.units_unusable);
  // Hostile or broken input, each counter on its own (totals, shown once non-zero).
  if (now.truncated) line += fmt::format(", truncated {}", now.truncated);
  if (now.capture_reassembled) line += fmt::format(", capture-reassembled {}", now.capture_reassembled);
  if (now.capture_fragments_lost) line += fmt::format(", capture-fragments-lost {}", now.capture_fragments_lost);
  if (now.capture_cut_matching) line += fmt::format(", capture-cut-by-snaplen {}", now.capture_cut_matching);
  if (now.capture_read_errors) line += fmt::format(", capture-unreadable {}", now.capture_read_errors);
  if (now.capture_gaps_shortened) line += fmt::format(", capture-gaps-shortened {}", now.capture_gaps_shortened);
  if (s.klv_malformed) line += fmt::format(", payload-errors {}", s.klv_malformed);
  if (s.resync_skipped) line += fmt::format(", resync-skipped {}", s.resync_skipped);
  if (s.offsets_rejected) line += fmt::format(", bad-offsets {}", s.offsets_rejected);
  if (s.units_capped) line += fmt::format(", capped {}", s.units_capped);
  if (s.descriptors_rejected) line += fmt::format(", bad-descriptors {}", s.descriptors_rejected);
  if (s.packets_suspect) line += fmt::format(", suspect {}", s.packets_suspect);
  if (s.packets_foreign) line += fmt::format(", other-ssrc {}", s.packets_foreign);
  if (s.packets_wrong_format) line += fmt::format(", wrong-format {}", s.packets_wrong_format);
  if (s.ssrc_changes) line += fmt::format(", ssrc-changes {}", s.ssrc_changes);
  if (now.sources.collisions) line += fmt::format(", ssrc-collisions {}", now.sources.collisions);
  if (now.sources.takeovers) line += fmt::format(", source-takeovers {}", now.sources.takeovers);
  if (now.protection.fec) line += fmt::format(", fec-recovered {}", now.protection.fec_counters.recovered);
  if (now.protection.two_paths)
    for (int p = 0; p < depacketizer::PathMerger::kPaths; ++p)
      line += fmt::format(", path{} {}lost {} skew {:.1f} ms", p + 1, now.protection.paths[p].down ? "DOWN " : "",
                          now.protection.paths[p].lost, now.protection.paths[p].skew_ms);
  if (now.protection.merge_restarts) line += fmt::format(", merge-restarts {}", now.protection.merge_restarts);
  if (now.ts && now.ts->counters.continuity_errors) line += fmt::format(", ts-cc-errors {}", now.ts->counters.continuity_errors);
  return line;
}

nlohmann::json latency_json(const LatencyHistogram& h) {
  const auto f = LatencyFigures::of(h);
  return {{"count", f.count}, {"p50", f.p50}, {"p95", f.p95}, {"p99", f.p99}};
}

void add_display_json(nlohmann::json& summary, const FramePresenter::Figures& d) {
  summary["display"] = {{"shown", d.shown}, {"fields_shown", d.fields_shown}, {"late", d.late}, {"repeated", d.repeated},
                        {"skipped", d.skipped}, {"undisplayed", d.undisplayed}, {"delay_ms", d.delay_ms}};
  summary["latency"]["receive_to_display_ms"] = latency_json(d.receive_to_display);
}

std::string display_line(const FramePresenter::Figures& now, const FramePresenter::Figures& before, double seconds) {
  const double shown = seconds > 0 ? static_cast<double>(now.shown - before.shown) / seconds : 0.0;
  const bool fields = now.fields_shown > before.fields_shown;  // deinterlaced: a picture per field
  std::string line = fmt::format("display: shown {:.1f}/s{}  late {}  repeated {}  skipped {}  delay {:.0f} ms", shown,
                                 fields ? " (fields)" : "", now.late, now.repeated, now.skipped, now.delay_ms);
  const auto lat = LatencyFigures::of(now.receive_to_display.since(before.receive_to_display));
  if (lat.count)
    line += fmt::format("  receive->display p50/p95/p99 {:.0f}/{:.0f}/{:.0f} ms", lat.p50, lat.p95, lat.p99);
  return line;
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
      {"payload_format", followed_format(s, payload_format)},
      {"fps", fps},
      {"fps_from_timestamps", st.frame_rate},
      // Over the stream's own time (RTP timestamps), not the wall clock of the reception:
      // a fast replay or the silence before the timeout would distort it.
      {"bitrate_mbps", stream_seconds(s, elapsed_s) > 0 ? static_cast<double>(st.payload_bytes) * 8e-6 / stream_seconds(s, elapsed_s) : 0.0},
      {"stream_duration_s", stream_seconds(s, elapsed_s)},
      {"payload_bytes", st.payload_bytes},
      {"jitter_ms", st.jitter_ms},
      {"reorder_window_ms", st.reorder_window_ms},
      {"transport", st.payload_format},
      {"transport_detected", st.format_detected},
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
                            {"transfer", to_string(de.transfer)},
                            {"full_range", de.full_range()}};
    if (d.width == 0) {
      stream["width"] = de.stored_width;
      stream["height"] = descriptor_frame_height(de);  // as the format says, and as decoding will
    }
  }
  json ssrcs = json::array();
  for (const auto& e : st.ssrcs) {
    json j = {{"ssrc", e.ssrc}, {"datagrams", e.datagrams}, {"bytes", e.bytes},
              {"payload", depacketizer::describe(e.look)}, {"followed", e.followed}};
    if (e.followed)
      j.update({{"packets_received", e.packets_received}, {"packets_lost", e.packets_lost},
                {"frames_complete", e.frames_complete}, {"frames_incomplete", e.frames_incomplete}});
    ssrcs.push_back(std::move(j));
  }
  json out{
      {"duration_s", elapsed_s},
      {"ssrcs", ssrcs},
      {"ssrcs_unlisted_datagrams", st.ssrcs_unlisted},
      {"ssrc_changes", st.ssrc_changes},
      {"source_takeovers", s.sources.takeovers},
      {"payload",
       {{"errors", st.klv_malformed},
        {"resync_skipped_packets", st.resync_skipped},
        {"offsets_rejected", st.offsets_rejected},
        {"units_capped", st.units_capped},
        {"descriptors_rejected", st.descriptors_rejected},
        {"wrong_format_packets", st.packets_wrong_format}}},
      {"packets",
       {{"received", st.packets_received},
        {"lost", st.packets_lost},
        {"duplicate", st.packets_duplicate},
        {"recovered_by_reorder", st.packets_recovered},
        {"late", st.packets_late},
        {"out_of_window", st.packets_out_of_window},
        {"malformed", st.packets_malformed},
        {"foreign_ssrc", st.packets_foreign},
        {"suspect", st.packets_suspect},
        {"ssrc_collisions", s.sources.collisions},
        {"truncated", s.truncated},
        {"datagrams", s.datagrams},
        {"capture_fragments", s.capture_fragments},
        {"capture_not_udp", s.capture_not_udp},
        {"capture_cut", s.capture_cut},
        {"capture_gaps_shortened", s.capture_gaps_shortened},
        {"capture_reassembled", s.capture_reassembled},
        {"capture_fragments_lost", s.capture_fragments_lost},
        {"capture_cut_by_snaplen", s.capture_cut_matching},
        {"capture_ipv6", s.capture_ipv6},
        {"capture_read_errors", s.capture_read_errors},
        {"capture_malformed", s.capture_malformed},
        {"dropped_in_receiver", s.receiver_dropped},
        // Dropped by this host's kernel, the socket's buffer full: counted in lost too (they left
        // gaps), but not the network's doing.
        {"dropped_in_socket_buffer", s.socket_dropped}}},
      {"frames",
       {{"complete", st.frames_complete},
        {"incomplete", st.frames_incomplete},
        {"missing", st.frames_missing},
        {"decoded", d.decoded},
        {"decode_failed", d.failed},
        // Arrived whole, decoded from a codestream the decoder found damaged (what it could read).
        {"codestream_damaged", d.codestream_damaged},
        // Decoded, but the display conversion refused the picture (the window kept the last one).
        {"undisplayable", d.undisplayable},
        {"skipped_incomplete", d.skipped_incomplete},
        {"merged_luma_chroma", st.units_merged},
        {"unusable", st.units_unusable},
        {"dropped_decoder_behind", d.dropped_queue_full},
        {"dropped_late", d.dropped_late},
        {"degraded", d.degraded},
        {"rejected_oversize", d.rejected_oversize},
        {"out_of_memory", d.out_of_memory},
        {"tier1_on_gpu", d.tier1_on_gpu},
        // Frames whose GPU tier-1 failed (--tier1 auto): decoded on the CPU, as the next ones until
        // the decoder tries the GPU again after a pause.
        {"tier1_gpu_fallbacks", d.tier1_fallbacks},
        // Times a decoder's GPU reconstruction failed (--gpu auto): on the CPU until its pause ends.
        {"gpu_fallbacks", d.gpu_fallbacks},
        {"decode_ms_mean", d.decoded ? d.decode_ms_total / static_cast<double>(d.decoded) : 0.0},
        // The longest one frame took: a decoder stalled (a machine busy with other work) shows here.
        {"decode_ms_max", d.decode_ms_max},
        // Thread time a frame cost, all threads that worked on it together.
        {"decode_work_ms_mean", d.decoded ? d.decode_work_ms_total / static_cast<double>(d.decoded) : 0.0},
        // The same in CPU time (0 without the shared scheduler, e.g. OpenJPEG).
        {"decode_cpu_ms_mean", d.decoded ? d.decode_cpu_ms_total / static_cast<double>(d.decoded) : 0.0}}},
      {"stream", stream},
      {"latency", {{"receive_to_decoded_ms", latency_json(d.receive_to_decoded)}}},
      // Capacity: frames/s the decoding threads can do at the cost measured (at the levels used).
      {"decoders", {{"workers", d.workers}, {"threads", d.threads}, {"degrade_level", d.degrade_level},
                    {"queue_frames", d.queue_frames},
                    {"capacity_fps", d.decoded && d.decode_work_ms_total > 0
                                         ? std::max(d.threads, d.workers) * 1000.0 * static_cast<double>(d.decoded) /
                                               d.decode_work_ms_total
                                         : 0.0}}},
      // The sender's RTCP reports (RFC 3550 6.4.1); packets.lost includes rtcp.packets_lost_at_end.
      {"rtcp",
       {{"sender_reports", st.rtcp.sender_reports},
        {"sender_packets", st.rtcp.sender_packets},
        {"sender_octets", st.rtcp.sender_octets},
        {"bye", st.rtcp.bye},
        {"packets_lost_at_end", st.rtcp.packets_lost_at_end},
        {"frames_missing_at_end", st.rtcp.frames_missing_at_end},
        {"datagrams", st.rtcp.datagrams},
        {"malformed", st.rtcp.malformed},
        {"implausible", st.rtcp.implausible},
        {"foreign_ssrc", st.rtcp.foreign}}},
  };
  // ST 2022-1 / 2022-7 / MPEG-2 TS (issue 13): packets.lost above is after FEC and merge.
  const auto& pr = s.protection;
  out["packets"]["recovered_by_fec"] = pr.fec_counters.recovered;
  if (pr.fec)
    out["fec"] = {{"columns", pr.fec_columns}, {"rows", pr.fec_rows}, {"packets", pr.fec_counters.fec_packets},
                  {"recovered", pr.fec_counters.recovered}, {"unrecoverable", pr.fec_counters.unrecoverable},
                  {"malformed", pr.fec_counters.fec_malformed}, {"rejected", pr.fec_counters.fec_rejected},
                  {"mismatched", pr.fec_counters.fec_mismatched},
                  {"other_ssrc", pr.fec_counters.foreign}, {"restarts", pr.fec_counters.restarts}};
  json paths = json::array();
  if (pr.two_paths) {
    for (const auto& p : pr.paths)
      paths.push_back({{"packets", {{"received", p.received}, {"lost", p.lost}, {"late", p.late}, {"used", p.used},
                                    {"redundant", p.redundant}, {"out_of_window", p.out_of_window}, {"malformed", p.malformed},
                                    {"other_ssrc", p.foreign}}},
                       {"skew_ms", p.skew_ms}, {"down", p.down}, {"outages", p.outages}});
  } else {
    paths.push_back({{"packets", {{"received", st.packets_received}, {"lost", st.packets_lost}, {"late", st.packets_late}}},
                     {"skew_ms", 0.0}});
  }
  out["paths"] = paths;
  if (pr.two_paths) out["merge_restarts"] = pr.merge_restarts;
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
                 {"elsm_malformed", c.elsm_malformed}, {"plain_udp_datagrams", s.ts->plain_datagrams},
                 // (review 2026-11-25: these four were counted but never shown)
                 {"duplicates", c.duplicates}, {"adaptation_malformed", c.adaptation_malformed},
                 {"pes_oversize", c.pes_oversize}, {"waiting_for_pmt", c.waiting_for_pmt},
                 {"audio_pes_oversize", c.audio_pes_oversize}, {"pmt_updates", c.pmt_updates},
                 {"units_headless", c.units_headless}};
    if (s.ts->video_pid) out["ts"]["video_pid"] = *s.ts->video_pid;
  }
  return out;
}

}  // namespace j2k::pipeline
