#include "runtime/Matmul.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "runtime/HostABI.h"
#include "runtime/ThreadPool.h"
#include "runtime/dsc_runtime.h"

// The two entry points of batched f32 matmul that compiled code calls: OpenBLAS's route
// ("blas.sgemm") and dsc's own GEMM ("dsc.sgemm"). Every case runs on both.
namespace dsc::runtime {
namespace {

using MatmulEntry = void (*)(const float*, const float*, float*, int64_t, int64_t, int64_t, int64_t,
                             int64_t, int64_t, int64_t);

class MatmulF32 : public ::testing::TestWithParam<MatmulEntry> {};

struct Case {
  int64_t batch, m, n, k;
  int64_t a_stride, b_stride; // -1: dense (m*k, k*n)
  bool trans_b;
};

std::vector<float> random_floats(size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v)
    x = d(rng);
  return v;
}

// Runs one case against plain double-precision loops; C has guard elements after it that
// must stay untouched.
void check(MatmulEntry matmul, const Case& c, std::mt19937& rng) {
  int64_t as = c.a_stride < 0 ? c.m * c.k : c.a_stride;
  int64_t bs = c.b_stride < 0 ? c.k * c.n : c.b_stride;
  auto a = random_floats(static_cast<size_t>((c.batch - 1) * as + c.m * c.k + 1), rng);
  auto b = random_floats(static_cast<size_t>((c.batch - 1) * bs + c.k * c.n + 1), rng);
  const size_t c_size = static_cast<size_t>(c.batch * c.m * c.n);
  std::vector<float> out(c_size + 16, std::nanf(""));
  matmul(a.data(), b.data(), out.data(), c.batch, c.m, c.n, c.k, as, bs, c.trans_b);
  for (int64_t p = 0; p < c.batch; ++p) {
    for (int64_t i = 0; i < c.m; ++i) {
      for (int64_t j = 0; j < c.n; ++j) {
        double want = 0;
        for (int64_t q = 0; q < c.k; ++q) {
          double bv = c.trans_b ? b[static_cast<size_t>(p * bs + j * c.k + q)]
                                : b[static_cast<size_t>(p * bs + q * c.n + j)];
          want += a[static_cast<size_t>(p * as + i * c.k + q)] * bv;
        }
        float got = out[static_cast<size_t>((p * c.m + i) * c.n + j)];
        ASSERT_NEAR(got, want, 1e-5 * static_cast<double>(c.k + 1))
            << "batch " << c.batch << " m " << c.m << " n " << c.n << " k " << c.k << " strides "
            << as << "," << bs << " trans_b " << c.trans_b << " at [" << p << ", " << i << ", " << j
            << "]";
      }
    }
  }
  for (size_t g = c_size; g < out.size(); ++g)
    ASSERT_TRUE(std::isnan(out[g])) << "wrote past C";
}

TEST_P(MatmulF32, AwkwardSizes) {
  std::mt19937 rng(1);
  const int64_t sizes[] = {1, 2, 3, 7, 17, 33, 64, 101};
  for (int64_t m : sizes)
    for (int64_t n : sizes)
      for (int64_t k : {1, 5, 17, 33, 130})
        for (bool t : {false, true})
          check(GetParam(), {1, m, n, k, -1, -1, t}, rng);
}

TEST_P(MatmulF32, BatchesAndStrides) {
  std::mt19937 rng(2);
  for (int64_t batch : {1, 2, 3, 5})
    for (bool t : {false, true})
      for (auto [m, n, k] :
           {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1}, {3, 5, 7}, {17, 13, 33}, {4, 33, 2}}) {
        check(GetParam(), {batch, m, n, k, -1, -1, t}, rng);               // dense
        check(GetParam(), {batch, m, n, k, -1, 0, t}, rng);                // one B for every A (folded)
        check(GetParam(), {batch, m, n, k, 0, -1, t}, rng);                // one A for every B
        check(GetParam(), {batch, m, n, k, 0, 0, t}, rng);                 // both broadcast
        check(GetParam(), {batch, m, n, k, m * k + 3, k * n + 5, t}, rng); // gaps between matrices
      }
}

