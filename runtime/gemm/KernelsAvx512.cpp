// The GEMM kernels for AVX-512 (compiled with -mavx512f -mfma): a 14 x 32 tile in 28 16-float
// accumulators, of the 32 zmm registers (28 + 2 for B + 1 for A).
#include "runtime/gemm/MicroKernel.h"

namespace dsc::runtime::gemm {
const GemmKernels kAvx512Kernels = kernels_for<16, 14, 2>("avx512");
} // namespace dsc::runtime::gemm
