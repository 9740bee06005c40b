#include "symbolic/Parser.h"

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "symbolic/Printer.h"

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

// Parses `text`, failing the test (and returning an undefined Expr) on a parse error.
Expr parse_ok(std::string_view text) {
  ParseResult r = parse_expr(text);
  EXPECT_TRUE(r.ok()) << "'" << text << "': column " << r.error.column << ": " << r.error.message;
  return r.expr;
}

#define EXPECT_PARSES_TO(text, expected)                                                           \
  do {                                                                                             \
    Expr parsed_ = parse_ok(text);                                                                 \
    Expr expected_ = (expected);                                                                   \
    EXPECT_TRUE(parsed_.same_as(expected_))                                                        \
        << "'" << (text) << "' parsed as " << parsed_ << ", expected " << expected_;               \
  } while (0)

class ParserTest : public ::testing::Test {
protected:
  Expr a = sym("a"), b = sym("b"), c_ = sym("c"), d = sym("d"), n = sym("n");
};

TEST_F(ParserTest, Atoms) {
  EXPECT_PARSES_TO("0", c(0));
  EXPECT_PARSES_TO("42", c(42));
  EXPECT_PARSES_TO("007", c(7));
  EXPECT_PARSES_TO("n", n);
  EXPECT_PARSES_TO("_Seq_len2", sym("_Seq_len2"));
  EXPECT_PARSES_TO("true", BoolConst::make(true));
  EXPECT_PARSES_TO("false", BoolConst::make(false));
  EXPECT_PARSES_TO("truex", sym("truex"));
  EXPECT_PARSES_TO("minimum", sym("minimum"));
  EXPECT_PARSES_TO("((n))", n);
  EXPECT_PARSES_TO(" \t n \t ", n);
}

TEST_F(ParserTest, IntegerLimits) {
  EXPECT_PARSES_TO("9223372036854775807", c(kMax));
  EXPECT_PARSES_TO("-9223372036854775807", c(-kMax));
  EXPECT_PARSES_TO("-9223372036854775808", c(kMin));
  EXPECT_PARSES_TO("- 9223372036854775808", c(kMin));
  EXPECT_PARSES_TO("n - 9223372036854775807", Sub::make(n, c(kMax)));
  EXPECT_PARSES_TO("n - -9223372036854775808", Sub::make(n, c(kMin)));
}

TEST_F(ParserTest, ArithmeticPrecedenceAndAssociativity) {
  EXPECT_PARSES_TO("a + b*c", Add::make(a, Mul::make(b, c_)));
  EXPECT_PARSES_TO("a*b + c", Add::make(Mul::make(a, b), c_));
  EXPECT_PARSES_TO("(a + b)*c", Mul::make(Add::make(a, b), c_));
  EXPECT_PARSES_TO("a - b - c", Sub::make(Sub::make(a, b), c_));
  EXPECT_PARSES_TO("a - (b - c)", Sub::make(a, Sub::make(b, c_)));
  EXPECT_PARSES_TO("a - b + c", Add::make(Sub::make(a, b), c_));
  EXPECT_PARSES_TO("a / b / c", FloorDiv::make(FloorDiv::make(a, b), c_));
  EXPECT_PARSES_TO("a / b * c", Mul::make(FloorDiv::make(a, b), c_));
  EXPECT_PARSES_TO("a % b / c", FloorDiv::make(FloorMod::make(a, b), c_));
  EXPECT_PARSES_TO("a + b % c", Add::make(a, FloorMod::make(b, c_)));
  EXPECT_PARSES_TO("min(a, b + 1)*max(c, 2)",
                   Mul::make(Min::make(a, Add::make(b, c(1))), Max::make(c_, c(2))));
  EXPECT_PARSES_TO("min(min(a,b),c)", Min::make(Min::make(a, b), c_));
}

