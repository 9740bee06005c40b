// symbolic/Syntax.h is the dim grammar's one list of words; both parsers (symbolic/Parser.cpp
// here, lang/Dims.cpp for .dsc) and the printer read it. This checks that it covers the shared
// precedence table and that the parser builds what each row says.
#include "symbolic/Syntax.h"

#include <string>

#include <gtest/gtest.h>

#include "support/Precedence.h"
#include "symbolic/Parser.h"
#include "symbolic/Printer.h"

namespace dsc::symbolic {
namespace {

Expr parse_ok(const std::string& text) {
  ParseResult r = parse_expr(text);
  EXPECT_TRUE(r.ok()) << "'" << text << "': " << r.error.message;
  return r.expr;
}

TEST(SyntaxTest, EveryInfixOperatorBuildsItsNode) {
  const Expr a = Sym::make("a"), b = Sym::make("b");
  const Expr p = EQ::make(a, Const::make(1)), q = LT::make(b, Const::make(2));
  for (const precedence::InfixOperator& level : precedence::kInfixOperators) {
    const InfixOperator* op = infix_operator(level.spelling);
    ASSERT_NE(op, nullptr) << "'" << level.spelling << "' has a precedence but no node";
    EXPECT_EQ(op->spelling, level.spelling);
    const bool logic = op->operands == Operands::Predicates;
    const std::string text = logic ? "a == 1 " + std::string(op->spelling) + " b < 2"
                                   : "a " + std::string(op->spelling) + " b";
    const Expr built = logic ? op->make(p, q) : op->make(a, b);
    EXPECT_TRUE(parse_ok(text).same_as(built)) << text << " ~ " << built;
    EXPECT_EQ(built.kind(), op->node) << text;
    // The printer spells the node by its first unswapped row: `a > b` prints as `b < a`.
    EXPECT_FALSE(infix_spelling(op->node).empty()) << text;
    EXPECT_TRUE(parse_ok(to_string(built)).same_as(built)) << text;
  }
  EXPECT_EQ(infix_operator("="), nullptr);
  EXPECT_EQ(infix_operator("min"), nullptr);
  EXPECT_EQ(to_string(infix_operator(">")->make(a, b)), "b < a");
  EXPECT_EQ(to_string(infix_operator("/")->make(a, b)), "a/b");
  EXPECT_EQ(infix_spelling(ExprKind::Min), "");
  EXPECT_EQ(infix_spelling(ExprKind::Not), "");
}

TEST(SyntaxTest, PrefixOperators) {
  const Expr a = Sym::make("a");
  EXPECT_TRUE(parse_ok("-a").same_as(prefix_operator("-")->make(a)));
  EXPECT_TRUE(parse_ok("-a").same_as(Mul::make(Const::make(-1), a)));
  const Expr p = LT::make(a, Const::make(2));
  EXPECT_TRUE(parse_ok("!(a < 2)").same_as(prefix_operator("!")->make(p)));
  EXPECT_EQ(prefix_operator("-")->operands, Operands::Integers);
  EXPECT_EQ(prefix_operator("!")->operands, Operands::Predicates);
  EXPECT_EQ(prefix_operator("+"), nullptr);
}

TEST(SyntaxTest, FunctionsAndReservedWords) {
  const Expr a = Sym::make("a"), b = Sym::make("b");
  for (const char* name : {"min", "max"}) {
    const Function* fn = function(name);
    ASSERT_NE(fn, nullptr) << name;
    EXPECT_EQ(function_name(fn->node), name);
    EXPECT_TRUE(parse_ok(std::string(name) + "(a, b)").same_as(fn->make(a, b))) << name;
    EXPECT_FALSE(is_symbol_name(name));
  }
  EXPECT_EQ(function("abs"), nullptr);
  EXPECT_EQ(function_list(), "min and max");
  EXPECT_EQ(function_list("(a, b)"), "min(a, b) and max(a, b)");

  EXPECT_EQ(bool_literal("true"), true);
  EXPECT_EQ(bool_literal("false"), false);
  EXPECT_EQ(bool_literal("True"), std::nullopt);
  EXPECT_EQ(bool_spelling(true), "true");
  for (const char* word : {"true", "false", "", "1x", "a-b", "a.b"})
    EXPECT_FALSE(is_symbol_name(word)) << word;
  for (const char* word : {"S", "_d0", "batch_size", "min2", "maximum", "True"})
    EXPECT_TRUE(is_symbol_name(word)) << word;
}

} // namespace
} // namespace dsc::symbolic
