#include "monitor/time_code_watch.hpp"

#include <cmath>

#include <fmt/format.h>

namespace j2k::monitor {

std::optional<TimeCodeValue> TimeCodeValue::parse(const std::string& text) {
  // Exactly "DD:DD:DD:DD" or "DD:DD:DD;DD".
  if (text.size() != 11 || text[2] != ':' || text[5] != ':' || (text[8] != ':' && text[8] != ';')) return std::nullopt;
  auto two = [&](std::size_t at) -> int {
    const char a = text[at], b = text[at + 1];
    if (a < '0' || a > '9' || b < '0' || b > '9') return -1;
    return (a - '0') * 10 + (b - '0');
  };
  TimeCodeValue tc;
  tc.hours = two(0);
  tc.minutes = two(3);
  tc.seconds = two(6);
  tc.frames = two(9);
  tc.drop_frame = text[8] == ';';
  if (tc.hours < 0 || tc.hours > 23 || tc.minutes < 0 || tc.minutes > 59 || tc.seconds < 0 || tc.seconds > 59 ||
      tc.frames < 0)
    return std::nullopt;
  return tc;
}

std::int64_t frame_number(const TimeCodeValue& tc, int nominal) noexcept {
  const std::int64_t minutes = std::int64_t{tc.hours} * 60 + tc.minutes;
  std::int64_t n = (minutes * 60 + tc.seconds) * nominal + tc.frames;
  if (tc.drop_frame && (nominal == 30 || nominal == 60)) n -= (nominal / 15) * (minutes - minutes / 10);
  return n;
}

namespace {

std::string plural(std::int64_t n, const char* one) { return fmt::format("{} {}{}", n, one, n == 1 ? "" : "s"); }

}  // namespace

bool TimeCodeWatch::follows(const TimeCodeValue& previous, const TimeCodeValue& now, double frame_rate) const {
  const auto n = static_cast<std::int64_t>(since_last_);
  const int nominal = static_cast<int>(std::lround(frame_rate));
  if (nominal > 0) {
    const std::int64_t day = frame_number({24, 0, 0, 0, now.drop_frame}, nominal);
    const std::int64_t expected = (frame_number(previous, nominal) + n) % day;
    return frame_number(now, nominal) == expected && now.frames < nominal;
  }
  // Rate unknown: the frames field counts up within a second and starts again at the next.
  const bool same_second =
      now.hours == previous.hours && now.minutes == previous.minutes && now.seconds == previous.seconds;
  if (same_second) return now.frames == previous.frames + n;
  if (n > 1) return true;  // where the second wrapped in a gap we cannot tell without the rate
  const int next_s = previous.seconds + 1, next_m = previous.minutes + (next_s == 60), next_h = previous.hours + (next_m == 60);
  const bool next_second = now.seconds == next_s % 60 && now.minutes == next_m % 60 && now.hours == next_h % 24;
  const int first = now.drop_frame && now.seconds == 0 && now.minutes % 10 != 0 ? 2 : 0;
  return next_second && now.frames == first;
}

std::optional<TimeCodeBreak> TimeCodeWatch::on_frame(std::uint64_t frame, const std::string& time_code,
                                                     double frame_rate) {
  const auto tc = TimeCodeValue::parse(time_code);
  if (!tc) {
    if (!last_) return std::nullopt;  // a stream without time code
    ++missing_;
    ++since_last_;
    if (in_gap_) return std::nullopt;
    in_gap_ = true;
    return TimeCodeBreak{fmt::format("frame {} came without its time code (the last, {}, was {} before): its system "
                                     "item or time code box was lost, or the source stopped stamping",
                                     frame, last_text_, plural(static_cast<std::int64_t>(since_last_), "frame")),
                         {{"kind", "missing"}, {"last", last_text_}}};
  }
  std::optional<TimeCodeBreak> out;
  if (last_) {
    ++since_last_;
    if (follows(*last_, *tc, frame_rate)) {
      in_break_ = false;
    } else {
      ++out_of_sequence_;
      if (!in_break_) {
        const int nominal = static_cast<int>(std::lround(frame_rate));
        nlohmann::json detail = {{"from", last_text_}, {"to", time_code}};
        std::string how;
        if (*tc == *last_) {
          detail["kind"] = "stands_still";
          how = fmt::format("stands still at {}", time_code);
        } else if (nominal > 0) {
          const std::int64_t day = frame_number({24, 0, 0, 0, tc->drop_frame}, nominal);
          std::int64_t off = frame_number(*tc, nominal) - frame_number(*last_, nominal) - static_cast<std::int64_t>(since_last_);
          off = ((off % day) + day) % day;
          if (off > day / 2) off -= day;  // nearer backwards than forwards
          detail["kind"] = off > 0 ? "jump" : "back";
          detail["frames_off"] = off;
          how = off > 0 ? fmt::format("jumps from {} to {}, {} ahead", last_text_, time_code, plural(off, "frame"))
                        : fmt::format("goes back from {} to {}, {} behind", last_text_, time_code, plural(-off, "frame"));
        } else {
          detail["kind"] = "jump";
          how = fmt::format("jumps from {} to {}", last_text_, time_code);
        }
        out = TimeCodeBreak{fmt::format("time code {} (frame {})", how, frame), std::move(detail)};
      }
      in_break_ = true;
    }
  }
  last_ = tc;
  last_text_ = time_code;
  since_last_ = 0;
  in_gap_ = false;
  return out;
}

}  // namespace j2k::monitor
