#pragma once
// Solving a callee's dim for its one unbound symbol: a call binds the callee's symbols from its
// arguments' dims, a plain symbol (`S`) directly and a linear one (`2*S + 1`) by solving it.
// infer_shapes binds so when it types a call (checking that the division is exact and the
// value not negative), and inline_calls again when it renames the symbols of an inlined body;
// both read the dim's form here.

#include <cstdint>
#include <optional>
#include <string>

#include "symbolic/Expr.h"

namespace dsc::passes {

// `dim` as step * u + offset, with step a nonzero constant and offset free of u (the dim's
// value at u = 0); nullopt when the dim is not linear in u.
struct LinearDim {
  int64_t step;
  symbolic::Expr offset;
};
std::optional<LinearDim> linear_in(const symbolic::Expr& dim, const std::string& u);

} // namespace dsc::passes
