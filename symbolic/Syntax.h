#pragma once
// The words of the dim grammar, and the node each one builds. Its two readers share them:
// symbolic/Parser.cpp (the text of `dscc prove` and of tests) and lang/Dims.cpp (dims, `where`
// clauses and loop bounds of .dsc, which lang/Parser.y has already parsed); symbolic/Printer.cpp
// writes what they read. Precedence is support/Precedence.h's, by spelling.
//
// - Infix `+ - * / %` take integers (`/` builds FloorDiv and `%` FloorMod), `== != < <= > >=`
//   take integers and chain (each parser joins the links with And), `&& ||` take predicates.
//   There are no GT and GE nodes: `a > b` builds `b < a` and `a >= b` builds `b <= a`.
// - Prefix `-x` builds Mul(-1, x) and `!p` builds Not(p). Only an integer literal right after
//   the minus folds into a negative Const, which each parser does itself, so that `-(3)` stays
//   Mul(-1, 3) and both read back as what printed them.
// - The functions are min(a, b) and max(a, b), of two integers.
// - `true` and `false` are the boolean literals. They and the function names are reserved: no
//   symbol has them as its name.
// Everything is built with the raw `make` constructors; nothing is simplified.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "symbolic/Expr.h"

namespace dsc::symbolic {

// What an operator's operands must be.
enum class Operands : uint8_t { Integers, Predicates };

struct InfixOperator {
  std::string_view spelling;
  Operands operands;
  ExprKind node;
  bool swapped; // builds node(b, a)
  Expr (*make_node)(Expr a, Expr b);

  Expr make(Expr a, Expr b) const {
    return swapped ? make_node(std::move(b), std::move(a)) : make_node(std::move(a), std::move(b));
  }
};
// The infix operator spelled `spelling`, or null.
const InfixOperator* infix_operator(std::string_view spelling);
// The spelling that prints a node of `kind` as `a op b` (`<` for LT); empty for the kinds that
// print otherwise (leaves, min, max, Not).
std::string_view infix_spelling(ExprKind kind);

struct PrefixOperator {
  std::string_view spelling;
  Operands operands;
  Expr (*make)(Expr x);
};
// The prefix operator spelled `spelling`, or null.
const PrefixOperator* prefix_operator(std::string_view spelling);

struct Function {
  std::string_view name;
  ExprKind node;
  Expr (*make)(Expr a, Expr b);
};
// The function named `name`, or null.
const Function* function(std::string_view name);
// The name that prints a node of `kind` as a call; empty for the other kinds.
std::string_view function_name(ExprKind kind);
// The functions for messages, each name followed by `suffix`: "min and max",
// "min(a, b) and max(a, b)".
std::string function_list(std::string_view suffix = {});

// `true` or `false` as a value, or nullopt for any other word.
std::optional<bool> bool_literal(std::string_view word);
std::string_view bool_spelling(bool value);

// The characters of a name: [A-Za-z_][A-Za-z0-9_]*.
constexpr bool is_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
constexpr bool is_name_char(char c) {
  return is_name_start(c) || (c >= '0' && c <= '9');
}
// A name that reads back as a symbol: not reserved (a boolean literal or a function).
bool is_symbol_name(std::string_view name);

} // namespace dsc::symbolic
