#pragma once
// The register-blocked inner kernels of dsc's own GEMM (runtime/gemm/Gemm.h), written once over
// a vector of W floats with GCC's vector extensions and compiled once per instruction set: each
// runtime/gemm/Kernels*.cpp includes this header with its own flags (-mavx2 -mfma, -mavx512f,
// or none) and exports one GemmKernels table. Everything here has internal linkage, so the
// copies compiled for different instruction sets never meet at link time.
//
// The tile: MR rows of C times NR = NV * W columns, held in MR * NV vector accumulators for the
// whole depth kc. A is read from a packed panel (kc steps of MR consecutive floats), B from a
// packed panel (kc steps of NR consecutive floats, aligned to the vector), so each step is NV
// vector loads of B, MR broadcasts of A and MR * NV fused multiply-adds.
//
// The small-m kernels also read 16-bit operands in place (products of f16 or bf16 matrices,
// runtime/gemm/HalfGemm.h): each load widens to f32 and the accumulators are f32, so the
// same code serves every element type (F16 and BF16 below tag the bits).

#include <cstdint>
#include <cstring>
#include <utility>

#if defined(__F16C__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "runtime/gemm/GemmKernels.h"
#include "support/HalfFloat.h"

namespace {

// The bits of one 16-bit float, by kind: the element types of a 16-bit operand.
struct BF16 {
  uint16_t bits;
};
struct F16 {
  uint16_t bits;
};

template <int W> struct Vec {
  typedef float type __attribute__((vector_size(W * sizeof(float))));
  typedef uint32_t words __attribute__((vector_size(W * sizeof(uint32_t))));
  typedef uint16_t halves __attribute__((vector_size(W * sizeof(uint16_t))));
};

inline float widen(float x) { return x; }
inline float widen(BF16 x) { return dsc::bf16_to_float(x.bits); }
inline float widen(F16 x) {
#if defined(__F16C__)
  return _cvtsh_ss(x.bits);
#else
  return dsc::half_to_float(x.bits);
#endif
}

template <int W> inline typename Vec<W>::type load(const float* p) {
  typename Vec<W>::type v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// W bf16 values widened: each one's bits are the top half of its f32.
template <int W> inline typename Vec<W>::type load(const BF16* p) {
  using Bits = typename Vec<W>::halves;
  using Wide = typename Vec<W>::words;
  Bits h;
  std::memcpy(&h, p, sizeof(h));
  const Wide w = __builtin_convertvector(h, Wide) << 16;
  typename Vec<W>::type v;
  std::memcpy(&v, &w, sizeof(v));
  return v;
}

// W f16 values widened, by the instruction set's conversion (GCC's vector conversion of
// _Float16 goes element by element).
template <int W> inline typename Vec<W>::type load(const F16* p) {
  typename Vec<W>::type v;
#if defined(__AVX512F__)
  if constexpr (W == 16) {
    const __m512 x = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    std::memcpy(&v, &x, sizeof(v));
    return v;
  }
#endif
#if defined(__F16C__)
  if constexpr (W == 8) {
    const __m256 x = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    std::memcpy(&v, &x, sizeof(v));
    return v;
  }
#endif
  for (int i = 0; i < W; ++i)
    v[i] = widen(p[i]);
  return v;
}

// A vector of W copies of *p widened (one broadcast load: `x - V{}` folds to nothing, unlike
// `V{} + x`, which would keep an addition for the sign of zero).
template <int W, typename T> inline typename Vec<W>::type broadcast(const T* p) {
  return widen(*p) - typename Vec<W>::type{};
}

// Floats per cache line: the prefetches' stride.
inline constexpr int kLine = 16;

template <int W> inline void store(float* p, typename Vec<W>::type v) {
  std::memcpy(p, &v, sizeof(v));
}

// C[0:R, 0:W*NV] (leading dimension ldc) = (accumulate ? C : 0) + sum over p < k of
// A(r, p) * B(p, :), where A(r, p) is a[r * a_row + p * a_step] and B(p, :) the NV vectors at
// b + p * b_step (elements of A and B widened to f32). Inlined into the two kernels below,
// whose constant strides it then compiles to. With PF > 0, B's rows are prefetched PF steps
// ahead (B read in place, a row per step far apart: the hardware prefetchers do not follow such
// strides).
template <int W, int NV, int R, int PF = 0, typename TA = float, typename TB = float>
[[gnu::always_inline]] inline void tile(int64_t k, const TA* __restrict a, int64_t a_row,
                                        int64_t a_step, const TB* __restrict b, int64_t b_step,
                                        float* __restrict c, int64_t ldc, bool accumulate) {
  using V = typename Vec<W>::type;
  V acc[R][NV];
#pragma GCC unroll 32
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v)
      acc[r][v] = V{};
#pragma GCC unroll 32
  for (int r = 0; r < R; ++r)
    __builtin_prefetch(c + r * ldc, 1);
#pragma GCC unroll 4
  for (int64_t p = 0; p < k; ++p) {
    if constexpr (PF > 0) {
#pragma GCC unroll 8
      for (int v = 0; v < NV; v += kLine / W > 0 ? kLine / W : 1)
        __builtin_prefetch(b + (p + PF) * b_step + v * W);
    }
    V bv[NV];
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v)
      bv[v] = load<W>(b + p * b_step + v * W);
#pragma GCC unroll 32
    for (int r = 0; r < R; ++r) {
      V av = broadcast<W>(a + r * a_row + p * a_step);
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v)
        acc[r][v] += av * bv[v];
    }
  }
