// Issue 9 item 7 / issue 10 item 4: the session's hostile-input counters and per-SSRC counts
// reach the periodic line and the JSON summary (they were counted but never shown).
#include <gtest/gtest.h>

#include "pipeline/stats.hpp"

using namespace j2k;

namespace {
pipeline::StatsSample sample() {
  pipeline::StatsSample s;
  auto& st = s.stream;
  st.klv_malformed = 3;
  st.resync_skipped = 5;
  st.offsets_rejected = 7;
  st.units_capped = 2;
  st.descriptors_rejected = 11;
  st.packets_suspect = 13;
  st.packets_foreign = 17;
  st.packets_wrong_format = 19;
  st.ssrc_changes = 1;
  st.payload_format = "rfc5371";
  st.format_detected = true;
  s.truncated = 23;
  depacketizer::SsrcStats a;
  a.ssrc = 0xA; a.followed = true; a.packets_received = 100; a.frames_complete = 4; a.look = depacketizer::PayloadLook::rfc5371;
  depacketizer::SsrcStats j;
  j.ssrc = 0xB; j.datagrams = 17;
  st.ssrcs = {a, j};
  return s;
}
}  // namespace

TEST(StatsCounters, PeriodicLineShowsEveryHostileInputCounter) {
  const auto now = sample();
  const std::string line = pipeline::per_second_line(now, pipeline::StatsSample{}, 3);
  for (const char* part : {"payload-errors 3", "resync-skipped 5", "bad-offsets 7", "capped 2", "bad-descriptors 11",
                           "suspect 13", "other-ssrc 17", "wrong-format 19", "ssrc-changes 1", "truncated 23"})
    EXPECT_NE(line.find(part), std::string::npos) << part << " missing in: " << line;
}

TEST(StatsCounters, JsonSummaryHasPayloadCountersAndEverySsrc) {
  const auto j = pipeline::summary_json(sample(), 3);
  const std::pair<const char*, int> payload[] = {{"errors", 3},       {"resync_skipped_packets", 5}, {"offsets_rejected", 7},
                                                 {"units_capped", 2}, {"descriptors_rejected", 11},  {"wrong_format_packets", 19}};
  for (const auto& [key, value] : payload) EXPECT_EQ(j["payload"][key], value) << key;
  EXPECT_EQ(j["packets"]["suspect"], 13);
  EXPECT_EQ(j["packets"]["truncated"], 23);
  EXPECT_EQ(j["stream"]["transport"], "rfc5371");
  EXPECT_EQ(j["stream"]["transport_detected"], true);
  EXPECT_EQ(j["ssrc_changes"], 1);
  ASSERT_EQ(j["ssrcs"].size(), 2u);
  EXPECT_EQ(j["ssrcs"][0]["packets_received"], 100);
  EXPECT_EQ(j["ssrcs"][0]["frames_complete"], 4);
  EXPECT_EQ(j["ssrcs"][1]["followed"], false);
  EXPECT_EQ(j["ssrcs"][1]["datagrams"], 17);
  EXPECT_FALSE(j["ssrcs"][1].contains("packets_received"));
}