TEST_F(ParserTest, UnaryMinus) {
  // A literal right after the minus folds; anything else is Mul(-1, x).
  EXPECT_PARSES_TO("-3", c(-3));
  EXPECT_PARSES_TO("- 3", c(-3));
  EXPECT_PARSES_TO("-(3)", neg(c(3)));
  EXPECT_PARSES_TO("-(-3)", neg(c(-3)));
  EXPECT_PARSES_TO("--3", neg(c(-3)));
  EXPECT_PARSES_TO("-n", neg(n));
  EXPECT_PARSES_TO("--n", neg(neg(n)));
  EXPECT_PARSES_TO("-3*n", Mul::make(c(-3), n));
  EXPECT_PARSES_TO("-n*m", Mul::make(neg(n), sym("m")));
  EXPECT_PARSES_TO("-(n*m)", neg(Mul::make(n, sym("m"))));
  EXPECT_PARSES_TO("a - -3", Sub::make(a, c(-3)));
  EXPECT_PARSES_TO("a*-b", Mul::make(a, neg(b)));
  EXPECT_PARSES_TO("-min(a, b)", neg(Min::make(a, b)));
  EXPECT_PARSES_TO("-1*n", Mul::make(c(-1), n));
}

TEST_F(ParserTest, Comparisons) {
  EXPECT_PARSES_TO("a == b", EQ::make(a, b));
  EXPECT_PARSES_TO("a != b", NE::make(a, b));
  EXPECT_PARSES_TO("a < b", LT::make(a, b));
  EXPECT_PARSES_TO("a <= b", LE::make(a, b));
  EXPECT_PARSES_TO("a > b", LT::make(b, a));
  EXPECT_PARSES_TO("a >= b", LE::make(b, a));
  EXPECT_PARSES_TO("a + 1 < b*2", LT::make(Add::make(a, c(1)), Mul::make(b, c(2))));
}

TEST_F(ParserTest, ChainedComparisons) {
  Expr s = sym("S");
  EXPECT_PARSES_TO("1 <= S <= 512", And::make(LE::make(c(1), s), LE::make(s, c(512))));
  EXPECT_PARSES_TO("a < b <= c", And::make(LT::make(a, b), LE::make(b, c_)));
  EXPECT_PARSES_TO("a > b >= c", And::make(LT::make(b, a), LE::make(c_, b)));
  EXPECT_PARSES_TO("a == b == c", And::make(EQ::make(a, b), EQ::make(b, c_)));
  EXPECT_PARSES_TO("a < b < c < d",
                   And::make(And::make(LT::make(a, b), LT::make(b, c_)), LT::make(c_, d)));
  EXPECT_PARSES_TO("0 < a + 1 != b",
                   And::make(LT::make(c(0), Add::make(a, c(1))), NE::make(Add::make(a, c(1)), b)));
}

TEST_F(ParserTest, Logic) {
  Expr p = LT::make(a, b), q = LT::make(b, c_), r = LT::make(c_, d);
  EXPECT_PARSES_TO("a < b && b < c", And::make(p, q));
  EXPECT_PARSES_TO("a < b || b < c && c < d", Or::make(p, And::make(q, r)));
  EXPECT_PARSES_TO("a < b && b < c || c < d", Or::make(And::make(p, q), r));
  EXPECT_PARSES_TO("(a < b || b < c) && c < d", And::make(Or::make(p, q), r));
  EXPECT_PARSES_TO("a < b && b < c && c < d", And::make(And::make(p, q), r));
  EXPECT_PARSES_TO("a < b || (b < c || c < d)", Or::make(p, Or::make(q, r)));
  EXPECT_PARSES_TO("!(a < b)", Not::make(p));
  EXPECT_PARSES_TO("!true", Not::make(BoolConst::make(true)));
  EXPECT_PARSES_TO("!!false", Not::make(Not::make(BoolConst::make(false))));
  EXPECT_PARSES_TO("!(a < b) && b < c", And::make(Not::make(p), q));
  EXPECT_PARSES_TO("true || false", Or::make(BoolConst::make(true), BoolConst::make(false)));
}

struct ErrorCase {
  const char* text;
  int column;
  const char* message;
};

