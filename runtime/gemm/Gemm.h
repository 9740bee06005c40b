#pragma once
// dsc's own f32 GEMM: library routine "dsc.sgemm" (ir/LibraryRoutines.def), whose entry point
// dsc_rt_gemm_f32_strided (runtime/HostABI.h) reads A and B through strides (a permuted or
// split operand in place, with no copy); dsc_rt_gemm_f32 takes the arguments of the OpenBLAS
// route dsc_rt_matmul_f32 (runtime/Matmul.h).
//
// The algorithm is the one of Goto and van de Geijn ("Anatomy of high-performance matrix
// multiplication", 2008) as BLIS arranges it: C is computed in column blocks of kNc, depth
// blocks of kKc and row blocks of kMc. For each depth block, the block of B is packed into
// panels of NR columns (kKc x NR floats, which stay in L1 while a row block of A streams past)
// and A into panels of MR rows (a kMc x kKc block stays in L2). The micro tile (MR x NR
// accumulators in vector registers, runtime/gemm/MicroKernel.h) does the multiply-adds.
//
// The instruction set is chosen once, from the CPU's features: AVX-512, else AVX2 with FMA,
// else the SSE2 baseline. DSC_GEMM_ISA=avx512|avx2|generic asks for one (for tests and
// benchmarks); one the CPU lacks is refused with a warning on stderr and the default is used.
//
// Shapes, by bucket:
//   - m <= kSmallM: no packing; rows of A against B read in place, B streamed once per MR rows
//     (decode-style products, where packing B would cost as much as the product); also up to
//     kFewRows rows when B's rows are contiguous, n is whole vectors and B is small
//     (k * n <= kInPlaceB floats, about L1);
//   - otherwise packed, with the column and row blocks of each depth block split over the
//     runtime's thread pool (the packing too); up to three row blocks' rows (420 on AVX-512)
//     are one row block split by columns alone, so each panel of B is read once. Edge tiles
//     (m or n not a multiple of the tile) go through a scratch tile. With B packed already (a
//     constant) and A small enough, A is packed for every depth block at once and each thread
//     runs all the depth blocks of its tiles (two pool loops per product). An operand made
//     panel by panel (a PanelSource: a convolution's windows) always takes this path.
// Called from inside a parallel loop (a batch spread over the pool), one product runs on the
// calling thread. Packing buffers belong to the calling thread and grow as needed.
//
// An epilogue (dsc_rt_gemm_f32_epilogue in runtime/HostABI.h: a compiled kernel over rows of C,
// such as a bias and an activation) runs on each block of rows as soon as it is final, on the
// thread that finished it, while the block is still in cache. On the packed path that is a row
// block, once the last of its tasks is done (the tasks are those of a product without one);
// the small-m path, which splits columns, and k == 0 run it once over all rows at the end, and
// packed rows of one row block (split by columns) after the product, its rows split over the
// pool.
// Two products chained (C = epilogue(A @ B) @ D, a block of rows at a time) are
// runtime/gemm/Chain.cpp's.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runtime/HostABI.h"
#include "runtime/gemm/GemmKernels.h"

