// CUDA-GL interop on a pixel-unpack buffer (register once; map, write, unmap per frame).
#include "gpu/cuda_gl.hpp"

#include <cuda_gl_interop.h>

#include "cuda_check.hpp"
#include "gpu/device_picture.hpp"

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

struct CudaGlPresenter::Impl {
  int device = 0;
  cudaStream_t stream = nullptr;
  std::unique_ptr<CudaGlPbo> pbo;
  unsigned int buffer = 0;
  cudaGraphicsResource_t texture_resource = nullptr;
  unsigned int texture = 0;
  int texture_w = 0, texture_h = 0;

  void release_texture() {
    if (texture_resource) cudaGraphicsUnregisterResource(texture_resource);
    texture_resource = nullptr;
    texture = 0;
  }
};

CudaGlPresenter::CudaGlPresenter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

CudaGlPresenter::~CudaGlPresenter() {
  if (!impl_) return;
  impl_->pbo.reset();
  impl_->release_texture();
  if (impl_->stream) {
    cudaStreamSynchronize(impl_->stream);
    cudaStreamDestroy(impl_->stream);
  }
}

Result<std::unique_ptr<CudaGlPresenter>> CudaGlPresenter::create(int device) {
  if (!cuda_available()) return make_error(ErrorKind::unsupported, "CUDA: " + cuda_describe());
  auto impl = std::make_unique<Impl>();
  impl->device = device;
  J2K_CUDA_TRY(cudaSetDevice(device));
  J2K_CUDA_TRY(cudaStreamCreateWithFlags(&impl->stream, cudaStreamNonBlocking));
  return std::unique_ptr<CudaGlPresenter>(new CudaGlPresenter(std::move(impl)));
}

Status CudaGlPresenter::copy(const DevicePicture& picture, unsigned int gl_buffer) {
  Impl& m = *impl_;
  const DeviceTarget& src = picture.target();
  J2K_CUDA_TRY(cudaSetDevice(m.device));
  if (!m.pbo || m.buffer != gl_buffer || m.pbo->width() != src.width || m.pbo->height() != src.height) {
    m.pbo.reset();  // unregister the old buffer or size first
    auto reg = CudaGlPbo::register_buffer(gl_buffer, src.width, src.height, src.format);
    if (!reg) return reg.error();
    m.pbo = std::move(reg).value();
    m.buffer = gl_buffer;
  }
  auto dst = m.pbo->map(m.stream);
  if (!dst) return dst.error();
  const cudaError_t e = cudaMemcpy2DAsync(dst->data, dst->pitch, src.data, src.pitch,
                                          static_cast<std::size_t>(src.width) * 4, static_cast<std::size_t>(src.height),
                                          cudaMemcpyDeviceToDevice, m.stream);
  Status marked = e == cudaSuccess ? picture.mark_read(m.stream) : Status{};
  Status unmapped = m.pbo->unmap(m.stream);  // also after a failed copy: GL must get its buffer back
  J2K_CUDA_TRY(e);
  if (!marked) return marked.error();
  return unmapped;
}

Status CudaGlPresenter::copy_to_texture(const DevicePicture& picture, unsigned int gl_texture) {
  Impl& m = *impl_;
  const DeviceTarget& src = picture.target();
  if (src.format != OutputFormat::rgba8) return make_error(ErrorKind::unsupported, "texture hand-off is RGBA8 only");
  J2K_CUDA_TRY(cudaSetDevice(m.device));
  if (!m.texture_resource || m.texture != gl_texture || m.texture_w != src.width || m.texture_h != src.height) {
    m.release_texture();
    constexpr unsigned int kTexture2d = 0x0DE1;  // GL_TEXTURE_2D
    J2K_CUDA_TRY(cudaGraphicsGLRegisterImage(&m.texture_resource, gl_texture, kTexture2d,
                                             cudaGraphicsRegisterFlagsWriteDiscard));
    m.texture = gl_texture;
    m.texture_w = src.width;
    m.texture_h = src.height;
  }
  J2K_CUDA_TRY(cudaGraphicsMapResources(1, &m.texture_resource, m.stream));
  cudaArray_t array = nullptr;
  cudaError_t e = cudaGraphicsSubResourceGetMappedArray(&array, m.texture_resource, 0, 0);
  if (e == cudaSuccess)
    e = cudaMemcpy2DToArrayAsync(array, 0, 0, src.data, src.pitch, static_cast<std::size_t>(src.width) * 4,
                                 static_cast<std::size_t>(src.height), cudaMemcpyDeviceToDevice, m.stream);
  Status marked = e == cudaSuccess ? picture.mark_read(m.stream) : Status{};
  const cudaError_t u = cudaGraphicsUnmapResources(1, &m.texture_resource, m.stream);
  J2K_CUDA_TRY(e);
  J2K_CUDA_TRY(u);
  return marked;
}

void CudaGlPresenter::release() {
  if (!impl_) return;
  impl_->pbo.reset();
  impl_->release_texture();
}

cudaStream_t CudaGlPresenter::stream() const noexcept { return impl_->stream; }

}  // namespace j2k::gpu
