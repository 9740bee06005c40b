#pragma once
// The lowering of each primitive op family (ir/Ops.def), one file each. Each takes a call
// whose tensor operands are atoms (Vars and Literals), bound to the op's signature by
// ir::bind_arguments (so defaults are filled in and attributes normalized), and the call's
// inferred result type. It returns the value that replaces the call (a call to a new prim or
// extern), or an undefined Expr after reporting an error.

#include "ir/Module.h"
#include "ir/OpRegistry.h"
#include "passes/legalize/Context.h"
#include "symbolic/Simplify.h"

namespace dsc::passes::lowering {

// Binary arithmetic, comparisons and logic with NumPy broadcasting, where, cast and the unary
// functions: one loop nest over the result.
ir::Expr lower_elementwise(const ir::Call& call, const ir::BoundArgs& args, const ir::Type& type,
                           FnContext& ctx);
// sum, max, min, mean: loops over the kept axes around a local accumulator and the reduced
// axes.
ir::Expr lower_reduce(const ir::Call& call, const ir::BoundArgs& args, const ir::Type& type,
                      FnContext& ctx);
// permute, broadcast_to, concat, split, slice, take, pad (reshape stays a graph op).
ir::Expr lower_layout(const ir::Call& call, const ir::BoundArgs& args, const ir::Type& type,
                      FnContext& ctx);
// matmul: BLAS sgemm when the batch dims allow it, else a loop nest with an accumulator.
ir::Expr lower_matmul(const ir::Call& call, const ir::BoundArgs& args, const ir::Type& type,
                      FnContext& ctx);
// conv2d: a direct loop nest.
ir::Expr lower_conv(const ir::Call& call, const ir::BoundArgs& args, const ir::Type& type,
                    FnContext& ctx);
// arange, full, zeros, shape_of (nonzero is reported as unsupported).
ir::Expr lower_creation(const ir::Call& call, const ir::BoundArgs& args, const ir::Type& type,
                        FnContext& ctx);

// Argument `i`, a dims list of one dim (arange's start, slice's step), as that dim simplified.
inline symbolic::Expr dim_arg(const ir::BoundArgs& args, size_t i) {
  return symbolic::simplify(args[i].as<ir::ShapeExpr>()->dims.at(0));
}

} // namespace dsc::passes::lowering
