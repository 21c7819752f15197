// A bounded pool of device RGBA pictures (the player's display pictures stay on the GPU).
#include "gpu/device_picture.hpp"

#include <cuda.h>

#include <atomic>
#include <mutex>
#include <vector>

#include "gpu/cuda.hpp"
#include "cuda_check.hpp"

namespace j2k::gpu {

namespace {

// CUDA virtual memory management (driver API, through the runtime's entry points: the
// runtime is linked statically, the driver library is loaded by it). Allocations made this
// way can be exported as a file descriptor that OpenGL imports (EXT_memory_object_fd).
struct Vmm {
  // The pointers have the types cuda.h declares for these functions.
  decltype(&cuMemCreate) create = nullptr;
  decltype(&cuMemExportToShareableHandle) export_handle = nullptr;
  decltype(&cuMemGetAllocationGranularity) granularity = nullptr;
  decltype(&cuMemAddressReserve) reserve = nullptr;
  decltype(&cuMemMap) map = nullptr;
  decltype(&cuMemSetAccess) set_access = nullptr;
  decltype(&cuMemUnmap) unmap = nullptr;
  decltype(&cuMemRelease) release = nullptr;
  decltype(&cuMemAddressFree) address_free = nullptr;
  bool ok = false;

  template <class F>
  static bool entry(const char* name, F& f) {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess || !p)
      return false;
    f = reinterpret_cast<F>(p);
    return true;
  }
  Vmm() {
    ok = entry("cuMemCreate", create) && entry("cuMemExportToShareableHandle", export_handle) &&
         entry("cuMemGetAllocationGranularity", granularity) && entry("cuMemAddressReserve", reserve) &&
         entry("cuMemMap", map) && entry("cuMemSetAccess", set_access) && entry("cuMemUnmap", unmap) &&
         entry("cuMemRelease", release) && entry("cuMemAddressFree", address_free);
  }
  static const Vmm& get() {
    static const Vmm vmm;
    return vmm;
  }
};

std::atomic<std::uint64_t> next_buffer_id{1};

}  // namespace

struct DevicePoolState {
  struct Slot {
    void* data = nullptr;
    std::size_t bytes = 0;            ///< the picture's bytes
    std::size_t allocation = 0;       ///< VMM: the allocation's size (granularity-rounded); 0: cudaMalloc
    CUmemGenericAllocationHandle handle = 0;
    std::uint64_t id = 0;             ///< unique per allocation (GL import caches key on it)
    int width = 0, height = 0;
    cudaEvent_t read_done = nullptr;  ///< recorded by readers on other streams
    bool read_pending = false;        ///< read_done was recorded since the last acquire
    bool in_use = false;
    std::size_t accounted = 0;        ///< bytes held, for stats(); guarded by the mutex
  };
  int device = 0;
  bool exportable = true;    // try VMM allocations that GL can import
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
      free_buffer(s);
    }
  }
  static void free_buffer(Slot& s) {
    if (!s.data) return;
    if (s.allocation) {
      const Vmm& v = Vmm::get();
      const auto ptr = reinterpret_cast<CUdeviceptr>(s.data);
      v.unmap(ptr, s.allocation);
      v.address_free(ptr, s.allocation);
      v.release(s.handle);  // GL's import (if any) keeps the memory until it lets go
    } else {
      cudaFree(s.data);
    }
    s.data = nullptr;
    s.bytes = 0;
    s.allocation = 0;
    s.handle = 0;
  }
  /// Exportable device memory (VMM, POSIX fd handle type); false where unsupported.
  bool allocate_exportable(Slot& s, std::size_t bytes) {
    const Vmm& v = Vmm::get();
    if (!v.ok) return false;
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = device;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    std::size_t g = 0;
    if (v.granularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED) != CUDA_SUCCESS || g == 0) return false;
    const std::size_t size = (bytes + g - 1) / g * g;
    CUmemGenericAllocationHandle handle = 0;
    if (v.create(&handle, size, &prop, 0) != CUDA_SUCCESS) return false;
    CUdeviceptr ptr = 0;
    if (v.reserve(&ptr, size, 0, 0, 0) != CUDA_SUCCESS) {
      v.release(handle);
      return false;
    }
    CUmemAccessDesc access{};
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    if (v.map(ptr, size, 0, handle, 0) != CUDA_SUCCESS) {
      v.address_free(ptr, size);
      v.release(handle);
      return false;
    }
    if (v.set_access(ptr, size, &access, 1) != CUDA_SUCCESS) {
      v.unmap(ptr, size);
      v.address_free(ptr, size);
      v.release(handle);
      return false;
    }
    s.data = reinterpret_cast<void*>(ptr);
    s.allocation = size;
    s.handle = handle;
    return true;
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

Result<std::shared_ptr<DevicePicturePool>> DevicePicturePool::create(int capacity, int device, bool exportable) {
  if (!cuda_available()) return make_error(ErrorKind::unsupported, "CUDA: " + cuda_describe());
  if (capacity < 1) return make_error(ErrorKind::corrupt, "device picture pool of no pictures");
  auto state = std::make_shared<DevicePoolState>();
  state->device = device;
  state->exportable = exportable;
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
    if (s.data && s.bytes != bytes) DevicePoolState::free_buffer(s);
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
    DevicePoolState::free_buffer(s);
    // Exportable memory first (GL can import it: no per-frame map), plain cudaMalloc else.
    if (!(st.exportable && st.allocate_exportable(s, bytes))) {
      if (cudaError_t e = cudaMalloc(&s.data, bytes); e != cudaSuccess) {
        s.data = nullptr;
        return fail(e, "cudaMalloc");
      }
    }
    s.bytes = bytes;
    s.id = next_buffer_id.fetch_add(1);
    count_cuda_buffer_allocation();
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

int DevicePicture::export_fd() const {
  const auto& s = pool_->slots[static_cast<std::size_t>(slot_)];
  if (!s.allocation) return -1;
  int fd = -1;
  if (Vmm::get().export_handle(&fd, s.handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) != CUDA_SUCCESS) return -1;
  return fd;
}

std::uint64_t DevicePicture::buffer_id() const noexcept { return pool_->slots[static_cast<std::size_t>(slot_)].id; }

std::size_t DevicePicture::allocation_bytes() const noexcept {
  const auto& s = pool_->slots[static_cast<std::size_t>(slot_)];
  return s.allocation ? s.allocation : s.bytes;
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
