#pragma once
// The parts of dsc's GEMM driver that the f32 products (runtime/gemm/Gemm.cpp) and the 16-bit
// ones (runtime/gemm/HalfGemm.cpp) share: the pool loop, the small-m path over any element type,
// and the batch of products behind the strided entry points.

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "runtime/HostABI.h"
#include "runtime/Matmul.h"
#include "runtime/ThreadPool.h"
#include "runtime/gemm/Gemm.h"
#include "runtime/gemm/Packing.h"

namespace dsc::runtime::gemm {

// Runs f(begin, end) over [0, n): on the pool when `threads` > 1, else inline.
template <typename F> void for_range(int threads, int64_t n, int64_t grain, F&& f) {
  if (threads > 1 && n > grain)
    global_thread_pool().parallel_for(n, grain, f);
  else
    f(0, n);
}

// m * n * k, saturated.
inline int64_t multiply_adds(int64_t m, int64_t n, int64_t k) {
  int64_t mn = 0, mnk = 0;
  if (__builtin_mul_overflow(m, n, &mn) || __builtin_mul_overflow(mn, k, &mnk))
    return std::numeric_limits<int64_t>::max();
  return mnk;
}

// Below this many multiply-adds a product runs on one thread (a pool loop costs microseconds).
constexpr int64_t kParallelWork = 1 << 17;

// The threads a product of m x n x k takes: the pool's, unless `parallel` is false, the caller
// is inside a parallel loop already, or the product is too small to split.
inline int product_threads(bool parallel, int64_t m, int64_t n, int64_t k) {
  if (parallel && !ThreadPool::inside_parallel_region() && multiply_adds(m, n, k) >= kParallelWork)
    return global_thread_pool().num_threads();
  return 1;
}

// The small-m path (Gemm.h's buckets): C (m x n, f32, ldc) = A (m x k, rows a_row apart,
// columns contiguous) @ B read in place, its rows (b_col == 1) or its columns (b_row == 1)
// contiguous. `tiles` is a table of the small-m kernels (GemmKernels, or HalfKernels::PerType
// for 16-bit elements E) for tiles of mr rows, nr columns and vectors of w floats. The columns
// are split over `threads`.
template <typename Tiles, typename E>
void small_m(const Tiles& tiles, int64_t mr, int64_t nr, int64_t w, int threads, const E* a,
             int64_t a_row, const E* b, int64_t b_row, int64_t b_col, float* c, int64_t ldc,
             int64_t m, int64_t n, int64_t k) {
  if (b_col == 1) {
    const int64_t full = n / nr;
    // Every row group of the columns at j that `kernel` (kernel[r]: r rows) covers, depth
    // block p0.
    auto columns = [&](const auto& kernel, int64_t j, int64_t p0) {
      for (int64_t row = 0; row < m; row += mr)
        kernel[std::min(mr, m - row)](std::min(kKc, k - p0), a + row * a_row + p0, a_row,
                                      b + p0 * b_row + j, b_row, c + row * ldc + j, ldc, p0 > 0);
    };
    // Depth blocks of kKc, so that the block of B (kKc x NR) stays in L1 across the rows.
    for_range(threads, full, 4, [&](int64_t begin, int64_t end) {
      for (int64_t jb = begin; jb < end; ++jb)
        for (int64_t p0 = 0; p0 < k; p0 += kKc)
          columns(tiles.small_m_tile, jb * nr, p0);
    });
    // The columns past the last full tile: whole vectors, then one by one.
    const int64_t vectors = full * nr + (n - full * nr) / w * w;
    for (int64_t p0 = 0; p0 < k; p0 += kKc) {
      for (int64_t j = full * nr; j < vectors; j += w)
        columns(tiles.small_m_vector_tile, j, p0);
      tiles.small_m_columns(m, n - vectors, std::min(kKc, k - p0), a + p0, a_row,
                            b + p0 * b_row + vectors, b_row, c + vectors, ldc, p0 > 0);
    }
    return;
  }
  // B's columns contiguous (stored transposed): four columns at a time as dot products.
  auto four = [&](const E* b4, int64_t ldb, float* c4, int64_t ldc4) {
    for (int64_t row = 0; row < m; row += mr)
      tiles.small_m_dot4(std::min(mr, m - row), k, a + row * a_row, a_row, b4, ldb,
                         c4 + row * ldc4, ldc4);
  };
  const int64_t full = n / 4;
  for_range(threads, full, 16, [&](int64_t begin, int64_t end) {
    for (int64_t jb = begin; jb < end; ++jb)
      four(b + jb * 4 * b_col, b_col, c + jb * 4, ldc);
  });
  const int64_t left = n - full * 4;
  if (left == 0) return;
  // The last one to three columns, copied into four (zeros after them).
  std::vector<E> last(static_cast<size_t>(4 * k), E{});
  for (int64_t j = 0; j < left; ++j)
    std::copy_n(b + (full * 4 + j) * b_col, k, last.begin() + j * k);
  std::vector<float> out(static_cast<size_t>(m * 4));
  four(last.data(), k, out.data(), 4);
  for (int64_t i = 0; i < m; ++i)
    std::copy_n(out.begin() + i * 4, left, c + i * ldc + full * 4);
}

// How the products of a batch lie: product i is (outer, inner) = (i / inner_count,
// i % inner_count) of a batch of at most two dims, and its A, B and C start at those indices
// times their strides (0 for A or B: shared by the batch).
struct Batch {
  int64_t count = 1, inner_count = 1;
  int64_t a_outer = 0, a_inner = 0, b_outer = 0, b_inner = 0, c_outer = 0, c_inner = 0;
  int64_t at(int64_t i, int64_t outer, int64_t inner) const {
    return i / inner_count * outer + i % inner_count * inner;
  }
  int64_t a_at(int64_t i) const { return at(i, a_outer, a_inner); }
  int64_t b_at(int64_t i) const { return at(i, b_outer, b_inner); }
  int64_t c_at(int64_t i) const { return at(i, c_outer, c_inner); }
  // Whether the rows of `rows`-row blocks at stride `row` follow on from one product to the
  // next (product i's at i * rows * row), given the strides `outer` and `inner`.
  bool rows_follow(int64_t rows, int64_t row, int64_t outer, int64_t inner) const {
    return (inner_count <= 1 || inner == rows * row) &&
           (count <= inner_count || outer == inner_count * rows * row);
  }
};

// The batch of products `p` (its a, b and c those of product 0, its ldc C's row stride), each
// by multiply(kernels, product, parallel, epilogue), then `epilogue` (null: none) over the rows
// of C viewed as (count * m) x n (C dense). P is a product with members a, b, c, m, n, k,
// a_row and ldc (Product, or HalfProduct).
template <typename K, typename P> void batched(const K& kernels, P p, const Batch& batch,
                                                 const Epilogue* epilogue) {
  const int64_t m = p.m, n = p.n, k = p.k;
  if (batch.count <= 0 || batch.inner_count <= 0 || m <= 0 || n < 0 || k < 0) return;
  if (n == 0) { // no elements, but the rows are final
    if (epilogue) epilogue->run(0, batch.count * m);
    return;
  }
  // A batch of A whose rows follow on from one product to the next, times one B, into C whose
  // rows follow on too, is one product with count * m rows.
  const bool b_shared = batch.b_outer == 0 && batch.b_inner == 0;
  if (batch.count > 1 && b_shared && batch.rows_follow(m, p.a_row, batch.a_outer, batch.a_inner) &&
      batch.rows_follow(m, p.ldc, batch.c_outer, batch.c_inner)) {
    p.m = batch.count * m;
    multiply(kernels, p, true, epilogue);
    return;
  }
  auto run = [&](int64_t begin, int64_t end, bool parallel) {
    for (int64_t i = begin; i < end; ++i) {
      P q = p;
      q.a = p.a + batch.a_at(i);
      q.b = p.b + batch.b_at(i);
      q.c = p.c + batch.c_at(i);
      if (!epilogue) {
        multiply(kernels, q, parallel, nullptr);
        continue;
      }
      Epilogue e = *epilogue; // product i holds rows [i * m, (i + 1) * m)
      e.row_base += i * m;
      multiply(kernels, q, parallel, &e);
    }
  };
  const int64_t work = multiply_adds(m, n, k);
  if (batch.count > 1 && !ThreadPool::inside_parallel_region() &&
      work < kParallelWork * global_thread_pool().num_threads()) {
    // Products too small to split well: one per thread at a time, whole.
    int64_t grain = std::max<int64_t>(1, kParallelWork / std::max<int64_t>(work, 1));
    global_thread_pool().parallel_for(batch.count, grain,
                                      [&](int64_t b, int64_t e) { run(b, e, false); });
    return;
  }
  run(0, batch.count, true);
}

// The strided entry points' common part (runtime/HostABI.h, dsc_rt_gemm_f32_strided_epilogue):
// product 0 of the batch `s` describes (`p` with its pointers at the buffers' starts), with the
// epilogue when `epilogue` is not null; `entry` names the entry point in the message of a
// broken epilogue argument.
template <typename K, typename P>
void strided_entry(const char* entry, const K& kernels, P p, const dsc_strided_product& s,
                   dsc_kernel_fn epilogue, void* const* buffers, const int64_t* row_bytes,
                   int64_t num_buffers, const int64_t* symbols, int64_t num_symbols,
                   int64_t rows_slot, int64_t first_row_slot) {
  if (epilogue) check_epilogue_args(entry, num_buffers, num_symbols, rows_slot, first_row_slot);
  if (!layout_valid(s)) return; // documented as doing nothing
  p.a += s.a_offset;
  p.b += s.b_offset;
  p.c += s.c_offset;
  p.m = s.m;
  p.n = s.n;
  p.k = s.k;
  p.a_row = s.a_row;
  p.a_col = s.a_col;
  p.b_row = s.b_row;
  p.b_col = s.b_col;
  p.ldc = s.c_row;
  const Batch b{s.batch, s.inner, s.a_outer, s.a_inner, s.b_outer, s.b_inner, s.c_outer, s.c_inner};
  if (!epilogue) {
    batched(kernels, p, b, nullptr);
    return;
  }
  // The epilogue's rows are those of a dense C (documented as doing nothing otherwise).
  if (s.c_offset != 0 || s.c_row != s.n || !b.rows_follow(s.m, s.n, s.c_outer, s.c_inner))
    return;
  const Epilogue e{.kernel = epilogue, .buffers = buffers, .row_bytes = row_bytes,
                   .num_buffers = num_buffers, .symbols = symbols, .num_symbols = num_symbols,
                   .rows_slot = rows_slot, .first_row_slot = first_row_slot};
  batched(kernels, p, b, &e);
}

} // namespace dsc::runtime::gemm
