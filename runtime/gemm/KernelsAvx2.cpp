// The GEMM kernels for AVX2 with FMA (compiled with -mavx2 -mfma -mf16c): a 6 x 16 tile in
// twelve 8-float accumulators, as the 16 ymm registers allow (12 + 2 for B + 1 for A); 16-bit
// operands widened (F16C for f16).
#include "runtime/gemm/MicroKernel.h"
#include "runtime/gemm/QuantKernel.h"

namespace dsc::runtime::gemm {
const GemmKernels kAvx2Kernels = kernels_for<8, 6, 2>("avx2");
const HalfKernels kAvx2HalfKernels = half_kernels_for<8, 6, 2>("avx2", &kAvx2Kernels);
const QuantKernels kAvx2QuantKernels = quant_kernels_for<8>("avx2", &kAvx2Kernels);
} // namespace dsc::runtime::gemm
