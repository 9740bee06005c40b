#pragma once
// Products with weights quantized per group: library routines "dsc.gemm_q8" and "dsc.gemm_q4"
// (ir/LibraryRoutines.def; the op matmul_q, docs/language.md "Quantized weights"), entry
// points dsc_rt_gemm_q8_f32 and dsc_rt_gemm_q4_f32 (runtime/HostABI.h). y = x @ W^T, x f32
// [M, K], W's rows of K values (one per output, as nn.Linear holds them) at 8 or 4 bits with an
// f16 scale per group.
//
// The dequantized weights never exist whole in memory:
//   - up to kSmallM rows of x (a decode step): each weight row is streamed once, its values
//     widened to f32 and scaled a vector at a time, and multiplied into every row of x
//     (QuantKernels::rows; the outputs split over the runtime's pool). At 4 bits a step reads
//     0.56 bytes a weight, an eighth of f32's;
//   - more rows: dsc's f32 GEMM, whose B panels (kKc x NR of W^T) a PanelSource dequantizes as
//     the product packs them (QuantKernels::dequantize), never kept as a constant's pack.

#include <cstdint>

#include "runtime/gemm/GemmKernels.h"

namespace dsc::runtime::gemm {

// The quantized kernels of the instruction set the f32 GEMM uses (kernels()).
const QuantKernels& quant_kernels();

// y (m x n, dense) = x (m x k, dense) @ W^T for weights of `bits` (8 or 4): row j's values at
// w + j * (bits == 8 ? k : k / 2), its `groups` scales at scales + j * groups. Does nothing for
// sizes that are no such product (k not a multiple of groups, an odd k at 4 bits).
void multiply_quantized(const QuantKernels& kernels, int bits, const float* x, const int8_t* w,
                        const uint16_t* scales, float* y, int64_t m, int64_t n, int64_t k,
                        int64_t groups);

} // namespace dsc::runtime::gemm
