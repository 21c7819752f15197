// CUDA-OpenGL hand-off on a headless EGL context: a PBO registered once, the decoder's
// kernels write RGBA into it, GL reads it back, and it must equal the CPU path's picture.
// Skips visibly without a CUDA device or without an EGL device platform.
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GL/gl.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
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

using namespace j2k;

namespace {

constexpr unsigned kPixelUnpack = 0x88EC;  // GL_PIXEL_UNPACK_BUFFER
constexpr unsigned kStreamDraw = 0x88E0;   // GL_STREAM_DRAW

using GenBuffers = void (*)(GLsizei, GLuint*);
using BindBuffer = void (*)(GLenum, GLuint);
using BufferData = void (*)(GLenum, std::ptrdiff_t, const void*, GLenum);
using GetBufferSubData = void (*)(GLenum, std::ptrdiff_t, std::ptrdiff_t, void*);
using DeleteBuffers = void (*)(GLsizei, const GLuint*);

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
    gen = reinterpret_cast<GenBuffers>(eglGetProcAddress("glGenBuffers"));
    bind = reinterpret_cast<BindBuffer>(eglGetProcAddress("glBindBuffer"));
    data = reinterpret_cast<BufferData>(eglGetProcAddress("glBufferData"));
    get = reinterpret_cast<GetBufferSubData>(eglGetProcAddress("glGetBufferSubData"));
    del = reinterpret_cast<DeleteBuffers>(eglGetProcAddress("glDeleteBuffers"));
    if (!gen || !bind || !data || !get || !del) return fail("GL buffer functions missing");
    std::printf("[ info ] EGL %d.%d, GL %s on %s\n", major, minor, reinterpret_cast<const char*>(glGetString(GL_VERSION)),
                reinterpret_cast<const char*>(glGetString(GL_RENDERER)));
    return true;
  }
  bool fail(const char* w) {
    why = w;
    return false;
  }
  ~HeadlessGl() {
    if (display != EGL_NO_DISPLAY) {
      eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
      if (context != EGL_NO_CONTEXT) eglDestroyContext(display, context);
      eglTerminate(display);
    }
  }
};

std::vector<std::uint8_t> read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::filesystem::path corpus_file(const char* name) {
  const char* e = std::getenv("J2K_GPU_CORPUS");
  return std::filesystem::path(e ? e : J2K_GPU_CORPUS_DIR) / name;
}

}  // namespace

TEST(CudaGl, PboHandOffEqualsTheCpuPicture) {
  if (!gpu::cuda_available()) GTEST_SKIP() << "SKIPPED: no CUDA device (" << gpu::cuda_describe() << ")";
  HeadlessGl gl;
  if (!gl.open()) GTEST_SKIP() << "SKIPPED: no headless OpenGL: " << gl.why;
  const auto path = corpus_file("1919x1081_422_10_97.j2k");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "SKIPPED: no corpus file " << path;
  const auto bytes = read_file(path);
  decoder::DecodeOptions opt;
  opt.threads = 8;
  auto frame = decoder::decode_coefficients(bytes, opt);
  ASSERT_TRUE(frame.ok());
  auto cpu = decoder::reconstruct(*frame);
  ASSERT_TRUE(cpu.ok());
  gpu::RgbaImage want;
  ASSERT_TRUE(gpu::to_rgba8(*cpu, {}, want));

  const int w = cpu->width, h = cpu->height;
  GLuint pbo = 0;
  gl.gen(1, &pbo);
  gl.bind(kPixelUnpack, pbo);
  gl.data(kPixelUnpack, static_cast<std::ptrdiff_t>(w) * h * 4, nullptr, kStreamDraw);
  gl.bind(kPixelUnpack, 0);
  ASSERT_EQ(glGetError(), static_cast<GLenum>(GL_NO_ERROR));
  {
    auto reg = gpu::CudaGlPbo::register_buffer(pbo, w, h);
    ASSERT_TRUE(reg.ok()) << reg.error().message;
    gpu::CudaReconstructor::Options ro;
    ro.timing = true;
    auto rec = gpu::CudaReconstructor::create(ro);
    ASSERT_TRUE(rec.ok());
    gpu::ReconstructRequest req;
    req.planar = false;
    req.pbo = reg->get();
    // Warm up, then time upload -> kernels -> map -> colour -> unmap per frame, and the
    // same frame into plain device memory: the difference is the GL hand-off.
    void* plain = nullptr;
    ASSERT_EQ(cudaMalloc(&plain, static_cast<std::size_t>(w) * h * 4), cudaSuccess);
    const gpu::DeviceTarget plain_target{plain, static_cast<std::size_t>(w) * 4, w, h, gpu::OutputFormat::rgba8, 0, 1};
    for (int mode = 0; mode < 2; ++mode) {
      gpu::ReconstructRequest rq = req;
      if (mode == 1) {
        rq.pbo = nullptr;
        rq.target = &plain_target;
      }
      std::vector<double> total, up, idwt, colour;
      for (int i = 0; i < 110; ++i) {
        gpu::GpuTimes t;
        auto r = (*rec)->reconstruct(*frame, rq, &t);
        ASSERT_TRUE(r.ok()) << r.error().message;
        if (i < 10) continue;
        total.push_back(t.total_ms);
        up.push_back(t.upload_ms);
        idwt.push_back(t.idwt_ms);
        colour.push_back(t.colour_ms);
      }
      for (auto* v : {&total, &up, &idwt, &colour}) std::sort(v->begin(), v->end());
      std::printf("[ info ] %dx%d 4:2:2 10-bit 9/7 into %s: median GPU ms over 100 frames: upload %.3f, dequant+IDWT %.3f, "
                  "%s %.3f, total %.3f\n",
                  w, h, mode == 0 ? "a registered GL PBO" : "plain device memory", up[50], idwt[50],
                  mode == 0 ? "map+colour+unmap" : "colour", colour[50], total[50]);
    }
    cudaFree(plain);
    // Through the decoder backend too (tier-1 on the CPU).
    auto dec = gpu::make_cuda_decoder_typed({gpu::GpuMode::on});
    ASSERT_TRUE(dec.ok());
    ASSERT_TRUE((*dec)->decode_to_pbo(bytes, opt, **reg, {}));
  }
  std::vector<std::uint8_t> got(static_cast<std::size_t>(w) * h * 4);
  gl.bind(kPixelUnpack, pbo);
  gl.get(kPixelUnpack, 0, static_cast<std::ptrdiff_t>(got.size()), got.data());
  gl.bind(kPixelUnpack, 0);
  gl.del(1, &pbo);
  ASSERT_EQ(glGetError(), static_cast<GLenum>(GL_NO_ERROR));
  int worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(int(got[i]) - int(want.pixels[i])));
  EXPECT_LE(worst, 1);
  std::printf("[ info ] PBO read back: max |gpu-cpu| = %d over %dx%d RGBA\n", worst, w, h);
}