#pragma GCC unroll 32
  for (int r = 0; r < R; ++r) {
    float* row = c + r * ldc;
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) {
      V out = acc[r][v];
      if (accumulate) out += load<W>(row + v * W);
      store<W>(row + v * W, out);
    }
  }
}

// The micro tile: R <= MR rows of an A panel packed for MR rows (MR floats per step, rows past
// R unused) times a B panel packed NR = W * NV floats per step, over depth kc.
template <int W, int MR, int NV, int R>
void micro_tile(int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
                bool accumulate) {
  tile<W, NV, R>(kc, a, 1, MR, b, W * NV, c, ldc, accumulate);
}

// How many rows of B ahead the small-m kernel prefetches.
inline constexpr int kSmallMPrefetch = 16;

// The small-m kernel: R rows of A (row stride lda) times B (row stride ldb) read in place, no
// packing. B is read once for all R rows, so a product with few rows streams B at memory speed
// instead of packing it first. `E` is the element type of A and B (float, BF16 or F16); the
// table's entries take raw pointers (uint16_t for 16-bit elements).
template <int W, int NV, int R, typename E = float, typename P = const float*>
void small_m_tile(int64_t k, P a, int64_t lda, P b, int64_t ldb, float* c, int64_t ldc,
                  bool accumulate) {
  tile<W, NV, R, kSmallMPrefetch>(k, reinterpret_cast<const E*>(a), lda, 1,
                                  reinterpret_cast<const E*>(b), ldb, c, ldc, accumulate);
}

