#pragma once
// The decoder's parallel loops run on core's WorkPool: either the decoder's own (DecodeOptions
// without a pool: `threads` slots, made once per decoder) or one shared by every decoder of a
// process (DecodeOptions::pool: the receive pipeline's single scheduler for frame-level and
// in-frame parallelism). Dynamic scheduling either way: threads take indices from a shared
// counter, so the big code-blocks that a caller puts first spread over all threads and the
// small ones fill the gaps.
#include "core/work_pool.hpp"

namespace j2k::decoder::own {

using ThreadPool = ::j2k::WorkPool;

}  // namespace j2k::decoder::own
