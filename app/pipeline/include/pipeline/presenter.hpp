#pragma once
// Presentation paced by the stream's clock: a small adaptive playout buffer keyed on RTP
// timestamps, read once per display refresh.
//
//   delivery thread ── push(frame) ──▶ [ playout buffer, ≤ capacity frames ] ──▶ on_refresh(V, R) ── display thread
//                                                                               on_shown(swap time)
//
// A frame is due at its presentation time P = (its RTP time on the stream clock, anchored at
// the least-delayed frame: StreamClock) + D, the playout delay. D adapts to how late frames
// become ready (network and decode jitter): it is the 95th percentile of that lateness over the
// last five seconds (a stall of a few frames is shown late or skipped; jitter that recurs is
// absorbed) plus the display's own latency (1.5 refreshes: the picture drawn now is seen at the
// next refresh); it grows at once when needed and shrinks by a sixteenth of the excess a frame.
// It never goes below the floor set_min_delay gives (the sound's own delay, while sound plays).
// P is fixed when the frame arrives.
//
// At each refresh, visible at V, the newest frame due by then (P ≤ V + R/2: the refresh
// nearest P) is shown; older ones still waiting are skipped. Counted:
//   late      shown at a later refresh than the one nearest its P (V − P > R/2)
//   repeated  refreshes a picture stayed on screen beyond its duration (its RTP step to the
//             next frame) because the next one was not due or not ready; counted when the next
//             picture comes (a stream that ends is not a repeat)
//   skipped   frames never shown (a newer one was due at the same refresh, or the buffer overflowed)
// Interlaced streams arrive as woven frames (a field pair per unit). Without `split_fields`
// they are one picture per frame, at the frame rate the timestamps give. With it (the
// player's deinterlacing, ui/deinterlace.hpp) a woven frame is two pictures, one per field:
// the first in time due at P, the second half a frame interval later, each telling which
// lines are its own (Frame::field); the figures then count pictures at the field rate.
//
// Thread-safe: push on the delivery thread, on_refresh / on_shown on the display's thread,
// the figures from any. No clock is read: every time comes from the caller (tests use a fake one).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>

#include "gpu/colour.hpp"
#include "gpu/device_picture.hpp"
#include "pipeline/scheduling.hpp"

namespace j2k::pipeline {

class FramePresenter {
 public:
  /// Frames the playout buffer holds at most (each with its picture: the device pictures a
  /// receive pipeline needs, PipelineConfig::device_pictures).
  static constexpr std::size_t kMostFrames = 32;
  struct Config {
    std::size_t capacity = 8;  ///< frames waiting at least (more at high rates, for the delay); beyond, the oldest is skipped
    /// Interlaced frames become a picture per field (see above); progressive ones are unchanged.
    bool split_fields = false;
    Clock::duration max_delay = std::chrono::milliseconds(300);  ///< the playout delay's ceiling
  };
  /// A decoded picture on its way to the screen.
  struct Frame {
    std::uint64_t index = 0;
    std::uint32_t rtp_timestamp = 0;
    Clock::time_point received{};  ///< arrival of its last packet
    std::shared_ptr<const gpu::RgbaImage> host;
    std::shared_ptr<const gpu::DevicePicture> device;
    bool interlaced = false;          ///< a woven field pair
    bool first_field_is_top = true;   ///< the first field in time holds the even lines (0, 2, …)
    /// Set by the presenter on the pictures it hands out when it splits fields: the parity of
    /// the lines that are this picture's field (0 even, 1 odd); -1 for a whole frame.
    int field = -1;
  };
  /// What has happened so far.
  struct Figures {
    std::uint64_t shown = 0, late = 0, repeated = 0, skipped = 0;
    std::uint64_t fields_shown = 0;        ///< of `shown`, pictures that were one field of a woven frame
    std::uint64_t undisplayed = 0;         ///< still waiting when the player closed (clear())
    double delay_ms = 0;                   ///< the playout delay now
    LatencyHistogram receive_to_display;   ///< last packet → the swap that showed it, ms
  };

  explicit FramePresenter(Config config);
  FramePresenter() : FramePresenter(Config{}) {}

  /// A decoded frame (in stream order) that became ready at `ready`.
  void push(Frame frame, Clock::time_point ready);
  /// A refresh that becomes visible at `visible`, `refresh` after the previous one: the frame to
  /// draw for it, or nullopt to keep what is on screen.
  std::optional<Frame> on_refresh(Clock::time_point visible, Clock::duration refresh);
  /// The swap that shows the frame on_refresh returned last happened at `at`.
  void on_shown(Clock::time_point at);
  /// The playout delay's floor (from any thread): while sound plays, the delay its own path
  /// needs, so that a picture is never shown before its sound can be heard. Zero: none.
  void set_min_delay(Clock::duration floor);
  /// Drops the frames still waiting (their pictures go back to their pools); not counted.
  void clear();
  /// The end of a capture without a display (headless): the frames still waiting are shown on
  /// virtual refreshes every `refresh` after `from`, as if the display went on, so that every
  /// decoded frame is counted shown or skipped. At most `most` refreshes.
  void drain(Clock::time_point from, Clock::duration refresh, std::size_t most = 100000);
  Figures figures() const;

 private:
  struct Waiting {
    Frame frame;
    Clock::time_point due;  // P
    std::int64_t media = 0;  // unwrapped RTP ticks
  };
  void adapt(Clock::duration lateness);  // under mutex_
  void enqueue(Waiting w);                // under mutex_: appends, skipping the oldest beyond capacity
  /// Under mutex_: frames the buffer holds (per stream, before fields are split): enough for
  /// the longest delay at the stream's rate, at least Config::capacity, at most kMostFrames.
  std::size_t frames_held() const;

  Config config_;
  mutable std::mutex mutex_;  // guards everything below
  StreamClock clock_;
  std::deque<Waiting> waiting_;
  Clock::duration delay_{};
  Clock::duration min_delay_{};  // set_min_delay
  Clock::duration refresh_ = std::chrono::microseconds(16667);  // the last refresh period seen
  std::deque<Clock::duration> lateness_;  // of the last frames (about five seconds)
  std::int64_t last_media_ = 0;           // unwrapped ticks of the last frame pushed
  std::uint32_t last_ts_ = 0;
  bool any_pushed_ = false;
  // The picture on screen: when it was due, its media time, and the media step to the frame after it.
  std::optional<Clock::time_point> shown_due_;
  std::int64_t shown_media_ = 0;
  bool shown_is_field_ = false;             // the picture on screen is one field of a woven frame
  std::optional<std::int64_t> next_media_;  // media time of the frame after the one on screen
  std::uint64_t pending_repeats_ = 0;
  std::optional<Clock::time_point> awaiting_swap_;  // `received` of the frame handed out, until on_shown
  Figures figures_;
};

}  // namespace j2k::pipeline
