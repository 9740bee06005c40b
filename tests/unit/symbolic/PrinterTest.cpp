#include "symbolic/Printer.h"

#include <cstdint>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "symbolic/Parser.h"

namespace dsc::symbolic {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

Expr c(int64_t v) {
  return Const::make(v);
}
Expr neg(Expr x) {
  return Mul::make(c(-1), std::move(x));
}

// The printed form must read back as the very same (hash-consed) node.
::testing::AssertionResult round_trips(const Expr& e) {
  std::string printed = to_string(e);
  ParseResult r = parse_expr(printed);
  if (!r.ok()) {
    return ::testing::AssertionFailure() << "'" << printed << "' does not parse: column "
                                         << r.error.column << ": " << r.error.message;
  }
  if (!r.expr.same_as(e)) {
    return ::testing::AssertionFailure()
           << "'" << printed << "' reparses as a different node, printed '" << to_string(r.expr)
           << "'";
  }
  return ::testing::AssertionSuccess();
}

#define EXPECT_PRINTS(e, text)                                                                     \
  do {                                                                                             \
    Expr e_ = (e);                                                                                 \
    EXPECT_EQ(to_string(e_), text);                                                                \
    EXPECT_TRUE(round_trips(e_));                                                                  \
  } while (0)

class PrinterTest : public ::testing::Test {
protected:
  Expr a = sym("a"), b = sym("b"), c_ = sym("c"), n = sym("n"), m = sym("m");
  Expr p = LT::make(a, b), q = LT::make(b, c_), r = LE::make(c_, n);
};

TEST_F(PrinterTest, Leaves) {
  EXPECT_PRINTS(c(0), "0");
  EXPECT_PRINTS(c(42), "42");
  EXPECT_PRINTS(c(-3), "-3");
  EXPECT_PRINTS(c(kMax), "9223372036854775807");
  EXPECT_PRINTS(c(kMin), "-9223372036854775808");
  EXPECT_PRINTS(n, "n");
  EXPECT_PRINTS(BoolConst::make(true), "true");
  EXPECT_PRINTS(BoolConst::make(false), "false");
}

TEST_F(PrinterTest, Spacing) {
  EXPECT_PRINTS(Add::make(Mul::make(c(2), n), FloorDiv::make(m, c(4))), "2*n + m/4");
  EXPECT_PRINTS(FloorMod::make(n, c(8)), "n%8");
  EXPECT_PRINTS(Min::make(a, Max::make(b, c(1))), "min(a, max(b, 1))");
  EXPECT_PRINTS(EQ::make(a, b), "a == b");
  EXPECT_PRINTS(NE::make(a, b), "a != b");
  EXPECT_PRINTS(LE::make(a, b), "a <= b");
  EXPECT_PRINTS(gt(a, b), "b < a");
  EXPECT_PRINTS(ge(a, b), "b <= a");
}

TEST_F(PrinterTest, MinimalParentheses) {
  EXPECT_PRINTS(Sub::make(Sub::make(a, b), c_), "a - b - c");
  EXPECT_PRINTS(Sub::make(a, Sub::make(b, c_)), "a - (b - c)");
  EXPECT_PRINTS(Sub::make(a, Add::make(b, c_)), "a - (b + c)");
  EXPECT_PRINTS(Add::make(a, Add::make(b, c_)), "a + (b + c)");
  EXPECT_PRINTS(Add::make(a, Sub::make(b, c_)), "a + (b - c)");
  EXPECT_PRINTS(Mul::make(a, Mul::make(b, c_)), "a*(b*c)");
  EXPECT_PRINTS(FloorDiv::make(a, FloorDiv::make(b, c_)), "a/(b/c)");
  EXPECT_PRINTS(FloorDiv::make(FloorDiv::make(a, b), c_), "a/b/c");
  EXPECT_PRINTS(Mul::make(FloorDiv::make(a, b), c_), "a/b*c");
  EXPECT_PRINTS(FloorDiv::make(a, Mul::make(b, c_)), "a/(b*c)");
  EXPECT_PRINTS(Mul::make(Add::make(a, b), Sub::make(c_, n)), "(a + b)*(c - n)");
  EXPECT_PRINTS(Add::make(Mul::make(a, b), Mul::make(c_, n)), "a*b + c*n");
  EXPECT_PRINTS(LT::make(Add::make(a, b), Mul::make(c_, n)), "a + b < c*n");
}

TEST_F(PrinterTest, Negation) {
  EXPECT_PRINTS(neg(n), "-n");
  EXPECT_PRINTS(neg(Add::make(a, b)), "-(a + b)");
  EXPECT_PRINTS(neg(FloorDiv::make(n, c(2))), "-(n/2)");
  EXPECT_PRINTS(neg(Mul::make(a, b)), "-(a*b)");
  EXPECT_PRINTS(Mul::make(neg(a), b), "-a*b");
  EXPECT_PRINTS(neg(Min::make(a, b)), "-min(a, b)");
  EXPECT_PRINTS(neg(neg(n)), "-(-n)");
  // Mul(-1, 3) and Const(-3) are different nodes and must stay different.
  EXPECT_PRINTS(neg(c(3)), "-(3)");
  EXPECT_PRINTS(neg(c(0)), "-(0)");
  EXPECT_PRINTS(neg(c(-3)), "-(-3)");
  EXPECT_PRINTS(neg(c(kMin)), "-(-9223372036854775808)");
  EXPECT_PRINTS(neg(c(-1)), "-(-1)");
  EXPECT_PRINTS(Mul::make(neg(c(3)), n), "-(3)*n");
  EXPECT_PRINTS(Mul::make(c(-3), n), "-3*n");
  EXPECT_PRINTS(Add::make(c(-3), n), "-3 + n");
  EXPECT_PRINTS(FloorDiv::make(c(-1), n), "-1/n");
}

TEST_F(PrinterTest, NegativeRightOperands) {
  EXPECT_PRINTS(Sub::make(a, c(-3)), "a - (-3)");
  EXPECT_PRINTS(Add::make(a, c(-3)), "a + (-3)");
  EXPECT_PRINTS(Mul::make(a, c(-3)), "a*(-3)");
  EXPECT_PRINTS(FloorMod::make(a, c(-3)), "a%(-3)");
  EXPECT_PRINTS(Sub::make(a, neg(b)), "a - (-b)");
  EXPECT_PRINTS(Mul::make(a, neg(b)), "a*(-b)");
  EXPECT_PRINTS(Add::make(a, Mul::make(c(-2), b)), "a + (-2*b)");
  EXPECT_PRINTS(Sub::make(a, c(kMin)), "a - (-9223372036854775808)");
  // After a comparison or inside a call the minus is unambiguous and stays bare.
  EXPECT_PRINTS(LT::make(a, c(-3)), "a < -3");
  EXPECT_PRINTS(EQ::make(neg(a), c(-1)), "-a == -1");
  EXPECT_PRINTS(Min::make(c(-1), neg(a)), "min(-1, -a)");
}

TEST_F(PrinterTest, Logic) {
  EXPECT_PRINTS(And::make(p, q), "a < b && b < c");
  EXPECT_PRINTS(Or::make(And::make(p, q), r), "a < b && b < c || c <= n");
  EXPECT_PRINTS(Or::make(p, And::make(q, r)), "a < b || b < c && c <= n");
  EXPECT_PRINTS(And::make(Or::make(p, q), r), "(a < b || b < c) && c <= n");
  EXPECT_PRINTS(And::make(p, And::make(q, r)), "a < b && (b < c && c <= n)");
  EXPECT_PRINTS(Or::make(p, Or::make(q, r)), "a < b || (b < c || c <= n)");
  EXPECT_PRINTS(Not::make(p), "!(a < b)");
  EXPECT_PRINTS(Not::make(BoolConst::make(true)), "!true");
  EXPECT_PRINTS(Not::make(Not::make(p)), "!(!(a < b))");
  EXPECT_PRINTS(Not::make(And::make(p, q)), "!(a < b && b < c)");
  EXPECT_PRINTS(And::make(Not::make(p), q), "!(a < b) && b < c");
}

TEST_F(PrinterTest, StreamAndUndefined) {
  std::ostringstream os;
  os << Add::make(n, c(1));
  EXPECT_EQ(os.str(), "n + 1");
  EXPECT_EQ(to_string(Expr()), "<undefined>");
}

// Builds random well-typed expressions, biased towards the shapes that are hard to print:
// negations, negative and extreme constants, and right-nested operators of equal precedence.
class ExprGen {
public:
  explicit ExprGen(uint64_t seed) : rng_(seed) {}

