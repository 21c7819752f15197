#pragma once
// CPU-feature dispatch of the own decoder's DSP kernels: one table per area (tier-1; the
// inverse wavelet transform with dequantisation, colour transform and store), filled once
// from cpuid. Nothing switches kernels at run time: a test that wants the portable kernels
// (or any subset) builds the table of a flags mask and calls each SIMD kernel beside its
// portable twin on the same inputs (tests/decoder_own/dsp_check_test.cpp, after dav1d's
// checkasm).
#include <memory>

#include "decoder/decoder.hpp"
#include "tier1/t1_kernel.hpp"
#include "transform/idwt.hpp"

namespace j2k::decoder::own {

/// Instruction-set features a kernel may need. A table built for a mask uses a kernel only
/// where both the mask and the CPU (and the build) have all that it needs, else the
/// portable kernel.
enum CpuFlag : unsigned {
  kCpuX86_64_V3 = 1u << 0,  ///< AVX2, BMI1/2, FMA, LZCNT, MOVBE (x86-64-v3 copies of the kernels)
};
constexpr unsigned kCpuAll = ~0u;
/// Every flag the dispatch knows, with its name (tests iterate over them).
struct CpuFlagName {
  unsigned flag;
  const char* name;
};
inline constexpr CpuFlagName kCpuFlagNames[] = {{kCpuX86_64_V3, "x86-64-v3"}};

/// The features this build can use on this CPU (read once).
unsigned cpu_flags();

/// Tier-1 (Annex D): one code-block's coding passes.
struct T1Dsp {
  bool (*run_passes)(const T1Kernel&) = nullptr;
};

/// The tables for cpu_flags() & mask (mask 0: the portable kernels).
T1Dsp make_t1_dsp(unsigned mask);
IdwtKernels make_idwt_dsp(unsigned mask);

/// The tables the decoder uses: every kernel this CPU supports (built once).
const T1Dsp& t1_dsp();
const IdwtKernels& idwt_dsp();

/// An own decoder whose kernels are those of cpu_flags() & mask (tests compare pictures
/// decoded with different masks).
std::unique_ptr<Decoder> make_own_decoder_for_cpu(unsigned mask, const DecodeLimits& limits = {});

}  // namespace j2k::decoder::own
