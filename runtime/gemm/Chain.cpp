// dsc.sgemm_chain (ir/LibraryRoutines.def): C = epilogue(A @ B) @ D over a batch of products,
// a block of A's rows at a time, so that A @ B (attention's scores) is never stored whole: each
// block of it lives in a scratch buffer of the thread that computes it, runs the epilogue
// (attention's scale, mask and softmax) there while it is in cache, and is multiplied by D
// straight into its rows of C. The blocks of every product of the batch are shared out over the
// runtime's pool; each runs the GEMM (runtime/gemm/Gemm.h) on its thread alone.

#include <algorithm>
#include <cstdint>

#include "runtime/HostABI.h"
#include "runtime/ThreadPool.h"
#include "runtime/gemm/Gemm.h"
#include "runtime/gemm/Scratch.h"

namespace dsc::runtime::gemm {
namespace {

// A block of A @ B holds about this many floats (128 KiB, well inside L2 with the packs), in
// rows of a multiple of kBlockRowsQuantum.
constexpr int64_t kChainBlockFloats = 32 * 1024;
constexpr int64_t kBlockRowsQuantum = 16;

thread_local Scratch chain_scratch;

// Where product i of a batch of at most two dims starts, given its strides.
int64_t batch_offset(int64_t i, int64_t inner_count, int64_t outer, int64_t inner) {
  return i / inner_count * outer + i % inner_count * inner;
}

struct Chain {
  const float *a, *b, *d;
  float* c;
  int64_t batch, inner, m, n, k, n2;
  int64_t a_outer, a_inner, a_row, a_col;
  int64_t b_outer, b_inner, b_row, b_col;
  int64_t d_outer, d_inner, d_row, d_col;
  int64_t c_outer, c_inner, c_row;
  const Epilogue* epilogue; // or null

  int64_t block_rows() const {
    const int64_t rows = std::max<int64_t>(kChainBlockFloats / std::max<int64_t>(n, 1), 1);
    const int64_t quantized = std::max(kBlockRowsQuantum, rows / kBlockRowsQuantum * kBlockRowsQuantum);
    return std::min(m, quantized);
  }

  // Rows [row0, row0 + rows) of product i.
  void run_block(const GemmKernels& K, int64_t i, int64_t row0, int64_t rows) const {
    float* p = chain_scratch.get(std::max<int64_t>(rows * n, 1));
    const Product first{.a = a + batch_offset(i, inner, a_outer, a_inner) + row0 * a_row,
                        .b = b + batch_offset(i, inner, b_outer, b_inner),
                        .c = p, .m = rows, .n = n, .k = k, .a_row = a_row, .a_col = a_col,
                        .b_row = b_row, .b_col = b_col, .ldc = n};
    multiply(K, first, /*parallel=*/false);
    if (epilogue) {
      // The block's own arrays: the result (the last buffer) is the scratch block, not offset.
      void* buffers[Epilogue::kMaxBuffers];
      int64_t row_bytes[Epilogue::kMaxBuffers];
      std::copy_n(epilogue->buffers, epilogue->num_buffers, buffers);
      std::copy_n(epilogue->row_bytes, epilogue->num_buffers, row_bytes);
      buffers[epilogue->num_buffers - 1] = p;
      row_bytes[epilogue->num_buffers - 1] = 0;
      Epilogue e = *epilogue;
      e.buffers = buffers;
      e.row_bytes = row_bytes;
      e.row_base = i * m;
      e.run(row0, rows);
    }
    const Product second{.a = p, .b = d + batch_offset(i, inner, d_outer, d_inner),
                         .c = c + batch_offset(i, inner, c_outer, c_inner) + row0 * c_row,
                         .m = rows, .n = n2, .k = n, .a_row = n, .a_col = 1, .b_row = d_row,
                         .b_col = d_col, .ldc = c_row};
    multiply(K, second, /*parallel=*/false);
  }

