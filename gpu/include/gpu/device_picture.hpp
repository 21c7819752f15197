#pragma once
// Display pictures that stay in device memory: the player's GPU path.
//
//   decode worker:  pool.acquire(w, h) -> CudaDecoder::decode_to_device(picture.target())
//   GUI thread:     CudaGlPresenter::update_texture(picture, texture): glTexSubImage2D from
//                   the picture's memory imported into GL (no map), or through a PBO that
//                   CUDA copies into (map, copy, unmap); then drop the picture (back to the pool)
//
// The pool is bounded: at most `capacity` pictures exist at a time, whoever holds them;
// acquire() fails with ErrorKind::limit (counted) rather than grow, and the caller takes
// the CPU path for that frame. A buffer whose size differs from the next request is freed
// and reallocated, so device memory stays at capacity x the largest picture in use.
//
// Threading: acquire() from any thread; a picture may be handed to and released on another
// thread. A reader on a CUDA stream other than the writer's records itself with
// mark_read(); the pool hands the buffer out again only after that work has finished.
// Every entry point exists without CUDA (the stub reports "unavailable").
#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/result.hpp"
#include "gpu/colour.hpp"
#include "gpu/cuda.hpp"
#include "gpu/device_target.hpp"

namespace j2k::gpu {

struct DevicePoolState;

/// One RGBA picture (4 bytes per pixel) in device memory, owned by a DevicePicturePool.
class DevicePicture {
 public:
  DevicePicture(std::shared_ptr<DevicePoolState> pool, int slot, const DeviceTarget& target);
  ~DevicePicture();  ///< returns the buffer to its pool
  DevicePicture(const DevicePicture&) = delete;
  DevicePicture& operator=(const DevicePicture&) = delete;

  /// The whole frame (row0 = 0, row_step = 1). For a field, copy it and set row0/row_step.
  const DeviceTarget& target() const noexcept { return target_; }
  int width() const noexcept { return target_.width; }
  int height() const noexcept { return target_.height; }

  /// Work enqueued on `stream` so far reads this picture: the buffer is not handed out
  /// again before it completes (an event, no host wait here).
  Status mark_read(cudaStream_t stream) const;

  /// A new file descriptor for the picture's memory, for OpenGL to import
  /// (glImportMemoryFdEXT, which takes ownership), or -1 where the pool could not allocate
  /// exportable memory (it then used cudaMalloc).
  int export_fd() const;
  /// Unique per device allocation (a reallocated buffer gets a new one): key for imports.
  std::uint64_t buffer_id() const noexcept;
  /// Bytes of the allocation behind the picture (>= pitch * height; the import size).
  std::size_t allocation_bytes() const noexcept;

 private:
  std::shared_ptr<DevicePoolState> pool_;
  [[maybe_unused]] int slot_;  // (unused by the no-CUDA stub, which clang warns of)
  DeviceTarget target_;
};

struct DevicePoolStats {
  int capacity = 0;
  int allocated = 0;              ///< buffers that exist now (<= capacity)
  int in_use = 0;                 ///< pictures held by someone now
  std::uint64_t acquired = 0;
  std::uint64_t exhausted = 0;    ///< acquire() refused: every buffer was held
  std::size_t device_bytes = 0;   ///< device memory held by the pool now
};

class DevicePicturePool {
 public:
  /// Fails with ErrorKind::unsupported when CUDA is unusable (or this build has none).
  /// `exportable`: allocate memory that OpenGL can import (CUDA VMM with a POSIX file
  /// descriptor handle), falling back to cudaMalloc where the driver cannot.
  static Result<std::shared_ptr<DevicePicturePool>> create(int capacity, int device = 0, bool exportable = true);
  ~DevicePicturePool();
  DevicePicturePool(const DevicePicturePool&) = delete;
  DevicePicturePool& operator=(const DevicePicturePool&) = delete;

  /// A free width x height picture. ErrorKind::limit when all `capacity` pictures are
  /// held (nothing is allocated then); ErrorKind::io on a CUDA failure.
  Result<std::shared_ptr<DevicePicture>> acquire(int width, int height, OutputFormat format = OutputFormat::rgba8);
  DevicePoolStats stats() const;

 private:
  explicit DevicePicturePool(std::shared_ptr<DevicePoolState> state);
  std::shared_ptr<DevicePoolState> state_;
};

/// Copies a device picture into host memory (the CPU fallback of the display side).
Status download(const DevicePicture& picture, RgbaImage& out);

}  // namespace j2k::gpu
