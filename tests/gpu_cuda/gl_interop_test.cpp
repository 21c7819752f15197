// CUDA-OpenGL hand-off on a headless EGL context: a PBO registered once, the decoder's
// kernels write RGBA into it, GL reads it back, and it must equal the CPU path's picture.
// Skips visibly without a CUDA device or without an EGL device platform.
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GL/gl.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <utility>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <vector>

#include "decoder/coefficients.hpp"
#include "decoder/own_decoder.hpp"
#include "gpu/colour.hpp"
#include "gpu/cuda.hpp"
#include "gpu/cuda_decoder.hpp"
#include "gpu/cuda_gl.hpp"
#include "gpu/cuda_reconstructor.hpp"
#include "gpu/device_picture.hpp"
#include "gpu_test_util.hpp"

using namespace j2k;

namespace {

constexpr unsigned kPixelUnpack = 0x88EC;  // GL_PIXEL_UNPACK_BUFFER
constexpr unsigned kStreamDraw = 0x88E0;   // GL_STREAM_DRAW
constexpr unsigned kTimeElapsed = 0x88BF;  // GL_TIME_ELAPSED
constexpr unsigned kQueryResult = 0x8866;  // GL_QUERY_RESULT

using GenBuffers = void (*)(GLsizei, GLuint*);
using BindBuffer = void (*)(GLenum, GLuint);
using BufferData = void (*)(GLenum, std::ptrdiff_t, const void*, GLenum);
using GetBufferSubData = void (*)(GLenum, std::ptrdiff_t, std::ptrdiff_t, void*);
using DeleteBuffers = void (*)(GLsizei, const GLuint*);
using GenQueries = void (*)(GLsizei, GLuint*);
using BeginQuery = void (*)(GLenum, GLuint);
using EndQuery = void (*)(GLenum);
using GetQueryObjectui64v = void (*)(GLuint, GLenum, std::uint64_t*);
using DeleteQueries = void (*)(GLsizei, const GLuint*);
using BufferStorage = void (*)(GLenum, std::ptrdiff_t, const void*, GLbitfield);
constexpr unsigned kDynamicCopy = 0x88EA;  // GL_DYNAMIC_COPY

/// A surfaceless OpenGL context on the first EGL device (no display server).
struct HeadlessGl {
  EGLDisplay display = EGL_NO_DISPLAY;
  EGLContext context = EGL_NO_CONTEXT;
  std::string why;
  GenBuffers gen = nullptr;
  BindBuffer bind = nullptr;
  BufferData data = nullptr;
  GetBufferSubData get = nullptr;
  DeleteBuffers del = nullptr;
  GenQueries gen_queries = nullptr;
  BeginQuery begin_query = nullptr;
  EndQuery end_query = nullptr;
  GetQueryObjectui64v query_result = nullptr;
  DeleteQueries del_queries = nullptr;
  BufferStorage buffer_storage = nullptr;  // GL 4.4; optional

