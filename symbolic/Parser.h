#pragma once
// Parses the expression syntax of `dscc prove` and of dims in .dsc types:
//   integers, symbols ([A-Za-z_][A-Za-z0-9_]*), `true`, `false`,
//   `+ - * / %` (`/` floordiv, `%` floormod), unary `-`, `min(a, b)`, `max(a, b)`,
//   `== != < <= > >=` with Python-style chaining (`1 <= S <= 512` is `1 <= S && S <= 512`),
//   `&&`, `||`, prefix `!`, and parentheses.
// Operands are type-checked: arithmetic needs integers, `&& || !` need predicates. The operators,
// functions and reserved words, and the node each builds, are symbolic/Syntax.h's, which the
// front end's dims (lang/Dims.cpp) read too.
// The result is built with the raw `make` constructors; nothing is simplified.

#include <string>
#include <string_view>

#include "symbolic/Expr.h"

namespace dsc::symbolic {

struct ParseError {
  // 1-based column of the offending character (one past the end for "unexpected end").
  int column = 0;
  std::string message;
};

struct ParseResult {
  Expr expr;        // defined on success
  ParseError error; // meaningful when !expr.defined()
  bool ok() const { return expr.defined(); }
};

// Parses a whole string as one integer or boolean expression.
ParseResult parse_expr(std::string_view text);

// As parse_expr, but the result must be a predicate (boolean-valued).
ParseResult parse_predicate(std::string_view text);

// Renders an error the way dscc prints it:
//   error: column 5: expected an expression
//     n + )
//         ^
std::string format_parse_error(std::string_view text, const ParseError& error);

} // namespace dsc::symbolic