  Expr int_expr(int depth) {
    if (depth <= 0 || pick(5) == 0) return int_leaf();
    switch (pick(10)) {
    case 0:
      return Add::make(int_expr(depth - 1), int_expr(depth - 1));
    case 1:
      return Sub::make(int_expr(depth - 1), int_expr(depth - 1));
    case 2:
      return Mul::make(int_expr(depth - 1), int_expr(depth - 1));
    case 3:
      return FloorDiv::make(int_expr(depth - 1), int_expr(depth - 1));
    case 4:
      return FloorMod::make(int_expr(depth - 1), int_expr(depth - 1));
    case 5:
      return Min::make(int_expr(depth - 1), int_expr(depth - 1));
    case 6:
      return Max::make(int_expr(depth - 1), int_expr(depth - 1));
    default:
      return Mul::make(c(-1), int_expr(depth - 1));
    }
  }

  Expr bool_expr(int depth) {
    if (depth <= 0 || pick(6) == 0) return BoolConst::make(pick(2) == 0);
    switch (pick(8)) {
    case 0:
      return EQ::make(int_expr(depth - 1), int_expr(depth - 1));
    case 1:
      return NE::make(int_expr(depth - 1), int_expr(depth - 1));
    case 2:
      return LT::make(int_expr(depth - 1), int_expr(depth - 1));
    case 3:
      return LE::make(int_expr(depth - 1), int_expr(depth - 1));
    case 4:
      return And::make(bool_expr(depth - 1), bool_expr(depth - 1));
    case 5:
      return Or::make(bool_expr(depth - 1), bool_expr(depth - 1));
    default:
      return Not::make(bool_expr(depth - 1));
    }
  }

private:
  uint64_t pick(uint64_t n) { return rng_() % n; }

