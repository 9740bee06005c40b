#pragma once
// Prints expressions in the syntax Parser.h reads, with the fewest parentheses that keep the
// structure: parse(to_string(e)) is the same node as e.
//
// Precedence, loosest first: `||`, `&&`, comparisons (`== != < <=`), `+ -`, `* / %`, unary
// minus, then atoms. `!` always wraps a non-atomic operand in parentheses. `/` is floordiv and
// `%` floormod. Mul(-1, x) prints as `-x`; LT(b, a) prints as `b < a` (there is no `>` node).

#include <iosfwd>
#include <string>

#include "symbolic/Expr.h"

namespace dsc::symbolic {

std::string to_string(const Expr& e);

// How tightly e's printed form binds, on the scale of support/Precedence.h. The IR printer
// reads it to decide when a dim inside one of its expressions needs parentheses.
int precedence(const Expr& e);
std::ostream& operator<<(std::ostream& os, const Expr& e);

} // namespace dsc::symbolic
