#include "dsp.hpp"

#if defined(J2K_T1_HAVE_V3)
#include <cpuid.h>
#endif

namespace j2k::decoder::own {

namespace {

unsigned read_cpu_flags() {
  unsigned flags = 0;
#if defined(J2K_T1_HAVE_V3)
  __builtin_cpu_init();
  // MOVBE (CPUID 1, ECX bit 22) and LZCNT (CPUID 0x80000001, ECX bit 5) are read with
  // cpuid: clang does not know them as __builtin_cpu_supports names.
  unsigned a = 0, b = 0, c = 0, d = 0;
  const bool movbe = __get_cpuid(1, &a, &b, &c, &d) && (c >> 22 & 1u);
  const bool lzcnt = __get_cpuid(0x80000001u, &a, &b, &c, &d) && (c >> 5 & 1u);
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2") &&
      __builtin_cpu_supports("fma") && movbe && lzcnt)
    flags |= kCpuX86_64_V3;
#endif
  return flags;
}

}  // namespace

unsigned cpu_flags() {
  static const unsigned flags = read_cpu_flags();
  return flags;
}

T1Dsp make_t1_dsp(unsigned mask) {
  const unsigned use = cpu_flags() & mask;
  T1Dsp t;
  t.run_passes = t1_base::run_passes;
#if defined(J2K_T1_HAVE_V3)
  if (use & kCpuX86_64_V3) t.run_passes = t1_v3::run_passes;
#endif
  (void)use;
  return t;
}

IdwtKernels make_idwt_dsp(unsigned mask) {
  const unsigned use = cpu_flags() & mask;
#define J2K_IDWT_SET(NS) \
  IdwtKernels { NS::band97, NS::band53, NS::copy97, NS::copy53, NS::ict_store, NS::rct_store }
  IdwtKernels k = J2K_IDWT_SET(idwt_base);
#if defined(J2K_T1_HAVE_V3)
  if (use & kCpuX86_64_V3) k = J2K_IDWT_SET(idwt_v3);
#endif
#undef J2K_IDWT_SET
  (void)use;
  return k;
}

const T1Dsp& t1_dsp() {
  static const T1Dsp table = make_t1_dsp(kCpuAll);
  return table;
}

const IdwtKernels& idwt_dsp() {
  static const IdwtKernels table = make_idwt_dsp(kCpuAll);
  return table;
}

}  // namespace j2k::decoder::own