  Expr int_leaf() {
    static const char* const kNames[] = {"a", "b", "n", "N", "x_1", "_t"};
    static const int64_t kValues[] = {0, 1, 2, 3, 7, -1, -2, -3, 100, kMin, kMax, kMin + 1};
    switch (pick(3)) {
    case 0:
      return sym(kNames[pick(std::size(kNames))]);
    case 1:
      return c(kValues[pick(std::size(kValues))]);
    default:
      return c(static_cast<int64_t>(rng_()));
    }
  }

  std::mt19937_64 rng_;
};

TEST(PrinterRoundTrip, RandomIntegerExpressions) {
  ExprGen gen(20240601);
  for (int i = 0; i < 4000; ++i) {
    Expr e = gen.int_expr(6);
    ASSERT_TRUE(round_trips(e));
  }
}

TEST(PrinterRoundTrip, RandomPredicates) {
  ExprGen gen(42);
  for (int i = 0; i < 4000; ++i) {
    Expr e = gen.bool_expr(6);
    ASSERT_TRUE(round_trips(e));
  }
}

// Every two-level combination of operators over leaves that include negatives and negations,
// so no pairing of parent, child and side is left to chance.
TEST(PrinterRoundTrip, AllTwoLevelCombinations) {
  using Builder = Expr (*)(Expr, Expr);
  const Builder int_ops[] = {
      [](Expr x, Expr y) { return Add::make(x, y); },
      [](Expr x, Expr y) { return Sub::make(x, y); },
      [](Expr x, Expr y) { return Mul::make(x, y); },
      [](Expr x, Expr y) { return FloorDiv::make(x, y); },
      [](Expr x, Expr y) { return FloorMod::make(x, y); },
      [](Expr x, Expr y) { return Min::make(x, y); },
      [](Expr x, Expr y) { return Max::make(x, y); },
      [](Expr x, Expr) { return Mul::make(c(-1), x); },
  };
  const Builder cmp_ops[] = {
      [](Expr x, Expr y) { return EQ::make(x, y); },
      [](Expr x, Expr y) { return NE::make(x, y); },
      [](Expr x, Expr y) { return LT::make(x, y); },
      [](Expr x, Expr y) { return LE::make(x, y); },
  };
  const Builder bool_ops[] = {
      [](Expr x, Expr y) { return And::make(x, y); },
      [](Expr x, Expr y) { return Or::make(x, y); },
      [](Expr x, Expr) { return Not::make(x); },
  };
  std::vector<Expr> leaves = {sym("x"), c(0), c(5), c(-5), c(kMin), neg(sym("y")), neg(c(5))};
  std::vector<Expr> ints = leaves;
  for (Builder op : int_ops) {
    for (const Expr& x : leaves) {
      for (const Expr& y : leaves)
        ints.push_back(op(x, y));
    }
  }
  std::vector<Expr> two_level;
  for (Builder op : int_ops) {
    for (const Expr& x : ints) {
      two_level.push_back(op(x, sym("z")));
      two_level.push_back(op(sym("z"), x));
      two_level.push_back(op(x, x));
    }
  }
  for (const Expr& e : two_level)
    ASSERT_TRUE(round_trips(e));

  std::vector<Expr> preds = {BoolConst::make(true), BoolConst::make(false)};
  for (Builder op : cmp_ops) {
    for (size_t i = 0; i < ints.size(); i += 7)
      preds.push_back(op(ints[i], ints[ints.size() - 1 - i]));
  }
  std::vector<Expr> bools = preds;
  for (Builder op : bool_ops) {
    for (const Expr& x : preds) {
      for (const Expr& y : {preds[0], preds[preds.size() / 2], preds.back()}) {
        bools.push_back(op(x, y));
        bools.push_back(op(y, x));
      }
    }
  }
  for (Builder op : bool_ops) {
    for (const Expr& x : bools) {
      ASSERT_TRUE(round_trips(op(x, preds[3])));
      ASSERT_TRUE(round_trips(op(preds[3], x)));
      ASSERT_TRUE(round_trips(op(x, x)));
    }
  }
}

// The parser accepts trees up to 200 levels high. The printer adds parentheses the source may
// not have had (`--n` prints as `-(-n)`), so the tallest trees of every such shape must still
// reparse.
TEST(PrinterRoundTrip, TallestTreesReparse) {
  constexpr int kLevels = 200;
  Expr a = sym("a");
  auto tower = [&](Expr leaf, auto wrap) {
    Expr e = std::move(leaf);
    for (int level = 1; level < kLevels; ++level)
      e = wrap(e, level);
    return e;
  };
  std::vector<Expr> tallest = {
      tower(sym("n"), [](Expr e, int) { return neg(e); }),
      tower(BoolConst::make(true), [](Expr e, int) { return Not::make(e); }),
      tower(sym("n"), [&](Expr e, int level) { return level % 2 ? neg(e) : Mul::make(a, e); }),
      tower(c(-3), [&](Expr e, int level) { return level % 2 ? neg(e) : FloorMod::make(a, e); }),
      tower(c(3), [](Expr e, int) { return neg(e); }),
      tower(sym("n"), [&](Expr e, int) { return Sub::make(a, e); }),
      tower(sym("n"), [&](Expr e, int) { return Min::make(a, e); }),
      tower(sym("n"), [&](Expr e, int) { return Add::make(e, a); }),
      tower(BoolConst::make(false),
            [&](Expr e, int level) {
              return level % 2 ? Not::make(e) : And::make(e, LT::make(a, c(level)));
            }),
      tower(BoolConst::make(false),
            [&](Expr e, int level) {
              return level % 2 ? Not::make(e) : Or::make(LT::make(a, c(level)), e);
            }),
  };
  for (const Expr& e : tallest)
    ASSERT_TRUE(round_trips(e)) << to_string(e).substr(0, 80);

  // One level more is refused, not crashed on.
  ParseResult r = parse_expr(to_string(neg(tallest[0])));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error.message, "expression nests too deeply (more than 200 levels)");
}

} // namespace
} // namespace dsc::symbolic
