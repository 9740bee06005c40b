// The bf16 GEMM kernels for AVX-512 with AVX512_BF16 (compiled with -mavx512f -mavx512bw
// -mavx512bf16): the 14 x 32 tile of the AVX-512 f32 kernels, but each step multiplies a pair
// of depths: vdpbf16ps adds a[2s] * b[2s] + a[2s + 1] * b[2s + 1] into each f32 accumulator
// lane, twice the multiply-adds of an FMA per instruction. Panels hold 32-bit words of two bf16
// (GemmKernels::depth_step 2), made by pack_bf16_pairs_avx512. The products of two bf16 are
// exact in f32; each pair's sum and its addition to the accumulator round to nearest even, with
// subnormal inputs and results flushed to zero (the instruction's definition), so results
// differ from the widened f32 kernels' in the last bits of the f32 accumulator only.
// GCC 12's AVX-512 intrinsics: as in KernelsAvx512.cpp.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <immintrin.h>

#include <cstring>
#include <utility>

#include "runtime/gemm/GemmKernels.h"

namespace {

constexpr int kRows = 14;
constexpr int kVectors = 2;
constexpr int kCols = 16 * kVectors;

template <int R>
void pair_tile(int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
               bool accumulate) {
  __m512 acc[R][kVectors];
#pragma GCC unroll 32
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 2
    for (int v = 0; v < kVectors; ++v)
      acc[r][v] = _mm512_setzero_ps();
  const int64_t steps = (kc + 1) / 2;
  const auto* words = reinterpret_cast<const int32_t*>(a);
#pragma GCC unroll 2
  for (int64_t s = 0; s < steps; ++s) {
    __m512bh bv[kVectors];
#pragma GCC unroll 2
    for (int v = 0; v < kVectors; ++v)
      bv[v] = (__m512bh)_mm512_loadu_si512(b + s * kCols + v * 16);
#pragma GCC unroll 32
    for (int r = 0; r < R; ++r) {
      const __m512bh av = (__m512bh)_mm512_set1_epi32(words[s * kRows + r]);
#pragma GCC unroll 2
      for (int v = 0; v < kVectors; ++v)
        acc[r][v] = _mm512_dpbf16_ps(acc[r][v], av, bv[v]);
    }
  }
#pragma GCC unroll 32
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 2
    for (int v = 0; v < kVectors; ++v) {
      float* out = c + r * ldc + v * 16;
      __m512 x = acc[r][v];
      if (accumulate) x = _mm512_add_ps(x, _mm512_loadu_ps(out));
      _mm512_storeu_ps(out, x);
    }
}

template <size_t... R>
constexpr dsc::runtime::gemm::GemmKernels pair_kernels(std::index_sequence<R...>) {
  return dsc::runtime::gemm::GemmKernels{
      "avx512bf16", kRows, kCols, 16, 2, {nullptr, &pair_tile<static_cast<int>(R) + 1>...},
      {},           {},    nullptr, nullptr, nullptr,
  };
}

inline void store_word(float* out, uint32_t word) { std::memcpy(out, &word, 4); }

} // namespace

namespace dsc::runtime::gemm {

const GemmKernels kAvx512Bf16PairKernels = pair_kernels(std::make_index_sequence<kRows>{});

void pack_bf16_pairs_avx512(const uint16_t* src, int64_t row, int64_t col, int64_t kc,
                            int64_t cols, int64_t out_width, float* out) {
  const int64_t steps = (kc + 1) / 2;
  for (int64_t s = 0; s < steps; ++s) {
    const uint16_t* low = src + 2 * s * row;
    const bool has_high = 2 * s + 1 < kc;
    const uint16_t* high = has_high ? low + row : nullptr;
    float* o = out + s * out_width;
    int64_t j = 0;
    if (col == 1) // B's rows: two rows' 16 columns interleaved at a time
      for (; j + 16 <= cols; j += 16) {
        const __m512i lo =
            _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(low + j)));
        const __m512i hi =
            has_high ? _mm512_cvtepu16_epi32(
                           _mm256_loadu_si256(reinterpret_cast<const __m256i*>(high + j)))
                     : _mm512_setzero_si512();
        _mm512_storeu_si512(o + j, _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16)));
      }
    for (; j < cols; ++j)
      store_word(o + j, uint32_t(low[j * col]) | (has_high ? uint32_t(high[j * col]) << 16 : 0u));
    for (; j < out_width; ++j)
      store_word(o + j, 0u);
  }
}

} // namespace dsc::runtime::gemm
