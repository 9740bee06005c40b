// Rules for min and max, tried in order. Operands are canonical.
#include "symbolic/Simplifier.h"

namespace dsc::symbolic {
namespace {

using Ops = BinaryOperands;
using Result = std::optional<Expr>;

// The rules are written once for both ops: IsMin picks which.
template <bool IsMin> Expr make_node(const Expr& a, const Expr& b) {
  return IsMin ? Min::make(a, b) : Max::make(a, b);
}

template <bool IsMin> const BinaryNode* as_same_op(const Expr& e) {
  if (IsMin) return e.as<Min>();
  return e.as<Max>();
}

template <bool IsMin> Result fold_constants(Simplifier&, const Ops& ops) {
  int64_t x, y;
  if (!is_const(ops.pa, &x) || !is_const(ops.pb, &y)) return std::nullopt;
  return Expr(IsMin ? std::min(x, y) : std::max(x, y));
}

template <bool IsMin> Result same_operands(Simplifier&, const Ops& ops) {
  if (ops.a.same_as(ops.b)) return ops.a;
  return std::nullopt;
}

template <bool IsMin> Result decided_by_bounds(Simplifier& s, const Ops& ops) {
  Polynomial d = ops.pb - ops.pa; // b - a
  if (!d.ok()) return std::nullopt;
  Interval i = s.bounds(d);
  if (i.lo >= 0) return IsMin ? ops.a : ops.b; // a <= b
  if (i.hi <= 0) return IsMin ? ops.b : ops.a; // b <= a
  return std::nullopt;
}

template <bool IsMin> Result common_constant(Simplifier& s, const Ops& ops) {
  int64_t c = ops.pa.constant_term();
  if (c == 0 || c != ops.pb.constant_term() || ops.pa.is_constant() || ops.pb.is_constant())
    return std::nullopt;
  Expr inner = s.mutate(make_node<IsMin>(s.canonical(ops.pa.without_constant()),
                                         s.canonical(ops.pb.without_constant())));
  Polynomial result = s.poly(inner) + Polynomial::constant(c);
  if (!result.ok()) return std::nullopt;
  return s.canonical(result);
}

template <bool IsMin> Result nested_constant(Simplifier& s, const Ops& ops) {
  int64_t c2, c1;
  if (!is_const(ops.pb, &c2)) return std::nullopt;
  const Expr* atom = ops.pa.as_atom();
  const BinaryNode* inner = atom ? as_same_op<IsMin>(*atom) : nullptr;
  if (!inner || !is_const(s.poly(inner->b), &c1)) return std::nullopt;
  return s.mutate(make_node<IsMin>(inner->a, Expr(IsMin ? std::min(c1, c2) : std::max(c1, c2))));
}

template <bool IsMin> Result constant_last(Simplifier& s, const Ops& ops) {
  if (!ops.pa.is_constant() || ops.pb.is_constant()) return std::nullopt;
  return s.mutate(make_node<IsMin>(ops.b, ops.a));
}

template <bool IsMin> Result sort_operands(Simplifier&, const Ops& ops) {
  if (ops.pb.is_constant() || compare(ops.a, ops.b) <= 0) return std::nullopt;
  return make_node<IsMin>(ops.b, ops.a);
}

#define DSC_MINMAX_RULES(IsMin, op)                                                                \
  {op "(c1, c2) -> fold", fold_constants<IsMin>},                                                  \
      {op "(x, x) -> x", same_operands<IsMin>},                                                    \
      {op "(x, y) -> x or y when bounds of y - x decide", decided_by_bounds<IsMin>},               \
      {op "(c, x) -> " op "(x, c)", constant_last<IsMin>},                                         \
      {op "(" op "(x, c1), c2) -> " op "(x, " op "(c1, c2))", nested_constant<IsMin>},             \
      {op "(x + c, y + c) -> " op "(x, y) + c", common_constant<IsMin>},                           \
      {op "(y, x) -> " op "(x, y) (structural order)", sort_operands<IsMin>},

const Rule<Ops> kMinRules[] = {DSC_MINMAX_RULES(true, "min")};
const Rule<Ops> kMaxRules[] = {DSC_MINMAX_RULES(false, "max")};
#undef DSC_MINMAX_RULES

} // namespace

Expr simplify_min(Simplifier& s, const BinaryOperands& ops) {
  if (std::optional<Expr> r = apply_rules(kMinRules, s, ops)) return *r;
  return Min::make(ops.a, ops.b);
}

Expr simplify_max(Simplifier& s, const BinaryOperands& ops) {
  if (std::optional<Expr> r = apply_rules(kMaxRules, s, ops)) return *r;
  return Max::make(ops.a, ops.b);
}

void report_minmax_rules(RuleReport& out) {
  report_rules("min", kMinRules, out);
  report_rules("max", kMaxRules, out);
}

} // namespace dsc::symbolic
