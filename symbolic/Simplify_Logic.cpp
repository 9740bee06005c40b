// Rules for &&, || and !, tried in order. And/Or arrive flattened into operand lists whose
// members are canonical; the canonical form is the sorted, deduplicated list rebuilt
// left-associatively. Negation is pushed down to comparisons, which flip.
#include <algorithm>

#include "symbolic/Simplifier.h"

namespace dsc::symbolic {
namespace {

using Ops = LogicOperands;
using Result = std::optional<Expr>;

bool is_bool_const(const Expr& e, bool value) {
  const BoolConst* b = e.as<BoolConst>();
  return b && b->value == value;
}

// For And the absorbing element is false and the identity is true; for Or the reverse.
bool absorbing(const Ops& ops) { return ops.kind == ExprKind::Or; }

const Rule<Ops> kLogicRules[] = {
    {"x && false -> false, x || true -> true",
     [](Simplifier&, const Ops& ops) -> Result {
       for (const Expr& e : ops.operands)
         if (is_bool_const(e, absorbing(ops))) return BoolConst::make(absorbing(ops));
       return std::nullopt;
     }},
    {"x && !x -> false, x || !x -> true",
     [](Simplifier& s, const Ops& ops) -> Result {
       if (ops.operands.size() < 2) return std::nullopt;
       for (const Expr& e : ops.operands) {
         Expr negated = simplify_not(s, e);
         for (const Expr& other : ops.operands)
           if (other.same_as(negated)) return BoolConst::make(absorbing(ops));
       }
       return std::nullopt;
     }},
};

} // namespace

Expr simplify_logic(Simplifier& s, LogicOperands ops) {
  if (std::optional<Expr> r = apply_rules(kLogicRules, s, ops)) return *r;
  // Drop identities and duplicates, then order.
  std::vector<Expr>& v = ops.operands;
  v.erase(std::remove_if(v.begin(), v.end(),
                         [&](const Expr& e) { return is_bool_const(e, !absorbing(ops)); }),
          v.end());
  std::sort(v.begin(), v.end(), ExprLess());
  v.erase(std::unique(v.begin(), v.end(), ExprSame()), v.end());
  if (v.empty()) return BoolConst::make(!absorbing(ops));
  Expr result = v[0];
  for (size_t i = 1; i < v.size(); ++i)
    result = ops.kind == ExprKind::And ? And::make(result, v[i]) : Or::make(result, v[i]);
  return result;
}

Expr simplify_not(Simplifier& s, const Expr& x) {
  if (const BoolConst* b = x.as<BoolConst>()) return BoolConst::make(!b->value);
  if (const Not* n = x.as<Not>()) return n->a;
  if (const EQ* n = x.as<EQ>()) return s.mutate(NE::make(n->a, n->b));
  if (const NE* n = x.as<NE>()) return s.mutate(EQ::make(n->a, n->b));
  if (const LE* n = x.as<LE>()) return s.mutate(LT::make(n->b, n->a));
  if (const LT* n = x.as<LT>()) return s.mutate(LE::make(n->b, n->a));
  if (const And* n = x.as<And>()) return s.mutate(Or::make(Not::make(n->a), Not::make(n->b)));
  if (const Or* n = x.as<Or>()) return s.mutate(And::make(Not::make(n->a), Not::make(n->b)));
  internal_error << "simplify_not of a non-predicate " << kind_name(x.kind());
}

void report_logic_rules(RuleReport& out) { report_rules("logic", kLogicRules, out); }

} // namespace dsc::symbolic
