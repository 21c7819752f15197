// CUDA-GL interop on a pixel-unpack buffer (register once; map, write, unmap per frame).
#include "gpu/cuda_gl.hpp"

#include <cuda_gl_interop.h>

#include <cstring>
#include <deque>
#include <vector>

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

namespace {

// The GL entry points the presenter needs, looked up through the caller's loader.
struct GlFunctions {
  using GenBuffers = void (*)(int, unsigned*);
  using DeleteBuffers = void (*)(int, const unsigned*);
  using BindBuffer = void (*)(unsigned, unsigned);
  using BufferData = void (*)(unsigned, std::ptrdiff_t, const void*, unsigned);
  using BindTexture = void (*)(unsigned, unsigned);
  using PixelStorei = void (*)(unsigned, int);
  using TexSubImage2D = void (*)(unsigned, int, int, int, int, int, unsigned, unsigned, const void*);
  using GetError = unsigned (*)();
  using GetIntegerv = void (*)(unsigned, int*);
  using GetStringi = const unsigned char* (*)(unsigned, unsigned);
  using FenceSync = void* (*)(unsigned, unsigned);
  using ClientWaitSync = unsigned (*)(void*, unsigned, std::uint64_t);
  using DeleteSync = void (*)(void*);
  using CreateMemoryObjects = void (*)(int, unsigned*);
  using DeleteMemoryObjects = void (*)(int, const unsigned*);
  using ImportMemoryFd = void (*)(unsigned, std::uint64_t, unsigned, int);
  using CreateBuffers = void (*)(int, unsigned*);
  using NamedBufferStorageMem = void (*)(unsigned, std::ptrdiff_t, unsigned, std::uint64_t);

  GenBuffers gen_buffers = nullptr;
  DeleteBuffers delete_buffers = nullptr;
  BindBuffer bind_buffer = nullptr;
  BufferData buffer_data = nullptr;
  BindTexture bind_texture = nullptr;
  PixelStorei pixel_store = nullptr;
  TexSubImage2D tex_sub_image = nullptr;
  GetError get_error = nullptr;
  GetIntegerv get_integer = nullptr;
  GetStringi get_string_i = nullptr;
  FenceSync fence_sync = nullptr;
  ClientWaitSync client_wait = nullptr;
  DeleteSync delete_sync = nullptr;
  CreateMemoryObjects create_memory = nullptr;
  DeleteMemoryObjects delete_memory = nullptr;
  ImportMemoryFd import_fd = nullptr;
  CreateBuffers create_buffers = nullptr;
  NamedBufferStorageMem buffer_storage_mem = nullptr;

  template <class F>
  static void load(const CudaGlPresenter::GlLoader& loader, const char* name, F& f) {
    f = reinterpret_cast<F>(loader(name));
  }
  /// The basic functions (mapped-PBO path) are there.
  bool load_all(const CudaGlPresenter::GlLoader& l) {
    load(l, "glGenBuffers", gen_buffers);
    load(l, "glDeleteBuffers", delete_buffers);
    load(l, "glBindBuffer", bind_buffer);
    load(l, "glBufferData", buffer_data);
    load(l, "glBindTexture", bind_texture);
    load(l, "glPixelStorei", pixel_store);
    load(l, "glTexSubImage2D", tex_sub_image);
    load(l, "glGetError", get_error);
    load(l, "glGetIntegerv", get_integer);
    load(l, "glGetStringi", get_string_i);
    load(l, "glFenceSync", fence_sync);
    load(l, "glClientWaitSync", client_wait);
    load(l, "glDeleteSync", delete_sync);
    load(l, "glCreateMemoryObjectsEXT", create_memory);
    load(l, "glDeleteMemoryObjectsEXT", delete_memory);
    load(l, "glImportMemoryFdEXT", import_fd);
    load(l, "glCreateBuffers", create_buffers);
    load(l, "glNamedBufferStorageMemEXT", buffer_storage_mem);
    return gen_buffers && delete_buffers && bind_buffer && buffer_data && bind_texture && pixel_store &&
           tex_sub_image && get_error;
  }
  /// GL_EXT_memory_object_fd and fences are there.
  bool has_external_memory() const {
    if (!get_integer || !get_string_i || !fence_sync || !client_wait || !delete_sync || !create_memory ||
        !delete_memory || !import_fd || !create_buffers || !buffer_storage_mem)
      return false;
    int n = 0;
    get_integer(0x821D /* GL_NUM_EXTENSIONS */, &n);
    for (int i = 0; i < n; ++i) {
      const auto* e = reinterpret_cast<const char*>(get_string_i(0x1F03 /* GL_EXTENSIONS */, static_cast<unsigned>(i)));
      if (e && std::strcmp(e, "GL_EXT_memory_object_fd") == 0) return true;
    }
    return false;
  }
};

constexpr unsigned kTexture2d = 0x0DE1, kRgba = 0x1908, kUnsignedByte = 0x1401, kPixelUnpack = 0x88EC,
                   kStreamDraw = 0x88E0, kUnpackAlignment = 0x0CF5, kUnpackRowLength = 0x0CF2,
                   kSyncGpuCommandsComplete = 0x9117, kAlreadySignaled = 0x911A, kConditionSatisfied = 0x911C,
                   kSyncFlushCommands = 0x1, kHandleTypeOpaqueFd = 0x9586;

}  // namespace

