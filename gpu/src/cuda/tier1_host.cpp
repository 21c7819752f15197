// Staging and the synchronous entry point of the GPU tier-1.
#include "tier1_host.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

#include "cuda_check.hpp"
#include "gpu/cuda.hpp"
#include "gpu/cuda_tier1.hpp"
#include "gpu/tier1_split.hpp"
#include "tier1_block.hpp"

namespace j2k::gpu {

namespace detail {

// The kernel reads the decoder's rows as they are.
static_assert(sizeof(cuda::T1Block) == sizeof(decoder::Tier1Block));
static_assert(offsetof(cuda::T1Block, out) == offsetof(decoder::Tier1Block, out));
static_assert(offsetof(cuda::T1Block, stride) == offsetof(decoder::Tier1Block, stride));
static_assert(offsetof(cuda::T1Block, byte_offset) == offsetof(decoder::Tier1Block, byte_offset));
static_assert(offsetof(cuda::T1Block, seg_first) == offsetof(decoder::Tier1Block, seg_first));
static_assert(offsetof(cuda::T1Block, seg_count) == offsetof(decoder::Tier1Block, seg_count));
static_assert(offsetof(cuda::T1Block, passes) == offsetof(decoder::Tier1Block, passes));
static_assert(offsetof(cuda::T1Block, width) == offsetof(decoder::Tier1Block, width));
static_assert(offsetof(cuda::T1Block, height) == offsetof(decoder::Tier1Block, height));
static_assert(offsetof(cuda::T1Block, numbps) == offsetof(decoder::Tier1Block, numbps));
static_assert(offsetof(cuda::T1Block, band) == offsetof(decoder::Tier1Block, band));
static_assert(offsetof(cuda::T1Block, style) == offsetof(decoder::Tier1Block, style));
static_assert(offsetof(cuda::T1Block, roi_shift) == offsetof(decoder::Tier1Block, roi_shift));
static_assert(sizeof(cuda::T1Segment) == sizeof(decoder::Tier1Segment));
static_assert(cuda::kT1Bypass == decoder::kTier1Bypass && cuda::kT1Reset == decoder::kTier1Reset &&
              cuda::kT1Causal == decoder::kTier1Causal && cuda::kT1Segmentation == decoder::kTier1Segmentation);

namespace {
std::size_t align_up(std::size_t n, std::size_t a = 256) { return (n + a - 1) / a * a; }
}  // namespace

Tier1Layout plan_tier1(const decoder::Tier1Batch& batch, std::span<const std::uint32_t> rows, std::size_t base) {
  Tier1Layout l;
  l.count = static_cast<int>(rows.size());
  l.blocks_off = align_up(base);
  l.segments_off = align_up(l.blocks_off + sizeof(decoder::Tier1Block) * rows.size());
  l.bytes_off = align_up(l.segments_off + sizeof(decoder::Tier1Segment) * batch.segments.size());
  l.end = align_up(l.bytes_off + batch.bytes.size());
  for (const std::uint32_t r : rows)
    l.shared_bytes = std::max(l.shared_bytes, cuda::t1_shared_bytes(batch.blocks[r].width, batch.blocks[r].height));
  return l;
}

void stage_tier1(const decoder::Tier1Batch& batch, std::span<const std::uint32_t> rows, const Tier1Layout& l,
                 std::byte* area, bool with_bytes) {
  // Each row names its own output, so any order and any subset of rows is fine.
  auto* out = area + l.blocks_off;
  for (std::size_t j = 0; j < rows.size(); ++j)
    std::memcpy(out + j * sizeof(decoder::Tier1Block), &batch.blocks[rows[j]], sizeof(decoder::Tier1Block));
  if (!batch.segments.empty())
    std::memcpy(area + l.segments_off, batch.segments.data(), sizeof(decoder::Tier1Segment) * batch.segments.size());
  if (with_bytes && !batch.bytes.empty()) std::memcpy(area + l.bytes_off, batch.bytes.data(), batch.bytes.size());
}

Tier1HostLayout plan_tier1_host(const decoder::Tier1Batch& batch, std::span<const std::uint32_t> rows) {
  Tier1HostLayout l;
  l.count = static_cast<int>(rows.size());
  std::uint64_t elems = 0;
  for (const std::uint32_t r : rows) elems += std::uint64_t{batch.blocks[r].width} * batch.blocks[r].height;
  l.table_off = 0;
  l.packed_off = align_up(sizeof(cuda::T1Scatter) * rows.size());
  l.end = align_up(l.packed_off + elems * 4);
  return l;
}

std::int32_t* stage_tier1_host(const decoder::Tier1Batch& batch, std::span<const std::uint32_t> rows,
                               const Tier1HostLayout& l, std::byte* area) {
  std::vector<std::uint64_t> offsets;
  decoder::tier1_packed_offsets(batch, rows, offsets);
  auto* table = reinterpret_cast<cuda::T1Scatter*>(area + l.table_off);
  for (std::size_t j = 0; j < rows.size(); ++j) {
    const decoder::Tier1Block& b = batch.blocks[rows[j]];
    table[j] = {b.out, offsets[j], b.stride, b.width, b.height};
  }
  return reinterpret_cast<std::int32_t*>(area + l.packed_off);
}

cudaError_t scatter_tier1_host(const Tier1HostLayout& l, const std::byte* dev, std::int32_t* coefficients,
                               cudaStream_t stream) {
  return cuda::launch_tier1_scatter(reinterpret_cast<const cuda::T1Scatter*>(dev + l.table_off), l.count,
                                    reinterpret_cast<const std::int32_t*>(dev + l.packed_off), coefficients, stream);
}

cuda::T1Launch tier1_launch(const Tier1Layout& l, const std::byte* dev, std::int32_t* coefficients, unsigned* damaged) {
  cuda::T1Launch L;
  L.blocks = reinterpret_cast<const cuda::T1Block*>(dev + l.blocks_off);
  L.count = l.count;
  L.segments = reinterpret_cast<const cuda::T1Segment*>(dev + l.segments_off);
  L.bytes = reinterpret_cast<const std::uint8_t*>(dev + l.bytes_off);
  L.shared_bytes = l.shared_bytes;
  L.coefficients = coefficients;
  L.damaged = damaged;
  return L;
}

}  // namespace detail

Result<Tier1GpuResult> decode_tier1_batch_emulated(const decoder::Tier1Batch& batch) {
  if (Status st = decoder::validate_tier1_batch(batch); !st) return st.error();
  Tier1Split split;
  split_tier1(batch, {}, split, 0);
  const detail::Tier1Layout l = detail::plan_tier1(batch, split.gpu_rows(), 0);
  std::vector<std::uint64_t> area(l.end / 8 + 1);
  auto* host = reinterpret_cast<std::byte*>(area.data());
  detail::stage_tier1(batch, split.gpu_rows(), l, host);
  Tier1GpuResult r;
  r.coefficients.assign(batch.coefficient_count, 0);
  unsigned damaged = 0;
  const cuda::T1Launch L = detail::tier1_launch(l, host, r.coefficients.data(), &damaged);
  static constexpr std::uint32_t kQe[47] = J2K_T1_QE_TABLE;
  std::vector<std::uint64_t> smem(l.shared_bytes / 8 + 1);
  for (int i = 0; i < L.count; ++i)
    if (!cuda::t1::run_block(L, i, reinterpret_cast<unsigned char*>(smem.data()), kQe, 0, 1)) ++damaged;
  r.damaged = damaged;
  return r;
}

namespace {
/// cudaFree on scope exit.
struct DeviceAlloc {
  void* p = nullptr;
  ~DeviceAlloc() {
    if (p) cudaFree(p);
  }
};
}  // namespace

int tier1_gpu_chains(int device) {
  int sms = 0;
  if (cudaSetDevice(device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return sms * std::max(1, cuda::tier1_blocks_per_sm(cuda::t1_shared_bytes(64, 64)));
}

Result<Tier1GpuResult> decode_tier1_batch_gpu(const decoder::Tier1Batch& batch, int device, long host_blocks) {
  if (!cuda_available()) return make_error(ErrorKind::unsupported, "CUDA: " + cuda_describe());
  if (Status st = decoder::validate_tier1_batch(batch); !st) return st.error();
  J2K_CUDA_TRY(cudaSetDevice(device));
  Tier1Split split;
  split_tier1(batch, {}, split, std::max(0L, host_blocks));
  const detail::Tier1Layout l = detail::plan_tier1(batch, split.gpu_rows(), 0);
  // The CPU's share after the kernel's tables, in the same copy.
  const detail::Tier1HostLayout hl = detail::plan_tier1_host(batch, split.host_rows());
  const std::size_t host_off = l.end;
  std::vector<std::byte> host(host_off + hl.end);
  detail::stage_tier1(batch, split.gpu_rows(), l, host.data());
  std::int32_t* packed = detail::stage_tier1_host(batch, split.host_rows(), hl, host.data() + host_off);
  const std::uint64_t host_damaged = decoder::decode_tier1_rows_cpu(batch, split.host_rows(), packed);
  // One allocation: tables, damaged counter, coefficients.
  const std::size_t counter_off = host.size();
  const std::size_t coeff_off = counter_off + 256;
  const std::size_t total = coeff_off + batch.coefficient_count * 4 + 4;
  DeviceAlloc mem;
  J2K_CUDA_TRY(cudaMalloc(&mem.p, total));
  auto* dev = static_cast<std::byte*>(mem.p);
  J2K_CUDA_TRY(cudaMemcpy(dev, host.data(), host.size(), cudaMemcpyHostToDevice));
  J2K_CUDA_TRY(cudaMemset(dev + counter_off, 0, total - counter_off));
  auto* damaged = reinterpret_cast<unsigned*>(dev + counter_off);
  auto* coefficients = reinterpret_cast<std::int32_t*>(dev + coeff_off);
  const cuda::T1Launch L = detail::tier1_launch(l, dev, coefficients, damaged);
  J2K_CUDA_TRY(cuda::launch_tier1(L, nullptr));
  J2K_CUDA_TRY(detail::scatter_tier1_host(hl, dev + host_off, coefficients, nullptr));
  Tier1GpuResult r;
  r.coefficients.resize(batch.coefficient_count);
  unsigned count = 0;
  J2K_CUDA_TRY(cudaMemcpy(&count, damaged, sizeof count, cudaMemcpyDeviceToHost));
  if (!r.coefficients.empty())
    J2K_CUDA_TRY(cudaMemcpy(r.coefficients.data(), dev + coeff_off, batch.coefficient_count * 4, cudaMemcpyDeviceToHost));
  r.damaged = count + host_damaged;
  r.host_blocks = split.host_count;
  return r;
}

}  // namespace j2k::gpu
