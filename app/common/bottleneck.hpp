#pragma once
// The receivers' closing explanation when whole frames were dropped because the decoders
// were behind: one sentence whose arithmetic holds and whose hint is one the user has not
// already taken.
#include <fmt/format.h>

#include <cstdint>
#include <string>

#include "common/decoder_choice.hpp"

namespace j2k::cli {

/// `per_worker_fps`: frames one worker decodes per second of its own decoding time;
/// `workers`: how many decoded in parallel; `stream_fps`: the stream's frame rate.
inline std::string decoder_behind_message(double per_worker_fps, int workers, double stream_fps, std::uint64_t dropped,
                                          const app::DecoderChoice& choice) {
  const double capacity = per_worker_fps * workers;
  if (per_worker_fps > 0 && stream_fps > 0 && capacity < stream_fps) {
    std::string hint;
    if (choice.backend == app::DecoderBackend::openjpeg) hint = "try --backend own";
    else if (choice.effective_gpu() == gpu::GpuMode::off) hint = "try --gpu auto where a GPU is present";
    else hint = "a faster machine, or a stream with fewer pixels or bits";
    return fmt::format("decoding is the bottleneck: {:.1f} frames/s per worker x {} workers = {:.1f} frames/s < the "
                       "stream's {:.2f} fps; {} whole frames were dropped before decoding ({})",
                       per_worker_fps, workers, capacity, stream_fps, dropped, hint);
  }
  // Enough capacity on average: the decoders fell behind at times only.
  return fmt::format("{} whole frames were dropped before decoding although the decoders keep up on average "
                     "({:.1f} frames/s per worker x {} workers = {:.1f} frames/s for a {:.2f} fps stream): they fell "
                     "behind at times (bursts, or the CPU busy with other work)",
                     dropped, per_worker_fps, workers, capacity, stream_fps);
}

}  // namespace j2k::cli
