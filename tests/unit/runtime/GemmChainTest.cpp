// dsc.sgemm_chain (runtime/gemm/Chain.cpp): C = epilogue(A @ B) @ D over a batch of products, a
// block of rows at a time, against plain double-precision loops. The operands lie as in
// attention (heads interleaved in their rows, B read transposed, C head-merged), the epilogue
// is a masked softmax whose mask is indexed by the batch (through the block's first row), and
// the sizes include 1, primes, an empty depth and products of one, two and several blocks, on
// one thread and on the pool.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "runtime/HostABI.h"
#include "runtime/dsc_runtime.h"

namespace {

// Buffers: the mask (whole, [outer, n]), the calls per row (by row), the block (last).
// Symbols: n, rows, first row, rows per outer batch index.
void masked_softmax(void* const* buffers, const int64_t* symbols) {
  const float* mask = static_cast<const float*>(buffers[0]);
  int64_t* calls = static_cast<int64_t*>(buffers[1]);
  float* out = static_cast<float*>(buffers[2]);
  const int64_t n = symbols[0], rows = symbols[1], first_row = symbols[2], per_outer = symbols[3];
  for (int64_t r = 0; r < rows; ++r) {
    ++calls[r];
    const float* m = mask + (first_row + r) / per_outer * n;
    float* x = out + r * n;
    float top = -INFINITY;
    for (int64_t j = 0; j < n; ++j) top = std::max(top, x[j] * 0.25f + m[j]);
    float sum = 0;
    for (int64_t j = 0; j < n; ++j) sum += x[j] = std::exp(x[j] * 0.25f + m[j] - top);
    for (int64_t j = 0; j < n; ++j) x[j] /= sum;
  }
}

struct ChainCase {
  int64_t outer, heads, m, n, k, n2;
};

std::string describe(const ChainCase& c, int threads, bool epilogue) {
  return "outer=" + std::to_string(c.outer) + " heads=" + std::to_string(c.heads) +
         " m=" + std::to_string(c.m) + " n=" + std::to_string(c.n) + " k=" + std::to_string(c.k) +
         " n2=" + std::to_string(c.n2) + ", " + std::to_string(threads) + " thread(s)" +
         (epilogue ? ", masked softmax" : "");
}

// A: [outer, m, heads, k]; B (read transposed): [outer, n, heads, k]; D: [outer, n, heads,
// n2]; C: [outer, m, heads, n2]; product (o, h) reads and writes head h of batch o.
void check_chain(const ChainCase& c, int threads, bool epilogue, std::mt19937& rng) {
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  const int64_t o = c.outer, h = c.heads, m = c.m, n = c.n, k = c.k, n2 = c.n2;
  std::vector<float> a(o * m * h * k), b(o * n * h * k), dm(o * n * h * n2), mask(o * n);
  for (std::vector<float>* v : {&a, &b, &dm, &mask})
    for (float& x : *v) x = d(rng);
  std::vector<float> out(o * m * h * n2, std::nanf(""));
  std::vector<int64_t> calls(o * h * m, 0);
  void* const buffers[] = {mask.data(), calls.data(), nullptr};
  const int64_t row_bytes[] = {0, int64_t(sizeof(int64_t)), n * int64_t(sizeof(float))};
  const int64_t symbols[] = {n, -1, -1, h * m};
  const std::string what = describe(c, threads, epilogue);
  const dsc_strided_chain chain{o * h, h, m, n, k,
                                0, m * h * k, k, h * k, 1,      // A
                                0, n * h * k, k, 1, h * k,      // B, read transposed
                                n2,
                                0, n * h * n2, n2, h * n2, 1,   // D
                                0, m * h * n2, n2, h * n2};     // C
  dsc_set_num_threads(threads);
  if (epilogue)
    dsc_rt_gemm_chain_f32_epilogue(a.data(), b.data(), dm.data(), out.data(), &chain,
                                   masked_softmax, buffers, row_bytes, 3, symbols, 4, 1, 2);
  else
    dsc_rt_gemm_chain_f32(a.data(), b.data(), dm.data(), out.data(), &chain);
  dsc_set_num_threads(0);
  std::vector<double> p(n), row(n2), size(n2);
  for (int64_t bo = 0; bo < o; ++bo)
    for (int64_t hd = 0; hd < h; ++hd)
      for (int64_t i = 0; i < m; ++i) {
        if (epilogue) {
          ASSERT_EQ(calls[(bo * h + hd) * m + i], 1) << what << ": calls covering row " << i;
        }
        for (int64_t j = 0; j < n; ++j) {
          double s = 0;
          for (int64_t q = 0; q < k; ++q)
            s += double(a[((bo * m + i) * h + hd) * k + q]) * b[((bo * n + j) * h + hd) * k + q];
          p[j] = s;
        }
        if (epilogue && n > 0) {
          double top = -INFINITY, sum = 0;
          for (int64_t j = 0; j < n; ++j) top = std::max(top, p[j] * 0.25 + mask[bo * n + j]);
          for (int64_t j = 0; j < n; ++j) sum += p[j] = std::exp(p[j] * 0.25 + mask[bo * n + j] - top);
          for (int64_t j = 0; j < n; ++j) p[j] /= sum;
        }
        // The float sums' error grows with their depths and the size of their terms.
        std::fill(row.begin(), row.end(), 0.0);
        std::fill(size.begin(), size.end(), 0.0);
        for (int64_t j = 0; j < n; ++j)
          for (int64_t e = 0; e < n2; ++e) {
            row[e] += p[j] * dm[((bo * n + j) * h + hd) * n2 + e];
            size[e] += std::fabs(p[j] * dm[((bo * n + j) * h + hd) * n2 + e]);
          }
        for (int64_t e = 0; e < n2; ++e)
          ASSERT_NEAR(out[((bo * m + i) * h + hd) * n2 + e], row[e],
                      2e-7 * double(k + n + 1) * (size[e] + 1.0))
              << what << ": batch " << bo << ", head " << hd << ", row " << i << ", column " << e;
      }
}

TEST(GemmChain, MatchesTheProductsAtAwkwardSizes) {
  std::mt19937 rng(31);
  const std::vector<ChainCase> cases = {
      {1, 1, 1, 1, 1, 1},      {2, 3, 7, 13, 5, 4},    {1, 2, 300, 211, 64, 17},
      {3, 1, 17, 2000, 3, 5},  {1, 1, 5, 9, 0, 3},     {2, 2, 33, 31, 300, 64},
      {1, 12, 128, 128, 64, 64},
  };
  for (int threads : {1, 2})
    for (bool epilogue : {false, true})
      for (const ChainCase& c : cases) check_chain(c, threads, epilogue, rng);
}

TEST(GemmChain, NegativeStridesDoNothing) {
  float a = 1, b = 1, d = 1, c = -3;
  const dsc_strided_chain chain{1, 1, 1, 1, 1, 0, 0, 0, -1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0,
                                1, 1, 0, 0, 0, 1};
  dsc_rt_gemm_chain_f32(&a, &b, &d, &c, &chain);
  EXPECT_EQ(c, -3);
}

TEST(GemmChainDeathTest, EpilogueLimitsAbort) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  float a = 1, b = 1, d = 1, c = 0;
  void* buffers[17] = {};
  const int64_t row_bytes[17] = {};
  const int64_t symbols[4] = {};
  const dsc_strided_chain chain{1, 1, 1, 1, 1, 0, 1, 0, 1, 1, 0, 1, 0, 1, 1, 1, 0, 1, 0, 1, 1,
                                0, 1, 0, 1};
  EXPECT_DEATH(dsc_rt_gemm_chain_f32_epilogue(&a, &b, &d, &c, &chain, masked_softmax, buffers,
                                              row_bytes, 17, symbols, 4, 1, 2),
               "dsc_rt_gemm_chain_f32_epilogue with 17 buffers");
}

} // namespace