  bool open() {
    auto query = reinterpret_cast<PFNEGLQUERYDEVICESEXTPROC>(eglGetProcAddress("eglQueryDevicesEXT"));
    auto platform = reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(eglGetProcAddress("eglGetPlatformDisplayEXT"));
    if (!query || !platform) return fail("no EGL_EXT_device_enumeration / platform_device");
    EGLDeviceEXT devices[8];
    EGLint n = 0;
    if (!query(8, devices, &n) || n == 0) return fail("no EGL device");
    display = platform(EGL_PLATFORM_DEVICE_EXT, devices[0], nullptr);
    EGLint major = 0, minor = 0;
    if (display == EGL_NO_DISPLAY || !eglInitialize(display, &major, &minor)) return fail("eglInitialize failed");
    const EGLint config_attrs[] = {EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_NONE};
    EGLConfig config;
    EGLint nc = 0;
    if (!eglChooseConfig(display, config_attrs, &config, 1, &nc) || nc == 0) return fail("no EGL config");
    if (!eglBindAPI(EGL_OPENGL_API)) return fail("eglBindAPI(OpenGL) failed");
    context = eglCreateContext(display, config, EGL_NO_CONTEXT, nullptr);
    if (context == EGL_NO_CONTEXT) return fail("eglCreateContext failed");
    if (!eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, context)) return fail("eglMakeCurrent failed");
    if (!(load(gen, "glGenBuffers") && load(bind, "glBindBuffer") && load(data, "glBufferData") &&
          load(get, "glGetBufferSubData") && load(del, "glDeleteBuffers")))
      return fail("GL buffer functions missing");
    if (!(load(gen_queries, "glGenQueries") && load(begin_query, "glBeginQuery") && load(end_query, "glEndQuery") &&
          load(query_result, "glGetQueryObjectui64v") && load(del_queries, "glDeleteQueries")))
      return fail("GL query functions missing");
    load(buffer_storage, "glBufferStorage");
    std::printf("[ info ] EGL %d.%d, GL %s on %s\n", major, minor, reinterpret_cast<const char*>(glGetString(GL_VERSION)),
                reinterpret_cast<const char*>(glGetString(GL_RENDERER)));
    return true;
  }
  bool fail(const char* w) {
    why = w;
    return false;
  }
  /// The GL entry point `name` into `f`; false when the context lacks it.
  template <class F>
  static bool load(F& f, const char* name) {
    f = reinterpret_cast<F>(eglGetProcAddress(name));
    return f != nullptr;
  }
  ~HeadlessGl() {
    if (display != EGL_NO_DISPLAY) {
      eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
      if (context != EGL_NO_CONTEXT) eglDestroyContext(display, context);
      eglTerminate(display);
    }
  }
};

using test::read_corpus;

/// The tests below need a CUDA device and a headless OpenGL context; they skip without.
/// The context lives as long as the test (created before its body, destroyed after).
class CudaGl : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gpu::cuda_available()) GTEST_SKIP() << "SKIPPED: no CUDA device (" << gpu::cuda_describe() << ")";
    if (!gl.open()) GTEST_SKIP() << "SKIPPED: no headless OpenGL: " << gl.why;
  }

  /// The corpus's 1080 photograph as coefficients (8 threads) into `photo`, for the timing
  /// tests. Skips the test without the corpus; call it inside ASSERT_NO_FATAL_FAILURE, then
  /// return if IsSkipped().
  void load_photo_1080() {
    const auto bytes = read_corpus({"bench/photo_1080_422_10_97.j2k", "1919x1081_422_10_97.j2k"});
    if (bytes.empty()) GTEST_SKIP() << "SKIPPED: no corpus file";
    auto frame = decoder::decode_coefficients(bytes, {.threads = 8});
    ASSERT_TRUE(frame.ok());
    photo = std::move(frame).value();
  }

  HeadlessGl gl;  ///< the context and the GL entry points the tests call
  std::optional<decoder::CoefficientFrame> photo;
};

}  // namespace

namespace {

/// A PBO of w*h*4 bytes and an RGBA8 texture of w x h, as the player has them.
struct PlayerGlObjects {
  HeadlessGl& gl;
  GLuint pbo = 0, texture = 0;
  int w, h;
  /// usage: GL_STREAM_DRAW etc. for glBufferData; 0: immutable glBufferStorage, no client access.
  PlayerGlObjects(HeadlessGl& g, int width, int height, unsigned usage = kStreamDraw) : gl(g), w(width), h(height) {
    gl.gen(1, &pbo);
    gl.bind(kPixelUnpack, pbo);
    if (usage == 0 && gl.buffer_storage) gl.buffer_storage(kPixelUnpack, static_cast<std::ptrdiff_t>(w) * h * 4, nullptr, 0);
    else gl.data(kPixelUnpack, static_cast<std::ptrdiff_t>(w) * h * 4, nullptr, usage ? usage : kStreamDraw);
    gl.bind(kPixelUnpack, 0);
    glGenTextures(1, &texture);
    glBindTexture(GL_TEXTURE_2D, texture);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, w, h, 0, GL_RGBA, GL_UNSIGNED_BYTE, nullptr);
  }
  ~PlayerGlObjects() {
    glDeleteTextures(1, &texture);
    gl.del(1, &pbo);
  }
  /// What PlayerWidget does after the CUDA copy: the texture from the PBO.
  void texture_from_pbo() {
    gl.bind(kPixelUnpack, pbo);
    glBindTexture(GL_TEXTURE_2D, texture);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
    glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, nullptr);
    gl.bind(kPixelUnpack, 0);
  }
  std::vector<std::uint8_t> read_texture() {
    std::vector<std::uint8_t> px(static_cast<std::size_t>(w) * h * 4);
    glBindTexture(GL_TEXTURE_2D, texture);
    glPixelStorei(GL_PACK_ALIGNMENT, 4);
    glGetTexImage(GL_TEXTURE_2D, 0, GL_RGBA, GL_UNSIGNED_BYTE, px.data());
    return px;
  }
};

