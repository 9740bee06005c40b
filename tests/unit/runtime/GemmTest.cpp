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
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "runtime/HostABI.h"
#include "runtime/Matmul.h"
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
  bool trans_a = false; // A stored k x m, read down its columns
};

std::string describe(const GemmKernels& K, const Sizes& s) {
  return std::string(K.isa) + " m=" + std::to_string(s.m) + " n=" + std::to_string(s.n) +
         " k=" + std::to_string(s.k) + (s.trans_b ? " (B transposed)" : "") +
         (s.trans_a ? " (A transposed)" : "") +
         (s.pad ? " pad=" + std::to_string(s.pad) : "");
}

// A matrix's panels made from the matrix itself (PanelSource): rows [first, first + count) of
// A with columns [p0, p0 + kc), or columns [first, first + count) of B with rows [p0, p0 + kc).
struct Panels {
  const float* data;
  int64_t row, col; // strides
  bool of_a;
  static void pack(const void* context, int64_t p0, int64_t kc, int64_t first, int64_t count,
                   int64_t width, float* out) {
    const Panels& m = *static_cast<const Panels*>(context);
    for (int64_t q = 0; q < kc; ++q)
      for (int64_t i = 0; i < width; ++i)
        out[q * width + i] = i >= count ? 0.0f
                             : m.of_a   ? m.data[(first + i) * m.row + (p0 + q) * m.col]
                                        : m.data[(p0 + q) * m.row + (first + i) * m.col];
  }
};

// Which operands come from a PanelSource rather than memory.
enum class FromPanels { None, A, B, Both };

// Runs one product and compares every element of C, and checks that the padding of C's rows
// is untouched. With `constant`, B is declared constant memory first (so it is packed once and
// the pack reused), and released after two products.
void check(const GemmKernels& K, const Sizes& s, bool parallel, std::mt19937& rng,
           bool constant = false, FromPanels from = FromPanels::None) {
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  Product p;
  p.m = s.m;
  p.n = s.n;
  p.k = s.k;
  const int64_t lda = (s.trans_a ? s.m : s.k) + s.pad, ldb = (s.trans_b ? s.k : s.n) + s.pad;
  p.a_row = s.trans_a ? 1 : lda;
  p.a_col = s.trans_a ? lda : 1;
  p.b_row = s.trans_b ? 1 : ldb;
  p.b_col = s.trans_b ? ldb : 1;
  p.ldc = s.n + s.pad;
  std::vector<float> a(static_cast<size_t>((s.trans_a ? s.k : s.m) * lda)),
      b(static_cast<size_t>((s.trans_b ? s.n : s.k) * ldb));
  for (float& x : a) x = d(rng);
  for (float& x : b) x = d(rng);
  std::vector<float> c(static_cast<size_t>(s.m * p.ldc), std::nanf(""));
  p.a = a.data();
  p.b = b.data();
  p.c = c.data();
  const Panels a_panels{a.data(), p.a_row, p.a_col, true},
      b_panels{b.data(), p.b_row, p.b_col, false};
  const PanelSource a_source{Panels::pack, &a_panels}, b_source{Panels::pack, &b_panels};
  if (from == FromPanels::A || from == FromPanels::Both) p.a_panels = &a_source;
  if (from == FromPanels::B || from == FromPanels::Both) p.b_panels = &b_source;
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
        want += double(a[i * p.a_row + q * p.a_col]) * b[q * p.b_row + j * p.b_col];
      ASSERT_NEAR(c[i * p.ldc + j], want, 2e-6 * static_cast<double>(s.k + 1))
          << describe(K, s) << " at [" << i << ", " << j << "]";
    }
    for (int64_t j = s.n; j < p.ldc; ++j)
      ASSERT_TRUE(std::isnan(c[i * p.ldc + j])) << describe(K, s) << ": wrote into row padding";
  }
}