TEST(ParserErrors, MessagesAndColumns) {
  const ErrorCase cases[] = {
      {"", 1, "unexpected end of input, expected an expression"},
      {"   ", 4, "unexpected end of input, expected an expression"},
      {"n + )", 5, "expected an expression, found ')'"},
      {"n +", 4, "unexpected end of input, expected an expression"},
      {"(n + 1", 7, "unexpected end of input, expected ')'"},
      {"(n + 1 m", 8, "expected ')', found 'm'"},
      {"n)", 2, "unmatched ')'"},
      {"n m", 3, "trailing input after the expression"},
      {"2n", 2, "trailing input after the expression"},
      {"n $ 1", 3, "unexpected character '$'"},
      {"n = 1", 3, "unexpected character '='; equality is '=='"},
      {"a < b & b < c", 7, "unexpected character '&'; conjunction is '&&'"},
      {"a < b | b < c", 7, "unexpected character '|'; disjunction is '||'"},
      {"1.5", 2, "unexpected character '.'"},
      {"n\n", 2, "unexpected character '\\x0a'"},
      {"\xc3\xa9", 1, "unexpected character '\\xc3'"},
      {"9223372036854775808", 1, "integer literal out of range"},
      {"-9223372036854775809", 2, "integer literal out of range"},
      {"-(9223372036854775808)", 3, "integer literal out of range"},
      {"n + 99999999999999999999999999", 5, "integer literal out of range"},
      {"n && a < b", 1,
       "'&&' needs predicates on both sides; the left side is an integer expression"},
      {"a < b && n + 1", 10,
       "'&&' needs predicates on both sides; the right side is an integer expression"},
      {"a < b || 3", 10,
       "'||' needs predicates on both sides; the right side is an integer expression"},
      {"(a < b) + 1", 1, "'+' needs integers on both sides; the left side is a predicate"},
      {"1 - true", 5, "'-' needs integers on both sides; the right side is a predicate"},
      {"2*(a < b)", 3, "'*' needs integers on both sides; the right side is a predicate"},
      {"n % false", 5, "'%' needs integers on both sides; the right side is a predicate"},
      {"true == false", 1, "'==' needs integers on both sides; the left side is a predicate"},
      {"n > (a < b)", 5, "'>' needs integers on both sides; the right side is a predicate"},
      {"-(a < b)", 1, "unary '-' needs an integer operand; the operand is a predicate"},
      {"!n", 1, "'!' needs a predicate operand; the operand is an integer expression"},
      {"!a < b", 1, "'!' needs a predicate operand; the operand is an integer expression"},
      {"foo(1)", 1, "unknown function 'foo'; the functions are min and max"},
      {"n + abs(n)", 5, "unknown function 'abs'; the functions are min and max"},
      {"min(a, b, c)", 1, "min takes 2 arguments, got 3"},
      {"1 + max(a)", 5, "max takes 2 arguments, got 1"},
      {"min()", 1, "min takes 2 arguments, got 0"},
      {"min(a, b", 9, "unexpected end of input, expected ',' or ')'"},
      {"min(a b)", 7, "expected ',' or ')', found 'b'"},
      {"min(a,)", 7, "expected an expression, found ')'"},
      {"min + 1", 5, "expected '(' after min, found '+'"},
      {"max", 4, "unexpected end of input, expected '(' after max"},
      {"min(a < b, c)", 5, "min needs integer arguments; argument 1 is a predicate"},
      {"max(a, true)", 8, "max needs integer arguments; argument 2 is a predicate"},
      {"a <", 4, "unexpected end of input, expected an expression"},
      {"a < < b", 5, "expected an expression, found '<'"},
      {",", 1, "expected an expression, found ','"},
  };
  for (const ErrorCase& ec : cases) {
    ParseResult r = parse_expr(ec.text);
    EXPECT_FALSE(r.ok()) << "'" << ec.text << "' parsed as " << r.expr;
    EXPECT_EQ(r.error.column, ec.column) << "'" << ec.text << "'";
    EXPECT_EQ(r.error.message, ec.message) << "'" << ec.text << "'";
  }
}

TEST(ParserErrors, EmbeddedNul) {
  std::string text("n +\0 1", 6);
  ParseResult r = parse_expr(text);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error.column, 4);
  EXPECT_EQ(r.error.message, "unexpected character '\\x00'");
}

const char* const kTooDeep = "expression nests too deeply (more than 200 levels)";

TEST(ParserErrors, TreeHeightLimit) {
  // 200 levels of nodes are fine, 201 are not, whatever the shape; the error points at the
  // operator that would build level 201.
  std::string negations = std::string(199, '-') + "n";
  EXPECT_TRUE(parse_expr(negations).ok());
  ParseResult r = parse_expr("-" + negations);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error.message, kTooDeep);
  EXPECT_EQ(r.error.column, 1);

  std::string sum = "n";
  for (int i = 0; i < 199; ++i)
    sum += " + n";
  EXPECT_TRUE(parse_expr(sum).ok());
  r = parse_expr(sum + " + n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error.message, kTooDeep);
  EXPECT_EQ(r.error.column, static_cast<int>(sum.size()) + 2);

  std::string chain = "0";
  for (int i = 0; i < 250; ++i)
    chain += " < 0";
  r = parse_expr(chain);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error.message, kTooDeep);
}

