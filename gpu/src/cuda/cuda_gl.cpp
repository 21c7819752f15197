// CUDA-GL interop on a pixel-unpack buffer (register once; map, write, unmap per frame).
#include "gpu/cuda_gl.hpp"

#include <cuda_gl_interop.h>

#include "cuda_check.hpp"

namespace j2k::gpu {

struct CudaGlPbo::Impl {
  cudaGraphicsResource_t resource = nullptr;
  int width = 0, height = 0;
  OutputFormat format = OutputFormat::rgba8;
  bool mapped = false;
};

CudaGlPbo::CudaGlPbo(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

CudaGlPbo::~CudaGlPbo() {
  if (!impl_ || !impl_->resource) return;
  if (impl_->mapped) cudaGraphicsUnmapResources(1, &impl_->resource, nullptr);
  cudaGraphicsUnregisterResource(impl_->resource);
}

Result<std::unique_ptr<CudaGlPbo>> CudaGlPbo::register_buffer(unsigned int buffer, int width, int height,
                                                              OutputFormat format) {
  if (!cuda_available()) return make_error(ErrorKind::unsupported, "CUDA: " + cuda_describe());
  if (width <= 0 || height <= 0) return make_error(ErrorKind::corrupt, "PBO of empty size");
  auto impl = std::make_unique<Impl>();
  impl->width = width;
  impl->height = height;
  impl->format = format;
  // Write-discard: CUDA overwrites the whole picture each frame, GL never needs the old one.
  J2K_CUDA_TRY(cudaGraphicsGLRegisterBuffer(&impl->resource, buffer, cudaGraphicsRegisterFlagsWriteDiscard));
  return std::unique_ptr<CudaGlPbo>(new CudaGlPbo(std::move(impl)));
}

Result<DeviceTarget> CudaGlPbo::map(cudaStream_t stream) {
  if (impl_->mapped) return make_error(ErrorKind::corrupt, "PBO is already mapped");
  J2K_CUDA_TRY(cudaGraphicsMapResources(1, &impl_->resource, stream));
  impl_->mapped = true;
  void* ptr = nullptr;
  std::size_t size = 0;
  const cudaError_t e = cudaGraphicsResourceGetMappedPointer(&ptr, &size, impl_->resource);
  DeviceTarget t;
  t.data = ptr;
  t.pitch = static_cast<std::size_t>(impl_->width) * 4;
  t.width = impl_->width;
  t.height = impl_->height;
  t.format = impl_->format;
  if (e != cudaSuccess || size < t.pitch * static_cast<std::size_t>(impl_->height)) {
    cudaGraphicsUnmapResources(1, &impl_->resource, stream);
    impl_->mapped = false;
    J2K_CUDA_TRY(e);
    return make_error(ErrorKind::corrupt, "PBO is smaller than width*height*4 bytes");
  }
  return t;
}

Status CudaGlPbo::unmap(cudaStream_t stream) {
  if (!impl_->mapped) return {};
  impl_->mapped = false;
  J2K_CUDA_TRY(cudaGraphicsUnmapResources(1, &impl_->resource, stream));
  return {};
}

int CudaGlPbo::width() const noexcept { return impl_->width; }
int CudaGlPbo::height() const noexcept { return impl_->height; }
bool CudaGlPbo::mapped() const noexcept { return impl_->mapped; }

}  // namespace j2k::gpu
