// SequenceRun and SsrcFollower (ssrc_follower.hpp).
#include "depacketizer/ssrc_follower.hpp"

#include <algorithm>

namespace j2k::depacketizer {

int SequenceRun::add(std::uint16_t sequence) noexcept {
  const auto d = static_cast<std::int16_t>(static_cast<std::uint16_t>(sequence - newest_));
  if (length_ > 0 && d >= 1 && d <= kMaxStep) {
    ++length_;
    newest_ = sequence;
  } else if (length_ > 0 && d <= 0 && d >= -kReorder) {
    // A copy, or a little late: part of the run, but not a step of it.
  } else {
    length_ = 1;
    newest_ = sequence;
  }
  return length_;
}

SsrcFollower::Verdict SsrcFollower::accept(std::uint32_t ssrc, std::uint16_t sequence,
                                           std::optional<std::chrono::steady_clock::time_point> arrival) {
  if (!followed_ || ssrc == *followed_) {
    const bool first = !followed_;
    followed_ = ssrc;
    if (arrival) followed_last_ = arrival;
    challengers_.clear();  // the followed one is not silent: no other has a run yet
    return first ? Verdict::changed : Verdict::followed;
  }
  if (pinned_) return Verdict::foreign;  // the one upstream says which stream this is
  auto c = std::find_if(challengers_.begin(), challengers_.end(), [&](const Challenger& x) { return x.ssrc == ssrc; });
  if (c == challengers_.end()) {
    if (challengers_.size() >= kChallengers) {
      // Junk rotating its SSRC must not push out a sender that has begun a run.
      challengers_.erase(std::min_element(challengers_.begin(), challengers_.end(), [](const Challenger& a, const Challenger& b) {
        return a.run.length() < b.run.length();
      }));
    }
    challengers_.push_back(Challenger{ssrc, {}});
    c = challengers_.end() - 1;
  }
  if (c->run.add(sequence) < kRestartRun) return Verdict::foreign;
  if (arrival && followed_last_ && *arrival - *followed_last_ < quiet_) return Verdict::foreign;
  followed_ = ssrc;
  followed_last_ = arrival;
  challengers_.clear();
  return Verdict::changed;
}

void SsrcFollower::reset() noexcept {
  pinned_ = false;
  followed_.reset();
  followed_last_.reset();
  challengers_.clear();
}

void SsrcFollower::follow(std::uint32_t ssrc) noexcept {
  pinned_ = true;
  followed_ = ssrc;
  followed_last_.reset();
  challengers_.clear();
}

}  // namespace j2k::depacketizer
