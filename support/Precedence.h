#pragma once
// The operator precedence of .dsc text, one scale for graph code, prim code and dims
// (docs/language.md). Both printers (ir/Printer.cpp for graph and prim code, symbolic/Printer.cpp
// for dims) and the dim parser (symbolic/Parser.cpp) read this table, so that a printed dim
// inside a printed prim gets exactly the parentheses that the parsers need. lang/Parser.y states
// the same levels as Bison declarations, which cannot include C++; PrecedenceTest checks that
// its %left lines list these operators in this order.
//
// Every binary operator associates to the left. Comparisons chain as in Python (`a < b <= c` is
// `a < b && b <= c`), so the printers never print one comparison as the left operand of another
// without parentheses. Prefix `-` and `!` bind tighter than every binary operator.

#include <string_view>

namespace dsc::precedence {

// Binding strength, loosest first. kLowest is for `if` expressions and blocks, which only stand
// bare where a whole expression is expected; kAtom is for literals, names, calls and
// parenthesized expressions.
enum Level : int {
  kLowest = 0,
  kOr,
  kAnd,
  kCompare,
  kAdditive,
  kMultiplicative,
  kUnary,
  kAtom,
};

struct InfixOperator {
  std::string_view spelling;
  Level level;
};

// Loosest first, and in Parser.y's order within a level.
inline constexpr InfixOperator kInfixOperators[] = {
    {"||", kOr},
    {"&&", kAnd},
    {"==", kCompare},
    {"!=", kCompare},
    {"<", kCompare},
    {"<=", kCompare},
    {">", kCompare},
    {">=", kCompare},
    {"+", kAdditive},
    {"-", kAdditive},
    {"*", kMultiplicative},
    {"/", kMultiplicative},
    {"%", kMultiplicative},
};

// The level of a binary operator's spelling; kAtom for anything else (`min`, a name), which
// reads as a call or a leaf.
constexpr Level infix_level(std::string_view spelling) {
  for (const InfixOperator& op : kInfixOperators)
    if (op.spelling == spelling) return op.level;
  return kAtom;
}

} // namespace dsc::precedence
