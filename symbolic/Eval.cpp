#include "symbolic/Eval.h"

#include <limits>
#include <unordered_set>
#include <vector>

#include "support/FloorDiv.h"

namespace dsc::symbolic {

namespace {

bool lookup(const Bindings& bindings, const Sym* sym, int64_t& out) {
  auto it = bindings.find(sym->name);
  if (it == bindings.end()) return false;
  out = it->second;
  return true;
}

bool lookup(const SymbolValues& values, const Sym* sym, int64_t& out) {
  for (const auto& [node, value] : values.values) {
    if (node == sym) {
      out = value;
      return true;
    }
  }
  return false;
}

// Recursion over the node kinds with the value in an out-parameter; it runs millions of times in
// property tests, so it allocates nothing and does no bookkeeping. False means no value.
template <typename Env> bool eval_node(const ExprNode* n, const Env& bindings, int64_t& out) {
  switch (n->kind) {
  case ExprKind::Const:
    out = static_cast<const Const*>(n)->value;
    return true;
  case ExprKind::BoolConst:
    out = static_cast<const BoolConst*>(n)->value ? 1 : 0;
    return true;
  case ExprKind::Sym:
    return lookup(bindings, static_cast<const Sym*>(n), out);
  case ExprKind::Not: {
    int64_t a = 0;
    if (!eval_node(static_cast<const Not*>(n)->a.get(), bindings, a)) return false;
    out = a == 0 ? 1 : 0;
    return true;
  }
  default:
    break;
  }

  const auto* bin = static_cast<const BinaryNode*>(n);
  int64_t a = 0, b = 0;
  if (!eval_node(bin->a.get(), bindings, a)) return false;
  if (!eval_node(bin->b.get(), bindings, b)) return false;
  switch (n->kind) {
  case ExprKind::Add:
    return !__builtin_add_overflow(a, b, &out);
  case ExprKind::Sub:
    return !__builtin_sub_overflow(a, b, &out);
  case ExprKind::Mul:
    return !__builtin_mul_overflow(a, b, &out);
  case ExprKind::FloorDiv:
    // Evaluation reports overflow instead of wrapping, as for Add, Sub and Mul.
    if (a == std::numeric_limits<int64_t>::min() && b == -1) return false;
    out = floor_div(a, b);
    return true;
  case ExprKind::FloorMod:
    out = floor_mod(a, b);
    return true;
  case ExprKind::Min:
    out = a < b ? a : b;
    return true;
  case ExprKind::Max:
    out = a < b ? b : a;
    return true;
  case ExprKind::EQ:
    out = a == b;
    return true;
  case ExprKind::NE:
    out = a != b;
    return true;
  case ExprKind::LT:
    out = a < b;
    return true;
  case ExprKind::LE:
    out = a <= b;
    return true;
  case ExprKind::And:
    out = (a != 0) && (b != 0);
    return true;
  case ExprKind::Or:
    out = (a != 0) || (b != 0);
    return true;
  default:
    internal_error << "eval of unexpected node kind " << kind_name(n->kind);
  }
}

} // namespace

std::optional<int64_t> eval(const Expr& e, const Bindings& bindings) {
  internal_assert(e.defined()) << "eval of an undefined Expr";
  int64_t value = 0;
  if (!eval_node(e.get(), bindings, value)) return std::nullopt;
  return value;
}

std::optional<int64_t> eval_with(const Expr& e, const SymbolValues& values) {
  internal_assert(e.defined()) << "eval of an undefined Expr";
  int64_t value = 0;
  if (!eval_node(e.get(), values, value)) return std::nullopt;
  return value;
}

std::set<std::string> free_symbols(const Expr& e) {
  std::set<std::string> names;
  if (!e.defined()) return names;
  // Hash-consed expressions are DAGs whose tree expansion can be exponential; each node is visited
  // once. An explicit stack keeps deep chains off the call stack.
  std::unordered_set<const ExprNode*> visited;
  std::vector<const ExprNode*> stack = {e.get()};
  while (!stack.empty()) {
    const ExprNode* n = stack.back();
    stack.pop_back();
    if (!visited.insert(n).second) continue;
    switch (n->kind) {
    case ExprKind::Sym:
      names.insert(static_cast<const Sym*>(n)->name);
      break;
    case ExprKind::Const:
    case ExprKind::BoolConst:
      break;
    case ExprKind::Not:
      stack.push_back(static_cast<const Not*>(n)->a.get());
      break;
    default: {
      const auto* bin = static_cast<const BinaryNode*>(n);
      stack.push_back(bin->a.get());
      stack.push_back(bin->b.get());
      break;
    }
    }
  }
  return names;
}

} // namespace dsc::symbolic