// Operands made panel by panel (a convolution's windows): A, B or both, every instruction set,
// on one thread and on the pool, with edge tiles, several depth blocks and a transposed B; and
// A from panels against a constant B, which the product reads from its pack.
TEST(Gemm, OperandsFromPanelSources) {
  std::mt19937 rng(23);
  const Sizes sizes[] = {{1, 1, 1, false},           {13, 37, 300, false},
                         {29, 5, 2 * kKc + 1, true}, {100, 67, kKc - 1, false},
                         {3, 200, 17, true},         {211, 33, kKc + 3, false}};
  for (const GemmKernels* K : runnable_kernels())
    for (const Sizes& s : sizes) {
      for (FromPanels from : {FromPanels::A, FromPanels::B, FromPanels::Both})
        for (bool parallel : {false, true})
          check(*K, s, parallel, rng, false, from);
      check(*K, s, true, rng, true, FromPanels::A);
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
  // Up to kFewRows rows over a small B of whole vectors also run in place (whole tiles, then
  // a vector); one more row, a partial vector or a larger B go packed.
  for (const GemmKernels* K : runnable_kernels())
    for (int64_t m : {kSmallM + 1, int64_t(37), kFewRows, kFewRows + 1})
      for (int64_t n : {2 * K->nr, 2 * K->nr + K->width, 2 * K->nr + K->width + 3}) {
        check(*K, {m, n, kInPlaceB / n, false}, false, rng);
        check(*K, {m, n, kInPlaceB / n + 1, false}, true, rng);
        check(*K, {m, n, 7, true}, true, rng);
      }
}

TEST(Gemm, TransposedAAgainstLoops) {
  // A read down its columns (a permuted operand in place): the packed path, whichever m, with
  // and without a transposed B, padded, on the pool and with B constant.
  std::mt19937 rng(21);
  for (const GemmKernels* K : runnable_kernels())
    for (int64_t m : {int64_t(1), int64_t(7), kSmallM, int64_t(31), int64_t(149)})
      for (bool t : {false, true}) {
        check(*K, {m, 37, 2 * kKc + 5, t, 0, true}, true, rng);
        check(*K, {m, 17, 61, t, 3, true}, false, rng);
        check(*K, {m, 33, 13, t, 1, true}, false, rng, /*constant=*/true);
      }
}

// dsc_rt_gemm_f32_strided against loops on the layouts a BERT layer's attention reads in place:
// Q, K and V as column blocks of one [B, S, 3 * H * D] product (K read transposed), batched over
// (B, H) with two batch strides, and the heads' outputs written straight into the head-merged
// [B, S, H * D] layout; and a shared A with a batch of B matrices, into dense or gapped C.
TEST(Gemm, StridedBatchesAgainstLoops) {
  std::mt19937 rng(22);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  struct Case {
    int64_t batch, heads, s, dh;
  };
  dsc_set_num_threads(2);
  for (const Case& c : {Case{1, 1, 1, 1}, Case{2, 3, 7, 5}, Case{1, 12, 17, 64},
                        Case{3, 2, 131, 16}, Case{2, 4, 33, 32}}) {
    const int64_t width = 3 * c.heads * c.dh; // one row of the QKV product
    std::vector<float> qkv(static_cast<size_t>(c.batch * c.s * width));
    for (float& x : qkv) x = d(rng);
    const int64_t count = c.batch * c.heads;
    // Scores: Q [b, h, i, q] = qkv[b, i, h*dh + q]; K^T [b, h, q, j] = qkv[b, j, H*dh + h*dh + q].
    std::vector<float> scores(static_cast<size_t>(count * c.s * c.s), std::nanf(""));
    const dsc_strided_product qk{count, c.heads, c.s, c.s, c.dh,
                                 0, c.s * width, c.dh, width, 1,
                                 c.heads * c.dh, c.s * width, c.dh, 1, width,
                                 0, c.heads * c.s * c.s, c.s * c.s, c.s};
    dsc_rt_gemm_f32_strided(qkv.data(), qkv.data(), scores.data(), &qk);
    // Probabilities (the scores) times V [b, h, j, q] = qkv[b, j, 2*H*dh + h*dh + q], written
    // to out[b, i, h*dh + q].
    const int64_t merged = c.heads * c.dh;
    std::vector<float> out(static_cast<size_t>(count * c.s * c.dh), std::nanf(""));
    const dsc_strided_product pv{count, c.heads, c.s, c.dh, c.s,
                                 0, c.heads * c.s * c.s, c.s * c.s, c.s, 1,
                                 2 * c.heads * c.dh, c.s * width, c.dh, width, 1,
                                 0, c.s * merged, c.dh, merged};
    dsc_rt_gemm_f32_strided(scores.data(), qkv.data(), out.data(), &pv);
    const std::string what = "B=" + std::to_string(c.batch) + " H=" + std::to_string(c.heads) +
                             " S=" + std::to_string(c.s) + " D=" + std::to_string(c.dh);
    for (int64_t b = 0; b < c.batch; ++b)
      for (int64_t h = 0; h < c.heads; ++h) {
        const float* row0 = qkv.data() + b * c.s * width;
        const int64_t i0 = (b * c.heads + h) * c.s;
        for (int64_t i = 0; i < c.s; ++i) {
          for (int64_t j = 0; j < c.s; ++j) {
            double want = 0;
            for (int64_t q = 0; q < c.dh; ++q)
              want += double(row0[i * width + h * c.dh + q]) *
                      row0[j * width + (c.heads + h) * c.dh + q];
            ASSERT_NEAR(scores[(i0 + i) * c.s + j], want, 2e-6 * double(c.dh + 1))
                << what << ": scores of head " << h << " at [" << i << ", " << j << "]";
          }
          for (int64_t q = 0; q < c.dh; ++q) {
            double want = 0;
            for (int64_t j = 0; j < c.s; ++j)
              want += double(scores[(i0 + i) * c.s + j]) *
                      row0[j * width + (2 * c.heads + h) * c.dh + q];
            ASSERT_NEAR(out[(b * c.s + i) * merged + h * c.dh + q], want, 2e-5 * double(c.s + 1))
                << what << ": output of head " << h << " at [" << i << ", " << q << "]";
          }
        }
      }
  }
  // One A [m, k] shared by a batch of 2 x 3 B matrices [k, n] (outer stride 3 * k * n, inner
  // k * n), and negative strides doing nothing.
  const int64_t m = 5, n = 19, k = 23;
  std::vector<float> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(6 * k * n));
  for (float& x : a) x = d(rng);
  for (float& x : b) x = d(rng);
  std::vector<float> c(static_cast<size_t>(6 * m * n), std::nanf(""));
  dsc_strided_product shared{6, 3, m, n, k, 0, 0, 0, k, 1, 0, 3 * k * n, k * n, n, 1,
                             0, 3 * m * n, m * n, n};
  dsc_rt_gemm_f32_strided(a.data(), b.data(), c.data(), &shared);
  for (int64_t i = 0; i < 6; ++i)
    for (int64_t r = 0; r < m; ++r)
      for (int64_t j = 0; j < n; ++j) {
        double want = 0;
        for (int64_t q = 0; q < k; ++q) want += double(a[r * k + q]) * b[i * k * n + q * n + j];
        ASSERT_NEAR(c[(i * m + r) * n + j], want, 1e-4) << "shared A, product " << i;
      }
  std::vector<float> untouched(c);
  shared.a_col = -1;
  dsc_rt_gemm_f32_strided(a.data(), b.data(), c.data(), &shared);
  EXPECT_EQ(std::memcmp(c.data(), untouched.data(), c.size() * sizeof(float)), 0);
  // A batch of A whose rows follow on, times one B, into C whose rows do not (each product's
  // rows gapped by 2 floats and offset by 1): not one product of 6 * m rows, and the gaps stay.
  std::vector<float> rows(static_cast<size_t>(6 * m * k));
  for (float& x : rows) x = d(rng);
  const int64_t ldc = n + 2;
  std::vector<float> gapped(static_cast<size_t>(1 + 6 * m * ldc), -7.0f);
  const dsc_strided_product folded{6, 3, m, n, k, 0, 3 * m * k, m * k, k, 1, 0, 0, 0, n, 1,
                                   1, 3 * m * ldc, m * ldc, ldc};
  dsc_rt_gemm_f32_strided(rows.data(), b.data(), gapped.data(), &folded);
  for (int64_t i = 0; i < 6; ++i)
    for (int64_t r = 0; r < m; ++r)
      for (int64_t j = 0; j < ldc; ++j) {
        const float got = gapped[1 + (i * m + r) * ldc + j];
        if (j >= n) {
          ASSERT_EQ(got, -7.0f) << "the gap after row " << r << " of product " << i;
          continue;
        }
        double want = 0;
        for (int64_t q = 0; q < k; ++q) want += double(rows[(i * m + r) * k + q]) * b[q * n + j];
        ASSERT_NEAR(got, want, 1e-4) << "gapped C, product " << i;
      }
  EXPECT_EQ(gapped[0], -7.0f);
  dsc_set_num_threads(0);
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
  EXPECT_TRUE(is_constant(w.data() + 8, 16 * sizeof(float)));
  EXPECT_TRUE(is_constant(w.data() + 10, 4 * sizeof(float)));
  EXPECT_FALSE(is_constant(w.data() + 7, 2 * sizeof(float)));  // starts before the range
  EXPECT_FALSE(is_constant(w.data() + 20, 8 * sizeof(float))); // spans two ranges
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
  p.a_row = 4;
  p.b_row = 5;
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
  p.a_row = p.b_row = 1;
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
  int64_t* positions = static_cast<int64_t*>(buffers[4]);
  const int64_t n = symbols[0], rows = symbols[1], first_row = symbols[3];
  for (int64_t i = 0; i < rows; ++i) {
    calls[i] += symbols[2];
    positions[i] = first_row + i;
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
  std::vector<int64_t> calls(static_cast<size_t>(rows)), positions(static_cast<size_t>(rows));
  void* const buffers[] = {c.data(), bias.data(), res.data(), calls.data(), positions.data()};
  const int64_t row_bytes[] = {s.n * int64_t(sizeof(float)), 0, s.n * int64_t(sizeof(float)),
                               int64_t(sizeof(int64_t)), int64_t(sizeof(int64_t))};
  const int64_t symbols[] = {s.n, -1, 1, -1};
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
    std::fill(positions.begin(), positions.end(), -1);
    if (K) {
      ASSERT_EQ(s.batch, 1);
      Product p;
      p.a = a.data();
      p.b = b.data();
      p.c = c.data();
      p.m = s.m;
      p.n = s.n;
      p.k = s.k;
      p.a_row = s.k;
      p.a_col = 1;
      p.b_row = s.trans_b ? 1 : s.n;
      p.b_col = s.trans_b ? s.k : 1;
      p.ldc = s.n;
      Epilogue e;
      e.kernel = scale_bias_residual;
      e.buffers = buffers;
      e.row_bytes = row_bytes;
      e.num_buffers = 5;
      e.symbols = symbols;
      e.num_symbols = 4;
      e.rows_slot = 1;
      e.first_row_slot = 3;
      multiply(*K, p, true, &e);
    } else {
      const dsc_strided_product p =
          dense_product(s.batch, s.m, s.n, s.k, s.m * s.k, s.batched_b ? s.k * s.n : 0, s.trans_b);
      dsc_rt_gemm_f32_strided_epilogue(a.data(), b.data(), c.data(), &p, scale_bias_residual,
                                       buffers, row_bytes, 5, symbols, 4, 1, 3);
    }
    if (constant) {
      EXPECT_EQ(constant_pack_count(), packs + 1) << what;
    }
    std::vector<double> row(static_cast<size_t>(s.n));
    for (int64_t r = 0; r < rows; ++r) {
      ASSERT_EQ(calls[r], 1) << what << ": calls covering row " << r << " (round " << round << ")";
      ASSERT_EQ(positions[r], r) << what << ": the first row passed to the call covering row "
                                 << r << " plus the row's place in the block";
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

TEST(GemmEpilogue, NeedsADenseResult) {
  // The epilogue's rows are those of a dense C: with C's rows gapped or offset, nothing runs.
  const int64_t m = 3, n = 4, k = 2;
  std::vector<float> a(m * k, 1.0f), b(k * n, 1.0f), bias(n, 0.0f), res((m + 1) * (n + 1), 0.0f);
  std::vector<int64_t> calls(m + 1, 0), positions(m + 1, 0);
  const int64_t row_bytes[] = {n * int64_t(sizeof(float)), 0, n * int64_t(sizeof(float)),
                               int64_t(sizeof(int64_t)), int64_t(sizeof(int64_t))};
  const int64_t symbols[] = {n, -1, 1, -1};
  for (auto [offset, row] : {std::pair<int64_t, int64_t>{0, n + 1}, {1, n}}) {
    std::vector<float> c((m + 1) * (n + 1), -3.0f);
    void* const buffers[] = {c.data(), bias.data(), res.data(), calls.data(), positions.data()};
    const dsc_strided_product p{1, 1, m, n, k, 0, 0, 0, k, 1, 0, 0, 0, n, 1, offset, 0, 0, row};
    dsc_rt_gemm_f32_strided_epilogue(a.data(), b.data(), c.data(), &p, scale_bias_residual, buffers,
                                     row_bytes, 5, symbols, 4, 1, 3);
    for (float x : c) ASSERT_EQ(x, -3.0f) << "offset " << offset << ", row stride " << row;
    for (int64_t x : calls) ASSERT_EQ(x, 0);
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
  auto call = [&](int64_t num_buffers, int64_t num_symbols, int64_t rows_slot,
                  int64_t first_row_slot) {
    const dsc_strided_product p = dense_product(1, 1, 1, 1, 1, 1, false);
    dsc_rt_gemm_f32_strided_epilogue(&a, &b, &c, &p, scale_bias_residual, buffers, row_bytes,
                                     num_buffers, symbols, num_symbols, rows_slot, first_row_slot);
  };
  EXPECT_DEATH(call(17, 4, 1, 3), "17 buffers");
  EXPECT_DEATH(call(5, 65, 1, 3), "65 symbols");
  EXPECT_DEATH(call(5, 4, 4, 3), "rows_slot 4");
  EXPECT_DEATH(call(5, 4, 1, 4), "first_row_slot 4");
  EXPECT_DEATH(call(5, 4, 1, -2), "first_row_slot -2");
}

} // namespace
} // namespace dsc::runtime::gemm
