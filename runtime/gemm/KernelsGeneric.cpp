// The GEMM kernels for any x86-64 (SSE2, the baseline): a 4 x 8 tile in eight 4-float
// accumulators, of the 16 xmm registers; 16-bit operands widened (f16 in software).
#include "runtime/gemm/MicroKernel.h"
#include "runtime/gemm/QuantKernel.h"

namespace dsc::runtime::gemm {
const GemmKernels kGenericKernels = kernels_for<4, 4, 2>("generic");
const HalfKernels kGenericHalfKernels = half_kernels_for<4, 4, 2>("generic", &kGenericKernels);
const QuantKernels kGenericQuantKernels = quant_kernels_for<4>("generic", &kGenericKernels);
} // namespace dsc::runtime::gemm