/// The decode side of the timing loops: each frame decoded into a pooled device picture,
/// either before its hand-off (sequential) or while the previous picture is handed off
/// (overlapped with the next decode, as in the player).
class DecodeSide {
 public:
  DecodeSide(gpu::CudaReconstructor& rec, gpu::DevicePicturePool& pool, const decoder::CoefficientFrame& frame, bool overlapped)
      : rec_(rec), pool_(pool), frame_(frame), overlapped_(overlapped) {}

  std::shared_ptr<gpu::DevicePicture> shown;  ///< the picture to hand off
  gpu::GpuTimes times;                        ///< of the decode finished last

  /// Decodes the next frame (sequential) or starts it (overlapped). `ready` is false when
  /// there is nothing to hand off yet (the first overlapped frame, then decoded at once).
  /// Call it inside ASSERT_NO_FATAL_FAILURE.
  void start(bool& ready) {
    ready = true;
    times = {};
    auto pic = pool_.acquire(frame_.image.width(), frame_.image.height());
    ASSERT_TRUE(pic.ok()) << pic.error().message;
    const gpu::DeviceTarget target = (*pic)->target();  // read by submit(): the colour kernel's output
    gpu::ReconstructRequest req;
    req.planar = false;
    req.target = &target;
    if (!overlapped_) {
      auto r = rec_.reconstruct(frame_, req, &times);
      ASSERT_TRUE(r.ok()) << r.error().message;
      shown = std::move(pic).value();
      return;
    }
    auto tk = rec_.submit(frame_, req);
    ASSERT_TRUE(tk.ok()) << tk.error().message;
    ticket_ = *tk;
    pending_ = std::move(pic).value();
    if (!shown) {
      ready = false;
      ASSERT_NO_FATAL_FAILURE(finish());
    }
  }
  /// Overlapped: waits for the decode started last, whose picture is handed off next (the one
  /// shown before goes back to the pool).
  void finish() {
    if (!overlapped_) return;
    ASSERT_TRUE(rec_.collect(ticket_, &times).ok());
    shown = std::move(pending_);
  }

 private:
  gpu::CudaReconstructor& rec_;
  gpu::DevicePicturePool& pool_;
  const decoder::CoefficientFrame& frame_;
  const bool overlapped_;
  int ticket_ = -1;
  std::shared_ptr<gpu::DevicePicture> pending_;
};

int worst_diff(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b) {
  if (a.size() != b.size()) return 256;
  int worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(int(a[i]) - int(b[i])));
  return worst;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

