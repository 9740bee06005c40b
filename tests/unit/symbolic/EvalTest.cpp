#include "symbolic/Eval.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "symbolic/Parser.h"

namespace dsc::symbolic {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// Wide enough that b*q + r cannot overflow for any int64 operands.
__extension__ typedef __int128 Wide;

Expr c(int64_t v) {
  return Const::make(v);
}

std::optional<int64_t> eval_text(std::string_view text, const Bindings& bindings = {}) {
  ParseResult r = parse_expr(text);
  EXPECT_TRUE(r.ok()) << text << ": " << r.error.message;
  if (!r.ok()) return std::nullopt;
  return eval(r.expr, bindings);
}

std::optional<int64_t> div(int64_t a, int64_t b) {
  return eval(FloorDiv::make(c(a), c(b)), {});
}
std::optional<int64_t> mod(int64_t a, int64_t b) {
  return eval(FloorMod::make(c(a), c(b)), {});
}

TEST(Eval, FloorDivAndModMatchPython) {
  // Values from Python's // and %.
  struct Row {
    int64_t a, b, q, r;
  };
  const Row rows[] = {
      {7, 2, 3, 1},
      {-7, 2, -4, 1},
      {7, -2, -4, -1},
      {-7, -2, 3, -1},
      {6, 3, 2, 0},
      {-6, 3, -2, 0},
      {6, -3, -2, 0},
      {-6, -3, 2, 0},
      {0, 5, 0, 0},
      {0, -5, 0, 0},
      {1, 5, 0, 1},
      {-1, 5, -1, 4},
      {1, -5, -1, -4},
      {-1, -5, 0, -1},
      {kMax, 2, kMax / 2, 1},
      {kMin, 2, kMin / 2, 0},
      {kMin, 3, -3074457345618258603, 1},
      {kMin, -2, -(kMin / 2), 0},
      {kMin, kMax, -2, kMax - 1},
      {kMax, kMin, -1, -1},
      {kMin, kMin, 1, 0},
      {kMin + 1, -1, kMax, 0},
      {kMax, -1, -kMax, 0},
  };
  for (const Row& row : rows) {
    EXPECT_EQ(div(row.a, row.b), row.q) << row.a << " / " << row.b;
    EXPECT_EQ(mod(row.a, row.b), row.r) << row.a << " % " << row.b;
  }
}

TEST(Eval, FloorDivAndModAgainstReference) {
  // Small operands: compare against floor() of the exact rational quotient.
  for (int64_t a = -30; a <= 30; ++a) {
    for (int64_t b = -9; b <= 9; ++b) {
      if (b == 0) continue;
      auto q = static_cast<int64_t>(std::floor(static_cast<long double>(a) / b));
      EXPECT_EQ(div(a, b), q) << a << " / " << b;
      EXPECT_EQ(mod(a, b), a - b * q) << a << " % " << b;
    }
  }
  // Large operands: check the defining property in 128-bit arithmetic,
  // a == b*q + r with r strictly between 0 and b (or equal to 0).
  std::mt19937_64 rng(99);
  for (int i = 0; i < 200000; ++i) {
    auto a = static_cast<int64_t>(rng());
    auto b = static_cast<int64_t>(rng());
    if (i % 4 == 1) b = static_cast<int64_t>(rng() % 64) - 32;
    if (i % 4 == 2) a = (i % 8 == 2) ? kMin : kMax;
    if (b == 0 || (a == kMin && b == -1)) continue;
    std::optional<int64_t> q = div(a, b), r = mod(a, b);
    ASSERT_TRUE(q && r);
    Wide lhs = static_cast<Wide>(b) * *q + *r;
    ASSERT_TRUE(lhs == a) << a << " " << b;
    if (b > 0) {
      ASSERT_TRUE(0 <= *r && *r < b) << a << " % " << b << " = " << *r;
    } else {
      ASSERT_TRUE(b < *r && *r <= 0) << a << " % " << b << " = " << *r;
    }
  }
}

TEST(Eval, DivisionByZeroIsTotal) {
  EXPECT_EQ(div(7, 0), 0);
  EXPECT_EQ(div(-7, 0), 0);
  EXPECT_EQ(div(kMin, 0), 0);
  EXPECT_EQ(mod(7, 0), 7);
  EXPECT_EQ(mod(-7, 0), -7);
  EXPECT_EQ(mod(kMin, 0), kMin);
  EXPECT_EQ(eval_text("n / (m - m)", {{"n", 5}, {"m", 3}}), 0);
  EXPECT_EQ(eval_text("n % (m - m)", {{"n", 5}, {"m", 3}}), 5);
}

TEST(Eval, MinDividedByMinusOne) {
  EXPECT_EQ(div(kMin, -1), std::nullopt);
  // The remainder is 0 mathematically and must not trip the hardware trap.
  EXPECT_EQ(mod(kMin, -1), 0);
  EXPECT_EQ(mod(-7, -1), 0);
  EXPECT_EQ(div(kMin, 1), kMin);
}

TEST(Eval, OverflowHasNoValue) {
  EXPECT_EQ(eval(Add::make(c(kMax), c(1)), {}), std::nullopt);
  EXPECT_EQ(eval(Add::make(c(kMin), c(-1)), {}), std::nullopt);
  EXPECT_EQ(eval(Sub::make(c(kMin), c(1)), {}), std::nullopt);
  EXPECT_EQ(eval(Sub::make(c(0), c(kMin)), {}), std::nullopt);
  EXPECT_EQ(eval(Mul::make(c(-1), c(kMin)), {}), std::nullopt);
  EXPECT_EQ(eval(Mul::make(c(1LL << 32), c(1LL << 31)), {}), std::nullopt);
  EXPECT_EQ(eval(Add::make(c(kMax), c(kMin)), {}), -1);
  EXPECT_EQ(eval(Sub::make(c(-1), c(kMax)), {}), kMin);
  EXPECT_EQ(eval(Mul::make(c(-1), c(kMax)), {}), -kMax);
  EXPECT_EQ(eval(Mul::make(c(1LL << 31), c(1LL << 31)), {}), 1LL << 62);

  // No value anywhere means no value for the whole expression, booleans included.
  Bindings big = {{"n", kMax}};
  EXPECT_EQ(eval_text("min(n + 1, 0)", big), std::nullopt);
  EXPECT_EQ(eval_text("n*2 / 0", big), std::nullopt);
  EXPECT_EQ(eval_text("n + 1 < 0", big), std::nullopt);
  EXPECT_EQ(eval_text("false && n + 1 < 0", big), std::nullopt);
  EXPECT_EQ(eval_text("true || n + 1 < 0", big), std::nullopt);
  EXPECT_EQ(eval_text("!(n + 1 < 0)", big), std::nullopt);
  // Intermediate overflow is not rescued by a later operation that would bring it back.
  EXPECT_EQ(eval_text("n + 1 - 1", big), std::nullopt);
  EXPECT_EQ(eval_text("n - 1 + 1", big), kMax);
}

TEST(Eval, SymbolsAndBindings) {
  Bindings env = {{"n", 10}, {"m", 3}};
  EXPECT_EQ(eval_text("n", env), 10);
  EXPECT_EQ(eval_text("2*n + m/4", env), 20);
  EXPECT_EQ(eval_text("(n - 2*m) % m", env), 1);
  EXPECT_EQ(eval_text("min(n, m) - max(n, m)", env), -7);
  EXPECT_EQ(eval_text("-n", env), -10);
  EXPECT_EQ(eval_text("k", env), std::nullopt);
  EXPECT_EQ(eval_text("n + k*0", env), std::nullopt);
  EXPECT_EQ(eval_text("-9223372036854775808"), kMin);
}

TEST(Eval, BooleansAreZeroOrOne) {
  Bindings env = {{"n", 10}, {"m", 3}};
  EXPECT_EQ(eval_text("n == 10", env), 1);
  EXPECT_EQ(eval_text("n != 10", env), 0);
  EXPECT_EQ(eval_text("m < n", env), 1);
  EXPECT_EQ(eval_text("n < n", env), 0);
  EXPECT_EQ(eval_text("n <= n", env), 1);
  EXPECT_EQ(eval_text("n > m", env), 1);
  EXPECT_EQ(eval_text("n >= 11", env), 0);
  EXPECT_EQ(eval_text("true", env), 1);
  EXPECT_EQ(eval_text("false", env), 0);
  EXPECT_EQ(eval_text("!false", env), 1);
  EXPECT_EQ(eval_text("!(m < n)", env), 0);
  EXPECT_EQ(eval_text("m < n && n < 100", env), 1);
  EXPECT_EQ(eval_text("m < n && n < 5", env), 0);
  EXPECT_EQ(eval_text("n < m || n < 5", env), 0);
  EXPECT_EQ(eval_text("n < m || n < 50", env), 1);
  EXPECT_EQ(eval_text("1 <= m <= n <= 10", env), 1);
  EXPECT_EQ(eval_text("1 <= m <= n <= 9", env), 0);
}

TEST(FreeSymbols, SortedAndUnique) {
  ParseResult r = parse_expr("z + a*z < min(m, a) && b_2 == 0 || true");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(free_symbols(r.expr), (std::set<std::string>{"a", "b_2", "m", "z"}));
  EXPECT_TRUE(free_symbols(c(3)).empty());
  EXPECT_TRUE(free_symbols(BoolConst::make(true)).empty());
  EXPECT_EQ(free_symbols(Not::make(LT::make(sym("q"), c(0)))), (std::set<std::string>{"q"}));
}

TEST(FreeSymbols, SharedSubexpressionsAreVisitedOnce) {
  // 2^200 paths through 201 distinct nodes: a tree walk would never finish.
  Expr e = sym("x");
  for (int i = 0; i < 200; ++i)
    e = Add::make(e, e);
  e = Add::make(e, sym("y"));
  EXPECT_EQ(free_symbols(e), (std::set<std::string>{"x", "y"}));
}

TEST(FreeSymbols, DeepChainDoesNotRecurse) {
  Expr e = sym("x");
  for (int i = 0; i < 10000; ++i)
    e = Add::make(e, c(i));
  EXPECT_EQ(free_symbols(e), (std::set<std::string>{"x"}));
}

} // namespace
} // namespace dsc::symbolic
