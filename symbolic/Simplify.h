#pragma once
// The canonical simplifier.
//
// Canonical form: integer expressions are sums of products with constant coefficients; the
// factors of a product are symbols and "atoms" (floordiv, floormod, min, max of canonical
// operands). Terms are ordered by degree, then structurally; positive terms come first, the
// constant last, a product's coefficient first: `2*B*S + S - 3`. Predicates are
// `lhs OP rhs` with OP in {==, !=, <=} (`<` becomes `<=` with the constant adjusted), the
// common factor of the coefficients divided out and each term on the side where its
// coefficient is positive. Constants are folded (never past int64), div/mod rules apply where
// provable, and min/max and comparisons fold where bounds decide them.
//
// The rules live in one file per op family (Simplify_Div.cpp, Simplify_Mod.cpp,
// Simplify_MinMax.cpp, Simplify_Compare.cpp, Simplify_Logic.cpp); Polynomial.h does the
// sum-of-products arithmetic.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "symbolic/Expr.h"
#include "symbolic/Facts.h"

namespace dsc::symbolic {

// Canonical form with no assumptions beyond "symbols are >= 0".
Expr simplify(const Expr& e);
// Canonical form under `facts`: substitutions are applied and their ranges and divisibility
// decide div/mod/min/max and comparisons.
Expr simplify(const Expr& e, const Facts& facts);

// True when simplify(a - b) is 0: the canonical forms agree.
bool canonically_equal(const Expr& a, const Expr& b);

// Every simplifier rule as "family: rule" with how often it fired in this process.
std::vector<std::pair<std::string, uint64_t>> simplifier_rule_counts();

} // namespace dsc::symbolic