namespace j2k {
namespace {
// Review 2026-11-28: the README says the stream's format line says HDR PQ; it did not (only
// the log and descriptor.transfer did).
TEST(StatsFormat, TheFormatLineSaysHdr) {
  pipeline::StatsSample s;
  s.decode.format = "640x360 4:2:2 10-bit";
  depacketizer::PictureDescriptor d;
  d.frame_layout = 0;
  d.transfer = TransferFunction::pq;
  s.stream.descriptor = d;
  EXPECT_EQ(pipeline::stream_format(s, "mxf"), "640x360 4:2:2 10-bit, progressive, HDR PQ, MXF (RFC 6597)");
  s.stream.descriptor->transfer = TransferFunction::sdr;
  EXPECT_EQ(pipeline::stream_format(s, "mxf"), "640x360 4:2:2 10-bit, progressive, MXF (RFC 6597)");
}

// Review 2026-11-28: a stream whose payload format was detected (no format= in the URL) was
// named by the URL's default: an RFC 5371 or TS stream said "MXF (RFC 6597)" in the format
// line and payload_format "mxf" in the JSON. What the session follows is what is named.
TEST(StatsFormat, TheDetectedPayloadFormatIsNamedNotTheUrlsDefault) {
  pipeline::StatsSample s;
  s.decode.format = "640x360 4:2:2 8-bit";
  s.stream.payload_format = "rfc5371";
  s.stream.format_detected = true;
  EXPECT_EQ(pipeline::stream_format(s, "mxf"), "640x360 4:2:2 8-bit, RFC 5371");
  auto j = pipeline::summary_json(s, 1.0, "mxf");
  EXPECT_EQ(j["stream"]["payload_format"], "rfc5371");
  EXPECT_EQ(j["stream"]["format"], "640x360 4:2:2 8-bit, RFC 5371");
  s.stream.payload_format = "ts";
  EXPECT_EQ(pipeline::stream_format(s, "mxf"), "640x360 4:2:2 8-bit, MPEG-2 TS (VSF TR-01)");
  // Before any stream is followed the URL's (stated) format is all there is.
  s.stream.payload_format.clear();
  EXPECT_EQ(pipeline::stream_format(s, "rfc5371"), "640x360 4:2:2 8-bit, RFC 5371");
}

// Review 2026-11-28 (second): with --no-decode the format line was empty though the MXF
// descriptor gave size, sampling and depth (and the log said them).
TEST(StatsFormat, WithoutDecodingTheDescriptorGivesThePicture) {
  pipeline::StatsSample s;
  s.stream.payload_format = "mxf";
  EXPECT_EQ(pipeline::stream_format(s, "mxf"), "") << "nothing known yet";
  depacketizer::PictureDescriptor d;
  d.stored_width = 1920;
  d.stored_height = 540;
  d.frame_layout = 1;
  d.component_depth = 10;
  d.horizontal_subsampling = 2;
  d.vertical_subsampling = 1;
  s.stream.descriptor = d;
  EXPECT_EQ(pipeline::stream_format(s, "mxf"), "1920x1080 4:2:2 10-bit, separate fields, MXF (RFC 6597)");
  // Review 2026-11-29: the JSON's height was the field's (540) beside "1920x1080" in the format,
  // and j2k_stream_height jumped 540 -> 1080 once decoding started.
  EXPECT_EQ(pipeline::summary_json(s, 1.0, "mxf")["stream"]["height"], 1080);
  s.stream.descriptor->frame_layout = 4;  // a segmented frame (PsF): two halves of one frame too
  EXPECT_EQ(pipeline::summary_json(s, 1.0, "mxf")["stream"]["height"], 1080);
  s.stream.descriptor->frame_layout = 0;
  EXPECT_EQ(pipeline::summary_json(s, 1.0, "mxf")["stream"]["height"], 540);
  s.stream.descriptor->frame_layout = 1;
  s.stream.descriptor->horizontal_subsampling = 0;  // TR-01's descriptor gives no sampling: no guess
  EXPECT_EQ(pipeline::stream_format(s, "mxf"), "");
}
// Review 2026-11-29: the per-second line said "decoder-behind 40" for 40 frames dropped as
// late while the JSON's frames.dropped_decoder_behind said 0: one name, two meanings.
TEST(StatsLine, DropsAreNamedAsTheJsonNamesThem) {
  pipeline::StatsSample before, now;
  now.decode.dropped_late = 40;
  const std::string line = pipeline::per_second_line(now, before, 1.0);
  EXPECT_NE(line.find("dropped-late 40"), std::string::npos) << line;
  EXPECT_EQ(line.find("decoder-behind"), std::string::npos) << line;
  now.decode.dropped_queue_full = 3;
  EXPECT_NE(pipeline::per_second_line(now, before, 1.0).find("decoder-behind 3"), std::string::npos);
  EXPECT_EQ(pipeline::summary_json(now, 1.0)["frames"]["dropped_decoder_behind"], 3);
}
}  // namespace
}  // namespace j2k