// The player's GPU path: a decode worker decodes into a pooled device picture, the GUI
// thread copies it into its CUDA-registered PBO (map, device->PBO copy, unmap) and updates
// the texture from the PBO. Read back from the texture, it equals the CPU picture; also
// for two field pictures woven into one frame.
TEST_F(CudaGl, DevicePictureThroughThePboEqualsTheCpuPicture) {
  const auto bytes = read_corpus({"1919x1081_422_10_97.j2k"});
  if (bytes.empty()) GTEST_SKIP() << "SKIPPED: no corpus file";
  decoder::DecodeOptions opt;
  opt.threads = 8;
  auto cpu = decoder::make_own_decoder()->decode(bytes, opt);
  ASSERT_TRUE(cpu.ok());
  gpu::RgbaImage want;
  ASSERT_TRUE(gpu::to_rgba8(*cpu, {}, want));
  const int w = cpu->width, h = cpu->height;

  auto pool = gpu::DevicePicturePool::create(2);
  ASSERT_TRUE(pool.ok()) << pool.error().message;
  auto dec = gpu::make_cuda_decoder_typed({gpu::GpuMode::on});
  ASSERT_TRUE(dec.ok()) << dec.error().message;
  auto presenter = gpu::CudaGlPresenter::create();
  ASSERT_TRUE(presenter.ok()) << presenter.error().message;

  std::weak_ptr<gpu::DevicePicture> weak;
  {
    PlayerGlObjects objs(gl, w, h);
    for (int round = 0; round < 3; ++round) {  // the registration is made once and reused
      auto pic = (*pool)->acquire(w, h);
      ASSERT_TRUE(pic.ok()) << pic.error().message;
      ASSERT_TRUE((*dec)->decode_to_device(bytes, opt, (*pic)->target(), {}).ok());
      ASSERT_TRUE((*presenter)->copy(**pic, objs.pbo));
      objs.texture_from_pbo();
      weak = *pic;
    }
    EXPECT_TRUE(weak.expired()) << "the picture goes back to the pool once copied";
    const auto got = objs.read_texture();
    ASSERT_EQ(glGetError(), static_cast<GLenum>(GL_NO_ERROR));
    const int worst = worst_diff(got, want.pixels);
    EXPECT_LE(worst, 1);
    std::printf("[ info ] device picture -> PBO -> texture, read back: max |gpu-cpu| = %d over %dx%d RGBA\n", worst, w, h);
    (*presenter)->release();
  }
  {
    // Interlaced: the same picture as both fields, bottom field first (row0 1 then 0).
    PlayerGlObjects objs(gl, w, 2 * h);
    auto pic = (*pool)->acquire(w, 2 * h);
    ASSERT_TRUE(pic.ok()) << pic.error().message;
    for (int f = 0; f < 2; ++f) {
      gpu::DeviceTarget t = (*pic)->target();
      t.row0 = f == 0 ? 1 : 0;
      t.row_step = 2;
      ASSERT_TRUE((*dec)->decode_to_device(bytes, opt, t, {}).ok());
    }
    ASSERT_TRUE((*presenter)->copy(**pic, objs.pbo));
    objs.texture_from_pbo();
    auto woven = gpu::weave_fields(want, want, false);
    ASSERT_TRUE(woven.ok());
    const int worst = worst_diff(objs.read_texture(), woven->pixels);
    EXPECT_LE(worst, 1);
    std::printf("[ info ] two fields woven on the device -> PBO -> texture: max |gpu-cpu| = %d over %dx%d\n", worst, w,
                2 * h);
    (*presenter)->release();
  }
  EXPECT_EQ((*pool)->stats().in_use, 0);
  EXPECT_LE((*pool)->stats().allocated, 2);
}

