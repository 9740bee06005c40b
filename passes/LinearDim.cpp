#include "passes/LinearDim.h"

#include "ir/OpRegistry.h"
#include "symbolic/Simplify.h"

namespace dsc::passes {

namespace sym = symbolic;

std::optional<LinearDim> linear_in(const sym::Expr& dim, const std::string& u) {
  const sym::Expr at0 = sym::simplify(ir::substitute(dim, {{u, sym::Expr(0)}}));
  const sym::Expr at1 = sym::simplify(ir::substitute(dim, {{u, sym::Expr(1)}}));
  const sym::Const* step = sym::simplify(at1 - at0).as<sym::Const>();
  if (!step || step->value == 0) return std::nullopt;
  if (!sym::canonically_equal(dim, sym::Expr(step->value) * sym::sym(u) + at0)) return std::nullopt;
  return LinearDim{step->value, at0};
}

} // namespace dsc::passes
