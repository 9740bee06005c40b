#include "symbolic/Simplify.h"

#include "symbolic/Simplifier.h"

#include <limits>
#include <numeric>
#include <optional>

namespace dsc::symbolic {

bool is_const(const Polynomial& p, int64_t* value) {
  if (!p.ok() || !p.is_constant()) return false;
  *value = p.constant_term();
  return true;
}

int64_t common_factor(const Polynomial& p, int64_t c) {
  int64_t k = p.constant_term();
  if (k == std::numeric_limits<int64_t>::min()) return 1;
  return std::gcd(std::gcd(p.content(), c), k < 0 ? -k : k);
}

namespace {

// The polynomial of a sum/difference/product tree whose leaves are simplified on the way,
// so that nested arithmetic is flattened in one go.
Polynomial arith_poly(Simplifier& s, const Expr& e) {
  if (const Add* n = e.as<Add>()) return arith_poly(s, n->a) + arith_poly(s, n->b);
  if (const Sub* n = e.as<Sub>()) return arith_poly(s, n->a) - arith_poly(s, n->b);
  if (const Mul* n = e.as<Mul>()) return arith_poly(s, n->a) * arith_poly(s, n->b);
  return s.poly(s.mutate(e));
}

// Rebuilds a node over canonical children when its own canonical form is out of reach (an
// int64 overflow in the coefficients): still correct, just not canonical.
Expr rebuild_binary(ExprKind kind, const Expr& a, const Expr& b) {
  switch (kind) {
  case ExprKind::Add:
    return Add::make(a, b);
  case ExprKind::Sub:
    return Sub::make(a, b);
  case ExprKind::Mul:
    return Mul::make(a, b);
  case ExprKind::FloorDiv:
    return FloorDiv::make(a, b);
  case ExprKind::FloorMod:
    return FloorMod::make(a, b);
  case ExprKind::Min:
    return Min::make(a, b);
  case ExprKind::Max:
    return Max::make(a, b);
  case ExprKind::EQ:
    return EQ::make(a, b);
  case ExprKind::NE:
    return NE::make(a, b);
  case ExprKind::LT:
    return LT::make(a, b);
  case ExprKind::LE:
    return LE::make(a, b);
  default:
    internal_error << "rebuild_binary of " << kind_name(kind);
  }
}

void flatten(ExprKind kind, const Expr& e, std::vector<Expr>& out) {
  if (e.kind() == kind) {
    const auto* n = static_cast<const BinaryNode*>(e.get());
    flatten(kind, n->a, out);
    flatten(kind, n->b, out);
    return;
  }
  out.push_back(e);
}

// The product of a monomial's factors, as a polynomial.
Polynomial product(const std::vector<Expr>& factors) {
  Polynomial p = Polynomial::constant(1);
  for (const Expr& f : factors) p = p * Polynomial::atom(f);
  return p;
}

// Calls `fold(t, mod, rest)` for each floormod factor `mod` of each term `t` of `p`, with `rest`
// the product of t's other factors, until one returns a polynomial; that one.
template <typename Fold>
std::optional<Polynomial> first_mod_fold(const Polynomial& p, const Fold& fold) {
  for (const Term& t : p.terms())
    for (size_t i = 0; i < t.monomial.factors.size(); ++i) {
      const FloorMod* mod = t.monomial.factors[i].as<FloorMod>();
      if (!mod) continue;
      std::vector<Expr> rest = t.monomial.factors;
      rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(i));
      if (std::optional<Polynomial> folded = fold(t, *mod, product(rest))) return folded;
    }
  return std::nullopt;
}

// The division identity b*(a // b) + a % b == a (floor division; with b == 0 too, since
// a // 0 == 0 and a % 0 == a), applied once: a term k*m*(a % b) whose partner k*m*b*(a // b) is
// a term of `p` too (b a constant, symbol or atom, so that the partner is one term) makes the
// pair k*m*a. Index arithmetic that flattens and unflattens an index (the GPU schedule's
// `flat // C * C + flat % C`) folds back to `flat` this way.
std::optional<Polynomial> fold_division_identity(Simplifier& s, const Polynomial& p) {
  return first_mod_fold(
      p,
      [&](const Term& t, const FloorMod& mod, const Polynomial& rest) -> std::optional<Polynomial> {
        const Polynomial partner =
            (rest * Polynomial::atom(FloorDiv::make(mod.a, mod.b)) * s.poly(mod.b)).scaled(t.coeff);
        if (!partner.ok() || partner.terms().size() != 1) return std::nullopt;
        const Term& want = partner.terms()[0];
        bool found = false;
        for (const Term& u : p.terms())
          found |= u.coeff == want.coeff && u.monomial == want.monomial;
        if (!found) return std::nullopt;
        const Polynomial folded = p - partner - product(t.monomial.factors).scaled(t.coeff) +
                                  (rest * s.poly(mod.a)).scaled(t.coeff);
        if (!folded.ok()) return std::nullopt;
        return folded;
      });
}

// The mixed-radix identity a*((x // a) % b) + x % a == x % (a*b), for b >= 0 and any a (x % a
// and x % (a*b) then share a's sign; a == 0 or b == 0 too, since x // 0 == 0 and x % 0 == x),
// applied once: a term k*m*(x % a) whose partner k*m*a*((x // a) % b) is a term of `p` too
// makes the pair k*m*(x % (a*b)). An index that the GPU schedule split into coordinates
// (`flat % W`, `flat // W % H`, `flat // (H*W) % C`, ...) and a buffer's row-major offset
// joined again thus folds, digit by digit, until the division identity makes it `flat`.
std::optional<Polynomial> fold_mixed_radix(Simplifier& s, const Polynomial& p) {
  return first_mod_fold(p, [&](const Term& t, const FloorMod& low, const Polynomial& rest) {
    const Polynomial want = (rest * s.poly(low.b)).scaled(t.coeff);
    return first_mod_fold(p,
                          [&](const Term& u, const FloorMod& high,
                              const Polynomial& others) -> std::optional<Polynomial> {
                            const FloorDiv* digit = high.a.as<FloorDiv>();
                            if (!digit || !digit->a.same_as(low.a) || !digit->b.same_as(low.b))
                              return std::nullopt;
                            const Polynomial differ = others.scaled(u.coeff) - want;
                            if (!differ.ok() || !differ.is_zero()) return std::nullopt;
                            if (s.bounds(high.b).lo < 0) return std::nullopt;
                            const Expr merged =
                                s.mutate(FloorMod::make(low.a, Mul::make(low.b, high.b)));
                            const Polynomial folded = p -
                                                      product(t.monomial.factors).scaled(t.coeff) -
                                                      product(u.monomial.factors).scaled(u.coeff) +
                                                      (rest * s.poly(merged)).scaled(t.coeff);
                            if (!folded.ok()) return std::nullopt;
                            return folded;
                          });
  });
}

} // namespace

