#include "runtime/Matmul.h"

#include <cblas.h>

#include <algorithm>
#include <limits>

#include "runtime/HostABI.h"
#include "runtime/ThreadPool.h"

// OpenBLAS's own extension (declared by its cblas.h; repeated here so that another vendor's
// cblas.h still compiles: the library linked is always OpenBLAS).
extern "C" void openblas_set_num_threads(int num_threads);
extern "C" int openblas_get_num_threads(void);

namespace dsc::runtime {

namespace {

constexpr int64_t kBlasMax = std::numeric_limits<blasint>::max();

// One product: C (m x n, dense) = A (m x k, dense) @ B (k x n; n x k when trans_b).
void gemm(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k, bool trans_b) {
  if (m == 0 || n == 0) return;
  if (k == 0) { // sgemm may leave C untouched when k is 0
    std::fill(c, c + m * n, 0.0f);
    return;
  }
  if (n > kBlasMax || k > kBlasMax) {
    sgemm_loops(a, b, c, m, n, k, trans_b);
    return;
  }
  // lda = k, ldb = n or k, and ldc = n fit; only m may need blocks.
  for (int64_t row = 0; row < m; row += kBlasMax) {
    int64_t rows = std::min(kBlasMax, m - row);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
                static_cast<blasint>(rows), static_cast<blasint>(n), static_cast<blasint>(k), 1.0f,
                a + row * k, static_cast<blasint>(k), b, static_cast<blasint>(trans_b ? k : n),
                0.0f, c + row * n, static_cast<blasint>(n));
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

void sgemm_loops(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k,
                 bool trans_b) {
  for (int64_t i = 0; i < m; ++i) {
    float* row = c + i * n;
    std::fill(row, row + n, 0.0f);
    const float* ai = a + i * k;
    if (trans_b) {
      for (int64_t j = 0; j < n; ++j) {
        const float* bj = b + j * k;
        float sum = 0.0f;
        for (int64_t p = 0; p < k; ++p)
          sum += ai[p] * bj[p];
        row[j] = sum;
      }
    } else {
      for (int64_t p = 0; p < k; ++p) {
        const float* bp = b + p * n;
        for (int64_t j = 0; j < n; ++j)
          row[j] += ai[p] * bp[j];
      }
    }
  }
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
  using namespace dsc::runtime;
  // Compiled code never passes negative sizes; do nothing rather than touch memory.
  if (batch <= 0 || m <= 0 || n <= 0 || k < 0 || a_batch_stride < 0 || b_batch_stride < 0) return;
  // The pool sets OpenBLAS's thread count when it is made (DSC_NUM_THREADS): make it before
  // the first sgemm, even in a model with no parallel loop.
  global_thread_pool();
  const bool tb = trans_b != 0;
  // A dense batch of A times one B is a single product with batch * m rows (C is dense, so
  // batch * m * n fits).
  if (batch > 1 && b_batch_stride == 0 && a_batch_stride == m * k) {
    gemm(a, bm, c, batch * m, n, k, tb);
    return;
  }
  auto run = [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b)
      gemm(a + b * a_batch_stride, bm + b * b_batch_stride, c + b * m * n, m, n, k, tb);
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