TEST(ParserErrors, RecursionLimit) {
  auto nested = [](size_t depth) {
    return std::string(depth, '(') + "n" + std::string(depth, ')');
  };
  // Redundant parentheses add no levels to the tree, but recursion is bounded all the same.
  EXPECT_TRUE(parse_expr(nested(399)).ok());
  ParseResult r = parse_expr(nested(100000));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error.message, kTooDeep);
  EXPECT_EQ(r.error.column, 401);

  EXPECT_FALSE(parse_expr(std::string(100000, '-') + "n").ok());
  EXPECT_FALSE(parse_expr(std::string(100000, '!') + "true").ok());
  EXPECT_FALSE(parse_expr(std::string(100000, '-') + "(").ok());
  std::string mins;
  for (int i = 0; i < 10000; ++i)
    mins += "min(1, ";
  EXPECT_FALSE(parse_expr(mins).ok());
}

TEST(ParsePredicate, RequiresBoolean) {
  EXPECT_TRUE(parse_predicate("1 <= S <= 512").ok());
  EXPECT_TRUE(parse_predicate("true").ok());
  ParseResult r = parse_predicate("n + 1");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error.column, 1);
  EXPECT_EQ(r.error.message, "expected a predicate (a comparison), got an integer expression");
  // A syntax error wins over the type of the result.
  r = parse_predicate("n +");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error.message, "unexpected end of input, expected an expression");
}

TEST(FormatParseError, Layout) {
  ParseResult r = parse_expr("n + )");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(format_parse_error("n + )", r.error),
            "error: column 5: expected an expression, found ')'\n"
            "  n + )\n"
            "      ^\n");
}

TEST(FormatParseError, TabsAndEndOfInput) {
  std::string text = "n\t+";
  ParseResult r = parse_expr(text);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error.column, 4);
  EXPECT_EQ(format_parse_error(text, r.error),
            "error: column 4: unexpected end of input, expected an expression\n"
            "  n +\n"
            "     ^\n");
}

TEST(FormatParseError, ControlAndUtf8) {
  std::string text("a\0$", 3);
  ParseResult r = parse_expr(text);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(format_parse_error(text, r.error), "error: column 2: unexpected character '\\x00'\n"
                                               "  a $\n"
                                               "   ^\n");
  // Two bytes of UTF-8 are one glyph; the caret stays under the '$'.
  text = "\xc3\xa9 $";
  EXPECT_EQ(format_parse_error(text, ParseError{4, "x"}), "error: column 4: x\n"
                                                          "  \xc3\xa9 $\n"
                                                          "    ^\n");
  // Out-of-range columns are clamped rather than trusted.
  EXPECT_EQ(format_parse_error("ab", ParseError{99, "x"}), "error: column 99: x\n  ab\n    ^\n");
  EXPECT_EQ(format_parse_error("ab", ParseError{0, "x"}), "error: column 0: x\n  ab\n  ^\n");
}

// Writes random source text from the grammar, with random spacing and redundant
// parentheses, so that most of it parses and every construct is reached.
class TextGen {
public:
  explicit TextGen(uint64_t seed) : rng_(seed) {}

  std::string int_text(int depth) {
    if (depth <= 0 || pick(4) == 0) return int_leaf();
    switch (pick(9)) {
    case 0:
      return int_text(depth - 1) + space() + pick_of({"+", "-"}) + space() + int_text(depth - 1);
    case 1:
      return int_text(depth - 1) + space() + pick_of({"*", "/", "%"}) + space() +
             int_text(depth - 1);
    case 2:
      return pick_of({"min", "max"}) + std::string("(") + int_text(depth - 1) + "," + space() +
             int_text(depth - 1) + ")";
    case 3:
      return "-" + space() + int_text(depth - 1);
    default:
      return "(" + space() + int_text(depth - 1) + space() + ")";
    }
  }

