// cublas.sgemm's arguments (runtime/cuda/Cublas.h): the row-major product of
// dsc_rt_matmul_f32 as cuBLAS's column-major strided-batched GEMM. The plans are checked
// against the CPU's product through a plain column-major GEMM with cuBLAS's semantics, so the
// transposition trick is tested without a GPU.
#include "runtime/cuda/Cublas.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "runtime/Matmul.h"

namespace dsc::runtime::cuda {
namespace {

// cublasSgemmStridedBatched with alpha 1 and beta 0, column-major, on the host.
void column_major_gemm(const SgemmPlan& p, const float* a, const float* b, float* c) {
  for (int batch = 0; batch < p.batch; ++batch) {
    const float* ab = a + batch * p.stride_a;
    const float* bb = b + batch * p.stride_b;
    float* cb = c + batch * p.stride_c;
    for (int j = 0; j < p.n; ++j)
      for (int i = 0; i < p.m; ++i) {
        double sum = 0;
        for (int l = 0; l < p.k; ++l) {
          // op(A)(i, l): A is m x k (ld lda), or stored k x m when transposed.
          const float av = p.transa ? ab[l + i * p.lda] : ab[i + l * p.lda];
          sum += double(av) * bb[l + j * p.ldb];
        }
        cb[i + j * p.ldc] = static_cast<float>(sum);
      }
  }
}

struct Case {
  int64_t batch, m, n, k;
  int64_t a_stride, b_stride; // -1: dense
  bool trans_b;
};

void check(const Case& c) {
  SCOPED_TRACE("batch " + std::to_string(c.batch) + ", " + std::to_string(c.m) + "x" +
               std::to_string(c.k) + " @ " + std::to_string(c.k) + "x" + std::to_string(c.n) +
               (c.trans_b ? " (B transposed)" : ""));
  const int64_t as = c.a_stride < 0 ? c.m * c.k : c.a_stride;
  const int64_t bs = c.b_stride < 0 ? c.k * c.n : c.b_stride;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> a(static_cast<size_t>(as * (c.batch - 1) + c.m * c.k));
  std::vector<float> b(static_cast<size_t>(bs * (c.batch - 1) + c.k * c.n));
  for (float& x : a)
    x = d(rng);
  for (float& x : b)
    x = d(rng);

  SgemmPlan plan;
  std::string error;
  ASSERT_TRUE(plan_sgemm(c.batch, c.m, c.n, c.k, as, bs, c.trans_b, &plan, &error)) << error;
  ASSERT_EQ(plan.action, SgemmPlan::Action::Gemm);
  std::vector<float> got(static_cast<size_t>(c.batch * c.m * c.n), NAN);
  // cuBLAS's A is our B, its B our A.
  column_major_gemm(plan, b.data(), a.data(), got.data());

  std::vector<float> want(got.size());
  for (int64_t i = 0; i < c.batch; ++i)
    sgemm_loops(a.data() + i * as, b.data() + i * bs, want.data() + i * c.m * c.n, c.m, c.n, c.k,
                c.trans_b);
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 1e-4) << "element " << i;
}

TEST(CudaCublasPlan, MatchesTheRowMajorProduct) {
  check({1, 5, 7, 3, -1, -1, false});
  check({1, 5, 7, 3, -1, -1, true});
  check({3, 4, 6, 9, -1, -1, false});
  check({3, 4, 6, 9, -1, -1, true});
  check({2, 1, 1, 1, -1, -1, false});
  check({1, 13, 1, 17, -1, -1, true});
  // A broadcast B (the weight of a batched projection) and a broadcast A.
  check({4, 3, 5, 2, -1, 0, false});
  check({4, 3, 5, 2, -1, 0, true});
  check({4, 3, 5, 2, 0, -1, false});
}

TEST(CudaCublasPlan, Arguments) {
  SgemmPlan p;
  std::string error;
  // A is 12 x 64, B is 64 x 128 (or stored 128 x 64), batch 24 with B shared.
  ASSERT_TRUE(plan_sgemm(24, 12, 128, 64, 12 * 64, 0, false, &p, &error));
  EXPECT_EQ(p.action, SgemmPlan::Action::Gemm);
  EXPECT_FALSE(p.transa);
  EXPECT_EQ(p.m, 128);
  EXPECT_EQ(p.n, 12);
  EXPECT_EQ(p.k, 64);
  EXPECT_EQ(p.lda, 128);
  EXPECT_EQ(p.ldb, 64);
  EXPECT_EQ(p.ldc, 128);
  EXPECT_EQ(p.stride_a, 0);
  EXPECT_EQ(p.stride_b, 12 * 64);
  EXPECT_EQ(p.stride_c, 12 * 128);
  EXPECT_EQ(p.batch, 24);
  ASSERT_TRUE(plan_sgemm(24, 12, 128, 64, 12 * 64, 0, true, &p, &error));
  EXPECT_TRUE(p.transa);
  EXPECT_EQ(p.lda, 64);
}

TEST(CudaCublasPlan, NothingToDo) {
  SgemmPlan p;
  std::string error;
  for (auto [batch, m, n, k, as, bs] : std::vector<std::array<int64_t, 6>>{{0, 2, 2, 2, 4, 4},
                                                                           {2, 0, 2, 2, 4, 4},
                                                                           {2, 2, 0, 2, 4, 4},
                                                                           {-1, 2, 2, 2, 4, 4},
                                                                           {2, -2, 2, 2, 4, 4},
                                                                           {2, 2, 2, -2, 4, 4},
                                                                           {2, 2, 2, 2, -4, 4},
                                                                           {2, 2, 2, 2, 4, -4}}) {
    ASSERT_TRUE(plan_sgemm(batch, m, n, k, as, bs, false, &p, &error));
    EXPECT_EQ(p.action, SgemmPlan::Action::Nothing) << batch << " " << m << " " << n << " " << k;
  }
}

TEST(CudaCublasPlan, ZeroDepthZeroesC) {
  SgemmPlan p;
  std::string error;
  ASSERT_TRUE(plan_sgemm(3, 4, 5, 0, 0, 0, false, &p, &error));
  EXPECT_EQ(p.action, SgemmPlan::Action::Zero);
  EXPECT_EQ(p.zero_floats, 60);
}

TEST(CudaCublasPlan, SizesBeyondCublasInt) {
  SgemmPlan p;
  std::string error;
  EXPECT_FALSE(plan_sgemm(1, 3000000000, 2, 2, 0, 0, false, &p, &error));
  EXPECT_EQ(error, "m = 3000000000 does not fit cuBLAS's 32-bit int");
  EXPECT_FALSE(plan_sgemm(1, 2, 2, int64_t{1} << 31, 0, 0, true, &p, &error));
  EXPECT_EQ(error, "k = 2147483648 does not fit cuBLAS's 32-bit int");
  EXPECT_FALSE(plan_sgemm(int64_t{1} << 32, 2, 2, 2, 4, 4, false, &p, &error));
  EXPECT_EQ(error, "batch = 4294967296 does not fit cuBLAS's 32-bit int");
  EXPECT_FALSE(plan_sgemm(1, 2, 2147483648, 2, 4, 4, false, &p, &error));
  EXPECT_EQ(error, "n = 2147483648 does not fit cuBLAS's 32-bit int");
  // C's element count overflows int64, even with k == 0.
  EXPECT_FALSE(
      plan_sgemm(int64_t{1} << 40, int64_t{1} << 20, int64_t{1} << 20, 0, 0, 0, false, &p, &error));
  EXPECT_EQ(error, "C has 1099511627776 x 1048576 x 1048576 elements, more than int64 counts");
  // The largest int still fits.
  EXPECT_TRUE(plan_sgemm(1, 2147483647, 1, 1, 0, 0, false, &p, &error));
  EXPECT_EQ(p.n, 2147483647);
}

TEST(CudaCublasPlan, LoadingIsAnErrorMessageOrALibrary) {
  // Whether or not cuBLAS is installed, load() never aborts, and a failure says why.
  std::string error;
  const Cublas* cublas = Cublas::load(&error);
  if (!cublas) {
    EXPECT_NE(error.find("cuBLAS cannot be loaded"), std::string::npos) << error;
  }
  EXPECT_EQ(Cublas::load(nullptr), cublas); // loaded once
}

} // namespace
} // namespace dsc::runtime::cuda
