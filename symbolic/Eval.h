#pragma once
// Evaluates an expression at concrete symbol values, with the exact semantics of Expr.h.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "symbolic/Expr.h"

namespace dsc::symbolic {

using Bindings = std::map<std::string, int64_t, std::less<>>;

// The value of `e` (0 or 1 for predicates), or nullopt when a symbol is unbound or int64
// arithmetic overflows somewhere in the evaluation.
std::optional<int64_t> eval(const Expr& e, const Bindings& bindings);

// Symbol values keyed by node, for hot loops over a handful of symbols (a linear scan of
// pointers, no strings): the prover's test-point search evaluates thousands of points.
struct SymbolValues {
  std::vector<std::pair<const ExprNode*, int64_t>> values;
};
std::optional<int64_t> eval_with(const Expr& e, const SymbolValues& values);

// The names of the symbols `e` mentions, sorted.
std::set<std::string> free_symbols(const Expr& e);

} // namespace dsc::symbolic
