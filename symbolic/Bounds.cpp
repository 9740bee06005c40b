#include "symbolic/Bounds.h"

#include "symbolic/Polynomial.h"

namespace dsc::symbolic {

Interval BoundsAnalysis::bounds(const Expr& e) {
  auto it = bounds_cache_.find(e);
  if (it != bounds_cache_.end()) return it->second;
  Interval result = compute_bounds(e);
  if (facts_) result = intersect(result, facts_->range(e));
  bounds_cache_.emplace(e, result);
  return result;
}

// p = K + rest for a sum K whose range a fact records: p is within range(K) + bounds(rest).
// Only rests with fewer terms than p are tried, so this terminates.
Interval BoundsAnalysis::bounds(const Polynomial& p) {
  Interval result = bounds(p.to_expr());
  if (!facts_ || facts_->compound_ranges().empty() || p.terms().size() < 2) return result;
  for (const Facts::CompoundRange& fact : facts_->compound_ranges()) {
    if (fact.poly.terms().size() > p.terms().size()) continue;
    Polynomial rest = p - fact.poly;
    if (!rest.ok() || rest.terms().size() >= p.terms().size()) continue;
    result = intersect(result, fact.range + bounds(rest));
  }
  return result;
}

Interval BoundsAnalysis::compute_bounds(const Expr& e) {
  switch (e.kind()) {
  case ExprKind::Const:
    return Interval::point(e.as<Const>()->value);
  case ExprKind::Sym:
    return Interval::at_least(0); // every symbol is a dimension
  case ExprKind::Add: {
    const Add* n = e.as<Add>();
    return bounds(n->a) + bounds(n->b);
  }
  case ExprKind::Sub: {
    const Sub* n = e.as<Sub>();
    return bounds(n->a) - bounds(n->b);
  }
  case ExprKind::Mul: {
    const Mul* n = e.as<Mul>();
    if (n->a.same_as(n->b)) {
      // x*x is never negative, which plain interval multiplication cannot see.
      Interval x = bounds(n->a);
      Interval sq = x * x;
      return intersect(sq, Interval::at_least(0));
    }
    return bounds(n->a) * bounds(n->b);
  }
  case ExprKind::FloorDiv: {
    const FloorDiv* n = e.as<FloorDiv>();
    return floordiv(bounds(n->a), bounds(n->b));
  }
  case ExprKind::FloorMod: {
    const FloorMod* n = e.as<FloorMod>();
    return floormod(bounds(n->a), bounds(n->b));
  }
  case ExprKind::Min: {
    const Min* n = e.as<Min>();
    return min(bounds(n->a), bounds(n->b));
  }
  case ExprKind::Max: {
    const Max* n = e.as<Max>();
    return max(bounds(n->a), bounds(n->b));
  }
  default:
    // Predicates evaluate to 0 or 1.
    return Interval{0, 1};
  }
}

ModRem BoundsAnalysis::divisibility(const Expr& e) {
  auto it = divisibility_cache_.find(e);
  if (it != divisibility_cache_.end()) return it->second;
  ModRem result = compute_divisibility(e);
  if (facts_) result = combine(result, facts_->divisibility(e));
  Interval b = bounds(e);
  if (b.is_point()) result = ModRem::exactly(b.lo);
  divisibility_cache_.emplace(e, result);
  return result;
}

ModRem BoundsAnalysis::compute_divisibility(const Expr& e) {
  switch (e.kind()) {
  case ExprKind::Const:
    return ModRem::exactly(e.as<Const>()->value);
  case ExprKind::Add: {
    const Add* n = e.as<Add>();
    return divisibility(n->a) + divisibility(n->b);
  }
  case ExprKind::Sub: {
    const Sub* n = e.as<Sub>();
    return divisibility(n->a) + negate(divisibility(n->b));
  }
  case ExprKind::Mul: {
    const Mul* n = e.as<Mul>();
    return divisibility(n->a) * divisibility(n->b);
  }
  case ExprKind::Min: {
    const Min* n = e.as<Min>();
    return unify(divisibility(n->a), divisibility(n->b));
  }
  case ExprKind::Max: {
    const Max* n = e.as<Max>();
    return unify(divisibility(n->a), divisibility(n->b));
  }
  default:
    return ModRem::unknown();
  }
}

Interval bounds_of(const Expr& e, const Facts& facts) {
  BoundsAnalysis analysis(&facts);
  return analysis.bounds(e);
}

ModRem divisibility_of(const Expr& e, const Facts& facts) {
  BoundsAnalysis analysis(&facts);
  return analysis.divisibility(e);
}

} // namespace dsc::symbolic
