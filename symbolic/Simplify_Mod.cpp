// Rules for floormod, tried in order. Operands are canonical; see Expr.h for the semantics
// (the result has the divisor's sign, x % 0 == x).
#include <limits>
#include <numeric>

#include "symbolic/Simplifier.h"

namespace dsc::symbolic {
namespace {

using Ops = BinaryOperands;
using Result = std::optional<Expr>;
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

bool divisor(const Ops& ops, int64_t* c) { return is_const(ops.pb, c); }

const Rule<Ops> kModRules[] = {
    {"x % 0 -> x",
     [](Simplifier&, const Ops& ops) -> Result {
       int64_t c;
       if (divisor(ops, &c) && c == 0) return ops.a;
       return std::nullopt;
     }},
    {"x % 1 -> 0, x % -1 -> 0",
     [](Simplifier&, const Ops& ops) -> Result {
       int64_t c;
       if (divisor(ops, &c) && (c == 1 || c == -1)) return Expr(0);
       return std::nullopt;
     }},
    {"c1 % c2 -> fold",
     [](Simplifier&, const Ops& ops) -> Result {
       int64_t x, y;
       if (!is_const(ops.pa, &x) || !divisor(ops, &y)) return std::nullopt;
       return Expr(floor_mod(x, y));
     }},
    {"0 % x -> 0",
     [](Simplifier&, const Ops& ops) -> Result {
       if (ops.pa.is_zero()) return Expr(0);
       return std::nullopt;
     }},
    {"x % -c -> -((-x) % c)",
     [](Simplifier& s, const Ops& ops) -> Result {
       int64_t c;
       if (!divisor(ops, &c) || c >= 0 || c == kMin) return std::nullopt;
       Polynomial neg = ops.pa.negated();
       if (!neg.ok()) return std::nullopt;
       Expr inner = s.mutate(FloorMod::make(s.canonical(neg), Expr(-c)));
       Polynomial result = s.poly(inner).negated();
       if (!result.ok()) return std::nullopt;
       return s.canonical(result);
     }},
    {"(c*q + r) % c -> r % c",
     [](Simplifier& s, const Ops& ops) -> Result {
       int64_t c;
       if (!divisor(ops, &c) || c <= 1) return std::nullopt;
       Polynomial rest = Polynomial::constant(floor_mod(ops.pa.constant_term(), c));
       bool changed = rest.constant_term() != ops.pa.constant_term();
       for (const Term& t : ops.pa.terms()) {
         if (t.coeff % c == 0) {
           changed = true;
           continue;
         }
         Polynomial term = Polynomial::constant(t.coeff);
         for (const Expr& f : t.monomial.factors) term = term * Polynomial::atom(f);
         rest = rest + term;
       }
       if (!changed || !rest.ok()) return std::nullopt;
       return s.mutate(FloorMod::make(s.canonical(rest), Expr(c)));
     }},
    {"(g*x) % (g*c) -> g*(x % c)",
     [](Simplifier& s, const Ops& ops) -> Result {
       int64_t c;
       if (!divisor(ops, &c) || c <= 1) return std::nullopt;
       int64_t g = common_factor(ops.pa, c);
       if (g <= 1) return std::nullopt;
       Expr inner = s.mutate(FloorMod::make(s.canonical(ops.pa.divided_exactly(g)), Expr(c / g)));
       Polynomial result = s.poly(inner).scaled(g);
       if (!result.ok()) return std::nullopt;
       return s.canonical(result);
     }},
    {"x % c -> r when x is known to be r modulo a multiple of c",
     [](Simplifier& s, const Ops& ops) -> Result {
       int64_t c;
       if (!divisor(ops, &c) || c <= 1) return std::nullopt;
       ModRem m = s.divisibility(ops.pa);
       if (m.modulus == 0) return Expr(floor_mod(m.remainder, c));
       if (m.modulus % c != 0) return std::nullopt;
       return Expr(floor_mod(m.remainder, c));
     }},
    {"x % c -> x when 0 <= x < c",
     [](Simplifier& s, const Ops& ops) -> Result {
       int64_t c;
       if (!divisor(ops, &c) || c <= 1) return std::nullopt;
       Interval b = s.bounds(ops.a);
       if (b.lo >= 0 && b.hi < c) return ops.a;
       return std::nullopt;
     }},
    {"(x % c1) % c2 -> x % c2 when c2 divides c1",
     [](Simplifier& s, const Ops& ops) -> Result {
       int64_t c2, c1;
       if (!divisor(ops, &c2) || c2 <= 1) return std::nullopt;
       const Expr* atom = ops.pa.as_atom();
       const FloorMod* inner = atom ? atom->as<FloorMod>() : nullptr;
       if (!inner || !is_const(s.poly(inner->b), &c1) || c1 <= 0 || c1 % c2 != 0)
         return std::nullopt;
       return s.mutate(FloorMod::make(inner->a, Expr(c2)));
     }},
    {"(k*y) % y -> 0",
     [](Simplifier&, const Ops& ops) -> Result {
       int64_t k;
       if (ops.pb.is_constant() || !ops.pa.is_multiple_of(ops.pb, &k)) return std::nullopt;
       return Expr(0);
     }},
    {"(m*q) % m -> 0",
     [](Simplifier&, const Ops& ops) -> Result {
       Polynomial q;
       if (ops.pb.is_constant() || !ops.pa.divide_by_monomial(ops.pb, &q)) return std::nullopt;
       return Expr(0);
     }},
};

} // namespace

Expr simplify_mod(Simplifier& s, const BinaryOperands& ops) {
  if (std::optional<Expr> r = apply_rules(kModRules, s, ops)) return *r;
  return FloorMod::make(ops.a, ops.b);
}

void report_mod_rules(RuleReport& out) { report_rules("mod", kModRules, out); }

} // namespace dsc::symbolic
