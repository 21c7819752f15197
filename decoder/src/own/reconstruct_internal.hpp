#pragma once
// Reconstruction on the decoder's own thread pool (the public reconstruct() makes one).
#include <cstddef>
#include <memory>
#include <new>
#include <vector>

#include "decoder/coefficients.hpp"
#include "thread_pool.hpp"
#include "transform/idwt.hpp"

namespace j2k::decoder::own {

/// A grow-only, 64-byte aligned, uninitialised buffer: reused from frame to frame, so a
/// steady stream of frames neither zero-fills nor faults in fresh pages.
class RawBuffer {
 public:
  void* get(std::size_t bytes) {
    if (bytes > capacity_) {
      ptr_.reset();
      ptr_.reset(static_cast<std::byte*>(::operator new(bytes, std::align_val_t{64})));
      capacity_ = bytes;
    }
    return ptr_.get();
  }
  std::size_t capacity() const noexcept { return capacity_; }

 private:
  struct Free {
    void operator()(std::byte* p) const noexcept { ::operator delete(p, std::align_val_t{64}); }
  };
  std::unique_ptr<std::byte, Free> ptr_;
  std::size_t capacity_ = 0;
};

/// Working buffers kept between frames.
struct ReconstructScratch {
  /// Per tile-component: the last level's output (a) and the one before it (b); levels
  /// alternate between them.
  struct Buffers {
    RawBuffer a, b;
  };
  std::vector<Buffers> buffers;  // tile * components + component
  struct Task {
    std::uint32_t job = 0;
    std::uint8_t kind = 0;
    int level = 0;
    int i0 = 0, i1 = 0;
  };
  std::vector<Task> tasks;
};

/// Reconstructs into `out`, reusing its planes' memory when their sizes match (the planes
/// are then not cleared first: every sample is written).
/// `kernels`: the reconstruction kernel table (dsp.hpp; null: idwt_dsp()).
Status reconstruct_into(const CoefficientFrame& frame, ThreadPool* pool, ReconstructTimes* times,
                        ReconstructScratch* scratch, PlanarImage& out, const IdwtKernels* kernels = nullptr);

Result<PlanarImage> reconstruct_frame(const CoefficientFrame& frame, ThreadPool* pool, ReconstructTimes* times,
                                      ReconstructScratch* scratch = nullptr);

}  // namespace j2k::decoder::own
