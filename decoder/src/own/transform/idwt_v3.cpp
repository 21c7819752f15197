// The IDWT kernels compiled for x86-64-v3 (see idwt_kernels.inl); picked at run time.
#define J2K_IDWT_NS idwt_v3
#include "transform/idwt_kernels.inl"
