// The sound of a TR-01 transport stream: the first SMPTE ST 302M stream (PES private data on
// a PID the PMT marks with a "BSSD" registration descriptor) of the video's program. Its PES
// packets are reassembled within a bound and handed on with their PTS; the 302M payload is
// read by the TS depacketizer (ts_depacketizer.cpp).
#include <algorithm>

#include <fmt/format.h>

#include "core/log.hpp"
#include "depacketizer/ts.hpp"

namespace j2k::depacketizer::ts {

void TsDemux::follow_audio(std::optional<std::uint16_t> pid) {
  if (pid == audio_pid_) return;
  finish_audio_pes();
  if (pid) logger("depacketizer")->info("TS: ST 302M sound on PID {}", *pid);
  else if (audio_pid_) logger("depacketizer")->info("TS: the sound on PID {} left the program", *audio_pid_);
  audio_pid_ = pid;
}

void TsDemux::handle_audio_payload(bool unit_start, Bytes payload) {
  if (unit_start) {
    finish_audio_pes();
    audio_pes_ = Pes{};
    audio_pes_.active = true;
  } else if (!audio_pes_.active) {
    return;  // the rest of a PES whose start we missed
  }
  if (audio_pes_.bytes.size() + payload.size() > kMaxAudioPesBytes) {
    // A PES that never ends: dropped, not buffered without bound.
    ++counters_.audio_pes_oversize;
    audio_pes_ = Pes{};
    return;
  }
  audio_pes_.bytes.insert(audio_pes_.bytes.end(), payload.begin(), payload.end());
  // 302M PES carry their length: hand the PES on as soon as it is whole.
  auto view = parse_pes(audio_pes_.bytes);
  if (view && view->declared_length != 0 && audio_pes_.bytes.size() >= 6u + view->declared_length) finish_audio_pes();
}

void TsDemux::finish_audio_pes() {
  if (!audio_pes_.active) return;
  Pes pes = std::move(audio_pes_);
  audio_pes_ = Pes{};
  AudioPes out;
  out.pid = audio_pid_.value_or(0);
  out.complete = !pes.damaged;
  out.problem = pes.problem;
  auto view = parse_pes(pes.bytes);
  if (!view) {
    out.complete = false;
    if (out.problem.empty()) out.problem = view.error().message;
  } else {
    out.pts = view->pts;
    Bytes data = view->data;
    if (view->declared_length != 0 && pes.bytes.size() != 6u + view->declared_length) {
      ++counters_.pes_length_mismatch;
      if (pes.bytes.size() < 6u + view->declared_length) {
        out.complete = false;
        if (out.problem.empty())
          out.problem = fmt::format("PES cut short: {} of {} bytes", pes.bytes.size(), 6u + view->declared_length);
      } else {
        // Stuffing after it (parse_pes refused a length shorter than the header).
        const std::size_t after = pes.bytes.size() - 6u - view->declared_length;
        data = data.first(data.size() - std::min(after, data.size()));
      }
    }
    out.data.assign(data.begin(), data.end());
  }
  ++counters_.audio_pes;
  if (audio_sink_) audio_sink_(std::move(out));
}

}  // namespace j2k::depacketizer::ts