  std::string bool_text(int depth) {
    if (depth <= 0 || pick(6) == 0) return pick_of({"true", "false"});
    switch (pick(7)) {
    case 0:
    case 1: {
      std::string text = int_text(depth - 1);
      for (uint64_t links = 1 + pick(3) / 2 + pick(2) * pick(2); links > 0; --links) {
        text +=
            space() + pick_of({"==", "!=", "<", "<=", ">", ">="}) + space() + int_text(depth - 1);
      }
      return text;
    }
    case 2:
      return bool_text(depth - 1) + space() + "&&" + space() + bool_text(depth - 1);
    case 3:
      return bool_text(depth - 1) + space() + "||" + space() + bool_text(depth - 1);
    case 4:
      return "!(" + bool_text(depth - 1) + ")";
    default:
      return "(" + bool_text(depth - 1) + ")";
    }
  }

  // Inserts, deletes or replaces a few bytes, so the error paths see near-miss inputs.
  std::string mutate(std::string text) {
    static const char kBytes[] = "()+-*/%<>=!&|, \t0179nmx_$\xff";
    for (uint64_t edits = 1 + pick(3); edits > 0; --edits) {
      size_t at = text.empty() ? 0 : pick(text.size());
      char byte = pick(10) == 0 ? static_cast<char>(pick(256)) : kBytes[pick(sizeof(kBytes) - 1)];
      switch (pick(3)) {
      case 0:
        text.insert(at, 1, byte);
        break;
      case 1:
        if (!text.empty()) text.erase(at, 1);
        break;
      default:
        if (!text.empty()) text[at] = byte;
        break;
      }
    }
    return text;
  }

  uint64_t pick(uint64_t n) { return rng_() % n; }

private:
  std::string pick_of(std::initializer_list<const char*> options) {
    return *(options.begin() + pick(options.size()));
  }

  std::string space() { return pick_of({"", "", " ", " ", "\t"}); }

  std::string int_leaf() {
    switch (pick(4)) {
    case 0:
      return pick_of({"n", "m", "x_1", "_T"});
    case 1:
      return pick_of({"0", "1", "7", "9223372036854775807", "9223372036854775808"});
    case 2:
      return "-" + pick_of({"1", "3", "9223372036854775808", "9223372036854775809"});
    default:
      return std::to_string(rng_() % 1000000);
    }
  }

  std::mt19937_64 rng_;
};

// Random texts from the grammar, some of them mutated: the parser must never crash, every error
// must point inside the text (or one past it), and every success must print and reparse to the
// same node.
TEST(ParserFuzz, GrammarTextsAndNearMisses) {
  TextGen gen(12345);
  int successes = 0, failures = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    bool predicate = gen.pick(2) == 0;
    std::string text = predicate ? gen.bool_text(5) : gen.int_text(5);
    if (gen.pick(3) == 0) text = gen.mutate(text);
    ParseResult r = gen.pick(2) == 0 ? parse_expr(text) : parse_predicate(text);
    if (!r.ok()) {
      ++failures;
      EXPECT_GE(r.error.column, 1) << text;
      EXPECT_LE(static_cast<size_t>(r.error.column), text.size() + 1) << text;
      EXPECT_FALSE(r.error.message.empty()) << text;
      (void)format_parse_error(text, r.error);
      continue;
    }
    ++successes;
    std::string printed = to_string(r.expr);
    ParseResult again = parse_expr(printed);
    ASSERT_TRUE(again.ok()) << "'" << text << "' printed as '" << printed << "'";
    EXPECT_TRUE(again.expr.same_as(r.expr)) << "'" << text << "' printed as '" << printed << "'";
  }
  // Both paths must actually be exercised.
  EXPECT_GT(successes, 5000);
  EXPECT_GT(failures, 2000);
}

TEST(ParserFuzz, RandomBytesNeverCrash) {
  std::mt19937_64 rng(777);
  for (int iter = 0; iter < 20000; ++iter) {
    std::string text;
    size_t length = rng() % 40;
    for (size_t i = 0; i < length; ++i)
      text += static_cast<char>(rng() % 256);
    ParseResult r = parse_expr(text);
    if (!r.ok()) {
      EXPECT_GE(r.error.column, 1);
      EXPECT_LE(static_cast<size_t>(r.error.column), text.size() + 1);
      (void)format_parse_error(text, r.error);
    }
  }
}

} // namespace
} // namespace dsc::symbolic
