// cublas.sgemm's arguments (runtime/cuda/Cublas.h): HostABI.h's strided row-major product as
// cuBLAS's column-major strided-batched calls. The plans run through a plain column-major GEMM
// with cuBLAS's semantics and are checked against the product's definition, so the
// transposition and the strides are tested without a GPU.
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

// The plan's cublasSgemmStridedBatched calls with alpha 1 and beta 0, column-major, on the
// host: call i on the operands advanced by i steps.
void column_major_gemm(const SgemmPlan& p, const float* a, const float* b, float* c) {
  for (int64_t call = 0; call < p.calls; ++call)
    for (int batch = 0; batch < p.batch; ++batch) {
      const float* ab = a + p.offset_a + call * p.step_a + batch * p.stride_a;
      const float* bb = b + p.offset_b + call * p.step_b + batch * p.stride_b;
      float* cb = c + p.offset_c + call * p.step_c + batch * p.stride_c;
      for (int j = 0; j < p.n; ++j)
        for (int i = 0; i < p.m; ++i) {
          double sum = 0;
          for (int l = 0; l < p.k; ++l) {
            // op(A)(i, l): A is m x k (ld lda), or stored k x m when transposed; op(B)(l, j) alike.
            const float av = p.transa ? ab[l + i * p.lda] : ab[i + l * p.lda];
            const float bv = p.transb ? bb[j + l * p.ldb] : bb[l + j * p.ldb];
            sum += double(av) * bv;
          }
          cb[i + j * p.ldc] = static_cast<float>(sum);
        }
    }
}

// HostABI.h's strided product itself, by its definition: each product i of the batch through
// the runtime's plain strided loops.
void strided_product(const dsc_strided_product& p, const float* a, const float* b, float* c) {
  for (int64_t i = 0; i < p.batch; ++i) {
    const int64_t outer = i / p.inner, inner = i % p.inner;
    sgemm_strided_loops(a + p.a_offset + outer * p.a_outer + inner * p.a_inner, p.a_row, p.a_col,
                        b + p.b_offset + outer * p.b_outer + inner * p.b_inner, p.b_row, p.b_col,
                        c + p.c_offset + outer * p.c_outer + inner * p.c_inner, p.c_row, p.m, p.n,
                        p.k);
  }
}

// The largest element index of the operand with these strides, plus one.
int64_t extent(int64_t offset, int64_t outer_count, int64_t outer, int64_t inner_count, int64_t inner,
               int64_t rows, int64_t row, int64_t cols, int64_t col) {
  return offset + (outer_count - 1) * outer + (inner_count - 1) * inner + (rows - 1) * row +
         (cols - 1) * col + 1;
}

void check(const std::string& what, const dsc_strided_product& p) {
  SCOPED_TRACE(what);
  const int64_t outer = p.batch / p.inner;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> a(static_cast<size_t>(
      extent(p.a_offset, outer, p.a_outer, p.inner, p.a_inner, p.m, p.a_row, p.k, p.a_col)));
  std::vector<float> b(static_cast<size_t>(
      extent(p.b_offset, outer, p.b_outer, p.inner, p.b_inner, p.k, p.b_row, p.n, p.b_col)));
  const size_t c_size = static_cast<size_t>(
      extent(p.c_offset, outer, p.c_outer, p.inner, p.c_inner, p.m, p.c_row, p.n, 1));
  for (float& x : a)
    x = d(rng);
  for (float& x : b)
    x = d(rng);

  SgemmPlan plan;
  std::string error;
  ASSERT_TRUE(plan_sgemm(p, &plan, &error)) << error;
  ASSERT_EQ(plan.action, SgemmPlan::Action::Gemm);
  // Elements C's view skips stay as they were (NaN) on both sides.
  std::vector<float> got(c_size, NAN), want(c_size, NAN);
  // cuBLAS's A is our B, its B our A.
  column_major_gemm(plan, b.data(), a.data(), got.data());
  strided_product(p, a.data(), b.data(), want.data());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      ASSERT_TRUE(std::isnan(got[i])) << "element " << i << " is outside C's view";
      continue;
    }
    ASSERT_NEAR(got[i], want[i], 1e-4) << "element " << i;
  }
}

// Dense row-major operands, a batch of one dim; B shared (batch stride 0) or one per product.
dsc_strided_product dense(int64_t batch, int64_t m, int64_t n, int64_t k, bool trans_b = false,
                          bool shared_b = false) {
  return dense_product(batch, m, n, k, m * k, shared_b ? 0 : k * n, trans_b);
}

