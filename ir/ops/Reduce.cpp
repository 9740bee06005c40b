// Reductions: sum, max, min, mean over one axis, a list of axes, or (axis left out) all of them.
// Axes may be negative; keepdims keeps each reduced axis as a 1. argmax and argmin reduce one
// axis (the last by default) to the i64 index of its first greatest (least) element, so the
// axis must not be empty: a run-time check unless the prover decides it.

#include <set>

#include "ir/ops/OpUtil.h"
#include "symbolic/Printer.h"

namespace dsc::ir::ops {

namespace sym = symbolic;

namespace {

std::optional<Type> reduce(const Call& call, const BoundArgs& args, ShapeContext& ctx) {
  const Type& x = args.types[0];
  const OpId op = find_op(call.callee)->id;
  if (x.dtype == DType::Bool) {
    ctx.error(args.locs[0], call.callee + " expects a numeric tensor, got " + to_string(x));
    return std::nullopt;
  }
  if (op == OpId::mean && !is_float(x.dtype) && !x.weak) {
    ctx.error(args.locs[0], "mean expects a float tensor, got " + to_string(x));
    return std::nullopt;
  }
  std::set<size_t> axes;
  if (!args[1].defined()) {
    for (size_t i = 0; i < x.rank(); ++i)
      axes.insert(i);
  } else {
    std::vector<int64_t> written;
    if (is_shape_arg(args, 1)) {
      for (const symbolic::Expr& d : shape_arg(args, 1)) {
        std::optional<int64_t> c = as_const(d);
        if (!c) {
          ctx.error(args.locs[1],
                    call.callee + " expects integer axes, got " + shape_string(shape_arg(args, 1)));
          return std::nullopt;
        }
        written.push_back(*c);
      }
    } else {
      written.push_back(int_arg(args, 1));
    }
    for (int64_t a : written) {
      std::optional<size_t> axis = normalize_axis(a, x.rank(), call.callee, args.locs[1], ctx);
      if (!axis) return std::nullopt;
      if (!axes.insert(*axis).second) {
        ctx.error(args.locs[1], call.callee + ": axis " + std::to_string(a) + " appears twice");
        return std::nullopt;
      }
    }
  }
  bool keepdims = std::get<bool>(args[2].as<Literal>()->value);
  std::vector<symbolic::Expr> shape;
  for (size_t i = 0; i < x.rank(); ++i) {
    if (!axes.count(i))
      shape.push_back(x.shape[i]);
    else if (keepdims)
      shape.push_back(symbolic::Expr(1));
  }
  DType out = x.dtype;
  if (op == OpId::mean && x.weak && !is_float(out)) out = DType::F32;
  return tensor_of(out, std::move(shape), x.weak);
}

std::optional<Type> arg_reduce(const Call& call, const BoundArgs& args, ShapeContext& ctx) {
  const Type& x = args.types[0];
  if (x.dtype == DType::Bool) {
    ctx.error(args.locs[0], call.callee + " expects a numeric tensor, got " + to_string(x));
    return std::nullopt;
  }
  std::optional<size_t> axis =
      normalize_axis(int_arg(args, 1), x.rank(), call.callee, args.locs[1], ctx);
  if (!axis) return std::nullopt;
  sym::Expr extent = canon(x.shape[*axis]);
  if (!ctx.require(sym::le(sym::Expr(1), extent), args.locs[0],
                   call.callee + ": the reduced axis (of size " + sym::to_string(extent) +
                       ") must not be empty"))
    return std::nullopt;
  bool keepdims = std::get<bool>(args[2].as<Literal>()->value);
  std::vector<sym::Expr> shape;
  for (size_t i = 0; i < x.rank(); ++i) {
    if (i != *axis)
      shape.push_back(x.shape[i]);
    else if (keepdims)
      shape.push_back(sym::Expr(1));
  }
  return tensor_of(DType::I64, std::move(shape));
}

Expr default_last_axis() {
  return Literal::make(int64_t{-1});
}

} // namespace

std::vector<OpDef> reduce_ops() {
  std::vector<ParamSpec> params = {{"x", ParamKind::Tensor},
                                   {"axis", ParamKind::IntOrShape, true, nullptr},
                                   {"keepdims", ParamKind::Bool, true, default_false}};
  std::vector<OpDef> ops;
  for (const char* n : {"sum", "max", "min", "mean"})
    ops.push_back(OpDef{n, params, reduce});
  std::vector<ParamSpec> arg_params = {{"x", ParamKind::Tensor},
                                       {"axis", ParamKind::Int, true, default_last_axis},
                                       {"keepdims", ParamKind::Bool, true, default_false}};
  for (const char* n : {"argmax", "argmin"})
    ops.push_back(OpDef{n, arg_params, arg_reduce});
  return ops;
}

} // namespace dsc::ir::ops