// The hand-off cost on its own and the whole per-frame GPU time of the player's design.
// Decode side: upload + IDWT + colour into a pooled device picture (CUDA events on the
// reconstructor's stream). Hand-off: map + device->PBO copy + unmap (CUDA events on the
// presenter's stream) and glTexSubImage2D from the PBO (GL timer query); also the host
// wall time of the whole hand-off until glFinish returns. Median of 100 after 20 warm-up.
TEST_F(CudaGl, HandOffTiming1080) {
  ASSERT_NO_FATAL_FAILURE(load_photo_1080());
  if (IsSkipped()) return;
  const auto& frame = photo;
  const int w = frame->image.width(), h = frame->image.height();
  auto pool = gpu::DevicePicturePool::create(3);
  ASSERT_TRUE(pool.ok());
  auto rec = gpu::CudaReconstructor::create({.timing = true});
  ASSERT_TRUE(rec.ok());
  auto presenter = gpu::CudaGlPresenter::create();
  ASSERT_TRUE(presenter.ok());
  GLuint query = 0;
  gl.gen_queries(1, &query);
  cudaEvent_t e0, e1;
  ASSERT_EQ(cudaEventCreate(&e0), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&e1), cudaSuccess);
  const cudaStream_t s = (*presenter)->stream();

  struct Variant {
    const char* name;
    unsigned usage;  // PBO usage (0: glBufferStorage); texture: CUDA writes the texture
    bool texture;
  };
  const Variant variants[] = {{"PBO GL_STREAM_DRAW", kStreamDraw, false},
                              {"PBO GL_DYNAMIC_COPY", kDynamicCopy, false},
                              {"PBO glBufferStorage(0)", 0, false}};
  struct Sample {
    double decode, cuda_handoff, gl_tex, wall;
  };
  for (const Variant& v : variants) {
    if (v.usage == 0 && !v.texture && !gl.buffer_storage) continue;
    PlayerGlObjects objs(gl, w, h, v.usage);
    // mode 0: decode, then hand-off, one after the other (GPU time of each on its own);
    // mode 1: as in the player, the next frame's decode is in flight during the hand-off.
    for (int mode = 0; mode < 2; ++mode) {
      std::vector<Sample> samples;
      DecodeSide side{**rec, **pool, *frame, mode == 1};
      for (int i = 0; i < 120; ++i) {
        bool ready = false;
        ASSERT_NO_FATAL_FAILURE(side.start(ready));
        if (!ready) continue;
        const auto w0 = std::chrono::steady_clock::now();
        ASSERT_EQ(cudaEventRecord(e0, s), cudaSuccess);
        ASSERT_TRUE((*presenter)->copy(*side.shown, objs.pbo));
        ASSERT_EQ(cudaEventRecord(e1, s), cudaSuccess);
        gl.begin_query(kTimeElapsed, query);
        if (!v.texture) objs.texture_from_pbo();
        gl.end_query(kTimeElapsed);
        glFinish();
        const auto w1 = std::chrono::steady_clock::now();
        ASSERT_EQ(cudaEventSynchronize(e1), cudaSuccess);
        float cuda_ms = 0;
        ASSERT_EQ(cudaEventElapsedTime(&cuda_ms, e0, e1), cudaSuccess);
        std::uint64_t gl_ns = 0;
        gl.query_result(query, kQueryResult, &gl_ns);
        ASSERT_NO_FATAL_FAILURE(side.finish());
        if (i >= 20)
          samples.push_back({side.times.total_ms, cuda_ms, gl_ns * 1e-6, std::chrono::duration<double, std::milli>(w1 - w0).count()});
      }
      auto pick = [&](double Sample::*m) {
        std::vector<double> x;
        for (const auto& y : samples) x.push_back(y.*m);
        return median(x);
      };
      const double dec = pick(&Sample::decode), hand = pick(&Sample::cuda_handoff), tex = pick(&Sample::gl_tex),
                   wall = pick(&Sample::wall);
      std::printf("[ info ] %s, %s: %dx%d 9/7, median of %zu: decode side %.3f ms GPU | hand-off: map+copy %.1f MB+unmap "
                  "%.3f ms (CUDA events) + glTexSubImage2D from PBO %.3f ms (GL timer) = %.3f ms; wall incl. glFinish "
                  "%.3f ms | per frame GPU %.3f ms\n",
                  v.name, mode == 0 ? "sequential" : "overlapped with the next decode", w, h, samples.size(), dec,
                  static_cast<double>(w) * h * 4 / 1e6, hand, tex, hand + tex, wall, dec + hand + tex);
      EXPECT_EQ(samples.size(), 100u);
      ASSERT_EQ(glGetError(), static_cast<GLenum>(GL_NO_ERROR));
    }
    (*presenter)->release();
  }
  gl.del_queries(1, &query);
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  ASSERT_EQ(glGetError(), static_cast<GLenum>(GL_NO_ERROR));
}