// The small-m kernel for B stored transposed (n x k): C[0:rows, 0:4] = dot products of A's rows
// with four rows of B, vectorized along k; the k % W tail in scalars.
template <int W, int MR, typename E = float, typename P = const float*>
void small_m_dot4(int64_t rows, int64_t k, P a_bits, int64_t lda, P b_bits, int64_t ldb,
                  float* __restrict c, int64_t ldc) {
  const E* __restrict a = reinterpret_cast<const E*>(a_bits);
  const E* __restrict b = reinterpret_cast<const E*>(b_bits);
  using V = typename Vec<W>::type;
  constexpr int NB = 4;
  V acc[MR][NB];
#pragma GCC unroll 32
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int j = 0; j < NB; ++j)
      acc[r][j] = V{};
  int64_t p = 0;
  for (; p + W <= k; p += W) {
    V bv[NB];
#pragma GCC unroll 4
    for (int j = 0; j < NB; ++j)
      bv[j] = load<W>(b + j * ldb + p);
#pragma GCC unroll 32
    for (int r = 0; r < MR; ++r) {
      if (r >= rows) break;
      V av = load<W>(a + r * lda + p);
#pragma GCC unroll 4
      for (int j = 0; j < NB; ++j)
        acc[r][j] += av * bv[j];
    }
  }
  for (int r = 0; r < MR && r < rows; ++r)
    for (int j = 0; j < NB; ++j) {
      float sum = 0.0f;
      for (int l = 0; l < W; ++l)
        sum += acc[r][j][l];
      for (int64_t q = p; q < k; ++q)
        sum += widen(a[r * lda + q]) * widen(b[j * ldb + q]);
      c[r * ldc + j] = sum;
    }
}

// C[0:m, 0:n] (ldc) = (accumulate ? C : 0) + A[0:m, 0:k] (lda) @ B[0:k, 0:n] (ldb), one element
// at a time: the columns of the small-m path past its last full tile, one depth block at a time
// as the tiles go. Each element is the chain of multiply-adds in k order that a micro tile
// computes for it (fused where the tile's are, as this file is compiled with the tile's flags),
// so a product has the same bits whether its B is read in place or from a constant's pack.
template <typename E = float, typename P = const float*>
void small_m_columns(int64_t m, int64_t n, int64_t k, P a_bits, int64_t lda, P b_bits, int64_t ldb,
                     float* __restrict c, int64_t ldc, bool accumulate) {
  const E* __restrict a = reinterpret_cast<const E*>(a_bits);
  const E* __restrict b = reinterpret_cast<const E*>(b_bits);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float sum = 0.0f;
      for (int64_t q = 0; q < k; ++q) {
#ifdef __FMA__
        // Explicit: left to contraction, GCC computes the products as a vector first.
        sum = __builtin_fmaf(widen(a[i * lda + q]), widen(b[q * ldb + j]), sum);
#else
        sum += widen(a[i * lda + q]) * widen(b[q * ldb + j]);
#endif
      }
      c[i * ldc + j] = accumulate ? sum + c[i * ldc + j] : sum;
    }
}

template <int W, int MR, int NV, size_t... R>
constexpr dsc::runtime::gemm::GemmKernels kernels_for(
    const char* isa, std::index_sequence<R...>,
    void (*pack_a_panel)(const float*, int64_t, int64_t, float*, const float*)) {
  static_assert(MR <= dsc::runtime::gemm::kMaxMr);
  return dsc::runtime::gemm::GemmKernels{
      isa,
      MR,
      W * NV,
      W,
      1,
      {nullptr, &micro_tile<W, MR, NV, static_cast<int>(R) + 1>...},
      {nullptr, &small_m_tile<W, NV, static_cast<int>(R) + 1>...},
      {nullptr, &small_m_tile<W, 1, static_cast<int>(R) + 1>...},
      &small_m_dot4<W, MR>,
      &small_m_columns<>,
      pack_a_panel,
  };
}

template <int W, int MR, int NV>
constexpr dsc::runtime::gemm::GemmKernels kernels_for(
    const char* isa,
    void (*pack_a_panel)(const float*, int64_t, int64_t, float*, const float*) = nullptr) {
  return kernels_for<W, MR, NV>(isa, std::make_index_sequence<MR>{}, pack_a_panel);
}

