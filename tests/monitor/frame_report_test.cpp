// What the operator's monitor is told of a delivered frame (cli::frame_report).
#include <gtest/gtest.h>

#include "common/monitor_glue.hpp"
#include "test_images.hpp"

namespace j2k {
namespace {

// Review 2026-11-28: a frame decoded at reduced resolution (the decoder degrading under load)
// was reported with its reduced size as the stream's format: "format 640x360 4:2:2 8-bit ->
// 320x180 4:2:2 8-bit" events in the log, and back, while the stream never changed.
TEST(FrameReport, ADegradedPictureIsNotAFormatChange) {
  pipeline::DecodedFrame full;
  full.decoded = true;
  full.image = test::photo_ycbcr(64, 32, 8, 2);
  EXPECT_EQ(cli::frame_report(full).format, "64x32 4:2:2 8-bit");
  EXPECT_FALSE(cli::frame_report(full).degraded);

  pipeline::DecodedFrame reduced;
  reduced.decoded = true;
  reduced.reduce = 1;
  reduced.image = test::photo_ycbcr(32, 16, 8, 2);
  EXPECT_TRUE(cli::frame_report(reduced).degraded);
  EXPECT_EQ(cli::frame_report(reduced).format, "") << "not the stream's format";

  // Through the monitor: full, degraded, full again is no format change at all.
  monitor::MonitorOptions options;
  auto made = monitor::StreamMonitor::create(options, std::chrono::steady_clock::now());
  ASSERT_TRUE(made.ok()) << made.error().message;
  auto& mon = **made;
  const auto now = std::chrono::steady_clock::now();
  for (const auto* f : {&full, &reduced, &full}) mon.on_frame(cli::frame_report(*f), now);
  for (const auto& e : mon.events().recent(16)) EXPECT_NE(e.kind, monitor::EventKind::format_change) << e.message;
}

}  // namespace
}  // namespace j2k
