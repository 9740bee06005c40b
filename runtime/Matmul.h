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
// Sizes beyond blasint (int32) are split: rows of A and C in blocks, and a dense A with a
// broadcast B is folded into one product of batch * m rows. A k or n that does not fit
// blasint at all falls back to plain loops (such a product would need tens of gigabytes).

#include <cstdint>

namespace dsc::runtime {

// Below this many multiply-adds OpenBLAS 0.3 runs sgemm single-threaded
// (SMP_THRESHOLD_MIN * GEMM_MULTITHREAD_THRESHOLD = 65536 * 4).
constexpr int64_t kSmallGemm = 65536 * 4;

void set_blas_num_threads(int n);
// OpenBLAS's thread count as it stands (what `dscc run --bench` reports).
int blas_num_threads();

// C (m x n) = A (m x k) @ B (k x n; n x k when trans_b), all dense, with plain loops: the
// fallback for a k or n beyond blasint (exposed for tests).
void sgemm_loops(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k,
                 bool trans_b);

} // namespace dsc::runtime
