// dsc's GEMM over 16-bit floats (runtime/gemm/HalfGemm.h), every instruction set this CPU runs
// (AVX512_BF16's pairs included where it has them; the test names what it skipped) times bf16
// and f16, against double-precision loops over the same 16-bit inputs: sizes 1 to 300 with
// primes, depths across several depth blocks, B in both layouts, padded rows, the small-m and
// the packed paths, one thread and the pool; a constant B packed once; an epilogue on the
// rounded rows; NaN and infinity carried through; the strided entry points.

#include "runtime/gemm/HalfGemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "runtime/HostABI.h"
#include "runtime/dsc_runtime.h"
#include "runtime/gemm/ConstantPacks.h"
#include "support/HalfFloat.h"

namespace dsc::runtime::gemm {
namespace {

std::vector<const HalfKernels*> runnable() {
  std::vector<const HalfKernels*> out;
  for (const char* isa : {"avx512bf16", "avx512", "avx2", "generic"})
    if (const HalfKernels* k = half_kernels_named(isa))
      out.push_back(k);
    else
      std::printf("[ skipped  ] %s: this CPU does not run it\n", isa);
  return out;
}

float to_float(HalfType t, uint16_t bits) {
  return t == HalfType::BF16 ? bf16_to_float(bits) : half_to_float(bits);
}
uint16_t to_bits(HalfType t, float f) {
  return t == HalfType::BF16 ? float_to_bf16(f) : float_to_half(f);
}
const char* name(HalfType t) { return t == HalfType::BF16 ? "bf16" : "f16"; }

// The result's rounding (half an ulp, relative) and the f32 accumulation's error over k
// products of magnitude at most 1 (bf16 pairs round each pair's sum too), with a margin of 2.
double tolerance(HalfType t, double want, int64_t k) {
  const double unit = t == HalfType::BF16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11);
  return unit * std::fabs(want) + 1e-6 * static_cast<double>(k + 1);
}

struct Sizes {
  int64_t m, n, k;
  bool trans_b;
  int64_t pad = 0; // extra elements at the end of every row of A, B and C
};

std::string describe(const HalfKernels& K, HalfType t, const Sizes& s) {
  return std::string(K.isa) + " " + name(t) + " m=" + std::to_string(s.m) +
         " n=" + std::to_string(s.n) + " k=" + std::to_string(s.k) +
         (s.trans_b ? " (B transposed)" : "") + (s.pad ? " pad=" + std::to_string(s.pad) : "");
}

struct Operands {
  std::vector<uint16_t> a, b, c;
  HalfProduct p;
};

Operands make(HalfType t, const Sizes& s, std::mt19937& rng) {
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  Operands o;
  const int64_t lda = s.k + s.pad, ldb = (s.trans_b ? s.k : s.n) + s.pad, ldc = s.n + s.pad;
  o.a.resize(static_cast<size_t>(s.m * lda));
  o.b.resize(static_cast<size_t>((s.trans_b ? s.n : s.k) * ldb));
  o.c.assign(static_cast<size_t>(s.m * ldc), to_bits(t, std::nanf("")));
  for (uint16_t& x : o.a) x = to_bits(t, d(rng));
  for (uint16_t& x : o.b) x = to_bits(t, d(rng));
  o.p = HalfProduct{.type = t, .a = o.a.data(), .b = o.b.data(), .c = o.c.data(), .m = s.m,
                    .n = s.n, .k = s.k, .a_row = lda, .a_col = 1,
                    .b_row = s.trans_b ? 1 : ldb, .b_col = s.trans_b ? ldb : 1, .ldc = ldc};
  return o;
}

// C's element (i, j) as the double sum of the 16-bit inputs' products.
double expected(const Operands& o, int64_t i, int64_t j) {
  double want = 0;
  for (int64_t q = 0; q < o.p.k; ++q)
    want += double(to_float(o.p.type, o.a[i * o.p.a_row + q])) *
            to_float(o.p.type, o.b[q * o.p.b_row + j * o.p.b_col]);
  return want;
}

// Every element of C within the tolerance, and the padding of C's rows untouched.
void compare(const Operands& o, const std::string& what) {
  const HalfProduct& p = o.p;
  for (int64_t i = 0; i < p.m; ++i) {
    for (int64_t j = 0; j < p.n; ++j) {
      const double want = expected(o, i, j);
      ASSERT_NEAR(to_float(p.type, o.c[i * p.ldc + j]), want, tolerance(p.type, want, p.k))
          << what << " at [" << i << ", " << j << "]";
    }
    for (int64_t j = p.n; j < p.ldc; ++j)
      ASSERT_TRUE(std::isnan(to_float(p.type, o.c[i * p.ldc + j])))
          << what << ": wrote into row padding";
  }
}

void check(const HalfKernels& K, HalfType t, const Sizes& s, bool parallel, std::mt19937& rng) {
  Operands o = make(t, s, rng);
  multiply(K, o.p, parallel);
  compare(o, describe(K, t, s) + (parallel ? "" : " (one thread)"));
}

TEST(HalfGemm, EdgeSizesAgainstLoops) {
  std::mt19937 rng(36);
  // Small-m (m <= 16) and packed; edge tiles in m and n; depths of one, one block (256) and
  // past it; a column past the last full vector; padded rows.
  const Sizes sizes[] = {{1, 1, 1, false},       {1, 17, 300, false},     {1, 33, 257, true},
                         {3, 31, 7, false, 3},   {16, 64, 256, true},     {17, 33, 300, false},
                         {15, 45, 61, true, 1},  {97, 131, 13, false},    {300, 7, 61, true},
                         {29, 300, 513, false, 2}, {256, 96, 300, true, 5}};
  for (const HalfKernels* K : runnable())
    for (HalfType t : {HalfType::BF16, HalfType::F16})
      for (const Sizes& s : sizes)
        for (bool parallel : {false, true}) {
          check(*K, t, s, parallel, rng);
          if (HasFatalFailure()) return;
        }
}

TEST(HalfGemm, RandomSizesUpTo300) {
  std::mt19937 rng(37);
  std::uniform_int_distribution<int64_t> size(1, 300);
  for (const HalfKernels* K : runnable())
    for (HalfType t : {HalfType::BF16, HalfType::F16})
      for (int i = 0; i < 6; ++i) {
        const Sizes s{size(rng), size(rng), size(rng), i % 2 == 1, i % 3};
        check(*K, t, s, true, rng);
        if (HasFatalFailure()) return;
      }
}

// A B in declared constant memory is packed once (the pack keyed by its type and kernels; for
// a product of few rows, B transposed) and the second product reads the pack; releasing the
// memory frees it.
TEST(HalfGemm, ConstantBIsPackedOnce) {
  std::mt19937 rng(38);
  for (const HalfKernels* K : runnable())
    for (HalfType t : {HalfType::BF16, HalfType::F16})
      for (int64_t m : {int64_t{40}, int64_t{3}}) {
        const Sizes s{m, 70, 300, false};
        Operands o = make(t, s, rng);
        std::string error;
        ASSERT_TRUE(declare_constant(o.b.data(), o.b.size() * 2, &error)) << error;
        const size_t packs = constant_pack_count();
        multiply(*K, o.p);
        EXPECT_EQ(constant_pack_count(), packs + 1) << describe(*K, t, s);
        std::fill(o.c.begin(), o.c.end(), to_bits(t, std::nanf("")));
        multiply(*K, o.p);
        EXPECT_EQ(constant_pack_count(), packs + 1) << describe(*K, t, s);
        compare(o, describe(*K, t, s) + " (from the pack)");
        EXPECT_TRUE(release_constant(o.b.data()));
        EXPECT_EQ(constant_pack_count(), packs);
        if (HasFatalFailure()) return;
      }
}

// NaN in A makes its row NaN; an infinity times a positive sum stays infinite, of its sign.
TEST(HalfGemm, NanAndInfinityPropagate) {
  std::mt19937 rng(39);
  for (const HalfKernels* K : runnable())
    for (HalfType t : {HalfType::BF16, HalfType::F16})
      for (int64_t m : {int64_t{3}, int64_t{40}}) {
        const Sizes s{m, 35, 20, false};
        Operands o = make(t, s, rng);
        for (uint16_t& x : o.b) x = to_bits(t, 0.5f); // every column sums positive products
        o.a[0 * o.p.a_row + 5] = to_bits(t, std::nanf(""));
        for (int64_t q = 0; q < s.k; ++q) o.a[1 * o.p.a_row + q] = to_bits(t, 0.25f);
        o.a[1 * o.p.a_row + 7] = to_bits(t, -INFINITY);
        multiply(*K, o.p);
        for (int64_t j = 0; j < s.n; ++j) {
          EXPECT_TRUE(std::isnan(to_float(t, o.c[j]))) << describe(*K, t, s) << " column " << j;
          EXPECT_EQ(to_float(t, o.c[o.p.ldc + j]), -INFINITY) << describe(*K, t, s);
        }
      }
}

// The epilogue of the tests: doubles its block of C in place (buffers: C; symbols: n, rows).
// It must see C rounded to 16 bits already: 2 * round(sum), rounded again, is exact.
template <HalfType T> void double_rows(void* const* buffers, const int64_t* symbols) {
  auto* c = static_cast<uint16_t*>(buffers[0]);
  for (int64_t i = 0; i < symbols[0] * symbols[1]; ++i)
    c[i] = to_bits(T, 2.0f * to_float(T, c[i]));
}

template <HalfType T> void check_strided_epilogue(const Sizes& s, std::mt19937& rng) {
  Operands o = make(T, s, rng);
  dsc_strided_product d{};
  d.batch = d.inner = 1;
  d.m = s.m;
  d.n = s.n;
  d.k = s.k;
  d.a_row = o.p.a_row;
  d.a_col = 1;
  d.b_row = o.p.b_row;
  d.b_col = o.p.b_col;
  d.c_row = s.n;
  std::vector<uint16_t> plain(o.c.size());
  auto* plain_entry = T == HalfType::BF16 ? &dsc_rt_gemm_bf16_strided : &dsc_rt_gemm_f16_strided;
  auto* epilogue_entry = T == HalfType::BF16 ? &dsc_rt_gemm_bf16_strided_epilogue
                                             : &dsc_rt_gemm_f16_strided_epilogue;
  plain_entry(o.a.data(), o.b.data(), plain.data(), &d);
  void* const buffers[] = {o.c.data()};
  const int64_t row_bytes[] = {s.n * 2};
  const int64_t symbols[] = {s.n, -1};
  epilogue_entry(o.a.data(), o.b.data(), o.c.data(), &d, &double_rows<T>, buffers, row_bytes, 1,
                 symbols, 2, 1, -1);
  const std::string what = std::string(name(T)) + " m=" + std::to_string(s.m) +
                           " n=" + std::to_string(s.n) + " k=" + std::to_string(s.k);
  for (int64_t i = 0; i < s.m * s.n; ++i) {
    ASSERT_EQ(o.c[i], to_bits(T, 2.0f * to_float(T, plain[i]))) << what << " element " << i;
    const double want = expected(o, i / s.n, i % s.n);
    ASSERT_NEAR(to_float(T, plain[i]), want, tolerance(T, want, s.k)) << what;
  }
}

// The strided entry points, with and without an epilogue, on the small-m and packed paths.
TEST(HalfGemm, StridedEntryPointsAndEpilogue) {
  std::mt19937 rng(40);
  for (const Sizes& s : {Sizes{5, 37, 70, false}, Sizes{150, 70, 300, false},
                         Sizes{33, 40, 19, true}}) {
    check_strided_epilogue<HalfType::BF16>(s, rng);
    check_strided_epilogue<HalfType::F16>(s, rng);
    if (HasFatalFailure()) return;
  }
}

} // namespace
} // namespace dsc::runtime::gemm
