// Index arithmetic in kernels (backends/llvm/SymbolicCodegen.h through KernelCodegen.h)
// against symbolic::eval on the same expressions: floor division and modulo by constants of
// both signs (powers of two included), by symbols (zero included) and by negative
// non-constant divisors; min and max.

#include <gtest/gtest.h>

#include "symbolic/Eval.h"
#include "symbolic/Parser.h"
#include "tests/unit/cpu/KernelTestUtil.h"

namespace dsc::testing {
namespace {

const char* const kExprs[] = {
    "(i - 50) / 7",     "(i - 50) % 7",      "(i - 50) / -7",      "(i - 50) % -7",    "(i - 50) / 8",
    "(i - 50) % 8",     "(i - 50) / -8",     "(i - 50) % -8",      "(i - 50) / 1",     "(i - 50) % 1",
    "(i - 50) / -1",    "(i - 50) % -1",     "(i - 50) / k",       "(i - 50) % k",     "(i - 50) / (k - 10)",
    "(i - 50) % (k - 10)", "(i * 3 - 7) / (5 - k)", "(i * 3 - 7) % (5 - k)", "min(i, k) * 2 - max(i - 3, k)",
    "(i - 50) / 16 * 16 + (i - 50) % 16", "i * k - (i + 1) * (k - 2) + i / 3 % 5",
};

TEST(KernelSymbolic, IndexArithmeticMatchesEval) {
  std::string text;
  for (size_t e = 0; e < std::size(kExprs); ++e)
    text += "prim e" + std::to_string(e) + "(x: i64[n], d: i64[k]) -> (y: i64[n]) { for i in 0..n { y[i] = " +
            kExprs[e] + " } }\n";
  CompiledPrims prims(text);
  ASSERT_TRUE(prims.ok());
  const int64_t n = 120;
  for (size_t e = 0; e < std::size(kExprs); ++e) {
    symbolic::ParseResult parsed = symbolic::parse_expr(kExprs[e]);
    ASSERT_TRUE(parsed.ok()) << kExprs[e];
    for (int64_t k : {0, 1, 3, 5, 8, 10, 13, 40}) {
      std::vector<int64_t> x(n), d(k), y(n, -999);
      prims.run("e" + std::to_string(e), {x.data(), d.data(), y.data()}, {{"n", n}, {"k", k}});
      for (int64_t i = 0; i < n; ++i) {
        std::optional<int64_t> want = symbolic::eval(parsed.expr, symbolic::Bindings{{"i", i}, {"k", k}});
        ASSERT_TRUE(want.has_value());
        ASSERT_EQ(y[i], *want) << kExprs[e] << " at i=" << i << ", k=" << k;
      }
    }
  }
}

TEST(KernelSymbolic, DivisionByAZeroDim) {
  // x / 0 == 0 and x % 0 == x, as symbolic/Expr.h defines them.
  CompiledPrims prims(R"(
prim f(x: i64[n], d: i64[k]) -> (q: i64[n], r: i64[n]) {
  for i in 0..n {
    q[i] = (i - 3) / k
    r[i] = (i - 3) % k
  }
}
)");
  ASSERT_TRUE(prims.ok());
  std::vector<int64_t> x(6), q(6), r(6);
  prims.run("f", {x.data(), nullptr, q.data(), r.data()}, {{"n", 6}, {"k", 0}});
  for (int64_t i = 0; i < 6; ++i) {
    EXPECT_EQ(q[i], 0);
    EXPECT_EQ(r[i], i - 3);
  }
}

TEST(KernelSymbolic, SymbolicShapesLinearize) {
  // A rank-3 buffer with dims that are expressions of symbols, read through a permutation.
  CompiledPrims prims(R"(
prim f(x: f32[a, 2*b, b+1]) -> (y: f32[b+1, a, 2*b]) {
  parallel for i in 0..a {
    for j in 0..2*b {
      vectorize for l in 0..b+1 {
        y[l, i, j] = x[i, j, l]
      }
    }
  }
}
)");
  ASSERT_TRUE(prims.ok());
  for (int64_t a : {1, 3}) {
    for (int64_t b : {1, 4, 9}) {
      int64_t d1 = 2 * b, d2 = b + 1;
      std::vector<float> x(a * d1 * d2), y(x.size(), -1.0f);
      for (size_t i = 0; i < x.size(); ++i)
        x[i] = static_cast<float>(i);
      prims.run("f", {x.data(), y.data()}, {{"a", a}, {"b", b}});
      for (int64_t i = 0; i < a; ++i)
        for (int64_t j = 0; j < d1; ++j)
          for (int64_t l = 0; l < d2; ++l)
            ASSERT_EQ(y[(l * a + i) * d1 + j], x[(i * d1 + j) * d2 + l]);
    }
  }
}

} // namespace
} // namespace dsc::testing
