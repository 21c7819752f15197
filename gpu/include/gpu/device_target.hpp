#pragma once
// A device picture to convert into (shared by the reconstructor, the display pool and the
// GL hand-off). Kept apart from cuda_reconstructor.hpp so that Qt code can include it (Qt
// defines `slots` as a macro).
#include <cstddef>

namespace j2k::gpu {

enum class OutputFormat { rgba8, rgb10a2 };

/// A device picture to convert into: width x height pixels of 4 bytes, `pitch` bytes
/// apart. For a field picture set row0 = 0 or 1 and row_step = 2 (field weave).
struct DeviceTarget {
  void* data = nullptr;
  std::size_t pitch = 0;
  int width = 0, height = 0;  ///< the target's size; rows/columns outside it are not written
  OutputFormat format = OutputFormat::rgba8;
  int row0 = 0, row_step = 1;
};

}  // namespace j2k::gpu
