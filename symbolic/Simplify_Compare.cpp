// Rules for comparisons, tried in order, then the canonical form. Every comparison arrives as
// one polynomial d with `d >= 0` (LE), `d == 0` (EQ) or `d != 0` (NE).
#include <algorithm>
#include <iterator>
#include <limits>
#include <numeric>

#include "symbolic/Simplifier.h"

namespace dsc::symbolic {
namespace {

using Ops = CompareOperands;
using Result = std::optional<Expr>;
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

Expr verdict(const Ops& ops, bool d_is_zero_or_nonneg) {
  // For EQ and LE the argument is the truth of the comparison; NE is its negation of EQ's.
  if (ops.kind == ExprKind::NE) return BoolConst::make(!d_is_zero_or_nonneg);
  return BoolConst::make(d_is_zero_or_nonneg);
}

bool is_equality(const Ops& ops) { return ops.kind == ExprKind::EQ || ops.kind == ExprKind::NE; }

// Rewrites every division k*m*(x/c) by a constant c > 1 as (k/c)*m*(x - x%c), after scaling
// d by the lcm of the divisors where c does not divide k (d >= 0 and d == 0 are unchanged by a
// positive factor). This exposes c*(x/c) >= x - (c - 1) to interval analysis:
// (S + 15)/16*16 - S becomes 15 - (S + 15)%16, and S - S/16 becomes (15*S + S%16)/16.
bool has_constant_division(Simplifier& s, const Polynomial& d) {
  for (const Term& t : d.terms()) {
    for (const Expr& f : t.monomial.factors) {
      const FloorDiv* div = f.as<FloorDiv>();
      int64_t c;
      if (div && is_const(s.poly(div->b), &c) && c > 1) return true;
    }
  }
  return false;
}

Polynomial expand_divisions(Simplifier& s, const Polynomial& d, bool* changed) {
  *changed = false;
  if (!has_constant_division(s, d)) return d;
  int64_t scale = 1;
  for (const Term& t : d.terms()) {
    for (const Expr& f : t.monomial.factors) {
      const FloorDiv* div = f.as<FloorDiv>();
      int64_t c;
      if (!div || !is_const(s.poly(div->b), &c) || c <= 1) continue;
      if (t.coeff % c == 0) continue;
      int64_t g = std::gcd(scale, c);
      if (__builtin_mul_overflow(scale / g, c, &scale) || scale > (int64_t{1} << 20)) return d;
    }
  }
  Polynomial scaled = d.scaled(scale);
  if (!scaled.ok()) return d;
  Polynomial result = Polynomial::constant(scaled.constant_term());
  for (const Term& t : scaled.terms()) {
    Polynomial term = Polynomial::constant(t.coeff);
    bool expanded = false;
    for (const Expr& f : t.monomial.factors) {
      const FloorDiv* div = f.as<FloorDiv>();
      int64_t c;
      if (!expanded && div && is_const(s.poly(div->b), &c) && c > 1 && t.coeff % c == 0) {
        Expr mod = s.mutate(FloorMod::make(div->a, div->b));
        term = term.divided_exactly(c) * (s.poly(div->a) - s.poly(mod));
        expanded = true;
        continue;
      }
      term = term * Polynomial::atom(f);
    }
    *changed |= expanded;
    result = result + term;
  }
  return result;
}

// The factors every term shares (as a multiset), when there is no constant term.
bool common_monomial(const Polynomial& d, Polynomial* common) {
  if (d.terms().size() < 2 || d.constant_term() != 0) return false;
  // Cheap test first: some factor of the first term must appear in the last term.
  const auto& last = d.terms().back().monomial.factors;
  bool any = false;
  for (const Expr& f : d.terms()[0].monomial.factors)
    any |= std::find_if(last.begin(), last.end(), [&](const Expr& g) { return g.same_as(f); }) !=
           last.end();
  if (!any) return false;
  std::vector<Expr> shared = d.terms()[0].monomial.factors;
  for (const Term& t : d.terms()) {
    std::vector<Expr> kept;
    std::set_intersection(shared.begin(), shared.end(), t.monomial.factors.begin(),
                          t.monomial.factors.end(), std::back_inserter(kept), ExprLess());
    shared = std::move(kept);
  }
  if (shared.empty()) return false;
  Polynomial m = Polynomial::constant(1);
  for (const Expr& f : shared) m = m * Polynomial::atom(f);
  *common = m;
  return m.ok();
}


// The value of p with the atom x replaced by `value`, when every term mentions x at most once.
bool substitute(const Polynomial& p, const Expr& x, const Polynomial& value, Polynomial* out) {
  Polynomial result = Polynomial::constant(p.constant_term());
  for (const Term& t : p.terms()) {
    Polynomial term = Polynomial::constant(t.coeff);
    int seen = 0;
    for (const Expr& f : t.monomial.factors) {
      if (f.same_as(x)) {
        ++seen;
        term = term * value;
      } else {
        term = term * Polynomial::atom(f);
      }
    }
    if (seen > 1) return false;
    result = result + term;
  }
  if (!result.ok()) return false;
  *out = std::move(result);
  return true;
}

// +1 when p grows with x (every term with x has a nonnegative cofactor), -1 when it shrinks,
// 0 when that is unknown or x does not appear.
int monotonicity(Simplifier& s, const Polynomial& p, const Expr& x) {
  int direction = 0;
  for (const Term& t : p.terms()) {
    bool has_x = false;
    Polynomial cofactor = Polynomial::constant(t.coeff);
    for (const Expr& f : t.monomial.factors) {
      if (f.same_as(x) && !has_x) {
        has_x = true;
        continue;
      }
      if (f.same_as(x)) return 0; // nonlinear in x
      cofactor = cofactor * Polynomial::atom(f);
    }
    if (!has_x) continue;
    Interval c = s.bounds(cofactor);
    int sign = c.lo >= 0 ? 1 : (c.hi <= 0 ? -1 : 0);
    if (sign == 0 || (direction != 0 && sign != direction)) return 0;
    direction = sign;
  }
  return direction;
}

// A symbolic bound of the symbol x from the facts: a fact bounds a sum K = a*x + R (a = +-1,
// x nowhere in R), so x is bounded by +-(bound - R). Upper bound when `upper`.
bool symbolic_bound(Simplifier& s, const Expr& x, bool upper, Polynomial* bound) {
  Interval own = s.bounds(x);
  if (upper && own.has_upper()) {
    *bound = Polynomial::constant(own.hi);
    return true;
  }
  if (!s.facts()) return false;
  for (const Facts::CompoundRange& fact : s.facts()->compound_ranges()) {
    const Term* xt = nullptr;
    bool elsewhere = false;
    for (const Term& t : fact.poly.terms()) {
      bool mentions = std::any_of(t.monomial.factors.begin(), t.monomial.factors.end(),
                                  [&](const Expr& f) { return f.same_as(x); });
      if (!mentions) continue;
      if (t.monomial.factors.size() == 1 && (t.coeff == 1 || t.coeff == -1) && !xt)
        xt = &t;
      else
        elsewhere = true;
    }
    if (!xt || elsewhere) continue;
    // K = a*x + R with lo <= K <= hi: a*x >= lo - R and a*x <= hi - R.
    Polynomial rest = fact.poly - Polynomial::atom(x).scaled(xt->coeff);
    bool want_lower_of_ax = (xt->coeff == 1) != upper; // a = -1 and upper, or a = 1 and lower
    if (want_lower_of_ax) {
      if (!fact.range.has_lower()) continue;
      // a*x >= lo - R, so x <= R - lo (a = -1) or x >= lo - R (a = 1).
      Polynomial b = Polynomial::constant(fact.range.lo) - rest;
      *bound = xt->coeff == 1 ? b : b.negated();
    } else {
      if (!fact.range.has_upper()) continue;
      Polynomial b = Polynomial::constant(fact.range.hi) - rest;
      *bound = xt->coeff == 1 ? b : b.negated();
    }
    if (bound->ok()) return true;
  }
  if (!upper) {
    *bound = Polynomial::constant(std::max<int64_t>(own.lo, 0));
    return own.lo != kNegInf;
  }
  return false;
}

// d >= 0 follows when d, with each symbol it is monotone in replaced by the bound that makes
// d smallest, is >= 0 by intervals: i*N + j < S*N from i < S and j < N.
bool nonnegative_by_monotone_bounds(Simplifier& s, const Polynomial& d, int depth) {
  if (s.bounds(d).lo >= 0) return true;
  if (depth == 0) return false;
  std::vector<Expr> symbols;
  for (const Term& t : d.terms())
    for (const Expr& f : t.monomial.factors)
      if (f.is<Sym>() && std::none_of(symbols.begin(), symbols.end(),
                                      [&](const Expr& y) { return y.same_as(f); }))
        symbols.push_back(f);
  for (const Expr& x : symbols) {
    int direction = monotonicity(s, d, x);
    if (direction == 0) continue;
    Polynomial bound, smaller;
    if (!symbolic_bound(s, x, /*upper=*/direction < 0, &bound)) continue;
    if (!substitute(d, x, bound, &smaller)) continue;
    if (nonnegative_by_monotone_bounds(s, smaller, depth - 1)) return true;
  }
  return false;
}

const Rule<Ops> kCompareRules[] = {
    {"compare constants -> fold",
     [](Simplifier&, const Ops& ops) -> Result {
       int64_t c;
       if (!is_const(ops.d, &c)) return std::nullopt;
       return verdict(ops, is_equality(ops) ? c == 0 : c >= 0);
     }},
    {"g*x + c == 0 -> false when g does not divide c",
     [](Simplifier&, const Ops& ops) -> Result {
       if (!is_equality(ops)) return std::nullopt;
       int64_t g = ops.d.content();
       if (g <= 1 || ops.d.constant_term() % g == 0) return std::nullopt;
       return verdict(ops, false);
     }},
    {"g*x + c >= 0 -> x + floor(c/g) >= 0, g*x + g*c == 0 -> x + c == 0",
     [](Simplifier& s, const Ops& ops) -> Result {
       int64_t g = ops.d.content();
       if (g <= 1) return std::nullopt;
       int64_t c = ops.d.constant_term();
       Polynomial d = is_equality(ops) ? ops.d.divided_exactly(g)
                                       : ops.d.without_constant().divided_exactly(g) +
                                             Polynomial::constant(floor_div(c, g));
       return simplify_compare(s, Ops{ops.kind, d});
     }},
    {"x == 0 -> false when 0 is outside x's bounds",
     [](Simplifier& s, const Ops& ops) -> Result {
       if (!is_equality(ops)) return std::nullopt;
       Interval b = s.bounds(ops.d);
       if (b.contains(0)) {
         if (b.is_point()) return verdict(ops, true);
         return std::nullopt;
       }
       return verdict(ops, false);
     }},
    {"x == 0 -> false when x is known nonzero modulo m",
     [](Simplifier& s, const Ops& ops) -> Result {
       if (!is_equality(ops)) return std::nullopt;
       ModRem m = s.divisibility(ops.d);
       if (m.modulus <= 1 || m.remainder == 0) return std::nullopt;
       return verdict(ops, false);
     }},
    {"x >= 0 -> true or false when x's bounds decide",
     [](Simplifier& s, const Ops& ops) -> Result {
       if (ops.kind != ExprKind::LE) return std::nullopt;
       Interval b = s.bounds(ops.d);
       if (b.lo >= 0) return verdict(ops, true);
       if (b.hi < 0) return verdict(ops, false);
       return std::nullopt;
     }},
    {"c*(x/c) -> x - x%c, then bounds decide",
     [](Simplifier& s, const Ops& ops) -> Result {
       bool changed = false;
       Polynomial e = expand_divisions(s, ops.d, &changed);
       if (!changed || !e.ok()) return std::nullopt;
       Interval b = s.bounds(e);
       if (ops.kind == ExprKind::LE) {
         if (b.lo >= 0) return verdict(ops, true);
         if (b.hi < 0) return verdict(ops, false);
         return std::nullopt;
       }
       if (!b.contains(0)) return verdict(ops, false);
       if (e.is_zero()) return verdict(ops, true);
       return std::nullopt;
     }},
    {"x >= 0 when x is monotone in symbols whose bounds make it >= 0",
     [](Simplifier& s, const Ops& ops) -> Result {
       if (ops.kind != ExprKind::LE || ops.d.terms().size() < 2) return std::nullopt;
       if (nonnegative_by_monotone_bounds(s, ops.d, 3)) return verdict(ops, true);
       Polynomial neg = ops.d.negated() - Polynomial::constant(1); // d < 0 <=> -d - 1 >= 0
       if (neg.ok() && nonnegative_by_monotone_bounds(s, neg, 3)) return verdict(ops, false);
       return std::nullopt;
     }},
    {"m*q >= 0 when the common factor m and the rest q have known signs",
     [](Simplifier& s, const Ops& ops) -> Result {
       Polynomial m, q;
       if (!common_monomial(ops.d, &m) || !ops.d.divide_by_monomial(m, &q)) return std::nullopt;
       Interval b = s.bounds(m) * s.bounds(q);
       if (ops.kind == ExprKind::LE) {
         if (b.lo >= 0) return verdict(ops, true);
         if (b.hi < 0) return verdict(ops, false);
         return std::nullopt;
       }
       if (!b.contains(0)) return verdict(ops, false);
       return std::nullopt;
     }},
};

bool has_min_coefficient(const Polynomial& d) {
  if (d.constant_term() == kMin) return true;
  for (const Term& t : d.terms())
    if (t.coeff == kMin) return true;
  return false;
}

// The canonical form (the common factor is already divided out by a rule): leading term
// positive for (in)equalities, and each term on the side where its coefficient is positive.
Expr canonical_compare(Simplifier& s, const Ops& ops) {
  Polynomial d = ops.d;
  if (has_min_coefficient(d)) {
    // -INT64_MIN does not exist, so this one stays as `d OP 0` / `0 <= d`.
    Expr e = s.canonical(d);
    if (ops.kind == ExprKind::EQ) return EQ::make(e, Expr(0));
    if (ops.kind == ExprKind::NE) return NE::make(e, Expr(0));
    return LE::make(Expr(0), e);
  }
  if (is_equality(ops) && !d.terms().empty() && d.terms()[0].coeff < 0) d = d.negated();
  Polynomial pos, neg;
  d.split_by_sign(&pos, &neg);
  Expr lhs = s.canonical(pos), rhs = s.canonical(neg);
  switch (ops.kind) {
  case ExprKind::EQ:
    return EQ::make(lhs, rhs);
  case ExprKind::NE:
    return NE::make(lhs, rhs);
  default:
    return LE::make(rhs, lhs); // neg <= pos
  }
}

} // namespace

Expr simplify_compare(Simplifier& s, const CompareOperands& ops) {
  if (std::optional<Expr> r = apply_rules(kCompareRules, s, ops)) return *r;
  return canonical_compare(s, ops);
}

void report_compare_rules(RuleReport& out) { report_rules("compare", kCompareRules, out); }

} // namespace dsc::symbolic
