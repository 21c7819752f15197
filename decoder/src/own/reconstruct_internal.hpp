#pragma once
// Reconstruction on the decoder's own thread pool (the public reconstruct() makes one).
#include <vector>

#include "decoder/coefficients.hpp"
#include "thread_pool.hpp"

namespace j2k::decoder::own {

/// Working buffers kept between frames so that a steady stream of frames does not fault in
/// fresh pages for every picture.
struct ReconstructScratch {
  struct Work {
    Rect rect;  // tile-component at the decoded resolution
    bool is_float = false;
    std::vector<std::int32_t> ints;
    std::vector<float> floats;
  };
  std::vector<Work> work;
};

Result<PlanarImage> reconstruct_frame(const CoefficientFrame& frame, ThreadPool* pool, ReconstructTimes* times,
                                      ReconstructScratch* scratch = nullptr);

}  // namespace j2k::decoder::own
