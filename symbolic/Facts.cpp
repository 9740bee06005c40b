#include "symbolic/Facts.h"

#include <algorithm>

#include "symbolic/Polynomial.h"
#include "symbolic/Simplify.h"

namespace dsc::symbolic {

namespace {

void split_conjuncts(const Expr& e, std::vector<Expr>& out) {
  if (const And* a = e.as<And>()) {
    split_conjuncts(a->a, out);
    split_conjuncts(a->b, out);
    return;
  }
  out.push_back(e);
}

bool mentions(const Expr& e, const Expr& symbol) {
  if (e.same_as(symbol)) return true;
  switch (e.kind()) {
  case ExprKind::Const:
  case ExprKind::BoolConst:
  case ExprKind::Sym:
    return false;
  case ExprKind::Not:
    return mentions(e.as<Not>()->a, symbol);
  default: {
    const auto* n = static_cast<const BinaryNode*>(e.get());
    return mentions(n->a, symbol) || mentions(n->b, symbol);
  }
  }
}

// d == 0 with a lone symbol of coefficient +-1 that appears nowhere else: that symbol and
// what it equals. Picks the greatest such symbol by name so the choice is deterministic.
bool solve_for_symbol(const Polynomial& d, std::string* name, Polynomial* value) {
  const Term* best = nullptr;
  for (const Term& t : d.terms()) {
    if (t.monomial.factors.size() != 1 || (t.coeff != 1 && t.coeff != -1)) continue;
    const Expr& f = t.monomial.factors[0];
    if (!f.is<Sym>()) continue;
    bool elsewhere = false;
    for (const Term& other : d.terms()) {
      if (&other == &t) continue;
      for (const Expr& g : other.monomial.factors) elsewhere |= mentions(g, f);
    }
    if (elsewhere) continue;
    if (!best || compare(f, best->monomial.factors[0]) > 0) best = &t;
  }
  if (!best) return false;
  *name = best->monomial.factors[0].as<Sym>()->name;
  // coeff*s + rest == 0  =>  s == -rest/coeff, with coeff = +-1.
  Polynomial rest = d - Polynomial::atom(best->monomial.factors[0]).scaled(best->coeff);
  *value = best->coeff == 1 ? rest.negated() : rest;
  return value->ok();
}

} // namespace

const Expr* Facts::substitution(const std::string& symbol) const {
  auto it = substitutions_.find(symbol);
  return it == substitutions_.end() ? nullptr : &it->second;
}

Interval Facts::range(const Expr& canonical) const {
  auto it = ranges_.find(canonical);
  return it == ranges_.end() ? Interval::everything() : it->second;
}

ModRem Facts::divisibility(const Expr& canonical) const {
  auto it = divisibility_.find(canonical);
  return it == divisibility_.end() ? ModRem::unknown() : it->second;
}

void Facts::add(const Expr& predicate) {
  internal_assert(predicate.defined() && predicate.is_bool()) << "Facts::add needs a predicate";
  std::vector<Expr> parts;
  split_conjuncts(predicate, parts);
  bool needs_rebuild = false;
  for (const Expr& p : parts) {
    predicates_.push_back(p);
    fingerprint_ = fingerprint_ * 1000003u ^ p.hash();
    needs_rebuild |= introduces_substitution(p);
  }
  if (needs_rebuild) {
    rebuild();
    return;
  }
  // No new substitution: the tables so far stay valid, and only the new facts are derived.
  for (const Expr& p : parts) derive(p);
  collect_compound_ranges();
}

bool Facts::introduces_substitution(const Expr& predicate) const {
  Expr s = simplify(predicate, *this);
  const EQ* eq = s.as<EQ>();
  if (!eq) return false;
  Polynomial d = Polynomial::from_expr(eq->a) - Polynomial::from_expr(eq->b);
  std::string name;
  Polynomial value;
  return d.ok() && solve_for_symbol(d, &name, &value);
}

void Facts::collect_compound_ranges() {
  compound_.clear();
  for (const auto& [key, range] : ranges_) {
    if (key.is<Sym>()) continue;
    compound_.push_back(CompoundRange{key, Polynomial::from_expr(key), range});
  }
  // Deterministic order, whatever the hash table's.
  std::sort(compound_.begin(), compound_.end(),
            [](const CompoundRange& a, const CompoundRange& b) { return compare(a.key, b.key) < 0; });
}

void Facts::record_substitution(const std::string& symbol, const Expr& value) {
  substitutions_[symbol] = value;
  // Keep every replacement free of substituted symbols, so one lookup is always enough.
  for (auto& [name, replacement] : substitutions_) {
    if (name != symbol) replacement = simplify(replacement, *this);
  }
}

// Derives the tables from scratch: first every substitution (so ranges are keyed by the
// final canonical forms), then ranges and divisibility.
void Facts::rebuild() {
  substitutions_.clear();
  ranges_.clear();
  divisibility_.clear();
  compound_.clear();
  inconsistent_ = false;
  for (const Expr& p : predicates_) {
    Expr s = simplify(p, *this);
    const EQ* eq = s.as<EQ>();
    if (!eq) continue;
    Polynomial d = Polynomial::from_expr(eq->a) - Polynomial::from_expr(eq->b);
    std::string name;
    Polynomial value;
    if (!d.ok() || !solve_for_symbol(d, &name, &value)) continue;
    record_substitution(name, value.to_expr());
  }
  // A substituted symbol was a dimension too: what replaces it is >= 0.
  for (const auto& [name, value] : substitutions_) derive(LE::make(Expr(0), value));
  for (const Expr& p : predicates_) derive(p);
  collect_compound_ranges();
}

void Facts::derive(const Expr& predicate) {
  Expr s = simplify(predicate, *this);
  if (const BoolConst* b = s.as<BoolConst>()) {
    if (!b->value) inconsistent_ = true;
    return;
  }
  auto narrow = [&](const Expr& key, Interval with) {
    auto [it, inserted] = ranges_.emplace(key, with);
    if (!inserted) it->second = intersect(it->second, with);
    if (it->second.is_empty()) inconsistent_ = true;
  };
  if (const LE* le = s.as<LE>()) {
    // neg <= pos, i.e. pos - neg >= 0: bound the non-constant part, in both signs.
    Polynomial d = Polynomial::from_expr(le->b) - Polynomial::from_expr(le->a);
    if (!d.ok() || d.is_constant()) return;
    Polynomial x = d.without_constant();
    int64_t c = d.constant_term();
    if (c == kNegInf) return;
    narrow(x.to_expr(), Interval::at_least(-c));
    Polynomial neg_x = x.negated();
    if (neg_x.ok()) narrow(neg_x.to_expr(), Interval::at_most(c));
    return;
  }
  if (const EQ* eq = s.as<EQ>()) {
    Polynomial d = Polynomial::from_expr(eq->a) - Polynomial::from_expr(eq->b);
    if (!d.ok() || d.is_constant()) return;
    Polynomial x = d.without_constant();
    int64_t c = d.constant_term();
    if (c == kNegInf) return;
    // x + c == 0.
    narrow(x.to_expr(), Interval::point(-c));
    // x % m == r (after moving the constant): a divisibility fact about x's operand.
    const Expr* atom = x.as_atom();
    const FloorMod* mod = atom ? atom->as<FloorMod>() : nullptr;
    if (!mod) return;
    const Const* m = mod->b.as<Const>();
    if (!m || m->value <= 1) return;
    if (-c < 0 || -c >= m->value) {
      inconsistent_ = true;
      return;
    }
    auto [it, inserted] = divisibility_.emplace(mod->a, ModRem{m->value, -c});
    if (!inserted) it->second = combine(it->second, ModRem{m->value, -c});
  }
}

} // namespace dsc::symbolic
