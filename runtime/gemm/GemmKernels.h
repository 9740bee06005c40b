#pragma once
// One instruction set's inner kernels for dsc's GEMM (runtime/gemm/Gemm.h): a table of function
// pointers and the tile sizes they were compiled for. runtime/gemm/MicroKernel.h has the code;
// each runtime/gemm/Kernels*.cpp compiles it for one instruction set and defines one table.

#include <cstdint>

namespace dsc::runtime::gemm {

constexpr int kMaxMr = 14;

struct GemmKernels {
  const char* isa; // "avx512", "avx2", "generic"
  int mr;          // rows of C per micro tile
  int nr;          // columns of C per micro tile (a multiple of `width`)
  int width;       // floats per vector register
  // micro_tile[r], for r in 1..mr: C[0:r, 0:nr] (ldc) = (accumulate ? C : 0) + the first r rows
  // of a packed A panel @ a packed B panel, depth kc. [mr] is the full tile.
  void (*micro_tile[kMaxMr + 1])(int64_t kc, const float* a, const float* b, float* c,
                                 int64_t ldc, bool accumulate);
  // small_m_tile[r], for r in 1..mr: C[0:r, 0:nr] (ldc) = (accumulate ? C : 0) + A[0:r, 0:k]
  // (lda) @ B[0:k, 0:nr] (ldb), unpacked.
  void (*small_m_tile[kMaxMr + 1])(int64_t k, const float* a, int64_t lda, const float* b,
                                   int64_t ldb, float* c, int64_t ldc, bool accumulate);
  // small_m_vector_tile[r]: the same over one vector of columns, C[0:r, 0:width], for the
  // columns past the last full tile.
  void (*small_m_vector_tile[kMaxMr + 1])(int64_t k, const float* a, int64_t lda, const float* b,
                                          int64_t ldb, float* c, int64_t ldc, bool accumulate);
  // C[0:rows, 0:4] (ldc) = A[0:rows, 0:k] (lda) @ B^T, B's four rows of k at b (ldb); rows <= mr.
  void (*small_m_dot4)(int64_t rows, int64_t k, const float* a, int64_t lda, const float* b,
                       int64_t ldb, float* c, int64_t ldc);
  // small_m_columns: C[0:m, 0:n] (ldc) = (accumulate ? C : 0) + A[0:m, 0:k] (lda) @ B[0:k, 0:n]
  // (ldb), element by element with the micro tile's own multiply-add chain: the columns past the
  // small-m path's last full vector.
  void (*small_m_columns)(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                          const float* b, int64_t ldb, float* c, int64_t ldc, bool accumulate);
  // A full panel of mr rows of A (rows a_row apart, columns contiguous), kc columns, packed as
  // pack_a lays it out (runtime/gemm/Packing.h): element (r, q) at out[q * mr + r]. `next`:
  // the next panel's first row, prefetched while this one is packed, or null. Null when the
  // instruction set has none: pack_a copies element by element.
  void (*pack_a_panel)(const float* a, int64_t a_row, int64_t kc, float* out, const float* next);
};

// The tables, one per instruction set. Calling one whose instructions the CPU lacks is an
// illegal instruction: Gemm.cpp picks with the CPU's features.
extern const GemmKernels kAvx512Kernels;
extern const GemmKernels kAvx2Kernels;
extern const GemmKernels kGenericKernels;

} // namespace dsc::runtime::gemm