TEST(CudaCublasPlan, MatchesTheRowMajorProduct) {
  for (bool trans_b : {false, true}) {
    check("5x3 @ 3x7", dense(1, 5, 7, 3, trans_b));
    check("batch 3, 4x9 @ 9x6", dense(3, 4, 6, 9, trans_b));
    check("1x1 @ 1x1", dense(2, 1, 1, 1, trans_b));
    check("13x17 @ 17x1", dense(1, 13, 1, 17, trans_b));
    check("1x17 @ 17x13", dense(1, 1, 13, 17, trans_b));
    check("a shared B", dense(4, 3, 5, 2, trans_b, true));
  }
  dsc_strided_product shared_a = dense(4, 3, 5, 2);
  shared_a.a_outer = 0;
  check("a shared A", shared_a);
  dsc_strided_product a_transposed = dense(2, 5, 4, 3);
  a_transposed.a_row = 1, a_transposed.a_col = 5;
  check("A stored transposed", a_transposed);
}

// Attention's products on views of a [B, S, 3 * H * D] projection: Q and K as [B, H, S, D]
// (heads interleaved in each row), Kᵀ read through strides, the scores dense; then P @ V
// written straight into a head-merged [B, S, H, D] result. Two batch dims: a call per B.
TEST(CudaCublasPlan, AttentionViews) {
  const int64_t b = 2, h = 3, s = 5, dh = 4, row = 3 * h * dh;
  dsc_strided_product qk{};
  qk.batch = b * h, qk.inner = h, qk.m = s, qk.n = s, qk.k = dh;
  qk.a_offset = 0, qk.a_outer = s * row, qk.a_inner = dh, qk.a_row = row, qk.a_col = 1;
  qk.b_offset = h * dh, qk.b_outer = s * row, qk.b_inner = dh, qk.b_row = 1, qk.b_col = row;
  qk.c_outer = h * s * s, qk.c_inner = s * s, qk.c_row = s;
  check("Q @ K^T", qk);
  SgemmPlan plan;
  std::string error;
  ASSERT_TRUE(plan_sgemm(qk, &plan, &error)) << error;
  EXPECT_EQ(plan.calls, b);
  EXPECT_EQ(plan.batch, h);
  EXPECT_TRUE(plan.transa); // K^T's rows are at stride 1
  EXPECT_FALSE(plan.transb);
  EXPECT_EQ(plan.lda, row);
  EXPECT_EQ(plan.ldb, row);

  dsc_strided_product pv{};
  pv.batch = b * h, pv.inner = h, pv.m = s, pv.n = dh, pv.k = s;
  pv.a_outer = h * s * s, pv.a_inner = s * s, pv.a_row = s, pv.a_col = 1;
  pv.b_offset = 2 * h * dh, pv.b_outer = s * row, pv.b_inner = dh, pv.b_row = row, pv.b_col = 1;
  pv.c_outer = s * h * dh, pv.c_inner = dh, pv.c_row = h * dh;
  check("P @ V, heads merged", pv);
  pv.c_offset = 3;
  pv.c_outer = s * h * dh + 7; // a gap between sequences
  check("P @ V into a padded result", pv);
}

TEST(CudaCublasPlan, Arguments) {
  SgemmPlan p;
  std::string error;
  // A is 12 x 64, B is 64 x 128 (or stored 128 x 64), batch 24 with B shared.
  ASSERT_TRUE(plan_sgemm(dense(24, 12, 128, 64, false, true), &p, &error)) << error;
  EXPECT_EQ(p.action, SgemmPlan::Action::Gemm);
  EXPECT_FALSE(p.transa);
  EXPECT_FALSE(p.transb);
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
  EXPECT_EQ(p.calls, 1);
  ASSERT_TRUE(plan_sgemm(dense(24, 12, 128, 64, true, true), &p, &error)) << error;
  EXPECT_TRUE(p.transa);
  EXPECT_EQ(p.lda, 64);
}

