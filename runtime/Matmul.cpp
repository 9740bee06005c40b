#include "runtime/Matmul.h"

#include <cblas.h>

#include <algorithm>
#include <limits>
#include <optional>

#include "runtime/HostABI.h"
#include "runtime/ThreadPool.h"

// OpenBLAS's own extension (declared by its cblas.h; repeated here so that another vendor's
// cblas.h still compiles: the library linked is always OpenBLAS).
extern "C" void openblas_set_num_threads(int num_threads);
extern "C" int openblas_get_num_threads(void);

namespace dsc::runtime {

namespace {

constexpr int64_t kBlasMax = std::numeric_limits<blasint>::max();

// A matrix (rows x cols, element (i, j) at i * row + j * col) as cblas reads it: stored as
// itself (a unit column stride) or transposed (a unit row stride), with its leading dimension.
struct BlasOperand {
  CBLAS_TRANSPOSE trans;
  int64_t ld;
};

std::optional<BlasOperand> blas_operand(int64_t row, int64_t col, int64_t rows, int64_t cols) {
  if (col == 1 && (rows == 1 || row >= cols)) return BlasOperand{CblasNoTrans, rows == 1 ? cols : row};
  if (row == 1 && (cols == 1 || col >= rows)) return BlasOperand{CblasTrans, cols == 1 ? rows : col};
  return std::nullopt;
}

// One product: C (m x n, rows ldc apart, columns contiguous) = A @ B, element (i, q) of A at
// a[i * a_row + q * a_col] and (q, j) of B at b[q * b_row + j * b_col]. cblas_sgemm where it
// can read both (one unit stride each, every stride within blasint), else plain loops.
void gemm(const float* a, int64_t a_row, int64_t a_col, const float* b, int64_t b_row,
          int64_t b_col, float* c, int64_t ldc, int64_t m, int64_t n, int64_t k) {
  if (m == 0 || n == 0) return;
  if (k == 0) { // sgemm may leave C untouched when k is 0
    for (int64_t i = 0; i < m; ++i)
      std::fill(c + i * ldc, c + i * ldc + n, 0.0f);
    return;
  }
  const std::optional<BlasOperand> oa = blas_operand(a_row, a_col, m, k);
  const std::optional<BlasOperand> ob = blas_operand(b_row, b_col, k, n);
  if (!oa || !ob || (m > 1 && ldc < n) || n > kBlasMax || k > kBlasMax ||
      std::max({oa->ld, ob->ld, ldc}) > kBlasMax) {
    sgemm_strided_loops(a, a_row, a_col, b, b_row, b_col, c, ldc, m, n, k);
    return;
  }
  // Only m may need blocks.
  for (int64_t row = 0; row < m; row += kBlasMax) {
    int64_t rows = std::min(kBlasMax, m - row);
    cblas_sgemm(CblasRowMajor, oa->trans, ob->trans, static_cast<blasint>(rows),
                static_cast<blasint>(n), static_cast<blasint>(k), 1.0f, a + row * a_row,
                static_cast<blasint>(oa->ld), b, static_cast<blasint>(ob->ld), 0.0f, c + row * ldc,
                static_cast<blasint>(std::max<int64_t>(ldc, n)));
  }
}

// m * n * k, saturated at int64's maximum.
int64_t multiply_adds(int64_t m, int64_t n, int64_t k) {
  int64_t mn = 0, mnk = 0;
  if (__builtin_mul_overflow(m, n, &mn) || __builtin_mul_overflow(mn, k, &mnk))
    return std::numeric_limits<int64_t>::max();
  return mnk;
}

} // namespace

void sgemm_strided_loops(const float* a, int64_t a_row, int64_t a_col, const float* b,
                         int64_t b_row, int64_t b_col, float* c, int64_t ldc, int64_t m, int64_t n,
                         int64_t k) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float sum = 0.0f;
      for (int64_t q = 0; q < k; ++q)
        sum += a[i * a_row + q * a_col] * b[q * b_row + j * b_col];
      c[i * ldc + j] = sum;
    }
}

void sgemm_loops(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k,
                 bool trans_b) {
  sgemm_strided_loops(a, k, 1, b, trans_b ? 1 : n, trans_b ? k : 1, c, n, m, n, k);
}

void set_blas_num_threads(int n) {
  openblas_set_num_threads(std::max(n, 1));
}

int blas_num_threads() {
  return openblas_get_num_threads();
}

} // namespace dsc::runtime

extern "C" void dsc_rt_matmul_f32(const float* a, const float* bm, float* c, int64_t batch,
                                  int64_t m, int64_t n, int64_t k, int64_t a_batch_stride,
                                  int64_t b_batch_stride, int64_t trans_b) {
  dsc::runtime::call_dense(&dsc_rt_matmul_f32_strided, a, bm, c, batch, m, n, k, a_batch_stride,
                           b_batch_stride, trans_b);
}

extern "C" void dsc_rt_matmul_f32_strided(const float* a, const float* bm, float* c,
                                          const dsc_strided_product* product) {
  using namespace dsc::runtime;
  const dsc_strided_product& p = *product;
  const int64_t batch = p.batch, inner = p.inner, m = p.m, n = p.n, k = p.k;
  // Compiled code never passes negative sizes or strides; do nothing rather than touch memory.
  if (batch <= 0 || inner <= 0 || m <= 0 || n <= 0 || k < 0 || !layout_valid(p)) return;
  // The pool sets OpenBLAS's thread count when it is made (DSC_NUM_THREADS): make it before
  // the first sgemm, even in a model with no parallel loop.
  global_thread_pool();
  a += p.a_offset;
  bm += p.b_offset;
  c += p.c_offset;
  // Product i is (i / inner, i % inner) of the batch's two dims.
  auto at = [inner](int64_t i, int64_t outer_stride, int64_t inner_stride) {
    return i / inner * outer_stride + i % inner * inner_stride;
  };
  // Whether rows `row` apart follow on from one product to the next.
  auto rows_follow = [&](int64_t row, int64_t outer, int64_t in) {
    return (inner <= 1 || in == m * row) && (batch <= inner || outer == inner * m * row);
  };
  // A batch of A whose rows follow on, times one B, into C whose rows follow on is a single
  // product of batch * m rows.
  if (batch > 1 && p.b_outer == 0 && p.b_inner == 0 && rows_follow(p.a_row, p.a_outer, p.a_inner) &&
      rows_follow(p.c_row, p.c_outer, p.c_inner)) {
    gemm(a, p.a_row, p.a_col, bm, p.b_row, p.b_col, c, p.c_row, batch * m, n, k);
    return;
  }
  auto run = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      gemm(a + at(i, p.a_outer, p.a_inner), p.a_row, p.a_col, bm + at(i, p.b_outer, p.b_inner),
           p.b_row, p.b_col, c + at(i, p.c_outer, p.c_inner), p.c_row, m, n, k);
  };
  const int64_t work = multiply_adds(m, n, k);
  if (batch > 1 && work < kSmallGemm && !ThreadPool::inside_parallel_region()) {
    // Small products, which OpenBLAS runs on one thread: spread the batch over the pool, at
    // least 64K multiply-adds per chunk.
    int64_t grain = std::max<int64_t>(1, (65536 + work - 1) / std::max<int64_t>(work, 1));
    global_thread_pool().parallel_for(batch, grain, run);
    return;
  }
  run(0, batch);
}