// The player's hand-off as PlayerWidget calls it: CudaGlPresenter::update_texture with a
// GL loader, on both paths (the pool's memory imported into GL, no map; and the mapped
// PBO). Read back from the texture: equal to the CPU picture. Then timing at 1080: the
// GPU time of the hand-off (CUDA events on the presenter's stream + GL timer), the decode
// side into the same pooled pictures, sequential and with the next decode in flight.
TEST_F(CudaGl, PlayerHandOffBothPathsEqualTheCpuPictureAndTiming) {
  ASSERT_NO_FATAL_FAILURE(load_photo_1080());
  if (IsSkipped()) return;
  const auto& frame = photo;
  auto cpu = decoder::reconstruct(*frame, 8);
  ASSERT_TRUE(cpu.ok());
  gpu::RgbaImage want;
  ASSERT_TRUE(gpu::to_rgba8(*cpu, {}, want));
  const int w = cpu->width, h = cpu->height;
  auto pool = gpu::DevicePicturePool::create(4);
  ASSERT_TRUE(pool.ok());
  auto rec = gpu::CudaReconstructor::create({.timing = true});
  ASSERT_TRUE(rec.ok());
  GLuint query[2] = {0, 0};
  gl.gen_queries(2, query);
  cudaEvent_t e0, e1;
  ASSERT_EQ(cudaEventCreate(&e0), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&e1), cudaSuccess);
  auto loader = [](const char* name) { return reinterpret_cast<void*>(eglGetProcAddress(name)); };

  for (const bool external : {true, false}) {
    auto presenter = gpu::CudaGlPresenter::create(0, loader, external);
    ASSERT_TRUE(presenter.ok()) << presenter.error().message;
    PlayerGlObjects objs(gl, w, h, kDynamicCopy);  // objs.pbo: a GL-only upload for comparison
    const cudaStream_t s = (*presenter)->stream();
    const char* frames_env = std::getenv("J2K_HANDOFF_FRAMES");  // fewer under compute-sanitizer
    const int frames = frames_env ? std::max(25, std::atoi(frames_env)) : 120;
    for (int mode = 0; mode < 2; ++mode) {
      std::vector<double> dec, cuda_part, gl_part, gl_only, wall;
      DecodeSide side{**rec, **pool, *frame, mode == 1};
      for (int i = 0; i < frames; ++i) {
        bool ready = false;
        ASSERT_NO_FATAL_FAILURE(side.start(ready));
        if (!ready) continue;
        const auto w0 = std::chrono::steady_clock::now();
        ASSERT_EQ(cudaEventRecord(e0, s), cudaSuccess);
        gl.begin_query(kTimeElapsed, query[0]);
        auto st = (*presenter)->update_texture(side.shown, objs.texture);
        gl.end_query(kTimeElapsed);
        ASSERT_EQ(cudaEventRecord(e1, s), cudaSuccess);
        ASSERT_TRUE(st) << st.error().message;
        glFinish();
        const auto w1 = std::chrono::steady_clock::now();
        // The same 8 MB upload again, GL only (vidmem PBO -> texture, no CUDA before it).
        gl.begin_query(kTimeElapsed, query[1]);
        objs.texture_from_pbo();
        gl.end_query(kTimeElapsed);
        ASSERT_EQ(cudaEventSynchronize(e1), cudaSuccess);
        float cuda_ms = 0;
        ASSERT_EQ(cudaEventElapsedTime(&cuda_ms, e0, e1), cudaSuccess);
        std::uint64_t ns0 = 0, ns1 = 0;
        gl.query_result(query[0], kQueryResult, &ns0);
        gl.query_result(query[1], kQueryResult, &ns1);
        ASSERT_NO_FATAL_FAILURE(side.finish());
        if (i >= 20) {
          dec.push_back(side.times.total_ms);
          cuda_part.push_back(cuda_ms);
          gl_part.push_back(ns0 * 1e-6);
          gl_only.push_back(ns1 * 1e-6);
          wall.push_back(std::chrono::duration<double, std::milli>(w1 - w0).count());
        }
      }
      const bool took_external = (*presenter)->last_path() == gpu::CudaGlPresenter::Path::external_memory;
      EXPECT_EQ(took_external, external) << "NVIDIA GL imports CUDA VMM memory";
      const double d = median(dec), c = median(cuda_part), g = median(gl_part);
      std::printf("[ info ] update_texture via %s, %s: %dx%d 9/7, median of %zu: decode side %.3f ms GPU | hand-off: "
                  "CUDA %.3f ms (events: map+copy+unmap) + GL %.3f ms (timer: glTexSubImage2D) = %.3f ms; wall "
                  "incl. glFinish %.3f ms | per frame GPU %.3f ms | a GL-only 8 MB PBO->texture upload right after: "
                  "%.3f ms\n",
                  took_external ? "CUDA memory imported into GL (no map)" : "mapped PBO",
                  mode == 0 ? "sequential" : "overlapped with the next decode", w, h, dec.size(), d, c, g, c + g,
                  median(wall), d + c + g, median(gl_only));
    }
    // Correctness: decode once more, hand it over, read the texture back.
    {
      auto pic = (*pool)->acquire(w, h);
      ASSERT_TRUE(pic.ok());
      const gpu::DeviceTarget target = (*pic)->target();
      gpu::ReconstructRequest req;
      req.planar = false;
      req.target = &target;
      ASSERT_TRUE((*rec)->reconstruct(*frame, req).ok());
      glBindTexture(GL_TEXTURE_2D, objs.texture);
      glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, w, h, 0, GL_RGBA, GL_UNSIGNED_BYTE, nullptr);  // cleared
      ASSERT_TRUE((*presenter)->update_texture(std::move(pic).value(), objs.texture));
    }
    const int worst = worst_diff(objs.read_texture(), want.pixels);
    EXPECT_LE(worst, 1);
    std::printf("[ info ] %s path read back from the texture: max |gpu-cpu| = %d over %dx%d\n",
                external ? "external-memory" : "mapped-PBO", worst, w, h);
    ASSERT_EQ(glGetError(), static_cast<GLenum>(GL_NO_ERROR));
    presenter->reset();  // waits for GL, then the pictures it held go back to the pool
    EXPECT_EQ((*pool)->stats().in_use, 0);
  }
  EXPECT_LE((*pool)->stats().allocated, 4);
  gl.del_queries(2, query);
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
}

