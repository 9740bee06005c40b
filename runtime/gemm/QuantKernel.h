#pragma once
// The inner kernels of products with quantized weights (runtime/gemm/QuantGemm.h), written
// once over vectors of W floats and compiled per instruction set beside the GEMM's micro tiles
// (runtime/gemm/Kernels*.cpp include this after MicroKernel.h). A weight row holds K values of
// `Bits` bits (8: one a byte; 4: two a byte, the low nibble first, a nibble u meaning u - 8)
// and one f16 scale per group of consecutive values (docs/language.md, "Quantized weights").

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "runtime/gemm/MicroKernel.h"

namespace {

template <int W> struct Bytes {
  typedef int32_t words __attribute__((vector_size(W * 4)));
  typedef int8_t signed_type __attribute__((vector_size(W)));
  typedef uint8_t type __attribute__((vector_size(W)));
  typedef uint8_t half_type __attribute__((vector_size(W / 2 > 0 ? W / 2 : 1)));
};

// Lane i of the result: lo[i / 2] for even i, hi[i / 2] for odd.
template <int W, size_t... I>
inline typename Bytes<W>::type interleave(typename Bytes<W>::half_type lo,
                                          typename Bytes<W>::half_type hi,
                                          std::index_sequence<I...>) {
  return __builtin_shufflevector(lo, hi, (I % 2 == 0 ? I / 2 : W / 2 + I / 2)...);
}

// Values [t, t + W) of a weight row, as floats (t even at 4 bits), before 4-bit's offset: the
// bytes at 8 bits, the nibbles u (0..15, meaning u - 8) at 4. By the instruction set's
// byte-to-word widening where it has one (GCC 12 converts a vector of bytes element by
// element), else by the vector extensions.
template <int W, int Bits> inline typename Vec<W>::type quant_load(const int8_t* row, int64_t t) {
  using V = typename Vec<W>::type;
#if defined(__AVX512F__)
  if constexpr (W == 16) {
    V v;
    __m128i bytes;
    if constexpr (Bits == 8) {
      bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + t));
      const __m512 f = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(bytes));
      std::memcpy(&v, &f, sizeof(v));
    } else {
      const __m128i packed = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(row + t / 2));
      const __m128i nibbles = _mm_set1_epi8(15);
      bytes = _mm_unpacklo_epi8(_mm_and_si128(packed, nibbles),
                                _mm_and_si128(_mm_srli_epi16(packed, 4), nibbles));
      const __m512 f = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(bytes));
      std::memcpy(&v, &f, sizeof(v));
    }
    return v;
  }
#endif
#if defined(__AVX2__)
  if constexpr (W == 8) {
    V v;
    __m128i bytes;
    if constexpr (Bits == 8) {
      bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(row + t));
      const __m256 f = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(bytes));
      std::memcpy(&v, &f, sizeof(v));
    } else {
      int32_t four;
      std::memcpy(&four, row + t / 2, 4);
      const __m128i packed = _mm_cvtsi32_si128(four);
      const __m128i nibbles = _mm_set1_epi8(15);
      bytes = _mm_unpacklo_epi8(_mm_and_si128(packed, nibbles),
                                _mm_and_si128(_mm_srli_epi16(packed, 4), nibbles));
      const __m256 f = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(bytes));
      std::memcpy(&v, &f, sizeof(v));
    }
    return v;
  }
#endif
  using Words = typename Bytes<W>::words;
  if constexpr (Bits == 8) {
    typename Bytes<W>::signed_type b;
    std::memcpy(&b, row + t, sizeof(b));
    return __builtin_convertvector(__builtin_convertvector(b, Words), V);
  } else {
    typename Bytes<W>::half_type b;
    std::memcpy(&b, row + t / 2, sizeof(b));
    const typename Bytes<W>::type u =
        interleave<W>(b & 15, b >> 4, std::make_index_sequence<W>{});
    return __builtin_convertvector(__builtin_convertvector(u, Words), V);
  }
}

// Values [t, t + 2W) as two vectors: at 4 bits on AVX-512, 16 bytes unpacked at once (their
// low and high nibbles interleaved by one unpack each way), else two quant_loads.
template <int W, int Bits>
inline void quant_load2(const int8_t* row, int64_t t, typename Vec<W>::type& first,
                        typename Vec<W>::type& second) {
#if defined(__AVX512F__)
  if constexpr (W == 16 && Bits == 4) {
    const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + t / 2));
    const __m128i nibbles = _mm_set1_epi8(15);
    const __m128i lo = _mm_and_si128(packed, nibbles);
    const __m128i hi = _mm_and_si128(_mm_srli_epi16(packed, 4), nibbles);
    const __m512 a = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_unpacklo_epi8(lo, hi)));
    const __m512 b = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_unpackhi_epi8(lo, hi)));
    std::memcpy(&first, &a, sizeof(first));
    std::memcpy(&second, &b, sizeof(second));
    return;
  }
#endif
  first = quant_load<W, Bits>(row, t);
  second = quant_load<W, Bits>(row, t + W);
}

// Value k of a weight row, unscaled.
template <int Bits> inline int quant_value(const int8_t* row, int64_t k) {
  if constexpr (Bits == 8) return row[k];
  const auto byte = static_cast<uint8_t>(row[k / 2]);
  return (k % 2 == 0 ? byte & 15 : byte >> 4) - 8;
}

inline float scale_value(uint16_t bits) { return widen(F16{bits}); }

