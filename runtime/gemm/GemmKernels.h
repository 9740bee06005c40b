#pragma once
// One instruction set's inner kernels for dsc's GEMM (runtime/gemm/Gemm.h): a table of function
// pointers and the tile sizes they were compiled for. runtime/gemm/MicroKernel.h has the code;
// each runtime/gemm/Kernels*.cpp compiles it for one instruction set and defines one table.

#include <cstdint>

namespace dsc::runtime::gemm {

constexpr int kMaxMr = 14;

struct GemmKernels {
  const char* isa; // "avx512", "avx2", "generic"; "avx512bf16" (pairs, below)
  int mr;          // rows of C per micro tile
  int nr;          // columns of C per micro tile (a multiple of `width`)
  int width;       // floats per vector register
  // Values of the depth per packed step: 1, or 2 for kernels over pairs of bf16 (vdpbf16ps),
  // whose panels hold, per step, MR (or NR) 32-bit words of two values each, for depths 2s and
  // 2s + 1 (zero past the depth). A depth block of kc then takes ceil(kc / depth_step) steps.
  int depth_step;
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

// Steps of a packed depth block of kc.
inline int64_t packed_steps(const GemmKernels& k, int64_t kc) {
  return (kc + k.depth_step - 1) / k.depth_step;
}

// The 16-bit floats a product's operands may be (ir/DTypes.def's bf16 and f16), as an index.
enum class HalfType : uint8_t { BF16, F16 };
constexpr int kHalfTypes = 2;

// One instruction set's kernels for products of 16-bit operands, accumulated in f32
// (runtime/gemm/HalfGemm.h). Elements are passed as their bits.
struct HalfKernels {
  const char* isa;
  // The f32 kernels of the same instruction set, whose micro tiles multiply the panels the
  // widening packers make.
  const GemmKernels* f32;
  // Micro tiles over pairs of bf16 (depth_step 2), or null where the CPU has none; their panels
  // are made by pack_bf16_pairs.
  const GemmKernels* bf16_pairs;
  // Panel of pairs: out word (s, j), at out[s * out_width + j], holds elements (2s, j) and
  // (2s + 1, j) of the kc x cols block whose element (q, j) is src[q * row + j * col] (low half
  // first, zero past kc); zero words for j in [cols, out_width).
  void (*pack_bf16_pairs)(const uint16_t* src, int64_t row, int64_t col, int64_t kc, int64_t cols,
                          int64_t out_width, float* out);
  struct PerType {
    // The small-m kernels of GemmKernels over 16-bit A and B read in place, C in f32.
    void (*small_m_tile[kMaxMr + 1])(int64_t k, const uint16_t* a, int64_t lda, const uint16_t* b,
                                     int64_t ldb, float* c, int64_t ldc, bool accumulate);
    void (*small_m_vector_tile[kMaxMr + 1])(int64_t k, const uint16_t* a, int64_t lda,
                                            const uint16_t* b, int64_t ldb, float* c, int64_t ldc,
                                            bool accumulate);
    void (*small_m_dot4)(int64_t rows, int64_t k, const uint16_t* a, int64_t lda,
                         const uint16_t* b, int64_t ldb, float* c, int64_t ldc);
    void (*small_m_columns)(int64_t m, int64_t n, int64_t k, const uint16_t* a, int64_t lda,
                            const uint16_t* b, int64_t ldb, float* c, int64_t ldc,
                            bool accumulate);
    // A widened panel: out[q * out_width + j] = element (q, j) of the kc x cols block whose
    // element (q, j) is src[q * row + j * col], zeros for j in [cols, out_width). With B's
    // strides it is pack_b's panel of B; with A's, transposed (row = a_col, col = a_row),
    // pack_a's panel of A.
    void (*widen_panel)(const uint16_t* src, int64_t row, int64_t col, int64_t kc, int64_t cols,
                        int64_t out_width, float* out);
    // dst[j] = src[j] rounded to nearest even (NaN and infinity kept), j < n.
    void (*narrow)(const float* src, int64_t n, uint16_t* dst);
  } of[kHalfTypes];
  const PerType& operator[](HalfType t) const { return of[static_cast<int>(t)]; }
};

// One instruction set's kernels for products with quantized weights (runtime/gemm/QuantGemm.h;
// the format: docs/language.md, "Quantized weights"), indexed [0] for 8 bits, [1] for 4.
struct QuantKernels {
  const char* isa;
  const GemmKernels* f32; // the f32 kernels of the same instruction set (the larger products')
  // y[i * ldy + j] = sum over k < K of x[i * ldx + k] * value(j, k), rows i < m, weight rows
  // j in [j0, j1): row j's values at w + j * row_bytes, its K / group f16 scales at
  // scales + j * (K / group). At 4 bits, xsum (m x K / group) holds each group's sum of each
  // row of x (the nibbles' offset comes off with it); null at 8.
  void (*rows[2])(int64_t m, int64_t k, int64_t group, const float* x, int64_t ldx,
                  const int8_t* w, int64_t row_bytes, const uint16_t* scales, int64_t j0,
                  int64_t j1, float* y, int64_t ldy, const float* xsum);
  // out[q] = value(k0 + q) of one weight row (its scales at `scales`), q < count.
  void (*dequantize[2])(const int8_t* row, const uint16_t* scales, int64_t group, int64_t k0,
                        int64_t count, float* out);
};

// The tables, one per instruction set. Calling one whose instructions the CPU lacks is an
// illegal instruction: Gemm.cpp picks with the CPU's features.
extern const GemmKernels kAvx512Kernels;
extern const GemmKernels kAvx2Kernels;
extern const GemmKernels kGenericKernels;
extern const HalfKernels kAvx512Bf16HalfKernels; // AVX-512 with AVX512_BF16: bf16 in pairs
// Its pieces compiled with AVX512_BF16 (runtime/gemm/KernelsAvx512Bf16.cpp).
extern const GemmKernels kAvx512Bf16PairKernels;
void pack_bf16_pairs_avx512(const uint16_t* src, int64_t row, int64_t col, int64_t kc,
                            int64_t cols, int64_t out_width, float* out);
extern const HalfKernels kAvx512HalfKernels;
extern const HalfKernels kAvx2HalfKernels;
extern const HalfKernels kGenericHalfKernels;
extern const QuantKernels kAvx512QuantKernels;
extern const QuantKernels kAvx2QuantKernels;
extern const QuantKernels kGenericQuantKernels;

} // namespace dsc::runtime::gemm
