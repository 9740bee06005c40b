// Rules for floordiv, tried in order. Operands are canonical; see Expr.h for the semantics
// (rounding toward -inf, x / 0 == 0).
#include <limits>
#include <numeric>

#include "symbolic/Simplifier.h"

namespace dsc::symbolic {
namespace {

using Ops = BinaryOperands;
using Result = std::optional<Expr>;
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

bool divisor(const Ops& ops, int64_t* c) { return is_const(ops.pb, c); }

// Splits p into c*q + rest where q collects every term whose coefficient c divides and the
// floor of the constant's quotient; rest keeps the other terms and a constant in [0, c).
void split_multiples(const Polynomial& p, int64_t c, Polynomial* q, Polynomial* rest) {
  *q = Polynomial::constant(floor_div(p.constant_term(), c));
  *rest = Polynomial::constant(floor_mod(p.constant_term(), c));
  for (const Term& t : p.terms()) {
    Polynomial term = Polynomial::constant(t.coeff);
    for (const Expr& f : t.monomial.factors) term = term * Polynomial::atom(f);
    if (t.coeff % c == 0)
      *q = *q + term.divided_exactly(c);
    else
      *rest = *rest + term;
  }
}

bool excludes_zero(Interval i) { return i.lo > 0 || i.hi < 0; }

const Rule<Ops> kDivRules[] = {
    {"x / 0 -> 0",
     [](Simplifier&, const Ops& ops) -> Result {
       int64_t c;
       if (divisor(ops, &c) && c == 0) return Expr(0);
       return std::nullopt;
     }},
    {"x / 1 -> x",
     [](Simplifier&, const Ops& ops) -> Result {
       int64_t c;
       if (divisor(ops, &c) && c == 1) return ops.a;
       return std::nullopt;
     }},
    {"c1 / c2 -> fold",
     [](Simplifier&, const Ops& ops) -> Result {
       int64_t x, y;
       if (!is_const(ops.pa, &x) || !divisor(ops, &y)) return std::nullopt;
       if (x == kMin && y == -1) return std::nullopt; // would wrap
       return Expr(floor_div(x, y));
     }},
    {"0 / x -> 0",
     [](Simplifier&, const Ops& ops) -> Result {
       if (ops.pa.is_zero()) return Expr(0);
       return std::nullopt;
     }},
    {"x / -c -> (-x) / c",
     [](Simplifier& s, const Ops& ops) -> Result {
       int64_t c;
       if (!divisor(ops, &c) || c >= 0 || c == kMin) return std::nullopt;
       Polynomial neg = ops.pa.negated();
       if (!neg.ok()) return std::nullopt;
       return s.mutate(FloorDiv::make(s.canonical(neg), Expr(-c)));
     }},
    {"(c*q + r) / c -> q + r / c",
     [](Simplifier& s, const Ops& ops) -> Result {
       int64_t c;
       if (!divisor(ops, &c) || c <= 1) return std::nullopt;
       Polynomial q, rest;
       split_multiples(ops.pa, c, &q, &rest);
       if (!q.ok() || !rest.ok() || q.is_zero()) return std::nullopt;
       Polynomial result = q + s.poly(s.mutate(FloorDiv::make(s.canonical(rest), Expr(c))));
       if (!result.ok()) return std::nullopt;
       return s.canonical(result);
     }},
    {"(g*x) / (g*c) -> x / c",
     [](Simplifier& s, const Ops& ops) -> Result {
       int64_t c;
       if (!divisor(ops, &c) || c <= 1) return std::nullopt;
       int64_t g = common_factor(ops.pa, c);
       if (g <= 1) return std::nullopt;
       return s.mutate(FloorDiv::make(s.canonical(ops.pa.divided_exactly(g)), Expr(c / g)));
     }},
    {"x / c -> k when x's bounds lie in [k*c, k*c + c)",
     [](Simplifier& s, const Ops& ops) -> Result {
       int64_t c;
       if (!divisor(ops, &c) || c <= 1) return std::nullopt;
       Interval b = s.bounds(ops.a);
       if (!b.has_lower() || !b.has_upper()) return std::nullopt;
       int64_t lo = floor_div(b.lo, c), hi = floor_div(b.hi, c);
       if (lo != hi) return std::nullopt;
       return Expr(lo);
     }},
    {"(x / c1) / c2 -> x / (c1*c2)",
     [](Simplifier& s, const Ops& ops) -> Result {
       int64_t c2, c1, c;
       if (!divisor(ops, &c2) || c2 <= 1) return std::nullopt;
       const Expr* atom = ops.pa.as_atom();
       const FloorDiv* inner = atom ? atom->as<FloorDiv>() : nullptr;
       if (!inner || !is_const(s.poly(inner->b), &c1) || c1 <= 0) return std::nullopt;
       if (__builtin_mul_overflow(c1, c2, &c)) return std::nullopt;
       return s.mutate(FloorDiv::make(inner->a, Expr(c)));
     }},
    {"(k*y) / y -> k when y != 0",
     [](Simplifier& s, const Ops& ops) -> Result {
       int64_t k;
       if (ops.pb.is_constant() || !ops.pa.is_multiple_of(ops.pb, &k)) return std::nullopt;
       if (!excludes_zero(s.bounds(ops.b))) return std::nullopt;
       return Expr(k);
     }},
    {"(m*q) / m -> q when m != 0",
     [](Simplifier& s, const Ops& ops) -> Result {
       Polynomial q;
       if (ops.pb.is_constant() || !ops.pa.divide_by_monomial(ops.pb, &q)) return std::nullopt;
       if (!excludes_zero(s.bounds(ops.b))) return std::nullopt;
       return s.canonical(q);
     }},
};

} // namespace

Expr simplify_div(Simplifier& s, const BinaryOperands& ops) {
  if (std::optional<Expr> r = apply_rules(kDivRules, s, ops)) return *r;
  return FloorDiv::make(ops.a, ops.b);
}

void report_div_rules(RuleReport& out) { report_rules("div", kDivRules, out); }

} // namespace dsc::symbolic
