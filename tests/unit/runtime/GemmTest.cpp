// dsc's own GEMM (runtime/gemm/Gemm.h), every instruction set this CPU runs, against plain
// double-precision loops: sizes 1 to 300 with primes and sizes that are not multiples of the
// tile, depths across several depth blocks, row strides wider than the matrix, the small-m
// bucket and the packed one, on one thread and on the pool. The batched entry point
// (dsc_rt_gemm_f32) shares MatmulTest's cases with the OpenBLAS route; its epilogue form
// (dsc_rt_gemm_f32_epilogue) is checked here, on every path a product can take.

#include "runtime/gemm/Gemm.h"

#include <gtest/gtest.h>

#include "runtime/gemm/ConstantPacks.h"

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "runtime/HostABI.h"
#include "runtime/dsc_runtime.h"

namespace dsc::runtime::gemm {
namespace {

std::vector<const GemmKernels*> runnable_kernels() {
  std::vector<const GemmKernels*> out;
  for (const char* isa : {"avx512", "avx2", "generic"})
    if (const GemmKernels* k = kernels_named(isa)) out.push_back(k);
  return out;
}

struct Sizes {
  int64_t m, n, k;
  bool trans_b;
  int64_t pad = 0; // extra elements at the end of every row of A, B and C
};

std::string describe(const GemmKernels& K, const Sizes& s) {
  return std::string(K.isa) + " m=" + std::to_string(s.m) + " n=" + std::to_string(s.n) +
         " k=" + std::to_string(s.k) + (s.trans_b ? " (B transposed)" : "") +
         (s.pad ? " pad=" + std::to_string(s.pad) : "");
}

// Runs one product and compares every element of C, and checks that the padding of C's rows
// is untouched. With `constant`, B is declared constant memory first (so it is packed once and
// the pack reused), and released after two products.
void check(const GemmKernels& K, const Sizes& s, bool parallel, std::mt19937& rng,
           bool constant = false) {
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  Product p;
  p.m = s.m;
  p.n = s.n;
  p.k = s.k;
  p.trans_b = s.trans_b;
  p.lda = s.k + s.pad;
  p.ldb = (s.trans_b ? s.k : s.n) + s.pad;
  p.ldc = s.n + s.pad;
  std::vector<float> a(static_cast<size_t>(s.m * p.lda)), b(static_cast<size_t>((s.trans_b ? s.n : s.k) * p.ldb));
  for (float& x : a) x = d(rng);
  for (float& x : b) x = d(rng);
  std::vector<float> c(static_cast<size_t>(s.m * p.ldc), std::nanf(""));
  p.a = a.data();
  p.b = b.data();
  p.c = c.data();
  std::string error;
  if (constant) {
    ASSERT_TRUE(declare_constant(b.data(), b.size() * sizeof(float), &error)) << error;
  }
  const size_t packs = constant_pack_count();
  multiply(K, p, parallel);
  if (constant) {
    EXPECT_EQ(constant_pack_count(), packs + 1) << describe(K, s);
    std::fill(c.begin(), c.end(), std::nanf(""));
    multiply(K, p, parallel); // from the pack made by the first product
    EXPECT_EQ(constant_pack_count(), packs + 1) << describe(K, s);
    EXPECT_TRUE(release_constant(b.data()));
    EXPECT_EQ(constant_pack_count(), packs);
  }
  for (int64_t i = 0; i < s.m; ++i) {
    for (int64_t j = 0; j < s.n; ++j) {
      double want = 0;
      for (int64_t q = 0; q < s.k; ++q)
        want += double(a[i * p.lda + q]) * (s.trans_b ? b[j * p.ldb + q] : b[q * p.ldb + j]);
      ASSERT_NEAR(c[i * p.ldc + j], want, 2e-6 * static_cast<double>(s.k + 1))
          << describe(K, s) << " at [" << i << ", " << j << "]";
    }
    for (int64_t j = s.n; j < p.ldc; ++j)
      ASSERT_TRUE(std::isnan(c[i * p.ldc + j])) << describe(K, s) << ": wrote into row padding";
  }
}

TEST(Gemm, ChoosesARunnableInstructionSet) {
  const GemmKernels& chosen = kernels();
  EXPECT_EQ(kernels_named(chosen.isa), &chosen);
  EXPECT_NE(kernels_named("generic"), nullptr);
  EXPECT_EQ(kernels_named("sse9"), nullptr);
  for (const GemmKernels* K : runnable_kernels()) {
    EXPECT_LE(K->mr, kMaxMr);
    EXPECT_EQ(K->nr % K->width, 0) << K->isa;
  }
}

TEST(Gemm, EdgeSizesAgainstLoops) {
  // Every remainder of the tile in m and n, with depths that are 1, prime, and across blocks.
  std::mt19937 rng(11);
  const int64_t ms[] = {1, 2, 3, 5, 6, 7, 13, 14, 15, 16, 17, 29, 31};
  const int64_t ns[] = {1, 3, 4, 5, 8, 15, 16, 17, 31, 32, 33, 47};
  for (const GemmKernels* K : runnable_kernels())
    for (int64_t m : ms)
      for (int64_t n : ns)
        for (bool t : {false, true})
          check(*K, {m, n, (m * 7 + n * 3) % 37 + 1, t}, false, rng);
}

TEST(Gemm, RandomSizesUpTo300) {
  // Sizes 1 to 300 (primes among them), both layouts, on the pool; depths past one block.
  std::mt19937 rng(12);
  std::uniform_int_distribution<int64_t> size(1, 300);
  const int64_t primes[] = {2, 7, 61, 97, 131, 257, 263, 269, 293};
  dsc_set_num_threads(3);
  for (const GemmKernels* K : runnable_kernels()) {
    for (int i = 0; i < 12; ++i)
      check(*K, {size(rng), size(rng), size(rng), i % 2 == 1}, true, rng);
    for (int i = 0; i < 6; ++i)
      check(*K, {primes[rng() % 9], primes[rng() % 9], primes[rng() % 9], i % 2 == 0}, true, rng);
    check(*K, {300, 300, 300, false}, true, rng);
    check(*K, {1, 300, 300, true}, true, rng);
  }
  dsc_set_num_threads(0);
}

TEST(Gemm, SmallAndPackedBucketsAgree) {
  // m on both sides of kSmallM, with k across depth blocks (the small-m path blocks k too).
  std::mt19937 rng(13);
  for (const GemmKernels* K : runnable_kernels())
    for (int64_t m : {kSmallM - 1, kSmallM, kSmallM + 1})
      for (bool t : {false, true}) {
        check(*K, {m, 53, 2 * kKc + 3, t}, false, rng);
        check(*K, {m, 19, kKc, t}, true, rng);
      }
}

TEST(Gemm, RowStridesWiderThanTheMatrix) {
  std::mt19937 rng(14);
  for (const GemmKernels* K : runnable_kernels())
    for (bool t : {false, true}) {
      check(*K, {37, 41, 43, t, 5}, false, rng);
      check(*K, {3, 41, 43, t, 1}, false, rng);
    }
}

TEST(Gemm, ColumnBlocksAndThreads) {
  // n past one column block, and a product large enough to be split over the pool.
  std::mt19937 rng(15);
  dsc_set_num_threads(4);
  const GemmKernels& K = kernels();
  check(K, {20, kNc + 37, 9, false}, true, rng);
  check(K, {21, kNc + 5, 7, true}, true, rng);
  check(K, {150, 200, kKc + 1, false}, true, rng);
  dsc_set_num_threads(0);
}

TEST(Gemm, ConstantBIsPackedOnceAndReused) {
  // Every bucket, both layouts, padded rows, n past one column block, and A packed whole or per
  // depth block.
  std::mt19937 rng(16);
  for (const GemmKernels* K : runnable_kernels())
    for (bool t : {false, true}) {
      check(*K, {1, 37, 300, t}, false, rng, true);
      check(*K, {kSmallM, 64, kKc + 9, t, 3}, true, rng, true);
      check(*K, {101, 53, 2 * kKc + 1, t}, true, rng, true);
    }
  check(kernels(), {7, kNc + 19, 5, false}, true, rng, true);
  check(kernels(), {9, kNc + 3, 11, true}, true, rng, true);
  // A packed for every depth block at once (it fits), and the product whose A does not.
  check(kernels(), {97, 263, 3 * kKc + 5, false}, true, rng, true);
  check(kernels(), {131, kNc + 7, kKc + 3, false}, true, rng, true);
  check(kernels(), {1031, 67, 4 * kKc + 1, false}, true, rng, true);
}

TEST(Gemm, ConstantMemoryIsDeclaredOnce) {
  std::vector<float> w(64);
  std::string error;
  EXPECT_FALSE(declare_constant(nullptr, 4, &error));
  EXPECT_FALSE(declare_constant(w.data(), 0, &error));
  ASSERT_TRUE(declare_constant(w.data() + 8, 16 * sizeof(float), &error)) << error;
  EXPECT_FALSE(declare_constant(w.data(), 9 * sizeof(float), &error)); // overlaps its start
  EXPECT_EQ(error, "constant memory overlaps memory already declared constant");
  EXPECT_FALSE(declare_constant(w.data() + 23, 4, &error)); // overlaps its end
  EXPECT_TRUE(declare_constant(w.data() + 24, 4, &error)) << error; // just past it
  EXPECT_FALSE(release_constant(w.data()));
  EXPECT_TRUE(release_constant(w.data() + 8));
  EXPECT_TRUE(release_constant(w.data() + 24));
  EXPECT_FALSE(release_constant(w.data() + 8));
}

TEST(Gemm, ProductReachingPastConstantMemoryPacksAsItGoes) {
  // B's last row lies outside the declared range: no pack is made, and the result is right.
  std::mt19937 rng(17);
  std::vector<float> a(3 * 4), b(4 * 5), c(3 * 5);
  for (float& x : a) x = static_cast<float>(rng() % 7);
  for (float& x : b) x = static_cast<float>(rng() % 5);
  std::string error;
  ASSERT_TRUE(declare_constant(b.data(), 15 * sizeof(float), &error)) << error;
  Product p;
  p.a = a.data();
  p.b = b.data();
  p.c = c.data();
  p.m = 3;
  p.n = 5;
  p.k = 4;
  p.lda = 4;
  p.ldb = 5;
  p.ldc = 5;
  const size_t packs = constant_pack_count();
  multiply(kernels(), p);
  EXPECT_EQ(constant_pack_count(), packs);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 5; ++j) {
      float want = 0;
      for (int q = 0; q < 4; ++q) want += a[i * 4 + q] * b[q * 5 + j];
      EXPECT_EQ(c[i * 5 + j], want);
    }
  EXPECT_TRUE(release_constant(b.data()));
}

TEST(Gemm, EmptyDepthZeroesC) {
  std::vector<float> c(6, std::nanf(""));
  Product p;
  p.m = 2;
  p.n = 3;
  p.k = 0;
  p.lda = p.ldb = 1;
  p.ldc = 3;
  float dummy = 0;
  p.a = p.b = &dummy;
  p.c = c.data();
  multiply(kernels(), p);
  for (float v : c)
    EXPECT_EQ(v, 0.0f);
}

// The epilogue of the tests, a kernel of the kernel ABI: over its block of rows, C = C * 2 +
// bias + res (bias one row for all, res one row per row of C), and calls[row] += symbols[2]
// for each of its rows. buffers: C, bias, res, calls (int64); symbols: n, the block's rows (the
// slot the GEMM fills), and 1, which must come through unchanged for the count to be 1.
void scale_bias_residual(void* const* buffers, const int64_t* symbols) {
  float* c = static_cast<float*>(buffers[0]);
  const float* bias = static_cast<const float*>(buffers[1]);
  const float* res = static_cast<const float*>(buffers[2]);
  int64_t* calls = static_cast<int64_t*>(buffers[3]);
  const int64_t n = symbols[0], rows = symbols[1];
  for (int64_t i = 0; i < rows; ++i) {
    calls[i] += symbols[2];
    for (int64_t j = 0; j < n; ++j)
      c[i * n + j] = c[i * n + j] * 2.0f + bias[j] + res[i * n + j];
  }
}

struct EpilogueCase {
  int64_t batch, m, n, k;
  bool trans_b;
  bool batched_b = false; // each product its own B; else one B for the batch (folded into one)
};

std::string describe(const EpilogueCase& s, int threads, bool constant) {
  return "batch=" + std::to_string(s.batch) + " m=" + std::to_string(s.m) +
         " n=" + std::to_string(s.n) + " k=" + std::to_string(s.k) +
         (s.trans_b ? " (B transposed)" : "") + (s.batched_b ? " (B per product)" : "") +
         " threads=" + std::to_string(threads) + (constant ? " (B constant)" : "");
}

// Runs dsc_rt_gemm_f32_epilogue with scale_bias_residual on `threads` threads (with `K`,
// through multiply instead, when given: one product) and compares every element of C, and
// that every row got exactly one call. With `constant`, B is declared constant memory first;
// the product runs twice then (packing B, then from the pack).
void check_epilogue(const EpilogueCase& s, int threads, std::mt19937& rng, bool constant = false,
                    const GemmKernels* K = nullptr) {
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  const int64_t rows = s.batch * s.m, bs = s.batched_b ? s.batch : 1;
  std::vector<float> a(static_cast<size_t>(rows * s.k)), b(static_cast<size_t>(bs * s.k * s.n));
  std::vector<float> bias(static_cast<size_t>(s.n)), res(static_cast<size_t>(rows * s.n));
  for (std::vector<float>* v : {&a, &b, &bias, &res})
    for (float& x : *v) x = d(rng);
  std::vector<float> c(static_cast<size_t>(rows * s.n));
  std::vector<int64_t> calls(static_cast<size_t>(rows));
  void* const buffers[] = {c.data(), bias.data(), res.data(), calls.data()};
  const int64_t row_bytes[] = {s.n * int64_t(sizeof(float)), 0, s.n * int64_t(sizeof(float)),
                               int64_t(sizeof(int64_t))};
  const int64_t symbols[] = {s.n, -1, 1};
  const std::string what = describe(s, threads, constant);
  std::string error;
  if (constant) {
    ASSERT_TRUE(declare_constant(b.data(), b.size() * sizeof(float), &error)) << error;
  }
  const size_t packs = constant_pack_count();
  // One run and its comparison; a failed assertion returns from it, not from the test, so that
  // the thread count and the constant memory are restored.
  auto run_and_compare = [&](int round) {
    std::fill(c.begin(), c.end(), std::nanf(""));
    std::fill(calls.begin(), calls.end(), 0);
    if (K) {
      ASSERT_EQ(s.batch, 1);
      Product p;
      p.a = a.data();
      p.b = b.data();
      p.c = c.data();
      p.m = s.m;
      p.n = s.n;
      p.k = s.k;
      p.lda = s.k;
      p.ldb = s.trans_b ? s.k : s.n;
      p.ldc = s.n;
      p.trans_b = s.trans_b;
      Epilogue e;
      e.kernel = scale_bias_residual;
      e.buffers = buffers;
      e.row_bytes = row_bytes;
      e.num_buffers = 4;
      e.symbols = symbols;
      e.num_symbols = 3;
      e.rows_slot = 1;
      multiply(*K, p, true, &e);
    } else {
      dsc_rt_gemm_f32_epilogue(a.data(), b.data(), c.data(), s.batch, s.m, s.n, s.k, s.m * s.k,
                               s.batched_b ? s.k * s.n : 0, s.trans_b, scale_bias_residual,
                               buffers, row_bytes, 4, symbols, 3, 1);
    }
    if (constant) {
      EXPECT_EQ(constant_pack_count(), packs + 1) << what;
    }
    std::vector<double> row(static_cast<size_t>(s.n));
    for (int64_t r = 0; r < rows; ++r) {
      ASSERT_EQ(calls[r], 1) << what << ": calls covering row " << r << " (round " << round << ")";
      // Row r of the product: row r % m of product r / m.
      const float* ar = a.data() + r * s.k;
      const float* bp = b.data() + (s.batched_b ? r / s.m * s.k * s.n : 0);
      std::fill(row.begin(), row.end(), 0.0);
      if (s.trans_b) {
        for (int64_t j = 0; j < s.n; ++j)
          for (int64_t q = 0; q < s.k; ++q)
            row[j] += double(ar[q]) * bp[j * s.k + q];
      } else {
        for (int64_t q = 0; q < s.k; ++q)
          for (int64_t j = 0; j < s.n; ++j)
            row[j] += double(ar[q]) * bp[q * s.n + j];
      }
      for (int64_t j = 0; j < s.n; ++j) {
        const double want = row[j] * 2 + bias[j] + res[r * s.n + j];
        ASSERT_NEAR(c[r * s.n + j], want, 4e-6 * static_cast<double>(s.k + 1) + 1e-6)
            << what << " at [" << r << ", " << j << "] (round " << round << ")";
      }
    }
  };
  dsc_set_num_threads(threads);
  for (int round = 0; round < (constant ? 2 : 1) && !::testing::Test::HasFatalFailure(); ++round)
    run_and_compare(round);
  dsc_set_num_threads(0);
  if (constant) {
    EXPECT_TRUE(release_constant(b.data()));
    EXPECT_EQ(constant_pack_count(), packs);
  }
}

TEST(GemmEpilogue, EveryRowOnceOnEveryPath) {
  // The small-m bucket (m <= kSmallM), the packed one with edge tiles in m and n, primes, k = 0,
  // depths across several depth blocks, n past one column block, both layouts of B; one
  // product, a batch folded into one product (one B), and products with their own B, small
  // enough to run one per thread or large enough to split; thread counts that do and do not
  // divide the row blocks.
  std::mt19937 rng(18);
  const EpilogueCase cases[] = {
      // small m
      {1, 1, 33, 61, false}, {1, 5, 257, 700, false}, {1, 16, 61, 300, false},
      // packed: edge tiles, several depth blocks, primes, n past one column block
      {1, 17, 33, 61, false}, {1, 97, 257, 700, false}, {1, 300, 61, 257, false},
      {1, 131, 263, 269, false}, {1, 29, 31, 37, false}, {1, 20, kNc + 37, 9, false},
      // k = 0
      {1, 5, 33, 0, false}, {1, 97, 61, 0, false}, {3, 7, 61, 0, false},
      // a batch folded into one product
      {3, 5, 33, 61, false}, {3, 40, 61, 300, false},
      // products with their own B: one per thread, whole, or each split over the pool
      {2, 1, 19, 7, false, true}, {2, 17, 33, 61, false, true}, {2, 5, 61, 257, false, true},
      {4, 16, 64, 64, false, true}, {4, 20, 61, 53, false, true}, {2, 200, 257, 300, false, true},
  };
  for (int threads : {1, 2, 3})
    for (EpilogueCase s : cases)
      for (bool t : {false, true}) {
        s.trans_b = t;
        check_epilogue(s, threads, rng);
      }
}

TEST(GemmEpilogue, LargeProduct) {
  // BERT's feed-forward shape: many row blocks, the pool's tasks all whole rows.
  std::mt19937 rng(19);
  check_epilogue({1, 1024, 3072, 768, false}, 2, rng);
}

TEST(GemmEpilogue, EmptyRowsStillRunTheEpilogue) {
  // n == 0: C has no elements, but every row is final and gets its call.
  std::mt19937 rng(20);
  for (int threads : {1, 2}) {
    check_epilogue({1, 5, 0, 7, false}, threads, rng);
    check_epilogue({2, 3, 0, 4, false, true}, threads, rng);
    check_epilogue({3, 20, 0, 4, true}, threads, rng);
  }
}

TEST(GemmEpilogue, ConstantB) {
  // B declared constant: the packed path for every m, with A packed whole (below
  // kWholeDepthFloats) and per depth block (above it), one product and a folded batch.
  std::mt19937 rng(21);
  for (int threads : {1, 2})
    for (bool t : {false, true}) {
      check_epilogue({1, 5, 37, 300, t}, threads, rng, true);
      check_epilogue({1, 97, 263, 3 * kKc + 5, t}, threads, rng, true);
      check_epilogue({3, 40, 61, 300, t}, threads, rng, true);
      check_epilogue({1, 1031, 67, 4 * kKc + 1, t}, threads, rng, true);
    }
}

TEST(GemmEpilogue, EveryInstructionSet) {
  // Tiles of every height split the rows differently among tasks.
  std::mt19937 rng(22);
  for (const GemmKernels* K : runnable_kernels())
    for (int threads : {1, 2}) {
      check_epilogue({1, 97, 61, 300, false}, threads, rng, false, K);
      check_epilogue({1, 300, 33, 700, true}, threads, rng, false, K);
      check_epilogue({1, 9, 33, 61, false}, threads, rng, false, K);
      check_epilogue({1, 101, 53, 2 * kKc + 1, true}, threads, rng, true, K);
    }
}

// Arrays past the limits would overrun Epilogue::run's own; the compiler never passes them, so
// they are a bug that stops the process with a message rather than an error to return.
TEST(GemmEpilogueDeathTest, LimitsAbort) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  float a = 1, b = 1, c = 0;
  void* buffers[17] = {};
  const int64_t row_bytes[17] = {};
  const int64_t symbols[65] = {};
  EXPECT_DEATH(dsc_rt_gemm_f32_epilogue(&a, &b, &c, 1, 1, 1, 1, 1, 1, 0, scale_bias_residual,
                                        buffers, row_bytes, 17, symbols, 3, 1),
               "17 buffers");
  EXPECT_DEATH(dsc_rt_gemm_f32_epilogue(&a, &b, &c, 1, 1, 1, 1, 1, 1, 0, scale_bias_residual,
                                        buffers, row_bytes, 4, symbols, 65, 1),
               "65 symbols");
  EXPECT_DEATH(dsc_rt_gemm_f32_epilogue(&a, &b, &c, 1, 1, 1, 1, 1, 1, 0, scale_bias_residual,
                                        buffers, row_bytes, 4, symbols, 3, 3),
               "rows_slot 3");
}

} // namespace
} // namespace dsc::runtime::gemm
