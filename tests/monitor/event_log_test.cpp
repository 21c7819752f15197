// The event log writes one JSON object per line and keeps a bounded list of recent events.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "file_size_limit.hpp"
#include "monitor/event_log.hpp"
#include "monitor/history.hpp"

namespace j2k::monitor {
namespace {

TEST(EventLog, WritesJsonLinesWithTimeFrameAndDetail) {
  const auto path = std::filesystem::temp_directory_path() / "j2k_event_log_test.jsonl";
  {
    auto log = EventLog::open(path.string(), 4);
    ASSERT_TRUE(log) << log.error().message;
    Event gap = Event::now(EventKind::sequence_gap, "4 packets lost (100-103)");
    gap.rtp_timestamp = 3600;
    gap.frame = 17;
    gap.detail = {{"first_missing", 100}, {"last_missing", 103}, {"count", 4}};
    (*log)->post(gap);
    for (int i = 0; i < 10; ++i) (*log)->post(Event::now(EventKind::frame_damaged, "frame " + std::to_string(i)));
    EXPECT_EQ((*log)->recent(100).size(), 4u);  // bounded
    EXPECT_EQ((*log)->recent(2).back().message, "frame 9");
    EXPECT_EQ((*log)->posted(), 11u);
  }  // closing flushes
  std::ifstream in(path);
  std::string line;
  std::vector<nlohmann::json> lines;
  while (std::getline(in, line)) lines.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(lines.size(), 11u);
  EXPECT_EQ(lines[0]["event"], "sequence_gap");
  EXPECT_EQ(lines[0]["rtp_timestamp"], 3600);
  EXPECT_EQ(lines[0]["frame"], 17);
  EXPECT_EQ(lines[0]["first_missing"], 100);
  EXPECT_EQ(lines[0]["last_missing"], 103);
  EXPECT_EQ(lines[0]["count"], 4);
  EXPECT_TRUE(std::regex_match(lines[0]["time"].get<std::string>(),
                               std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)")));
  EXPECT_EQ(lines[10]["message"], "frame 9");
  std::filesystem::remove(path);
}

TEST(EventLog, AFullDiskCountsTheEventsNotWritten) {
  auto log = EventLog::open("/dev/full");
  ASSERT_TRUE(log) << log.error().message;
  for (int i = 0; i < 200; ++i) (*log)->post(Event::now(EventKind::frame_damaged, "frame " + std::to_string(i)));
  (*log)->close();
  EXPECT_EQ((*log)->posted(), 200u);
  EXPECT_EQ((*log)->write_dropped(), 200u);
}

TEST(EventLog, ALogWrittenThroughAFullDiskHoldsOnlyWholeLines) {
  // A flush that met a full disk half-way left half a JSON line at the end of the log (and
  // the lines written once space came back continued it): that line no longer parsed.
  const auto path = (std::filesystem::temp_directory_path() / "j2k_event_full_disk.jsonl").string();
  std::filesystem::remove(path);
  {
    test::FileSizeLimit disk(20'000);
    auto log = EventLog::open(path, 4);
    ASSERT_TRUE(log) << log.error().message;
    for (int i = 0; i < 400; ++i) (*log)->post(Event::now(EventKind::frame_damaged, "frame " + std::to_string(i)));
    (*log)->close();
    EXPECT_GT((*log)->write_dropped(), 0u);
    std::ifstream in(path);
    std::string line;
    std::uint64_t lines = 0;
    while (std::getline(in, line)) {
      EXPECT_TRUE(nlohmann::json::accept(line)) << line;
      ++lines;
    }
    EXPECT_EQ(lines, (*log)->posted() - (*log)->write_dropped());
  }
  std::filesystem::remove(path);
}

TEST(EventLog, ASizeLimitKeepsARingOfTwoFiles) {
  // A monitor runs for days; a link that keeps losing packets posts an event per gap. With a
  // limit the log is two files of at most half of it each: the newest events are kept.
  const auto dir = std::filesystem::temp_directory_path() / "j2k_event_ring";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto path = dir / "events.jsonl";
  const std::uint64_t limit = 64 * 1024;
  {
    auto log = EventLog::open(path.string(), 4, limit);
    ASSERT_TRUE(log) << log.error().message;
    // Fewer than the writer's queue holds (4096), so that none is dropped however slow it is.
    for (int i = 0; i < 3000; ++i) (*log)->post(Event::now(EventKind::frame_damaged, "frame " + std::to_string(i)));
    (*log)->close();
    EXPECT_GT((*log)->rotations(), 0u);
    EXPECT_EQ((*log)->write_dropped(), 0u);
  }
  const auto previous = dir / "events.1.jsonl";
  ASSERT_TRUE(std::filesystem::exists(previous));
  EXPECT_LE(std::filesystem::file_size(path), limit / 2);
  EXPECT_LE(std::filesystem::file_size(previous), limit / 2);
  // The newest event is the current file's last line, and the two files continue each other.
  std::ifstream in(path);
  std::string line, first, last;
  while (std::getline(in, line)) {
    if (first.empty()) first = line;
    last = line;
  }
  EXPECT_EQ(nlohmann::json::parse(last)["message"], "frame 2999");
  std::ifstream in1(previous);
  std::string last1;
  while (std::getline(in1, line)) last1 = line;
  const auto number = [](const std::string& l) { return std::stoi(nlohmann::json::parse(l)["message"].get<std::string>().substr(6)); };
  EXPECT_EQ(number(last1) + 1, number(first));
  std::filesystem::remove_all(dir);
}

TEST(EventLog, UnwritablePathIsAClearError) {
  auto log = EventLog::open("/nonexistent-dir/x/events.jsonl");
  ASSERT_FALSE(log);
  EXPECT_NE(log.error().message.find("cannot write the event log"), std::string::npos);
}

TEST(History, KeepsTheLastRowsOnly) {
  History h(3);
  for (int i = 0; i < 10; ++i) {
    HistoryRow r;
    r.t = i;
    r.bitrate_mbps = 10.0 * i;
    h.push(r);
  }
  ASSERT_EQ(h.size(), 3u);
  const auto rows = h.rows();
  EXPECT_DOUBLE_EQ(rows.front().t, 7);
  EXPECT_DOUBLE_EQ(rows.back().t, 9);
  EXPECT_EQ(h.rows(1).size(), 1u);
  const auto j = h.to_json();
  ASSERT_EQ(j.size(), 3u);
  EXPECT_DOUBLE_EQ(j[2]["bitrate_mbps"].get<double>(), 90.0);
}

}  // namespace
}  // namespace j2k::monitor
