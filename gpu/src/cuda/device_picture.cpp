// A bounded pool of device RGBA pictures (the player's display pictures stay on the GPU).
#include "gpu/device_picture.hpp"

#include <mutex>
#include <vector>

#include "cuda_check.hpp"

namespace j2k::gpu {

struct DevicePoolState {
  struct Slot {
    void* data = nullptr;
    std::size_t bytes = 0;
    int width = 0, height = 0;
    cudaEvent_t read_done = nullptr;  ///< recorded by readers on other streams
    bool read_pending = false;        ///< read_done was recorded since the last acquire
    bool in_use = false;
    std::size_t accounted = 0;        ///< bytes held, for stats(); guarded by the mutex
  };
  int device = 0;
  mutable std::mutex mutex;  // guards every slot's in_use, and the counters
  std::vector<Slot> slots;   // fixed size: a holder owns its slot's other fields
  std::uint64_t acquired = 0, exhausted = 0;

  ~DevicePoolState() {
    // Last reference gone: no picture exists. Errors are ignored (the process may be exiting).
    if (cudaSetDevice(device) != cudaSuccess) return;
    for (Slot& s : slots) {
      if (s.read_done) {
        cudaEventSynchronize(s.read_done);
        cudaEventDestroy(s.read_done);
      }
      if (s.data) cudaFree(s.data);
    }
  }
  void release(int slot) {
    std::lock_guard lock(mutex);
    slots[static_cast<std::size_t>(slot)].in_use = false;
  }
  void account(int slot, std::size_t bytes) {
    std::lock_guard lock(mutex);
    slots[static_cast<std::size_t>(slot)].accounted = bytes;
  }
};

DevicePicture::DevicePicture(std::shared_ptr<DevicePoolState> pool, int slot, const DeviceTarget& target)
    : pool_(std::move(pool)), slot_(slot), target_(target) {}

DevicePicture::~DevicePicture() {
  if (pool_) pool_->release(slot_);
}

Status DevicePicture::mark_read(cudaStream_t stream) const {
  auto& s = pool_->slots[static_cast<std::size_t>(slot_)];
  J2K_CUDA_TRY(cudaEventRecord(s.read_done, stream));
  s.read_pending = true;
  return {};
}

DevicePicturePool::DevicePicturePool(std::shared_ptr<DevicePoolState> state) : state_(std::move(state)) {}
DevicePicturePool::~DevicePicturePool() = default;

Result<std::shared_ptr<DevicePicturePool>> DevicePicturePool::create(int capacity, int device) {
  if (!cuda_available()) return make_error(ErrorKind::unsupported, "CUDA: " + cuda_describe());
  if (capacity < 1) return make_error(ErrorKind::corrupt, "device picture pool of no pictures");
  auto state = std::make_shared<DevicePoolState>();
  state->device = device;
  state->slots.resize(static_cast<std::size_t>(capacity));
  return std::shared_ptr<DevicePicturePool>(new DevicePicturePool(std::move(state)));
}

Result<std::shared_ptr<DevicePicture>> DevicePicturePool::acquire(int width, int height, OutputFormat format) {
  if (width <= 0 || height <= 0) return make_error(ErrorKind::corrupt, "device picture of empty size");
  const std::size_t bytes = static_cast<std::size_t>(width) * 4 * static_cast<std::size_t>(height);
  DevicePoolState& st = *state_;
  int chosen = -1;
  {
    std::lock_guard lock(st.mutex);
    // A free buffer of this size, else a never-used slot, else any free buffer (reallocated).
    int empty = -1, other = -1;
    for (int i = 0; i < static_cast<int>(st.slots.size()); ++i) {
      const auto& s = st.slots[static_cast<std::size_t>(i)];
      if (s.in_use) continue;
      if (s.data && s.bytes == bytes) { chosen = i; break; }
      if (!s.data && empty < 0) empty = i;
      if (s.data && other < 0) other = i;
    }
    if (chosen < 0) chosen = empty >= 0 ? empty : other;
    if (chosen < 0) {
      ++st.exhausted;
      return make_error(ErrorKind::limit, fmt::format("all {} device pictures are in use", st.slots.size()));
    }
    st.slots[static_cast<std::size_t>(chosen)].in_use = true;
    ++st.acquired;
  }
  // The slot is ours now: CUDA calls outside the lock.
  auto& s = st.slots[static_cast<std::size_t>(chosen)];
  auto fail = [&](cudaError_t e, const char* what) {
    if (s.data && s.bytes != bytes) {
      cudaFree(s.data);
      s.data = nullptr;
      s.bytes = 0;
    }
    st.account(chosen, s.bytes);
    st.release(chosen);
    return cuda::cuda_error(e, what, __FILE__, __LINE__);
  };
  if (cudaError_t e = cudaSetDevice(st.device); e != cudaSuccess) return fail(e, "cudaSetDevice");
  if (!s.read_done) {
    if (cudaError_t e = cudaEventCreateWithFlags(&s.read_done, cudaEventDisableTiming); e != cudaSuccess)
      return fail(e, "cudaEventCreateWithFlags");
  }
  if (s.read_pending) {
    // The last reader (the GUI's copy into its PBO, say) must be done before we overwrite.
    if (cudaError_t e = cudaEventSynchronize(s.read_done); e != cudaSuccess) return fail(e, "cudaEventSynchronize");
    s.read_pending = false;
  }
  if (s.bytes != bytes) {
    if (s.data) {
      cudaError_t e = cudaFree(s.data);
      s.data = nullptr;
      s.bytes = 0;
      if (e != cudaSuccess) return fail(e, "cudaFree");
    }
    if (cudaError_t e = cudaMalloc(&s.data, bytes); e != cudaSuccess) {
      s.data = nullptr;
      return fail(e, "cudaMalloc");
    }
    s.bytes = bytes;
    st.account(chosen, bytes);
  }
  s.width = width;
  s.height = height;
  DeviceTarget t;
  t.data = s.data;
  t.pitch = static_cast<std::size_t>(width) * 4;
  t.width = width;
  t.height = height;
  t.format = format;
  return std::make_shared<DevicePicture>(state_, chosen, t);
}

DevicePoolStats DevicePicturePool::stats() const {
  DevicePoolStats r;
  std::lock_guard lock(state_->mutex);
  r.capacity = static_cast<int>(state_->slots.size());
  for (const auto& s : state_->slots) {
    if (s.in_use) ++r.in_use;
    if (s.accounted) {
      ++r.allocated;
      r.device_bytes += s.accounted;
    }
  }
  r.acquired = state_->acquired;
  r.exhausted = state_->exhausted;
  return r;
}

Status download(const DevicePicture& picture, RgbaImage& out) {
  const DeviceTarget& t = picture.target();
  out.width = t.width;
  out.height = t.height;
  out.pixels.resize(static_cast<std::size_t>(t.width) * 4 * static_cast<std::size_t>(t.height));
  J2K_CUDA_TRY(cudaMemcpy2D(out.pixels.data(), static_cast<std::size_t>(t.width) * 4, t.data, t.pitch,
                            static_cast<std::size_t>(t.width) * 4, static_cast<std::size_t>(t.height),
                            cudaMemcpyDeviceToHost));
  return {};
}

}  // namespace j2k::gpu
