// dsc.sgemm_chain (ir/LibraryRoutines.def): C = epilogue(A @ B) @ D over a batch of products,
// a block of A's rows at a time, so that A @ B (attention's scores) is never stored whole: each
// block of it lives in a scratch buffer of the thread that computes it, runs the epilogue
// (attention's scale, mask and softmax) there while it is in cache, and is multiplied by D
// straight into its rows of C. The blocks of every product of the batch are shared out over the
// runtime's pool; each runs the GEMM (runtime/gemm/Gemm.h) on its thread alone.

#include <algorithm>
#include <cstdint>

#include "runtime/HostABI.h"
#include "runtime/RoutineFailure.h"
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

// The call's two products: its operands (their offsets applied) and the sizes and strides.
struct Chain {
  const float *a, *b, *d;
  float* c;
  const dsc_strided_chain& s;
  const Epilogue* epilogue; // or null

  int64_t block_rows() const {
    const int64_t rows = std::max<int64_t>(kChainBlockFloats / std::max<int64_t>(s.n, 1), 1);
    const int64_t quantized = std::max(kBlockRowsQuantum, rows / kBlockRowsQuantum * kBlockRowsQuantum);
    return std::min(s.m, quantized);
  }

  // Rows [row0, row0 + rows) of product i.
  void run_block(const GemmKernels& K, int64_t i, int64_t row0, int64_t rows) const {
    float* p = chain_scratch.get(std::max<int64_t>(rows * s.n, 1));
    const Product first{.a = a + batch_offset(i, s.inner, s.a_outer, s.a_inner) + row0 * s.a_row,
                        .b = b + batch_offset(i, s.inner, s.b_outer, s.b_inner),
                        .c = p, .m = rows, .n = s.n, .k = s.k, .a_row = s.a_row, .a_col = s.a_col,
                        .b_row = s.b_row, .b_col = s.b_col, .ldc = s.n};
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
      e.row_base = i * s.m;
      e.run(row0, rows);
    }
    const Product second{.a = p, .b = d + batch_offset(i, s.inner, s.d_outer, s.d_inner),
                         .c = c + batch_offset(i, s.inner, s.c_outer, s.c_inner) + row0 * s.c_row,
                         .m = rows, .n = s.n2, .k = s.n, .a_row = s.n, .a_col = 1, .b_row = s.d_row,
                         .b_col = s.d_col, .ldc = s.c_row};
    multiply(K, second, /*parallel=*/false);
  }

  void run() const {
    if (s.batch <= 0 || s.inner <= 0 || s.m <= 0 || s.n < 0 || s.k < 0 || s.n2 < 0) return;
    const GemmKernels& K = kernels();
    const int64_t rows = block_rows();
    const int64_t blocks = (s.m + rows - 1) / rows;
    auto tasks = [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        const int64_t row0 = t % blocks * rows;
        run_block(K, t / blocks, row0, std::min(rows, s.m - row0));
      }
    };
    const int64_t count = s.batch * blocks;
    if (count > 1 && !ThreadPool::inside_parallel_region())
      global_thread_pool().parallel_for(count, 1, tasks);
    else
      tasks(0, count);
  }
};

} // namespace
} // namespace dsc::runtime::gemm

extern "C" void dsc_rt_gemm_chain_f32(const float* a, const float* b, const float* d, float* c,
                                      const dsc_strided_chain* chain) {
  dsc_rt_gemm_chain_f32_epilogue(a, b, d, c, chain, nullptr, nullptr, nullptr, 0, nullptr, 0, 0,
                                 -1);
}

extern "C" void dsc_rt_gemm_chain_f32_epilogue(const float* a, const float* b, const float* d,
                                               float* c, const dsc_strided_chain* chain,
                                               dsc_kernel_fn epilogue, void* const* buffers,
                                               const int64_t* row_bytes, int64_t num_buffers,
                                               const int64_t* symbols, int64_t num_symbols,
                                               int64_t rows_slot, int64_t first_row_slot) {
  dsc::runtime::run_routine(__func__, [&] {
    using namespace dsc::runtime::gemm;
    if (epilogue) {
      check_epilogue_args("dsc_rt_gemm_chain_f32_epilogue", num_buffers, num_symbols, rows_slot,
                          first_row_slot);
      if (num_buffers < 1) return; // no result to run on: documented as doing nothing
    }
    const dsc_strided_chain& s = *chain;
    for (int64_t x : {s.a_offset, s.a_outer, s.a_inner, s.a_row, s.a_col, s.b_offset, s.b_outer,
                      s.b_inner, s.b_row, s.b_col, s.d_offset, s.d_outer, s.d_inner, s.d_row, s.d_col,
                      s.c_offset, s.c_outer, s.c_inner, s.c_row})
      if (x < 0) return; // documented as doing nothing
    const Epilogue e{.kernel = epilogue, .buffers = buffers, .row_bytes = row_bytes,
                     .num_buffers = num_buffers, .symbols = symbols, .num_symbols = num_symbols,
                     .rows_slot = rows_slot, .first_row_slot = first_row_slot};
    const Chain products{a + s.a_offset, b + s.b_offset, d + s.d_offset, c + s.c_offset, s,
                         epilogue ? &e : nullptr};
    products.run();
  });
}
