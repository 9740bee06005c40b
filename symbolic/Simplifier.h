#pragma once
// Internal to the simplifier: the state one simplification shares with the rule files
// (Simplify_*.cpp), and the rule-list machinery. Not part of the public API; see Simplify.h.

#include <atomic>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "support/FloorDiv.h" // the rule files fold constants with it
#include "symbolic/Bounds.h"
#include "symbolic/Expr.h"
#include "symbolic/Facts.h"
#include "symbolic/Polynomial.h"

namespace dsc::symbolic {

class Simplifier {
public:
  explicit Simplifier(const Facts* facts) : facts_(facts), analysis_(facts) {}

  // The canonical form of `e`.
  Expr mutate(const Expr& e);

  // Canonical integer expression <-> polynomial. `canonical(p)` also re-canonicalizes the
  // atoms' surroundings, so it is the one way rules build integer results.
  Polynomial poly(const Expr& canonical) { return Polynomial::from_expr(canonical); }
  Expr canonical(const Polynomial& p) { return p.to_expr(); }

  Interval bounds(const Expr& canonical) { return analysis_.bounds(canonical); }
  Interval bounds(const Polynomial& p) { return analysis_.bounds(p); }
  ModRem divisibility(const Polynomial& p) { return analysis_.divisibility(p.to_expr()); }
  const Facts* facts() const { return facts_; }

private:
  Expr mutate_uncached(const Expr& e);
  Expr mutate_arith(const Expr& e);

  const Facts* facts_;
  BoundsAnalysis analysis_;
  std::unordered_map<Expr, Expr, ExprHash, ExprSame> cache_;
};

// A rule fires by returning the rewritten (canonical) expression; it declines with nullopt.
// Rules are kept in ordered lists, one list per op family, tried first to last. Each counts
// how often it fired, so the randomized tests can check that every rule was exercised (and
// so verified by evaluation).
template <typename Operands> struct Rule {
  const char* name;
  std::optional<Expr> (*apply)(Simplifier&, const Operands&);
  mutable std::atomic<uint64_t> fired{0};
};

template <typename Operands, size_t N>
std::optional<Expr> apply_rules(const Rule<Operands> (&rules)[N], Simplifier& s,
                                const Operands& ops) {
  for (const Rule<Operands>& rule : rules) {
    if (std::optional<Expr> result = rule.apply(s, ops)) {
      rule.fired.fetch_add(1, std::memory_order_relaxed);
      return result;
    }
  }
  return std::nullopt;
}

using RuleReport = std::vector<std::pair<std::string, uint64_t>>;

template <typename Operands, size_t N>
void report_rules(const char* family, const Rule<Operands> (&rules)[N], RuleReport& out) {
  for (const Rule<Operands>& rule : rules)
    out.emplace_back(std::string(family) + ": " + rule.name, rule.fired.load());
}

// Operands of a binary integer op, already canonical, with their polynomials.
struct BinaryOperands {
  Expr a, b;
  Polynomial pa, pb;
};

// Operands of a comparison after moving everything to one side: `d >= 0` (LE), `d == 0`
// (EQ) or `d != 0` (NE), d = b - a (LT has been turned into LE by subtracting one).
struct CompareOperands {
  ExprKind kind; // EQ, NE or LE
  Polynomial d;
};

// Operands of a boolean And/Or after flattening: canonical conjuncts/disjuncts.
struct LogicOperands {
  ExprKind kind; // And or Or
  std::vector<Expr> operands;
};

// One entry point per op family.
Expr simplify_div(Simplifier& s, const BinaryOperands& ops);
Expr simplify_mod(Simplifier& s, const BinaryOperands& ops);
Expr simplify_min(Simplifier& s, const BinaryOperands& ops);
Expr simplify_max(Simplifier& s, const BinaryOperands& ops);
Expr simplify_compare(Simplifier& s, const CompareOperands& ops);
Expr simplify_logic(Simplifier& s, LogicOperands ops);
Expr simplify_not(Simplifier& s, const Expr& canonical_operand);

// Each family's rule list, for simplifier_rule_counts().
void report_div_rules(RuleReport& out);
void report_mod_rules(RuleReport& out);
void report_minmax_rules(RuleReport& out);
void report_compare_rules(RuleReport& out);
void report_logic_rules(RuleReport& out);

// Shared helpers for the rule files.
bool is_const(const Polynomial& p, int64_t* value);
// The gcd of c and every coefficient and the constant of p (1 when the constant is INT64_MIN).
int64_t common_factor(const Polynomial& p, int64_t c);

} // namespace dsc::symbolic
