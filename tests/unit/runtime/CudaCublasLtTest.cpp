// The cublaslt.sgemm_* routines (runtime/cuda/CublasLt.h) without a GPU: their plan (cuBLAS's,
// refused at depth 0), the emulator's epilogue loops through a strided result, and that every
// cuBLASLt entry point the runtime calls resolves where the library is installed. Against
// cuBLASLt itself: CudaGpuTest (label gpu).
#include "runtime/cuda/CublasLt.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace dsc::runtime::cuda {
namespace {

TEST(CudaCublasLt, PlanIsCublassButNeedsADepth) {
  SgemmPlan plan;
  std::string error;
  dsc_strided_product p = dense_product(2, 3, 4, 5, 15, 0, false);
  ASSERT_TRUE(plan_lt_sgemm(p, &plan, &error)) << error;
  EXPECT_EQ(plan.action, SgemmPlan::Action::Gemm);
  EXPECT_EQ(plan.m, 4); // cuBLAS's m is our n
  EXPECT_EQ(plan.batch, 2);
  p.k = 0;
  EXPECT_FALSE(plan_lt_sgemm(p, &plan, &error));
  EXPECT_EQ(error, "cuBLASLt's epilogue needs a depth of at least 1 (k = 0)");
  p.m = 0; // an empty result needs no product
  EXPECT_TRUE(plan_lt_sgemm(p, &plan, &error)) << error;
  EXPECT_EQ(plan.action, SgemmPlan::Action::Nothing);
}

float gelu_tanh(float x) {
  return 0.5f * x * (1.0f + std::tanh(0.7978845608028654f * (x + 0.044715f * x * x * x)));
}

// A result of two batch dims (2 x 3 products of 2 x 3), its rows 5 apart, products 10 apart
// within a group and 40 between groups, from offset 7: the loops touch exactly those elements.
TEST(CudaCublasLt, LoopsFinishEachElementOfAStridedResult) {
  dsc_strided_product p{};
  p.batch = 6, p.inner = 3, p.m = 2, p.n = 3, p.k = 1;
  p.c_offset = 7, p.c_outer = 40, p.c_inner = 10, p.c_row = 5;
  const std::vector<float> bias = {0.5f, -2.0f, 1.0f};
  for (GemmEpilogue e : {GemmEpilogue::Bias, GemmEpilogue::BiasRelu, GemmEpilogue::BiasGeluTanh}) {
    std::vector<float> c(100);
    for (size_t i = 0; i < c.size(); ++i)
      c[i] = static_cast<float>(i % 7) - 3.0f;
    const std::vector<float> before = c;
    apply_epilogue_loops(p, e, bias.data(), c.data());
    std::vector<bool> touched(c.size());
    for (int64_t b = 0; b < p.batch; ++b)
      for (int64_t row = 0; row < p.m; ++row)
        for (int64_t col = 0; col < p.n; ++col) {
          const size_t at = static_cast<size_t>(p.c_offset + (b / 3) * p.c_outer +
                                                (b % 3) * p.c_inner + row * p.c_row + col);
          touched[at] = true;
          const float x = before[at] + bias[static_cast<size_t>(col)];
          const float want = e == GemmEpilogue::Bias       ? x
                             : e == GemmEpilogue::BiasRelu ? std::max(x, 0.0f)
                                                           : gelu_tanh(x);
          EXPECT_FLOAT_EQ(c[at], want) << at;
        }
    for (size_t i = 0; i < c.size(); ++i)
      if (!touched[i]) {
        EXPECT_EQ(c[i], before[i]) << i;
      }
  }
}

TEST(CudaCublasLt, ReluTurnsNanIntoZeroAsCublasLtDoes) {
  dsc_strided_product p = dense_product(1, 1, 2, 1, 0, 0, false);
  const float bias[] = {0.0f, 1.0f};
  float c[] = {NAN, -3.0f};
  apply_epilogue_loops(p, GemmEpilogue::BiasRelu, bias, c);
  EXPECT_EQ(c[0], 0.0f);
  EXPECT_EQ(c[1], 0.0f);
}

// Loading needs no GPU: where cuBLASLt is installed (/usr/local/cuda/lib64 here), every entry
// point the runtime calls resolves.
TEST(CudaCublasLt, LoadsEveryEntryPointWhereInstalled) {
  std::string error;
  const CublasLt* lt = CublasLt::load(&error);
  if (!lt && error.find("cannot be loaded") != std::string::npos) GTEST_SKIP() << error;
  EXPECT_NE(lt, nullptr) << error;
}

} // namespace
} // namespace dsc::runtime::cuda