// What drawing costs, for the next step: the frame drawn 1:1 into a 1920x1080 target from
// the texture (today's path, after the upload), and straight from a buffer (a buffer
// texture over a PBO in device memory, bilinear in the shader): that would drop the 8 MB
// glTexSubImage2D altogether. GL timer, median of 100.
TEST_F(CudaGl, DrawFromTextureVersusFromBuffer1080) {
  auto f = [](const char* n) { return eglGetProcAddress(n); };
  auto create_shader = reinterpret_cast<GLuint (*)(GLenum)>(f("glCreateShader"));
  auto shader_source = reinterpret_cast<void (*)(GLuint, GLsizei, const char* const*, const GLint*)>(f("glShaderSource"));
  auto compile = reinterpret_cast<void (*)(GLuint)>(f("glCompileShader"));
  auto get_shader = reinterpret_cast<void (*)(GLuint, GLenum, GLint*)>(f("glGetShaderiv"));
  auto create_program = reinterpret_cast<GLuint (*)()>(f("glCreateProgram"));
  auto attach = reinterpret_cast<void (*)(GLuint, GLuint)>(f("glAttachShader"));
  auto link = reinterpret_cast<void (*)(GLuint)>(f("glLinkProgram"));
  auto get_program = reinterpret_cast<void (*)(GLuint, GLenum, GLint*)>(f("glGetProgramiv"));
  auto use = reinterpret_cast<void (*)(GLuint)>(f("glUseProgram"));
  auto uniform_loc = reinterpret_cast<GLint (*)(GLuint, const char*)>(f("glGetUniformLocation"));
  auto uniform1i = reinterpret_cast<void (*)(GLint, GLint)>(f("glUniform1i"));
  auto uniform2i = reinterpret_cast<void (*)(GLint, GLint, GLint)>(f("glUniform2i"));
  auto gen_fbo = reinterpret_cast<void (*)(GLsizei, GLuint*)>(f("glGenFramebuffers"));
  auto bind_fbo = reinterpret_cast<void (*)(GLenum, GLuint)>(f("glBindFramebuffer"));
  auto fbo_tex = reinterpret_cast<void (*)(GLenum, GLenum, GLenum, GLuint, GLint)>(f("glFramebufferTexture2D"));
  auto tex_buffer = reinterpret_cast<void (*)(GLenum, GLenum, GLuint)>(f("glTexBuffer"));
  auto gen_vao = reinterpret_cast<void (*)(GLsizei, GLuint*)>(f("glGenVertexArrays"));
  auto bind_vao = reinterpret_cast<void (*)(GLuint)>(f("glBindVertexArray"));
  auto active_texture = reinterpret_cast<void (*)(GLenum)>(f("glActiveTexture"));
  ASSERT_TRUE(create_shader && shader_source && compile && create_program && link && use && gen_fbo && tex_buffer &&
              gen_vao && active_texture);
  const int w = 1920, h = 1080;
  const char* vs = "#version 330\nout vec2 uv;\nvoid main() { vec2 p = vec2((gl_VertexID << 1) & 2, gl_VertexID & 2);\n"
                   "uv = vec2(p.x, 1.0 - p.y) * 1.0; gl_Position = vec4(p * 2.0 - 1.0, 0.0, 1.0); }\n";
  const char* fs_tex = "#version 330\nin vec2 uv; out vec4 c; uniform sampler2D t;\n"
                       "void main() { c = vec4(texture(t, uv).rgb, 1.0); }\n";
  const char* fs_buf =
      "#version 330\nin vec2 uv; out vec4 c; uniform samplerBuffer b; uniform ivec2 size;\n"
      "vec3 px(ivec2 q) { q = clamp(q, ivec2(0), size - 1); return texelFetch(b, q.y * size.x + q.x).rgb; }\n"
      "void main() { vec2 p = uv * vec2(size) - 0.5; ivec2 i = ivec2(floor(p)); vec2 a = p - vec2(i);\n"
      "vec3 r = mix(mix(px(i), px(i + ivec2(1, 0)), a.x), mix(px(i + ivec2(0, 1)), px(i + ivec2(1, 1)), a.x), a.y);\n"
      "c = vec4(r, 1.0); }\n";
  auto program = [&](const char* fsrc) {
    GLuint p = create_program();
    for (auto [type, src] : {std::pair<GLenum, const char*>{0x8B31, vs}, {0x8B30, fsrc}}) {
      GLuint sh = create_shader(type);
      shader_source(sh, 1, &src, nullptr);
      compile(sh);
      GLint ok = 0;
      get_shader(sh, 0x8B81 /* GL_COMPILE_STATUS */, &ok);
      EXPECT_TRUE(ok);
      attach(p, sh);
    }
    link(p);
    GLint ok = 0;
    get_program(p, 0x8B82 /* GL_LINK_STATUS */, &ok);
    EXPECT_TRUE(ok);
    return p;
  };
  const GLuint p_tex = program(fs_tex), p_buf = program(fs_buf);
  PlayerGlObjects objs(gl, w, h, kDynamicCopy);
  objs.texture_from_pbo();
  GLuint target = 0, fbo = 0, vao = 0, buf_tex = 0;
  glGenTextures(1, &target);
  glBindTexture(GL_TEXTURE_2D, target);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, w, h, 0, GL_RGBA, GL_UNSIGNED_BYTE, nullptr);
  gen_fbo(1, &fbo);
  bind_fbo(0x8D40 /* GL_FRAMEBUFFER */, fbo);
  fbo_tex(0x8D40, 0x8CE0 /* GL_COLOR_ATTACHMENT0 */, GL_TEXTURE_2D, target, 0);
  gen_vao(1, &vao);
  bind_vao(vao);
  glGenTextures(1, &buf_tex);
  glBindTexture(0x8C2A /* GL_TEXTURE_BUFFER */, buf_tex);
  tex_buffer(0x8C2A, GL_RGBA8, objs.pbo);
  glViewport(0, 0, w, h);
  GLuint query = 0;
  gl.gen_queries(1, &query);
  for (int which = 0; which < 2; ++which) {
    std::vector<double> ms;
    use(which == 0 ? p_tex : p_buf);
    active_texture(GL_TEXTURE0);
    if (which == 0) {
      glBindTexture(GL_TEXTURE_2D, objs.texture);
      uniform1i(uniform_loc(p_tex, "t"), 0);
    } else {
      glBindTexture(0x8C2A, buf_tex);
      uniform1i(uniform_loc(p_buf, "b"), 0);
      uniform2i(uniform_loc(p_buf, "size"), w, h);
    }
    for (int i = 0; i < 120; ++i) {
      gl.begin_query(kTimeElapsed, query);
      glDrawArrays(GL_TRIANGLES, 0, 3);
      gl.end_query(kTimeElapsed);
      std::uint64_t ns = 0;
      gl.query_result(query, kQueryResult, &ns);
      if (i >= 20) ms.push_back(ns * 1e-6);
    }
    std::printf("[ info ] draw %dx%d 1:1 %s: %.3f ms (GL timer, median of %zu)\n", w, h,
                which == 0 ? "from the texture (after glTexSubImage2D)" : "straight from a buffer (samplerBuffer, bilinear)",
                median(ms), ms.size());
  }
  EXPECT_EQ(glGetError(), static_cast<GLenum>(GL_NO_ERROR));
  bind_fbo(0x8D40, 0);
  gl.del_queries(1, &query);
}