Expr Simplifier::mutate(const Expr& e) {
  auto it = cache_.find(e);
  if (it != cache_.end()) return it->second;
  Expr result = mutate_uncached(e);
  cache_.emplace(e, result);
  return result;
}

Expr Simplifier::mutate_arith(const Expr& e) {
  Polynomial p = arith_poly(*this, e);
  while (p.ok())
    if (std::optional<Polynomial> folded = fold_division_identity(*this, p))
      p = *folded;
    else if (std::optional<Polynomial> merged = fold_mixed_radix(*this, p))
      p = *merged;
    else
      return p.to_expr();
  const auto* n = static_cast<const BinaryNode*>(e.get());
  return rebuild_binary(e.kind(), mutate(n->a), mutate(n->b));
}

Expr Simplifier::mutate_uncached(const Expr& e) {
  switch (e.kind()) {
  case ExprKind::Const:
  case ExprKind::BoolConst:
    return e;
  case ExprKind::Sym:
    if (facts_) {
      if (const Expr* replacement = facts_->substitution(e.as<Sym>()->name)) return *replacement;
    }
    return e;
  case ExprKind::Add:
  case ExprKind::Sub:
  case ExprKind::Mul:
    return mutate_arith(e);
  case ExprKind::FloorDiv:
  case ExprKind::FloorMod:
  case ExprKind::Min:
  case ExprKind::Max: {
    const auto* n = static_cast<const BinaryNode*>(e.get());
    BinaryOperands ops{mutate(n->a), mutate(n->b), {}, {}};
    ops.pa = poly(ops.a);
    ops.pb = poly(ops.b);
    if (!ops.pa.ok() || !ops.pb.ok()) return rebuild_binary(e.kind(), ops.a, ops.b);
    if (e.kind() == ExprKind::FloorDiv) return simplify_div(*this, ops);
    if (e.kind() == ExprKind::FloorMod) return simplify_mod(*this, ops);
    if (e.kind() == ExprKind::Min) return simplify_min(*this, ops);
    return simplify_max(*this, ops);
  }
  case ExprKind::EQ:
  case ExprKind::NE:
  case ExprKind::LT:
  case ExprKind::LE: {
    const auto* n = static_cast<const BinaryNode*>(e.get());
    Expr a = mutate(n->a), b = mutate(n->b);
    Polynomial d = poly(b) - poly(a);
    ExprKind kind = e.kind();
    if (kind == ExprKind::LT) {
      d = d - Polynomial::constant(1);
      kind = ExprKind::LE;
    }
    if (!d.ok()) return rebuild_binary(e.kind(), a, b);
    return simplify_compare(*this, CompareOperands{kind, d});
  }
  case ExprKind::And:
  case ExprKind::Or: {
    std::vector<Expr> parts;
    flatten(e.kind(), e, parts);
    LogicOperands ops{e.kind(), {}};
    for (const Expr& part : parts) flatten(e.kind(), mutate(part), ops.operands);
    return simplify_logic(*this, std::move(ops));
  }
  case ExprKind::Not:
    return simplify_not(*this, mutate(e.as<Not>()->a));
  }
  internal_error << "unhandled kind " << kind_name(e.kind());
}

Expr simplify(const Expr& e) {
  Simplifier s(nullptr);
  return s.mutate(e);
}

Expr simplify(const Expr& e, const Facts& facts) {
  Simplifier s(&facts);
  return s.mutate(e);
}

bool canonically_equal(const Expr& a, const Expr& b) {
  Expr d = simplify(Sub::make(a, b));
  const Const* c = d.as<Const>();
  return c && c->value == 0;
}

std::vector<std::pair<std::string, uint64_t>> simplifier_rule_counts() {
  RuleReport report;
  report_div_rules(report);
  report_mod_rules(report);
  report_minmax_rules(report);
  report_compare_rules(report);
  report_logic_rules(report);
  return report;
}

} // namespace dsc::symbolic