namespace dsc::runtime::gemm {

constexpr int64_t kKc = 256;  // depth block
constexpr int64_t kMc = 144;  // row block (rounded down to a multiple of MR)
constexpr int64_t kNc = 4096; // column block (rounded down to a multiple of NR)
constexpr int64_t kSmallM = 16;
// Up to this many rows over a B of at most kInPlaceB floats, n whole vectors, the small-m
// path too: packing A and B costs more than such a product (64x64x64: 130 -> 185 GFLOP/s).
constexpr int64_t kFewRows = 64;
constexpr int64_t kInPlaceB = 16384;

// One product: C (m x n, row stride ldc) = A (m x k) @ B (k x n), where A's element (i, q) is
// a[i * a_row + q * a_col] and B's element (q, j) is b[q * b_row + j * b_col] (strides in
// floats, not negative). Dense row-major A has a_row = k, a_col = 1; B stored transposed (n x k,
// as attention's K) has b_row = 1, b_col = k; a permuted or split operand read in place has
// other strides.
// An operand made panel by panel instead of read from memory. For B, `pack` writes what pack_b
// would of B's rows [p0, p0 + kc) and columns [col, col + cols): kc steps of nr floats, zeros
// past cols; for A, what pack_a would of A's rows [col, col + cols) and columns [p0, p0 + kc):
// kc steps of mr floats (passed as nr), zeros past cols. A convolution's unrolled windows come
// so (runtime/Conv2d.cpp): never stored whole, each panel made from the input as the product
// needs it.
// A source whose kernels take depth in pairs (GemmKernels::depth_step 2) writes their layout:
// ceil(kc / 2) steps of nr words. A 16-bit operand comes so too (runtime/gemm/HalfGemm.h),
// widened or paired as it is packed.
struct PanelSource {
  void (*pack)(const void* context, int64_t p0, int64_t kc, int64_t col, int64_t cols, int64_t nr,
               float* out) = nullptr;
  const void* context = nullptr;
  // The memory B's panels are made from, when it may be declared constant
  // (runtime/gemm/ConstantPacks.h): then the whole pack is kept, as for a B read from memory.
  // Null for panels made anew each time (a convolution's windows).
  const void* data = nullptr;
  size_t bytes = 0;
};

struct Product {
  const float* a = nullptr;
  const float* b = nullptr;
  // Instead of a or b, when not null; either takes the packed path.
  const PanelSource* a_panels = nullptr;
  const PanelSource* b_panels = nullptr;
  float* c = nullptr;
  int64_t m = 0, n = 0, k = 0;
  int64_t a_row = 0, a_col = 1;
  int64_t b_row = 0, b_col = 1;
  int64_t ldc = 0;
  bool b_transposed() const { return b_row == 1 && b_col != 1; }
};

// A kernel over rows of the product's C (dsc_rt_gemm_f32_epilogue). Rows here are counted
// from row_base, so that product i of a batch of m-row products (row_base = i * m) addresses
// its rows of buffers that span the whole batch.
struct Epilogue {
  static constexpr int64_t kMaxBuffers = 16;
  static constexpr int64_t kMaxSymbols = 64;
  dsc_kernel_fn kernel = nullptr;
  void* const* buffers = nullptr;
  const int64_t* row_bytes = nullptr; // per buffer: bytes per row, 0 for one not indexed by row
  int64_t num_buffers = 0;
  const int64_t* symbols = nullptr;
  int64_t num_symbols = 0;
  int64_t rows_slot = 0;       // the symbol that receives a call's row count
  int64_t first_row_slot = -1; // the symbol that receives a call's first row (-1: none)
  int64_t row_base = 0;
  // When not null, run on each block before the kernel (which may then be null), with the
  // block's first row counted from this product's: a 16-bit product's rounding of its f32 rows
  // into the result (runtime/gemm/HalfGemm.cpp).
  void (*finish_rows)(const void* context, int64_t row0, int64_t rows) = nullptr;
  const void* finish_context = nullptr;

  // Calls the kernel on rows [row0, row0 + rows) of this product.
  void run(int64_t row0, int64_t rows) const;
};

// An entry point's epilogue arrays within Epilogue's limits, rows_slot one of the symbols and
// first_row_slot one or -1. The compiler keeps to these; there is no call to record an error
// in, so a caller that breaks them is a bug in dsc, reported on stderr (naming `entry`) before
// it can write past the arrays, and the process aborts.
void check_epilogue_args(const char* entry, int64_t num_buffers, int64_t num_symbols,
                         int64_t rows_slot, int64_t first_row_slot);

// The kernels in use (CPU features and DSC_GEMM_ISA, decided on first use).
const GemmKernels& kernels();
// The kernels for `isa` ("avx512", "avx2", "generic"), or null when this CPU cannot run them
// or the name is unknown.
const GemmKernels* kernels_named(std::string_view isa);

// Runs one product with `kernels`, on the runtime's pool unless `parallel` is false or the
// caller is already inside a parallel loop, then `epilogue` (when not null) over its rows.
void multiply(const GemmKernels& kernels, const Product& p, bool parallel = true,
              const Epilogue* epilogue = nullptr);

} // namespace dsc::runtime::gemm
