// The GEMM kernels for AVX2 with FMA (compiled with -mavx2 -mfma): a 6 x 16 tile in twelve
// 8-float accumulators, as the 16 ymm registers allow (12 + 2 for B + 1 for A).
#include "runtime/gemm/MicroKernel.h"

namespace dsc::runtime::gemm {
const GemmKernels kAvx2Kernels = kernels_for<8, 6, 2>("avx2");
} // namespace dsc::runtime::gemm