  void run() const {
    if (batch <= 0 || inner <= 0 || m <= 0 || n < 0 || k < 0 || n2 < 0) return;
    const GemmKernels& K = kernels();
    const int64_t rows = block_rows();
    const int64_t blocks = (m + rows - 1) / rows;
    auto tasks = [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        const int64_t row0 = t % blocks * rows;
        run_block(K, t / blocks, row0, std::min(rows, m - row0));
      }
    };
    const int64_t count = batch * blocks;
    if (count > 1 && !ThreadPool::inside_parallel_region())
      global_thread_pool().parallel_for(count, 1, tasks);
    else
      tasks(0, count);
  }
};

} // namespace
} // namespace dsc::runtime::gemm

extern "C" void dsc_rt_gemm_chain_f32(
    const float* a, const float* b, const float* d, float* c, int64_t batch, int64_t inner,
    int64_t m, int64_t n, int64_t k, int64_t a_offset, int64_t a_outer, int64_t a_inner,
    int64_t a_row, int64_t a_col, int64_t b_offset, int64_t b_outer, int64_t b_inner,
    int64_t b_row, int64_t b_col, int64_t n2, int64_t d_offset, int64_t d_outer, int64_t d_inner,
    int64_t d_row, int64_t d_col, int64_t c_offset, int64_t c_outer, int64_t c_inner,
    int64_t c_row) {
  dsc_rt_gemm_chain_f32_epilogue(a, b, d, c, batch, inner, m, n, k, a_offset, a_outer, a_inner,
                                 a_row, a_col, b_offset, b_outer, b_inner, b_row, b_col, n2,
                                 d_offset, d_outer, d_inner, d_row, d_col, c_offset, c_outer,
                                 c_inner, c_row, nullptr, nullptr, nullptr, 0, nullptr, 0, 0, -1);
}

extern "C" void dsc_rt_gemm_chain_f32_epilogue(
    const float* a, const float* b, const float* d, float* c, int64_t batch, int64_t inner,
    int64_t m, int64_t n, int64_t k, int64_t a_offset, int64_t a_outer, int64_t a_inner,
    int64_t a_row, int64_t a_col, int64_t b_offset, int64_t b_outer, int64_t b_inner,
    int64_t b_row, int64_t b_col, int64_t n2, int64_t d_offset, int64_t d_outer, int64_t d_inner,
    int64_t d_row, int64_t d_col, int64_t c_offset, int64_t c_outer, int64_t c_inner,
    int64_t c_row, dsc_kernel_fn epilogue, void* const* buffers, const int64_t* row_bytes,
    int64_t num_buffers, const int64_t* symbols, int64_t num_symbols, int64_t rows_slot,
    int64_t first_row_slot) {
  using namespace dsc::runtime::gemm;
  if (epilogue) {
    check_epilogue_args("dsc_rt_gemm_chain_f32_epilogue", num_buffers, num_symbols, rows_slot,
                        first_row_slot);
    if (num_buffers < 1) return; // no result to run on: documented as doing nothing
  }
  for (int64_t x : {a_offset, a_outer, a_inner, a_row, a_col, b_offset, b_outer, b_inner, b_row,
                    b_col, d_offset, d_outer, d_inner, d_row, d_col, c_offset, c_outer, c_inner,
                    c_row})
    if (x < 0) return; // documented as doing nothing
  const Epilogue e{.kernel = epilogue, .buffers = buffers, .row_bytes = row_bytes,
                   .num_buffers = num_buffers, .symbols = symbols, .num_symbols = num_symbols,
                   .rows_slot = rows_slot, .first_row_slot = first_row_slot};
  const Chain chain{a + a_offset, b + b_offset, d + d_offset, c + c_offset, batch, inner, m, n, k,
                    n2, a_outer, a_inner, a_row, a_col, b_outer, b_inner, b_row, b_col, d_outer,
                    d_inner, d_row, d_col, c_outer, c_inner, c_row, epilogue ? &e : nullptr};
  chain.run();
}
