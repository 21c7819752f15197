#pragma once
// CUDA-OpenGL hand-off: a GL pixel-unpack buffer registered with CUDA once; per frame
// map -> a kernel writes RGBA -> unmap, then GL uploads the PBO into a texture
// (glTexSubImage2D with a null pointer while the PBO is bound).
//
// Threading: construct, map and unmap on a thread where the GL context that owns the
// buffer is current (the GUI/render thread), or share the context. GL must not touch
// the buffer while it is mapped.
#include <cstddef>
#include <functional>
#include <memory>

#include "core/result.hpp"
#include "gpu/cuda.hpp"
#include "gpu/device_target.hpp"

namespace j2k::gpu {

class DevicePicture;

class CudaGlPbo {
 public:
  /// Registers GL buffer object `buffer` (already sized with glBufferData to at least
  /// pitch*height bytes) holding a width x height picture in `format`.
  static Result<std::unique_ptr<CudaGlPbo>> register_buffer(unsigned int buffer, int width, int height,
                                                            OutputFormat format = OutputFormat::rgba8);
  ~CudaGlPbo();  ///< unregisters (the GL buffer itself stays the caller's)
  CudaGlPbo(const CudaGlPbo&) = delete;
  CudaGlPbo& operator=(const CudaGlPbo&) = delete;

  /// Maps the buffer for CUDA on `stream`; the target is valid until unmap().
  Result<DeviceTarget> map(cudaStream_t stream);
  /// Unmaps on `stream`: GL commands issued after this see the kernel's writes.
  Status unmap(cudaStream_t stream);

  int width() const noexcept;
  int height() const noexcept;
  bool mapped() const noexcept;

  struct Impl;

 private:
  explicit CudaGlPbo(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// The GL side of the player's device display path: a decoded picture already in device
/// memory (DevicePicture) goes into a GL pixel-unpack buffer with no trip through host
/// memory. The buffer is registered with CUDA once per buffer and size; per frame:
/// map -> cudaMemcpy2DAsync device->PBO -> unmap, on the presenter's own stream. The
/// picture is marked read on that stream, so its pool reuses it only after the copy.
///
/// Threading: create, copy and release on the thread where the GL context owning the
/// buffer is current (the GUI thread); decode workers only produce DevicePictures.
class CudaGlPresenter {
 public:
  /// Looks up a GL function of the current context (eglGetProcAddress,
  /// QOpenGLContext::getProcAddress, ...): gpu/ does not link OpenGL itself.
  using GlLoader = std::function<void*(const char*)>;
  /// How update_texture() got the last picture into the texture.
  enum class Path { none, external_memory, mapped_pbo };

  /// Fails with ErrorKind::unsupported without CUDA. Without a loader only the
  /// lower-level copy() works. `external_memory` false: never import the
  /// pictures' memory into GL (always the mapped PBO).
  static Result<std::unique_ptr<CudaGlPresenter>> create(int device = 0, GlLoader gl = {}, bool external_memory = true);

  /// The player's hand-off (GL context current): fills `texture` (GL_TEXTURE_2D, internal
  /// format GL_RGBA8, the picture's size, allocated by the caller) from the device picture
  /// without a trip through host memory:
  ///  - external memory: the picture's memory is imported into GL once per buffer
  ///    (EXT_memory_object_fd) and the texture is updated from it with glTexSubImage2D:
  ///    no CUDA call and no map per frame. The presenter keeps the picture until a GL fence
  ///    says the upload has read it, then drops it (back to its pool).
  ///  - mapped PBO, where GL cannot import it: a PBO of its own, registered with CUDA once
  ///    per size; map, device->PBO copy, unmap, glTexSubImage2D from the PBO.
  Status update_texture(std::shared_ptr<const DevicePicture> picture, unsigned int texture);
  Path last_path() const noexcept;
  /// Drops the pictures GL has finished reading (update_texture does this too).
  void poll();
  ~CudaGlPresenter();  ///< unregisters; the GL buffer stays the caller's
  CudaGlPresenter(const CudaGlPresenter&) = delete;
  CudaGlPresenter& operator=(const CudaGlPresenter&) = delete;

  /// `gl_buffer` must hold at least width*height*4 bytes (glBufferData before the first
  /// copy of a size). Registers it if it is not registered for this size, then map,
  /// copy, unmap; GL commands issued after this returns see the picture.
  Status copy(const DevicePicture& picture, unsigned int gl_buffer);
  /// Forgets the registrations: call before re-specifying (glBufferData, glTexImage2D) or
  /// deleting the buffer or texture.
  void release();
  /// The stream the copies run on (to time them with events).
  cudaStream_t stream() const noexcept;

  struct Impl;

 private:
  explicit CudaGlPresenter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace j2k::gpu
