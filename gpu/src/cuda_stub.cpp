// The CUDA stage in a build without nvcc: everything reports "unavailable", so callers
// take the CPU path (the same code paths the GPU build takes after a device failure).
#include "gpu/cuda.hpp"
#include "gpu/cuda_gl.hpp"
#include "gpu/cuda_reconstructor.hpp"
#include "gpu/cuda_tier1.hpp"
#include "gpu/device_picture.hpp"

namespace j2k::gpu {

namespace {
Error unavailable() { return make_error(ErrorKind::unsupported, "CUDA: this build has no CUDA stage"); }
}  // namespace

bool cuda_available() noexcept { return false; }
Result<Tier1GpuResult> decode_tier1_batch_gpu(const decoder::Tier1Batch&, int, long) { return unavailable(); }
int tier1_gpu_chains(int) { return 0; }
Result<Tier1GpuResult> decode_tier1_batch_emulated(const decoder::Tier1Batch&) { return unavailable(); }
std::string cuda_describe() { return "this build has no CUDA stage"; }
std::size_t cuda_device_memory(int) noexcept { return 0; }
std::pmr::memory_resource* cuda_pinned_resource() noexcept { return std::pmr::new_delete_resource(); }

struct CudaReconstructor::Impl {};
CudaReconstructor::CudaReconstructor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CudaReconstructor::~CudaReconstructor() = default;
Result<std::unique_ptr<CudaReconstructor>> CudaReconstructor::create(const Options&) { return unavailable(); }
Result<int> CudaReconstructor::submit(const decoder::CoefficientFrame&, const ReconstructRequest&) { return unavailable(); }
Result<PlanarImage> CudaReconstructor::collect(int, GpuTimes*) { return unavailable(); }
Result<PlanarImage> CudaReconstructor::reconstruct(const decoder::CoefficientFrame&, const ReconstructRequest&, GpuTimes*) {
  return unavailable();
}
Result<std::int32_t*> CudaReconstructor::start_tier1(const decoder::Tier1Batch&, std::span<const std::uint32_t>,
                                                     std::span<const std::uint32_t>) {
  return unavailable();
}
void CudaReconstructor::cancel_tier1() {}
int CudaReconstructor::slots() const noexcept { return 0; }
std::size_t CudaReconstructor::device_bytes() const noexcept { return 0; }
void CudaReconstructorTestAccess::set_device(CudaReconstructor&, int) {}
Status upload_and_convert(const PlanarImage&, const ColourInterpretation&, const DeviceTarget&, cudaStream_t) {
  return unavailable();
}

struct CudaGlPbo::Impl {};
CudaGlPbo::CudaGlPbo(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CudaGlPbo::~CudaGlPbo() = default;
Result<std::unique_ptr<CudaGlPbo>> CudaGlPbo::register_buffer(unsigned int, int, int, OutputFormat) { return unavailable(); }
Result<DeviceTarget> CudaGlPbo::map(cudaStream_t) { return unavailable(); }
Status CudaGlPbo::unmap(cudaStream_t) { return unavailable(); }
int CudaGlPbo::width() const noexcept { return 0; }
int CudaGlPbo::height() const noexcept { return 0; }
bool CudaGlPbo::mapped() const noexcept { return false; }

struct CudaGlPresenter::Impl {};
CudaGlPresenter::CudaGlPresenter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CudaGlPresenter::~CudaGlPresenter() = default;
Result<std::unique_ptr<CudaGlPresenter>> CudaGlPresenter::create(int, GlLoader, bool) { return unavailable(); }
Status CudaGlPresenter::update_texture(std::shared_ptr<const DevicePicture>, unsigned int) { return unavailable(); }
CudaGlPresenter::Path CudaGlPresenter::last_path() const noexcept { return Path::none; }
void CudaGlPresenter::poll() {}
Status CudaGlPresenter::copy(const DevicePicture&, unsigned int) { return unavailable(); }
void CudaGlPresenter::release() {}
cudaStream_t CudaGlPresenter::stream() const noexcept { return nullptr; }

struct DevicePoolState {};
DevicePicture::DevicePicture(std::shared_ptr<DevicePoolState> pool, int slot, const DeviceTarget& target)
    : pool_(std::move(pool)), slot_(slot), target_(target) {}
DevicePicture::~DevicePicture() = default;
Status DevicePicture::mark_read(cudaStream_t) const { return unavailable(); }
DevicePicturePool::DevicePicturePool(std::shared_ptr<DevicePoolState> state) : state_(std::move(state)) {}
DevicePicturePool::~DevicePicturePool() = default;
Result<std::shared_ptr<DevicePicturePool>> DevicePicturePool::create(int, int, bool) { return unavailable(); }
int DevicePicture::export_fd() const { return -1; }
std::uint64_t DevicePicture::buffer_id() const noexcept { return 0; }
std::size_t DevicePicture::allocation_bytes() const noexcept { return 0; }
Result<std::shared_ptr<DevicePicture>> DevicePicturePool::acquire(int, int, OutputFormat) { return unavailable(); }
DevicePoolStats DevicePicturePool::stats() const { return {}; }
Status download(const DevicePicture&, RgbaImage&) { return unavailable(); }

}  // namespace j2k::gpu
