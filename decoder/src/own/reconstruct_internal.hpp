#pragma once
// Reconstruction on the decoder's own thread pool (the public reconstruct() makes one).
#include "decoder/coefficients.hpp"
#include "thread_pool.hpp"

namespace j2k::decoder::own {

Result<PlanarImage> reconstruct_frame(const CoefficientFrame& frame, ThreadPool* pool, ReconstructTimes* times);

}  // namespace j2k::decoder::own