struct CudaGlPresenter::Impl {
  int device = 0;
  cudaStream_t stream = nullptr;
  std::unique_ptr<CudaGlPbo> pbo;
  unsigned int buffer = 0;

  // The player's hand-off (update_texture).
  GlLoader loader;
  GlFunctions gl;
  bool gl_ok = false;
  bool external = false;  // GL can import the pictures' memory (and it has not failed)
  struct Import {
    std::uint64_t id;
    unsigned memory, buffer;
  };
  std::vector<Import> imports;  // most recently added last
  struct Retiring {
    void* fence;
    std::shared_ptr<const DevicePicture> picture;
  };
  std::deque<Retiring> retiring;  // pictures GL may still be reading
  unsigned own_pbo = 0;
  std::size_t own_pbo_bytes = 0;
  Path last = Path::none;

  void drop_import(const Import& i) {
    gl.delete_buffers(1, &i.buffer);
    gl.delete_memory(1, &i.memory);
  }
  /// Releases pictures whose upload GL has finished; with `wait`, waits for all.
  void retire(bool wait) {
    while (!retiring.empty()) {
      const unsigned r = gl.client_wait(retiring.front().fence, kSyncFlushCommands, wait ? 1'000'000'000ull : 0);
      if (r != kAlreadySignaled && r != kConditionSatisfied && !wait) break;  // still reading
      gl.delete_sync(retiring.front().fence);
      retiring.pop_front();
    }
  }
  /// The picture's memory as a GL buffer, imported once per allocation; 0 if GL cannot.
  unsigned imported_buffer(const DevicePicture& picture) {
    const std::uint64_t id = picture.buffer_id();
    for (const Import& i : imports)
      if (i.id == id) return i.buffer;
    const int fd = picture.export_fd();
    if (fd < 0) return 0;  // cudaMalloc'd pool: no import possible
    while (gl.get_error() != 0) {}
    Import i{id, 0, 0};
    gl.create_memory(1, &i.memory);
    gl.import_fd(i.memory, picture.allocation_bytes(), kHandleTypeOpaqueFd, fd);  // GL owns the fd now
    gl.create_buffers(1, &i.buffer);
    gl.buffer_storage_mem(i.buffer, static_cast<std::ptrdiff_t>(picture.allocation_bytes()), i.memory, 0);
    if (gl.get_error() != 0) {
      drop_import(i);
      external = false;  // this GL cannot use CUDA's memory: the mapped PBO from now on
      return 0;
    }
    // Bounded: the pool reuses a handful of buffers; old sizes' imports go.
    if (imports.size() >= 32) {
      drop_import(imports.front());
      imports.erase(imports.begin());
    }
    imports.push_back(i);
    return i.buffer;
  }
  void upload_from_bound_buffer(unsigned target_texture, int w, int h) {
    gl.bind_texture(kTexture2d, target_texture);
    gl.pixel_store(kUnpackAlignment, 4);
    gl.pixel_store(kUnpackRowLength, 0);
    gl.tex_sub_image(kTexture2d, 0, 0, 0, w, h, kRgba, kUnsignedByte, nullptr);
    gl.bind_buffer(kPixelUnpack, 0);
  }

};

CudaGlPresenter::CudaGlPresenter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

CudaGlPresenter::~CudaGlPresenter() {
  if (!impl_) return;
  impl_->pbo.reset();
  if (impl_->gl_ok) {  // the GL context is current (see the header)
    if (impl_->gl.client_wait) impl_->retire(true);
    for (const auto& i : impl_->imports) impl_->drop_import(i);
    if (impl_->own_pbo) impl_->gl.delete_buffers(1, &impl_->own_pbo);
  }
  if (impl_->stream) {
    cudaStreamSynchronize(impl_->stream);
    cudaStreamDestroy(impl_->stream);
  }
}

Result<std::unique_ptr<CudaGlPresenter>> CudaGlPresenter::create(int device, GlLoader gl, bool external_memory) {
  if (!cuda_available()) return make_error(ErrorKind::unsupported, "CUDA: " + cuda_describe());
  auto impl = std::make_unique<Impl>();
  impl->device = device;
  if (gl) {
    impl->loader = std::move(gl);
    impl->gl_ok = impl->gl.load_all(impl->loader);
    if (!impl->gl_ok) return make_error(ErrorKind::unsupported, "GL: buffer/texture functions missing");
    impl->external = external_memory && impl->gl.has_external_memory();
  }
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

Status CudaGlPresenter::update_texture(std::shared_ptr<const DevicePicture> picture, unsigned int texture) {
  Impl& m = *impl_;
  if (!m.gl_ok) return make_error(ErrorKind::unsupported, "CudaGlPresenter made without a GL loader");
  if (!picture) return make_error(ErrorKind::corrupt, "no picture");
  const int w = picture->width(), h = picture->height();
  if (!m.retiring.empty()) m.retire(false);
  if (m.external) {
    // Bounded: GL rarely lags more than a frame or two; wait for the oldest beyond that.
    while (m.retiring.size() > 3) {
      m.gl.client_wait(m.retiring.front().fence, kSyncFlushCommands, 100'000'000ull);
      m.gl.delete_sync(m.retiring.front().fence);
      m.retiring.pop_front();
    }
    if (const unsigned buffer = m.imported_buffer(*picture)) {
      // The decoder finished writing before the picture was handed over (its stream was
      // synchronised): GL reads the memory directly. No CUDA call, no map.
      m.gl.bind_buffer(kPixelUnpack, buffer);
      m.upload_from_bound_buffer(texture, w, h);
      if (const unsigned e = m.gl.get_error(); e != 0)
        return make_error(ErrorKind::io, fmt::format("GL error 0x{:x} updating the texture from CUDA memory", e));
      m.retiring.push_back({m.gl.fence_sync(kSyncGpuCommandsComplete, 0), std::move(picture)});
      m.last = Path::external_memory;
      return {};
    }
  }
  // Mapped PBO: a buffer of our own, registered with CUDA once per size.
  const std::size_t bytes = static_cast<std::size_t>(w) * 4 * static_cast<std::size_t>(h);
  if (!m.own_pbo) m.gl.gen_buffers(1, &m.own_pbo);
  if (m.own_pbo_bytes != bytes) {
    m.pbo.reset();  // unregister before the buffer is re-specified
    m.gl.bind_buffer(kPixelUnpack, m.own_pbo);
    m.gl.buffer_data(kPixelUnpack, static_cast<std::ptrdiff_t>(bytes), nullptr, kStreamDraw);
    m.gl.bind_buffer(kPixelUnpack, 0);
    m.own_pbo_bytes = bytes;
  }
  if (Status st = copy(*picture, m.own_pbo); !st) return st;
  m.gl.bind_buffer(kPixelUnpack, m.own_pbo);
  m.upload_from_bound_buffer(texture, w, h);
  if (const unsigned e = m.gl.get_error(); e != 0)
    return make_error(ErrorKind::io, fmt::format("GL error 0x{:x} updating the texture from the PBO", e));
  m.last = Path::mapped_pbo;
  return {};  // the picture may go: its pool waits for the copy's event before reusing it
}

CudaGlPresenter::Path CudaGlPresenter::last_path() const noexcept { return impl_->last; }

void CudaGlPresenter::poll() {
  if (impl_->gl_ok && !impl_->retiring.empty()) impl_->retire(false);
}

void CudaGlPresenter::release() {
  if (!impl_) return;
  impl_->pbo.reset();
}

cudaStream_t CudaGlPresenter::stream() const noexcept { return impl_->stream; }

}  // namespace j2k::gpu