TEST_P(MatmulF32, EmptyInnerDimZeroesC) {
  std::mt19937 rng(3);
  check(GetParam(), {1, 3, 4, 0, -1, -1, false}, rng);
  check(GetParam(), {2, 3, 4, 0, -1, 0, true}, rng);
}

TEST_P(MatmulF32, EmptyOutputWritesNothing) {
  std::vector<float> out(8, std::nanf(""));
  float a[4] = {1, 2, 3, 4}, b[4] = {1, 2, 3, 4};
  GetParam()(a, b, out.data(), 1, 0, 2, 2, 0, 0, 0);
  GetParam()(a, b, out.data(), 1, 2, 0, 2, 0, 0, 0);
  GetParam()(a, b, out.data(), 0, 2, 2, 2, 0, 0, 0);
  GetParam()(a, b, out.data(), -1, 2, 2, 2, 0, 0, 0); // invalid: ignored
  for (float v : out)
    EXPECT_TRUE(std::isnan(v));
}

TEST_P(MatmulF32, ManySmallProductsSpreadOverThePool) {
  std::mt19937 rng(4);
  dsc_set_num_threads(4);
  check(GetParam(), {300, 4, 5, 6, -1, -1, false}, rng);
  check(GetParam(), {257, 8, 8, 8, -1, -1, true}, rng);
  check(GetParam(), {100, 1, 1, 1, 0, -1, false}, rng);
  dsc_set_num_threads(1);
  check(GetParam(), {300, 4, 5, 6, -1, -1, false}, rng);
  dsc_set_num_threads(0);
}

TEST_P(MatmulF32, InsideAParallelLoop) {
  // From a parallel body the batch runs on the calling thread.
  ThreadPool pool(3);
  std::vector<std::mt19937> rngs;
  for (int i = 0; i < 6; ++i)
    rngs.emplace_back(10 + i);
  pool.parallel_for(6, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      check(GetParam(), {50, 3, 4, 5, -1, -1, i % 2 == 1}, rngs[static_cast<size_t>(i)]);
  });
}

TEST(MatmulBlas, LoopFallbackMatchesBlas) {
  std::mt19937 rng(5);
  for (bool t : {false, true}) {
    for (auto [m, n, k] :
         {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1}, {7, 17, 33}, {33, 5, 0}, {2, 64, 3}}) {
      auto a = random_floats(static_cast<size_t>(m * k), rng);
      auto b = random_floats(static_cast<size_t>(k * n), rng);
      std::vector<float> want(static_cast<size_t>(m * n), 7.0f), got(want);
      dsc_rt_matmul_f32(a.data(), b.data(), want.data(), 1, m, n, k, 0, 0, t);
      sgemm_loops(a.data(), b.data(), got.data(), m, n, k, t);
      for (size_t i = 0; i < want.size(); ++i)
        ASSERT_NEAR(got[i], want[i], 1e-5 * static_cast<double>(k + 1));
    }
  }
}

// The strided entry points (dsc.sgemm and blas.sgemm, given a dsc_strided_product): operands
// and result through strides over a batch of two dims.
using StridedEntry = dsc_strided_sgemm_fn*;

class StridedMatmulF32 : public ::testing::TestWithParam<StridedEntry> {};

// One layout: a batch of outer x inner products, each operand's offset, outer and inner batch
// strides, row and column strides (C's column stride 1).
struct StridedCase {
  const char* what;
  int64_t outer, inner, m, n, k;
  int64_t a[5], b[5], c[4];
};

