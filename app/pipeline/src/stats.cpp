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
  s.truncated = rc.truncated.load();
  s.stream = pipeline.stream();
  s.decode = pipeline.decode();
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
  // Hostile or broken input, each counter on its own (totals, shown once non-zero).
  if (now.truncated) line += fmt::format("  truncated {}", now.truncated);
  if (s.klv_malformed) line += fmt::format("  payload-errors {}", s.klv_malformed);
  if (s.resync_skipped) line += fmt::format("  resync-skipped {}", s.resync_skipped);
  if (s.offsets_rejected) line += fmt::format("  bad-offsets {}", s.offsets_rejected);
  if (s.units_capped) line += fmt::format("  capped {}", s.units_capped);
  if (s.descriptors_rejected) line += fmt::format("  bad-descriptors {}", s.descriptors_rejected);
  if (s.packets_suspect) line += fmt::format("  suspect {}", s.packets_suspect);
  if (s.packets_foreign) line += fmt::format("  other-ssrc {}", s.packets_foreign);
  if (s.packets_wrong_format) line += fmt::format("  wrong-format {}", s.packets_wrong_format);
  if (s.ssrc_changes) line += fmt::format("  ssrc-changes {}", s.ssrc_changes);
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
      {"reorder_window_ms", st.reorder_window_ms},
      {"transport", st.payload_format},
      {"transport_detected", st.format_detected},
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
  json ssrcs = json::array();
  for (const auto& e : st.ssrcs) {
    json j = {{"ssrc", e.ssrc}, {"datagrams", e.datagrams}, {"bytes", e.bytes},
              {"payload", depacketizer::describe(e.look)}, {"followed", e.followed}};
    if (e.followed)
      j.update({{"packets_received", e.packets_received}, {"packets_lost", e.packets_lost},
                {"frames_complete", e.frames_complete}, {"frames_incomplete", e.frames_incomplete}});
    ssrcs.push_back(std::move(j));
  }
  return json{
      {"duration_s", elapsed_s},
      {"ssrcs", ssrcs},
      {"ssrcs_unlisted_datagrams", st.ssrcs_unlisted},
      {"ssrc_changes", st.ssrc_changes},
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
        {"truncated", s.truncated},
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
}

}  // namespace j2k::pipeline
