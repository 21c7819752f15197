// The tier-1 kernel compiled for x86-64-v3 (see t1_kernel.inl); chosen at run time by
// code_block_decoder.cpp where the CPU supports it. Built only on x86-64 with GCC/Clang.
#define J2K_T1_NS t1_v3
#include "tier1/t1_kernel.inl"
