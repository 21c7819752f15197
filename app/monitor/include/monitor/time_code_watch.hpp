#pragma once
// Whether the stream's time code runs on: each frame's time code should be the previous
// frame's plus one frame. A monitor says when it does not (the source was switched or
// edited upstream, a whole frame never arrived, a frame came without its system item) and
// counts the frames concerned.
//
// Thread: one caller (the pipeline's delivery thread, through StreamMonitor::on_frame), in
// delivery order.
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace j2k::monitor {

/// "HH:MM:SS:FF" (";" before FF for drop-frame), as the depacketizers write it.
struct TimeCodeValue {
  int hours = 0, minutes = 0, seconds = 0, frames = 0;
  bool drop_frame = false;
  bool operator==(const TimeCodeValue&) const = default;
  static std::optional<TimeCodeValue> parse(const std::string& text);
};

/// Frames since 00:00:00:00 at `nominal` frames per second (drop-frame numbering at 30 and
/// 60: frames 0 and 1, or 0 to 3, are skipped at each minute but every tenth).
std::int64_t frame_number(const TimeCodeValue& tc, int nominal) noexcept;

struct TimeCodeBreak {
  std::string message;
  nlohmann::json detail;
};

class TimeCodeWatch {
 public:
  /// One delivered frame: its time code ("" when it has none) and the stream's frame rate
  /// (0 when unknown: then only the frames field's count up and the wrap to the next
  /// second at 0 are checked). Returns what to report when the time code stops running
  /// on; frames that go on off the sequence are counted, not reported again, until it runs
  /// on again (a source that stamps one time code on every frame makes one event).
  std::optional<TimeCodeBreak> on_frame(std::uint64_t frame, const std::string& time_code, double frame_rate);

  /// A new timeline (the source started again, another stream): the next time code is
  /// compared with nothing. The counts stay.
  void restart() noexcept {
    last_.reset();
    since_last_ = 0;
    in_break_ = in_gap_ = false;
  }

  /// Frames whose time code was not the previous one's plus one frame.
  std::uint64_t out_of_sequence() const noexcept { return out_of_sequence_; }
  /// Frames without a time code in a stream that had one.
  std::uint64_t missing() const noexcept { return missing_; }

 private:
  bool follows(const TimeCodeValue& previous, const TimeCodeValue& now, double frame_rate) const;

  std::optional<TimeCodeValue> last_;
  std::string last_text_;
  std::uint64_t since_last_ = 0;  // frames delivered since the last one with a time code
  bool in_break_ = false;         // the last frame's time code did not follow on
  bool in_gap_ = false;           // frames without time code since the last with one
  std::uint64_t out_of_sequence_ = 0, missing_ = 0;
};

}  // namespace j2k::monitor