// R rows of x (ldx apart) times weight rows [j0, j1): y[i * ldy + j] = sum over k of
// x[i, k] * value(j, k) * scale(j, k / group). Whole vectors when a group is: each group's
// products summed unscaled, then scaled once; at 4 bits the nibbles' offset comes off after,
// 8 * scale * (the group's sum of x), from `xsum` (R x groups).
template <int W, int Bits, int R>
void quant_tile(int64_t k, int64_t group, const float* __restrict x, int64_t ldx,
                const int8_t* __restrict w, int64_t row_bytes, const uint16_t* __restrict scales,
                int64_t j0, int64_t j1, float* __restrict y, int64_t ldy,
                const float* __restrict xsum) {
  using V = typename Vec<W>::type;
  const int64_t groups = k / group;
  for (int64_t j = j0; j < j1; ++j) {
    const int8_t* row = w + j * row_bytes;
    const uint16_t* s = scales + j * groups;
    if (group % W != 0) {
      for (int r = 0; r < R; ++r) {
        float sum = 0.0f;
        for (int64_t q = 0; q < k; ++q)
          sum += x[r * ldx + q] * (static_cast<float>(quant_value<Bits>(row, q)) *
                                   scale_value(s[q / group]));
        y[r * ldy + j] = sum;
      }
      continue;
    }
    V acc[R];
    float offset[R];
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      acc[r] = V{};
      offset[r] = 0.0f;
    }
    for (int64_t g = 0; g < groups; ++g) {
      V part[R];
#pragma GCC unroll 16
      for (int r = 0; r < R; ++r)
        part[r] = V{};
      int64_t t = g * group;
      for (; t + 2 * W <= (g + 1) * group; t += 2 * W) {
        V w0, w1;
        quant_load2<W, Bits>(row, t, w0, w1);
#pragma GCC unroll 16
        for (int r = 0; r < R; ++r)
          part[r] += load<W>(x + r * ldx + t) * w0 + load<W>(x + r * ldx + t + W) * w1;
      }
      for (; t < (g + 1) * group; t += W) {
        const V wv = quant_load<W, Bits>(row, t);
#pragma GCC unroll 16
        for (int r = 0; r < R; ++r)
          part[r] += load<W>(x + r * ldx + t) * wv;
      }
      const float scale = scale_value(s[g]);
#pragma GCC unroll 16
      for (int r = 0; r < R; ++r) {
        acc[r] += part[r] * scale;
        if constexpr (Bits == 4) offset[r] += scale * xsum[r * groups + g];
      }
    }
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      float sum = 0.0f;
      for (int l = 0; l < W; ++l)
        sum += acc[r][l];
      y[r * ldy + j] = Bits == 4 ? sum - 8.0f * offset[r] : sum;
    }
  }
}

// Rows of x in tiles of up to four.
template <int W, int Bits>
void quant_rows(int64_t m, int64_t k, int64_t group, const float* x, int64_t ldx, const int8_t* w,
                int64_t row_bytes, const uint16_t* scales, int64_t j0, int64_t j1, float* y,
                int64_t ldy, const float* xsum) {
  const int64_t groups = k / group;
  for (int64_t i = 0; i < m; i += 4) {
    const float* xi = x + i * ldx;
    const float* si = Bits == 4 ? xsum + i * groups : nullptr;
    float* yi = y + i * ldy;
    switch (std::min<int64_t>(4, m - i)) {
    case 1: quant_tile<W, Bits, 1>(k, group, xi, ldx, w, row_bytes, scales, j0, j1, yi, ldy, si); break;
    case 2: quant_tile<W, Bits, 2>(k, group, xi, ldx, w, row_bytes, scales, j0, j1, yi, ldy, si); break;
    case 3: quant_tile<W, Bits, 3>(k, group, xi, ldx, w, row_bytes, scales, j0, j1, yi, ldy, si); break;
    default: quant_tile<W, Bits, 4>(k, group, xi, ldx, w, row_bytes, scales, j0, j1, yi, ldy, si); break;
    }
  }
}

// out[q] = value(k0 + q) * its scale, q < count: a stretch of one weight row, whole groups a
// vector at a time where they are whole vectors.
template <int W, int Bits>
void quant_dequantize(const int8_t* row, const uint16_t* scales, int64_t group, int64_t k0,
                      int64_t count, float* out) {
  using V = typename Vec<W>::type;
  int64_t q = 0;
  if (group % W == 0)
    while (q < count) {
      const int64_t k = k0 + q, g = k / group, end = std::min(count, (g + 1) * group - k0);
      const float scale = scale_value(scales[g]);
      if (k % W != 0 || (end - q) % W != 0) break;
      for (; q < end; q += W) {
        V v = quant_load<W, Bits>(row, k0 + q);
        if constexpr (Bits == 4) v -= 8.0f;
        store<W>(out + q, v * scale);
      }
    }
  for (; q < count; ++q)
    out[q] = static_cast<float>(quant_value<Bits>(row, k0 + q)) * scale_value(scales[(k0 + q) / group]);
}

template <int W>
constexpr dsc::runtime::gemm::QuantKernels
quant_kernels_for(const char* isa, const dsc::runtime::gemm::GemmKernels* f32) {
  return dsc::runtime::gemm::QuantKernels{
      isa,
      f32,
      {&quant_rows<W, 8>, &quant_rows<W, 4>},
      {&quant_dequantize<W, 8>, &quant_dequantize<W, 4>},
  };
}

} // namespace
