#pragma once
// The first half of legalize: the compute description (passes/legalize/ComputeDesc.h) of each
// primitive op family (ir/Ops.def), one file each. Each takes a call whose tensor operands are
// atoms (Vars and Literals), bound to the op's signature by ir::bind_arguments (so defaults are
// filled in and attributes normalized), and the call's inferred result type. It returns the
// call's description, or nullopt after reporting an error. Materialize.h is the second half.

#include <optional>

#include "ir/Module.h"
#include "ir/OpRegistry.h"
#include "passes/legalize/ComputeDesc.h"
#include "passes/legalize/Context.h"
#include "symbolic/Simplify.h"

namespace dsc::passes::lowering {

// The scalar operator legalize computes a binary arithmetic, comparison or logic op with
// (add: +); an internal error for any other op.
ir::BinaryOp binary_op(ir::OpId op);

// Binary arithmetic, comparisons and logic with NumPy broadcasting, where, cast and the unary
// functions: a map.
std::optional<ComputeDesc> describe_elementwise(const ir::Call& call, const ir::BoundArgs& args,
                                                const ir::Type& type, FnContext& ctx);
// sum, max, min, mean: a reduction over the reduced axes. argmax, argmin: a stitch of two
// reductions per row (the row's extreme, then the first index holding it).
std::optional<ComputeDesc> describe_reduce(const ir::Call& call, const ir::BoundArgs& args,
                                           const ir::Type& type, FnContext& ctx);
// reshape: a view; permute, broadcast_to, concat, split, slice, take, pad: maps.
std::optional<ComputeDesc> describe_layout(const ir::Call& call, const ir::BoundArgs& args,
                                           const ir::Type& type, FnContext& ctx);
// matmul: a library call (blas.sgemm) when the target offers it and the batch dims allow it,
// else a reduction over the contracted dim.
std::optional<ComputeDesc> describe_matmul(const ir::Call& call, const ir::BoundArgs& args,
                                           const ir::Type& type, FnContext& ctx);
// conv2d: a reduction over the group's input channels and the kernel window.
std::optional<ComputeDesc> describe_conv(const ir::Call& call, const ir::BoundArgs& args,
                                         const ir::Type& type, FnContext& ctx);
// max_pool2d, avg_pool2d: a reduction over the window, guarded where it overlaps the padding.
std::optional<ComputeDesc> describe_pool(const ir::Call& call, const ir::BoundArgs& args,
                                         const ir::Type& type, FnContext& ctx);
// arange, full, zeros, shape_of: maps.
std::optional<ComputeDesc> describe_creation(const ir::Call& call, const ir::BoundArgs& args,
                                             const ir::Type& type, FnContext& ctx);

// An op whose result has a dim its operands do not fix (a fresh symbol bound at run time) has
// no description: it becomes the value that replaces the call. first_rows stays as it is (a
// view whose row count lower_host binds from its second operand); nonzero becomes a serial
// scan prim, inserted before the binding, that writes every nonzero element's index into a
// buffer of all elements' rows and the count, then first_rows of the two. nullopt after an
// error.
std::optional<ir::Expr> lower_data_dependent(const ir::Expr& call, FnContext& ctx);

// The description of a call of a primitive op: its arguments bound to the op's signature,
// then described by the op's family. nullopt after reporting an error.
std::optional<ComputeDesc> describe(const ir::Call& call, FnContext& ctx);

// Argument `i`, a dims list of one dim (arange's start, slice's step), as that dim simplified.
inline symbolic::Expr dim_arg(const ir::BoundArgs& args, size_t i) {
  return symbolic::simplify(args[i].as<ir::ShapeExpr>()->dims.at(0));
}

// Argument `i`, an int or an [h, w] pair of ints (conv2d's and the pools' stride, padding,
// ...; the shape rule checked it), as (h, w).
inline std::pair<int64_t, int64_t> int_pair_arg(const ir::BoundArgs& args, size_t i) {
  if (const ir::ShapeExpr* s = args[i].as<ir::ShapeExpr>()) {
    auto at = [&](size_t k) {
      return symbolic::simplify(s->dims.at(k)).as<symbolic::Const>()->value;
    };
    return {at(0), at(1)};
  }
  int64_t v = std::get<int64_t>(args[i].as<ir::Literal>()->value);
  return {v, v};
}

} // namespace dsc::passes::lowering
