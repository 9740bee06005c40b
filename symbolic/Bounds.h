#pragma once
// Interval and divisibility analysis of integer expressions under Facts. Symbols are >= 0;
// each node's interval is also intersected with any range Facts records for it, so a fact
// about a compound expression (`w + h >= 1`) is used wherever that canonical expression
// appears.

#include <unordered_map>

#include "symbolic/Expr.h"
#include "symbolic/Facts.h"
#include "symbolic/Interval.h"
#include "symbolic/Polynomial.h"

namespace dsc::symbolic {

// One analysis with a cache; the simplifier keeps one per simplification.
class BoundsAnalysis {
public:
  explicit BoundsAnalysis(const Facts* facts) : facts_(facts) {}

  Interval bounds(const Expr& e);
  // Bounds of a sum, also using facts about sums of some of its terms (`S - T >= 2` bounds
  // `S + a - T`), whatever the order of the terms.
  Interval bounds(const Polynomial& p);
  ModRem divisibility(const Expr& e);

private:
  Interval compute_bounds(const Expr& e);
  ModRem compute_divisibility(const Expr& e);

  const Facts* facts_;
  std::unordered_map<Expr, Interval, ExprHash, ExprSame> bounds_cache_;
  std::unordered_map<Expr, ModRem, ExprHash, ExprSame> divisibility_cache_;
};

// Sound bounds of `e` (which should be canonical for the facts' ranges to match).
Interval bounds_of(const Expr& e, const Facts& facts);
// What `e` is known to be congruent to.
ModRem divisibility_of(const Expr& e, const Facts& facts);

} // namespace dsc::symbolic