void check_strided(StridedEntry matmul, const StridedCase& s, std::mt19937& rng) {
  auto extent = [&](const int64_t* v, int64_t rows, int64_t cols, bool unit_col) {
    return v[0] + (s.outer - 1) * v[1] + (s.inner - 1) * v[2] + (rows - 1) * v[3] +
           (cols - 1) * (unit_col ? 1 : v[4]) + 1;
  };
  auto a = random_floats(static_cast<size_t>(extent(s.a, s.m, s.k, false)), rng);
  auto b = random_floats(static_cast<size_t>(extent(s.b, s.k, s.n, false)), rng);
  std::vector<float> c(static_cast<size_t>(extent(s.c, s.m, s.n, true)), -7.0f);
  std::vector<bool> written(c.size(), false);
  const dsc_strided_product p{s.outer * s.inner, s.inner, s.m, s.n, s.k,
                              s.a[0], s.a[1], s.a[2], s.a[3], s.a[4],
                              s.b[0], s.b[1], s.b[2], s.b[3], s.b[4],
                              s.c[0], s.c[1], s.c[2], s.c[3]};
  matmul(a.data(), b.data(), c.data(), &p);
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t h = 0; h < s.inner; ++h)
      for (int64_t i = 0; i < s.m; ++i)
        for (int64_t j = 0; j < s.n; ++j) {
          double want = 0;
          for (int64_t q = 0; q < s.k; ++q)
            want += double(a[s.a[0] + o * s.a[1] + h * s.a[2] + i * s.a[3] + q * s.a[4]]) *
                    b[s.b[0] + o * s.b[1] + h * s.b[2] + q * s.b[3] + j * s.b[4]];
          const int64_t at = s.c[0] + o * s.c[1] + h * s.c[2] + i * s.c[3] + j;
          written[at] = true;
          ASSERT_NEAR(c[at], want, 1e-5 * double(s.k + 1))
              << s.what << ": product (" << o << ", " << h << ") at [" << i << ", " << j << "]";
        }
  for (size_t g = 0; g < c.size(); ++g)
    if (!written[g]) {
      ASSERT_EQ(c[g], -7.0f) << s.what << ": wrote outside C at " << g;
    }
}

TEST_P(StridedMatmulF32, LayoutsOfViews) {
  std::mt19937 rng(6);
  const int64_t m = 13, n = 37, k = 29;
  const std::vector<StridedCase> cases = {
      {"A transposed", 1, 1, m, n, k, {0, 0, 0, 1, m}, {0, 0, 0, n, 1}, {0, 0, 0, n}},
      {"rows with gaps, B transposed", 1, 1, m, n, k, {3, 0, 0, k + 3, 1}, {1, 0, 0, 1, k + 2},
       {2, 0, 0, n + 5}},
      // Attention's heads: A and C interleave 3 heads in their rows, B per head.
      {"heads interleaved", 2, 3, m, n, k, {0, m * 3 * k, k, 3 * k, 1},
       {0, 3 * k * n, k * n, n, 1}, {0, m * 3 * n, n, 3 * n}},
      // One B for the batch, A's and C's rows following on: one product of 3 * m rows.
      {"folded", 1, 3, m, n, k, {0, 0, m * k, k, 1}, {0, 0, 0, n, 1}, {0, 0, m * n, n}},
      // Every other element along both dims: no unit stride (OpenBLAS runs loops).
      {"no unit stride", 1, 2, m, n, k, {0, 0, 2 * m * k * 2, 2 * k * 2, 2},
       {0, 0, 0, n, 1}, {0, 0, m * n, n}},
      {"one row, one column", 2, 1, 1, 1, k, {0, k, 0, 0, 1}, {0, k, 0, 1, 0}, {0, 1, 0, 0}},
  };
  for (int threads : {1, 2}) {
    dsc_set_num_threads(threads);
    for (const StridedCase& s : cases) check_strided(GetParam(), s, rng);
  }
  dsc_set_num_threads(0);
}

INSTANTIATE_TEST_SUITE_P(Routines, StridedMatmulF32,
                         ::testing::Values(&dsc_rt_matmul_f32_strided, &dsc_rt_gemm_f32_strided),
                         [](const ::testing::TestParamInfo<StridedEntry>& p) {
                           return std::string(p.param == &dsc_rt_gemm_f32_strided ? "DscGemm"
                                                                                     : "OpenBlas");
                         });

INSTANTIATE_TEST_SUITE_P(Routines, MatmulF32,
                         ::testing::Values(&dsc_rt_matmul_f32, &dsc_rt_gemm_f32),
                         [](const ::testing::TestParamInfo<MatmulEntry>& p) {
                           return std::string(p.param == &dsc_rt_gemm_f32 ? "DscGemm"
                                                                              : "OpenBlas");
                         });

} // namespace
} // namespace dsc::runtime
