#pragma once
// dsc_rt_matmul_f32 (HostABI.h) over OpenBLAS's cblas_sgemm.
//
// Threads: OpenBLAS has its own thread pool. The runtime sets its size to the runtime pool's
// (set_blas_num_threads, called whenever the global pool is created or resized), so that
// DSC_NUM_THREADS and dsc_set_num_threads govern both. A batch of small products (fewer than
// kSmallGemm multiply-adds each, which OpenBLAS runs on one thread anyway) is spread over the
// runtime's pool, one sgemm per batch element; anything larger is one sgemm per batch element
// in order, each threaded by OpenBLAS. Called from inside a parallel loop, the batch runs in
// order on the calling thread.
//
// Operands are read through strides (dsc_rt_matmul_f32_strided): each matrix as itself or
// transposed, whichever of its strides is 1. Sizes beyond blasint (int32) are split: rows of A
// and C in blocks, and a batch of A whose rows follow on, times one B, is folded into one
// product of batch * m rows. A k, n or leading dimension that does not fit blasint, or an
// operand with no unit stride, falls back to plain loops.

#include <cstdint>
#include <initializer_list>

#include "runtime/HostABI.h"

namespace dsc::runtime {

// dsc_rt_matmul_f32's product (HostABI.h) as a strided one: a batch of dense row-major A
// (m x k) and B (k x n, or stored n x k when trans_b) at the given batch strides (0 shares
// one), into a dense C.
inline dsc_strided_product dense_product(int64_t batch, int64_t m, int64_t n, int64_t k,
                                         int64_t a_batch_stride, int64_t b_batch_stride,
                                         bool trans_b) {
  dsc_strided_product p{};
  p.batch = batch, p.inner = 1, p.m = m, p.n = n, p.k = k;
  p.a_outer = a_batch_stride, p.a_row = k, p.a_col = 1;
  p.b_outer = b_batch_stride, p.b_row = trans_b ? 1 : n, p.b_col = trans_b ? k : 1;
  p.c_outer = m * n, p.c_row = n;
  return p;
}

// dsc_rt_matmul_f32's dense arguments (HostABI.h) through a strided entry point.
inline void call_dense(dsc_strided_sgemm_fn* strided, const float* a, const float* bm, float* c,
                       int64_t batch, int64_t m, int64_t n, int64_t k, int64_t a_batch_stride,
                       int64_t b_batch_stride, int64_t trans_b) {
  const dsc_strided_product p =
      dense_product(batch, m, n, k, a_batch_stride, b_batch_stride, trans_b != 0);
  strided(a, bm, c, &p);
}

// Whether none of `p`'s offsets and strides is negative (the strided entry points do nothing
// for one that is).
inline bool layout_valid(const dsc_strided_product& p) {
  for (int64_t x : {p.a_offset, p.a_outer, p.a_inner, p.a_row, p.a_col, p.b_offset, p.b_outer,
                    p.b_inner, p.b_row, p.b_col, p.c_offset, p.c_outer, p.c_inner, p.c_row})
    if (x < 0) return false;
  return true;
}

// Below this many multiply-adds OpenBLAS 0.3 runs sgemm single-threaded
// (SMP_THRESHOLD_MIN * GEMM_MULTITHREAD_THRESHOLD = 65536 * 4).
constexpr int64_t kSmallGemm = 65536 * 4;

void set_blas_num_threads(int n);
// OpenBLAS's thread count as it stands (what `dscc run --bench` reports).
int blas_num_threads();

// C (m x n) = A (m x k) @ B (k x n; n x k when trans_b), all dense, with plain loops (for
// tests).
void sgemm_loops(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k,
                 bool trans_b);

// C (m x n, rows ldc apart) = A @ B with plain loops, A's element (i, q) at a[i * a_row +
// q * a_col] and B's (q, j) at b[q * b_row + j * b_col]: the fallback for what cblas_sgemm
// cannot take (an operand with no unit stride, a size beyond blasint).
void sgemm_strided_loops(const float* a, int64_t a_row, int64_t a_col, const float* b,
                         int64_t b_row, int64_t b_col, float* c, int64_t ldc, int64_t m, int64_t n,
                         int64_t k);

} // namespace dsc::runtime
