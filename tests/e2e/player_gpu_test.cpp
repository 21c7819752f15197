// The player's own window on a GPU (issue 17): j2kplay's PlayerWidget drawing through the
// GPU's OpenGL with the CUDA-GL display path, on a machine without X (eglfs on NVIDIA's
// device-platform EGL, through the j2k_egldevice plugin). What the widget drew (its
// framebuffer, grabbed) must equal the CPU path's picture of the same frame within one code
// per channel, and the overlay's display-path line must say GPU.
//
// Runs on the GPU machine from the player bundle (bench/ui/make_player_bundle.sh; there
// J2K_PLAYER_ROOT names the unpacked bundle); skipped, with the reason, anywhere without a
// usable CUDA device or without the eglfs plugin.
#include <gtest/gtest.h>

#include <QImage>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "gpu/cuda.hpp"
#include "process.hpp"

namespace {

std::string root_dir() {
  const char* root = std::getenv("J2K_PLAYER_ROOT");
  return root && *root ? root : std::string(J2K_BIN_DIR) + "/..";
}

std::string tool(const std::string& name) {
  const char* root = std::getenv("J2K_PLAYER_ROOT");
  return root && *root ? std::string(root) + "/bin/" + name : j2k::test::bin(name);
}

}  // namespace

TEST(PlayerGpu, WidgetDrawsTheCudaPictureLikeTheCpuPath) {
  if (!j2k::gpu::cuda_available()) GTEST_SKIP() << "no usable CUDA device: " << j2k::gpu::cuda_describe();
  const std::string plugins = root_dir() + "/plugins";
  if (!std::filesystem::exists(plugins + "/egldeviceintegrations/libj2k_eglfs_device.so"))
    GTEST_SKIP() << "the eglfs device plugin is not built (install qt6-base-private-dev)";
  std::filesystem::remove("gpu-shot.png");
  std::filesystem::remove("gpu-shot.png.cpu.png");
  const std::string env = "QT_QPA_PLATFORM=eglfs QT_QPA_EGLFS_INTEGRATION=j2k_egldevice QT_QPA_EGLFS_DISABLE_INPUT=1 "
                          "J2K_EGLDEVICE_SIZE=1280x720 QT_PLUGIN_PATH=" + plugins + " ";
  auto r = j2k::test::run(env + tool("j2kplay") +
                              " --demo --gpu on --screenshot gpu-shot.png --quit-after 3 --window-size 1280x720 --no-overlay",
                          "player-gpu");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The overlay's display-path line, as j2kplay logs it when it takes the screenshot.
  EXPECT_NE(r.err.find("display path: GPU"), std::string::npos) << r.err;
  QImage shot("gpu-shot.png");
  QImage cpu("gpu-shot.png.cpu.png");
  ASSERT_FALSE(shot.isNull()) << r.err;
  ASSERT_FALSE(cpu.isNull()) << r.err;
  shot = shot.convertToFormat(QImage::Format_RGB888);
  cpu = cpu.convertToFormat(QImage::Format_RGB888);
  ASSERT_EQ(shot.size(), cpu.size()) << "window and picture are both 1280x720: drawn 1:1";
  int max_diff = 0;
  double sum = 0;
  for (int y = 0; y < shot.height(); ++y) {
    const uchar* a = shot.constScanLine(y);
    const uchar* b = cpu.constScanLine(y);
    for (int x = 0; x < shot.width() * 3; ++x) {
      max_diff = std::max(max_diff, std::abs(a[x] - b[x]));
      sum += b[x];
    }
  }
  EXPECT_LE(max_diff, 1) << "what the widget drew differs from the CPU path's picture of the same frame";
  EXPECT_GT(sum / (shot.width() * shot.height() * 3.0), 30.0) << "a photograph, not a blank surface";
}
