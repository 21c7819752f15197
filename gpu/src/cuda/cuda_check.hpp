#pragma once
// Checks for CUDA runtime calls: a failure becomes an Error value (ErrorKind::io) naming
// the call, file and line. Never exits: the caller decides (usually: fall back to CPU).
#include <cuda_runtime.h>
#include <fmt/format.h>

#include "core/result.hpp"

namespace j2k::gpu::cuda {

/// The error of a failed call, as a value. The runtime also keeps the failure as the
/// thread's "last error", where the next launch check (cudaGetLastError after a kernel)
/// would read it as its own: a cudaMalloc that ran out of memory then failed the next frame's
/// kernels too, long after the memory was free again. Taken back here (sticky errors, which
/// break the context for good, stay).
inline Error cuda_error(cudaError_t e, const char* what, const char* file, int line) {
  (void)cudaGetLastError();
  return make_error(ErrorKind::io, fmt::format("CUDA: {} failed: {} ({}) at {}:{}", what, cudaGetErrorString(e),
                                               cudaGetErrorName(e), file, line));
}

}  // namespace j2k::gpu::cuda

/// Evaluates a cudaError_t expression; on failure returns an Error from the enclosing
/// function (whose return type is Status or Result<T>).
#define J2K_CUDA_TRY(expr)                                                          \
  do {                                                                              \
    const cudaError_t j2k_cuda_e_ = (expr);                                         \
    if (j2k_cuda_e_ != cudaSuccess)                                                 \
      return ::j2k::gpu::cuda::cuda_error(j2k_cuda_e_, #expr, __FILE__, __LINE__);  \
  } while (0)