// The widened panel of HalfKernels::widen_panel: element (q, j) of the block at
// src[q * row + j * col], whole vectors where a step's elements are contiguous (B's rows).
template <int W, typename E>
void widen_panel(const uint16_t* bits, int64_t row, int64_t col, int64_t kc, int64_t cols,
                 int64_t out_width, float* __restrict out) {
  const E* src = reinterpret_cast<const E*>(bits);
  for (int64_t q = 0; q < kc; ++q) {
    const E* in = src + q * row;
    float* o = out + q * out_width;
    int64_t j = 0;
    if (col == 1)
      for (; j + W <= cols; j += W)
        store<W>(o + j, load<W>(in + j));
    for (; j < cols; ++j)
      o[j] = widen(in[j * col]);
    for (; j < out_width; ++j)
      o[j] = 0.0f;
  }
}

// f32 to bf16, W at a time: round to nearest even on the bits; NaN keeps its top bits, quieted.
template <int W> void narrow_bf16(const float* src, int64_t n, uint16_t* dst) {
  using Wide = typename Vec<W>::words;
  using Bits = typename Vec<W>::halves;
  int64_t j = 0;
  for (; j + W <= n; j += W) {
    Wide x;
    std::memcpy(&x, src + j, sizeof(x));
    const Wide rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
    const Wide quiet = (x >> 16) | 0x40u;
    const Wide nan = (Wide)((x & 0x7fffffffu) > 0x7f800000u); // all ones where NaN
    const Bits b = __builtin_convertvector((nan & quiet) | (~nan & rounded), Bits);
    std::memcpy(dst + j, &b, sizeof(b));
  }
  for (; j < n; ++j)
    dst[j] = dsc::float_to_bf16(src[j]);
}

// f32 to f16, by the instruction set's conversion where it has one (round to nearest even).
template <int W> void narrow_f16(const float* src, int64_t n, uint16_t* dst) {
  int64_t j = 0;
#if defined(__AVX512F__)
  if constexpr (W == 16)
    for (; j + 16 <= n; j += 16)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + j),
                          _mm512_cvtps_ph(_mm512_loadu_ps(src + j), _MM_FROUND_TO_NEAREST_INT));
#endif
#if defined(__F16C__)
  for (; j + 8 <= n; j += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + j),
                     _mm256_cvtps_ph(_mm256_loadu_ps(src + j), _MM_FROUND_TO_NEAREST_INT));
#endif
  for (; j < n; ++j)
    dst[j] = dsc::float_to_half(src[j]);
}

template <int W, int MR, int NV, typename E, size_t... R>
constexpr dsc::runtime::gemm::HalfKernels::PerType half_kernels_of(
    std::index_sequence<R...>, void (*narrow)(const float*, int64_t, uint16_t*)) {
  using P = const uint16_t*;
  return {
      {nullptr, &small_m_tile<W, NV, static_cast<int>(R) + 1, E, P>...},
      {nullptr, &small_m_tile<W, 1, static_cast<int>(R) + 1, E, P>...},
      &small_m_dot4<W, MR, E, P>,
      &small_m_columns<E, P>,
      &widen_panel<W, E>,
      narrow,
  };
}

// The 16-bit kernels of an instruction set whose f32 kernels are `f32` (kernels_for<W, MR, NV>),
// with `bf16_pairs` and `pack_bf16_pairs` where the CPU multiplies pairs of bf16.
template <int W, int MR, int NV>
constexpr dsc::runtime::gemm::HalfKernels half_kernels_for(
    const char* isa, const dsc::runtime::gemm::GemmKernels* f32,
    const dsc::runtime::gemm::GemmKernels* bf16_pairs = nullptr,
    void (*pack_bf16_pairs)(const uint16_t*, int64_t, int64_t, int64_t, int64_t, int64_t,
                            float*) = nullptr) {
  return dsc::runtime::gemm::HalfKernels{
      isa,
      f32,
      bf16_pairs,
      pack_bf16_pairs,
      {half_kernels_of<W, MR, NV, BF16>(std::make_index_sequence<MR>{}, &narrow_bf16<W>),
       half_kernels_of<W, MR, NV, F16>(std::make_index_sequence<MR>{}, &narrow_f16<W>)},
  };
}

} // namespace
