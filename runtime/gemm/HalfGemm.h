#pragma once
// dsc's GEMM over 16-bit floats: library routines "dsc.gemm_bf16" and "dsc.gemm_f16"
// (ir/LibraryRoutines.def), whose entry points dsc_rt_gemm_bf16_strided and
// dsc_rt_gemm_f16_strided (runtime/HostABI.h) take dsc.sgemm's arguments with A, B and C in
// 16 bits.
//
// What it computes is the definition of a 16-bit matmul (docs/language.md, "Precision"): each
// element of C is the sum of the products in f32, rounded once to C's type. So C is computed
// in an f32 buffer of the calling thread, and each block of its rows is rounded into C as soon
// as it is final; an epilogue then runs on that block of the 16-bit C, as on an f32 product's.
//
// Paths, by the buckets of the f32 GEMM (runtime/gemm/Gemm.h):
//   - m <= kSmallM, rows of A contiguous, rows or columns of B contiguous: A and B read in place
//     by the small-m kernels, every load widened to f32, so a decode step streams the 16-bit
//     weights (half the bytes of f32 ones);
//   - otherwise packed, A and B given to the f32 driver as PanelSources that widen each panel
//     to f32 for the f32 micro tiles or, for bf16 on a CPU with AVX512_BF16, lay it out in
//     pairs of depths for vdpbf16ps (runtime/gemm/KernelsAvx512Bf16.cpp). A B in declared
//     constant memory is packed once, as an f32 one is.
// DSC_GEMM_ISA=avx512bf16|avx512|avx2|generic picks the kernels, as for f32 (avx512 widens bf16
// even on a CPU with AVX512_BF16; f16 is widened everywhere: AVX512-FP16's arithmetic rounds to
// f16 at every step, which this definition does not allow).

#include <cstdint>
#include <string_view>

#include "runtime/gemm/Gemm.h"
#include "runtime/gemm/GemmKernels.h"

namespace dsc::runtime::gemm {

// One product of 16-bit floats, as Product (strides in elements).
struct HalfProduct {
  HalfType type = HalfType::BF16;
  const uint16_t* a = nullptr;
  const uint16_t* b = nullptr;
  uint16_t* c = nullptr;
  int64_t m = 0, n = 0, k = 0;
  int64_t a_row = 0, a_col = 1;
  int64_t b_row = 0, b_col = 1;
  int64_t ldc = 0;
};

// The 16-bit kernels in use (CPU features and DSC_GEMM_ISA, decided on first use).
const HalfKernels& half_kernels();
// The kernels for `isa` ("avx512bf16", "avx512", "avx2", "generic"), or null when this CPU
// cannot run them or the name is unknown.
const HalfKernels* half_kernels_named(std::string_view isa);

// Runs one product with `kernels`, as multiply() does an f32 one.
void multiply(const HalfKernels& kernels, const HalfProduct& p, bool parallel = true,
              const Epilogue* epilogue = nullptr);

} // namespace dsc::runtime::gemm
