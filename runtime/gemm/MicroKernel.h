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

#include <cstdint>
#include <cstring>
#include <utility>

#include "runtime/gemm/GemmKernels.h"

namespace {

template <int W> struct Vec {
  typedef float type __attribute__((vector_size(W * sizeof(float))));
};

template <int W> inline typename Vec<W>::type load(const float* p) {
  typename Vec<W>::type v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// A vector of W copies of *p (one broadcast load: `x - V{}` folds to nothing, unlike `V{} + x`,
// which would keep an addition for the sign of zero).
template <int W> inline typename Vec<W>::type broadcast(const float* p) {
  return *p - typename Vec<W>::type{};
}

template <int W> inline void store(float* p, typename Vec<W>::type v) {
  std::memcpy(p, &v, sizeof(v));
}

// C[0:R, 0:W*NV] (leading dimension ldc) = (accumulate ? C : 0) + sum over p < k of
// A(r, p) * B(p, :), where A(r, p) is a[r * a_row + p * a_step] and B(p, :) the NV vectors at
// b + p * b_step. Inlined into the two kernels below, whose constant strides it then compiles to.
// With PF > 0, B's rows are prefetched PF steps ahead (B read in place, a row per step far
// apart: the hardware prefetchers do not follow such strides).
template <int W, int NV, int R, int PF = 0>
[[gnu::always_inline]] inline void tile(int64_t k, const float* __restrict a, int64_t a_row,
                                        int64_t a_step, const float* __restrict b, int64_t b_step,
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
      for (int v = 0; v < NV; v += 16 / W > 0 ? 16 / W : 1)
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
// instead of packing it first.
template <int W, int NV, int R>
void small_m_tile(int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                  int64_t ldc, bool accumulate) {
  tile<W, NV, R, kSmallMPrefetch>(k, a, lda, 1, b, ldb, c, ldc, accumulate);
}

// The small-m kernel for B stored transposed (n x k): C[0:rows, 0:4] = dot products of A's rows
// with four rows of B, vectorized along k; the k % W tail in scalars.
template <int W, int MR>
void small_m_dot4(int64_t rows, int64_t k, const float* __restrict a, int64_t lda,
                  const float* __restrict b, int64_t ldb, float* __restrict c, int64_t ldc) {
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
        sum += a[r * lda + q] * b[j * ldb + q];
      c[r * ldc + j] = sum;
    }
}

// C[0:m, 0:n] (ldc) = (accumulate ? C : 0) + A[0:m, 0:k] (lda) @ B[0:k, 0:n] (ldb), one element
// at a time: the columns of the small-m path past its last full tile, one depth block at a time
// as the tiles go. Each element is the chain of multiply-adds in k order that a micro tile
// computes for it (fused where the tile's are, as this file is compiled with the tile's flags),
// so a product has the same bits whether its B is read in place or from a constant's pack.
void small_m_columns(int64_t m, int64_t n, int64_t k, const float* __restrict a, int64_t lda,
                     const float* __restrict b, int64_t ldb, float* __restrict c, int64_t ldc,
                     bool accumulate) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float sum = 0.0f;
      for (int64_t q = 0; q < k; ++q) {
#ifdef __FMA__
        // Explicit: left to contraction, GCC computes the products as a vector first.
        sum = __builtin_fmaf(a[i * lda + q], b[q * ldb + j], sum);
#else
        sum += a[i * lda + q] * b[q * ldb + j];
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
      {nullptr, &micro_tile<W, MR, NV, static_cast<int>(R) + 1>...},
      {nullptr, &small_m_tile<W, NV, static_cast<int>(R) + 1>...},
      {nullptr, &small_m_tile<W, 1, static_cast<int>(R) + 1>...},
      &small_m_dot4<W, MR>,
      &small_m_columns,
      pack_a_panel,
  };
}

template <int W, int MR, int NV>
constexpr dsc::runtime::gemm::GemmKernels kernels_for(
    const char* isa,
    void (*pack_a_panel)(const float*, int64_t, int64_t, float*, const float*) = nullptr) {
  return kernels_for<W, MR, NV>(isa, std::make_index_sequence<MR>{}, pack_a_panel);
}

} // namespace
