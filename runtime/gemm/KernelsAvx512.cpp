// The GEMM kernels for AVX-512 (compiled with -mavx512f -mfma -mf16c): a 14 x 32 tile in 28
// 16-float accumulators, of the 32 zmm registers (28 + 2 for B + 1 for A), and A's panels of 14
// rows packed 16 columns at a time by a transpose in registers; 16-bit operands widened, or bf16
// multiplied in pairs where the CPU has AVX512_BF16 (runtime/gemm/KernelsAvx512Bf16.cpp).
// GCC 12's AVX-512 intrinsics pass _mm512_undefined_ps() (a value initialized from itself) as
// the unused merge operand, which -Wmaybe-uninitialized reports once inlined here (and in
// MicroKernel.h's conversions); no value of it is read. (Clang, which the fuzzers build with,
// has no such warning.)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <immintrin.h>

#include "runtime/gemm/MicroKernel.h"
#include "runtime/gemm/QuantKernel.h"

namespace {


constexpr int kPanelRows = 14;

// 16 columns of 14 rows (two zero rows added), transposed in registers: after it, t[c] holds
// column c's 16 rows in order. Four steps of the usual in-lane unpacks and shuffles, then
// 128-bit lanes gathered across the four groups of four rows.
void transpose16(__m512 (&t)[16]) {
  __m512 u[16];
  for (int i = 0; i < 16; i += 2) {
    u[i] = _mm512_unpacklo_ps(t[i], t[i + 1]);     // per lane: r0c0 r1c0 r0c1 r1c1
    u[i + 1] = _mm512_unpackhi_ps(t[i], t[i + 1]); // per lane: r0c2 r1c2 r0c3 r1c3
  }
  for (int j = 0; j < 16; j += 4) { // per lane, rows 4g..4g+3 of the lane's column 0, 1, 2, 3
    t[j] = _mm512_shuffle_ps(u[j], u[j + 2], 0x44);
    t[j + 1] = _mm512_shuffle_ps(u[j], u[j + 2], 0xEE);
    t[j + 2] = _mm512_shuffle_ps(u[j + 1], u[j + 3], 0x44);
    t[j + 3] = _mm512_shuffle_ps(u[j + 1], u[j + 3], 0xEE);
  }
  // t[4g + m], lane L: rows 4g..4g+3 of column 4L + m. Column 4L + m gathers lane L of
  // t[m], t[4 + m], t[8 + m], t[12 + m].
  for (int m = 0; m < 4; ++m) {
    const __m512 low_a = _mm512_shuffle_f32x4(t[m], t[4 + m], 0x44);   // lanes 0 1 | 0 1
    const __m512 low_b = _mm512_shuffle_f32x4(t[8 + m], t[12 + m], 0x44);
    const __m512 high_a = _mm512_shuffle_f32x4(t[m], t[4 + m], 0xEE);  // lanes 2 3 | 2 3
    const __m512 high_b = _mm512_shuffle_f32x4(t[8 + m], t[12 + m], 0xEE);
    u[m] = _mm512_shuffle_f32x4(low_a, low_b, 0x88);       // lane 0 of each
    u[4 + m] = _mm512_shuffle_f32x4(low_a, low_b, 0xDD);   // lane 1
    u[8 + m] = _mm512_shuffle_f32x4(high_a, high_b, 0x88); // lane 2
    u[12 + m] = _mm512_shuffle_f32x4(high_a, high_b, 0xDD); // lane 3
  }
  for (int c = 0; c < 16; ++c) t[c] = u[c];
}

void pack_a_panel14(const float* a, int64_t a_row, int64_t kc, float* out, const float* next) {
  const __mmask16 rows = (1u << kPanelRows) - 1;
  int64_t q = 0;
  for (; q + 16 <= kc; q += 16) {
    __m512 t[16];
    for (int r = 0; r < kPanelRows; ++r) t[r] = _mm512_loadu_ps(a + r * a_row + q);
    t[14] = t[15] = _mm512_setzero_ps();
    // A row's block is only kc floats, too short a stream for the hardware prefetcher: fetch
    // the next panel's line for these columns while this one is transposed.
    if (next)
      for (int r = 0; r < kPanelRows; ++r) _mm_prefetch(next + r * a_row + q, _MM_HINT_T0);
    transpose16(t);
    for (int c = 0; c < 16; ++c) _mm512_mask_storeu_ps(out + (q + c) * kPanelRows, rows, t[c]);
  }
  for (; q < kc; ++q)
    for (int r = 0; r < kPanelRows; ++r) out[q * kPanelRows + r] = a[r * a_row + q];
}


} // namespace

namespace dsc::runtime::gemm {
const GemmKernels kAvx512Kernels = kernels_for<16, kPanelRows, 2>("avx512", &pack_a_panel14);
const HalfKernels kAvx512HalfKernels =
    half_kernels_for<16, kPanelRows, 2>("avx512", &kAvx512Kernels);
const HalfKernels kAvx512Bf16HalfKernels = half_kernels_for<16, kPanelRows, 2>(
    "avx512bf16", &kAvx512Kernels, &kAvx512Bf16PairKernels, &pack_bf16_pairs_avx512);
const QuantKernels kAvx512QuantKernels = quant_kernels_for<16>("avx512", &kAvx512Kernels);
} // namespace dsc::runtime::gemm