TEST(CudaCublasPlan, NothingToDo) {
  SgemmPlan p;
  std::string error;
  for (dsc_strided_product q : {dense(0, 2, 2, 2), dense(2, 0, 2, 2), dense(2, 2, 0, 2)}) {
    ASSERT_TRUE(plan_sgemm(q, &p, &error)) << error;
    EXPECT_EQ(p.action, SgemmPlan::Action::Nothing);
  }
  // Any negative size, stride or offset, or an inner dim below 1.
  for (int64_t dsc_strided_product::*field :
       {&dsc_strided_product::batch, &dsc_strided_product::m, &dsc_strided_product::k,
        &dsc_strided_product::a_offset, &dsc_strided_product::a_outer, &dsc_strided_product::b_row,
        &dsc_strided_product::c_row, &dsc_strided_product::c_inner}) {
    dsc_strided_product q = dense(2, 2, 2, 2);
    q.*field = -1;
    ASSERT_TRUE(plan_sgemm(q, &p, &error)) << error;
    EXPECT_EQ(p.action, SgemmPlan::Action::Nothing);
  }
  dsc_strided_product q = dense(2, 2, 2, 2);
  q.inner = 0;
  ASSERT_TRUE(plan_sgemm(q, &p, &error)) << error;
  EXPECT_EQ(p.action, SgemmPlan::Action::Nothing);
}

TEST(CudaCublasPlan, ZeroDepth) {
  SgemmPlan p;
  std::string error;
  // A dense C is zeroed in one go.
  dsc_strided_product q = dense(3, 4, 5, 0);
  q.c_offset = 2;
  ASSERT_TRUE(plan_sgemm(q, &p, &error)) << error;
  EXPECT_EQ(p.action, SgemmPlan::Action::Zero);
  EXPECT_EQ(p.zero_floats, 60);
  EXPECT_EQ(p.offset_c, 2);
  // A C with gaps is a GEMM of depth 0 (beta 0 writes zeros), which skips the gaps.
  q.c_row = 7;
  q.c_outer = 4 * 7;
  check("depth 0 into rows with gaps", q);
}

TEST(CudaCublasPlan, LayoutsCublasCannotRead) {
  SgemmPlan p;
  std::string error;
  dsc_strided_product q = dense(1, 4, 5, 3);
  q.a_row = 2, q.a_col = 8;
  EXPECT_FALSE(plan_sgemm(q, &p, &error));
  EXPECT_EQ(error, "A has neither stride 1 (row 2, column 8): cuBLAS reads a matrix or its transpose");
  q = dense(1, 4, 5, 3);
  q.b_row = 2; // rows of 5 elements, 2 apart
  EXPECT_FALSE(plan_sgemm(q, &p, &error));
  EXPECT_EQ(error, "B's rows are 2 apart, closer than a row of 5 is long");
  q = dense(5, 4, 5, 3);
  q.inner = 2;
  EXPECT_FALSE(plan_sgemm(q, &p, &error));
  EXPECT_EQ(error, "a batch of 5 is no whole number of its inner dim of 2");
}

TEST(CudaCublasPlan, SizesBeyondCublasInt) {
  SgemmPlan p;
  std::string error;
  EXPECT_FALSE(plan_sgemm(dense(1, 3000000000, 2, 2), &p, &error));
  EXPECT_EQ(error, "m = 3000000000 does not fit cuBLAS's 32-bit int");
  EXPECT_FALSE(plan_sgemm(dense(1, 2, 2, int64_t{1} << 31, true), &p, &error));
  EXPECT_EQ(error, "k = 2147483648 does not fit cuBLAS's 32-bit int");
  EXPECT_FALSE(plan_sgemm(dense(int64_t{1} << 32, 2, 2, 2), &p, &error));
  EXPECT_EQ(error, "the batch = 4294967296 does not fit cuBLAS's 32-bit int");
  EXPECT_FALSE(plan_sgemm(dense(1, 2, 2147483648, 2), &p, &error));
  EXPECT_EQ(error, "n = 2147483648 does not fit cuBLAS's 32-bit int");
  dsc_strided_product wide = dense(1, 2, 2, 2);
  wide.a_row = int64_t{1} << 31;
  EXPECT_FALSE(plan_sgemm(wide, &p, &error));
  EXPECT_EQ(error, "A's leading dimension = 2147483648 does not fit cuBLAS's 32-bit int");
  // C's element count overflows int64, even with k == 0.
  EXPECT_FALSE(plan_sgemm(dense(int64_t{1} << 40, int64_t{1} << 20, int64_t{1} << 20, 0), &p, &error));
  EXPECT_EQ(error, "C has 1099511627776 x 1048576 x 1048576 elements, more than int64 counts");
  // The largest int still fits.
  EXPECT_TRUE(plan_sgemm(dense(1, 2147483647, 1, 1), &p, &error)) << error;
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
