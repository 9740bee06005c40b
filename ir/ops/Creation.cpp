// Creation ops: arange, full and zeros build tensors of symbolic shape; shape_of reads a
// shape. The row counts of nonzero, mask_select, unique and first_rows are data-dependent: each is a
// fresh symbol, with the fact that bounds it (at most the operand's element count, or its
// rows) assumed.

#include <cstdint>

#include "ir/ops/OpUtil.h"
#include "support/Int128.h"
#include "symbolic/Printer.h"
#include "symbolic/Simplify.h"

namespace dsc::ir::ops {

namespace sym = symbolic;

namespace {

DType dtype_arg(const BoundArgs& args, size_t i) {
  return *parse_dtype(args[i].as<StringImm>()->value);
}

// arange(start, end, step): the count of start, start + step, ... before end. `arange(n)`
// counts from 0 to n, as in Python.
std::optional<Type> arange(const Call&, const BoundArgs& args, ShapeContext& ctx) {
  sym::Expr start = dim_arg(args, 0), end = dim_arg(args, 1), step = dim_arg(args, 2);
  if (!end.defined()) {
    end = start;
    start = sym::Expr(0);
  }
  DType dtype = dtype_arg(args, 3);
  if (dtype == DType::Bool) {
    ctx.error(args.locs[3], "arange cannot make a bool tensor");
    return std::nullopt;
  }
  std::optional<int64_t> cs = as_const(start), ce = as_const(end), cst = as_const(step);
  if (cst == 0) {
    ctx.error(args.locs[2], "arange: step must not be zero");
    return std::nullopt;
  }
  if (cs && ce && cst) {
    // ceil((end - start) / step), in 128 bits: the constants may be anywhere in int64.
    i128 span = i128{*ce} - *cs, st = *cst;
    if (st < 0) {
      span = -span;
      st = -st;
    }
    i128 n = span <= 0 ? 0 : (span + st - 1) / st;
    if (n > INT64_MAX) {
      ctx.error(args.locs[1], "arange: the length does not fit in int64");
      return std::nullopt;
    }
    return tensor_of(dtype, {sym::Expr(static_cast<int64_t>(n))});
  }
  sym::Expr length;
  if (cst && *cst < 0) {
    if (!ctx.require(sym::le(end, start), args.locs[1],
                     "arange: end " + sym::to_string(end) + " must be <= start " +
                         sym::to_string(start) + " for a negative step"))
      return std::nullopt;
    length = sym::floordiv(start - end - step - sym::Expr(1), -step);
  } else {
    if (!cst && !ctx.require(sym::le(sym::Expr(1), step), args.locs[2],
                             "arange: step " + sym::to_string(step) + " must be >= 1"))
      return std::nullopt;
    if (!ctx.require(sym::le(start, end), args.locs[1],
                     "arange: start " + sym::to_string(start) + " must be <= end " +
                         sym::to_string(end)))
      return std::nullopt;
    length = sym::floordiv(end - start + step - sym::Expr(1), step);
  }
  return tensor_of(dtype, {length});
}

std::optional<Type> full(const Call&, const BoundArgs& args, ShapeContext& ctx) {
  std::vector<sym::Expr> shape = shape_arg(args, 0);
  if (!require_nonnegative(shape, args.locs[0], "full", ctx)) return std::nullopt;
  DType dtype = dtype_arg(args, 2);
  const auto& v = args[1].as<Literal>()->value;
  bool fits = std::holds_alternative<bool>(v)     ? dtype == DType::Bool
              : std::holds_alternative<double>(v) ? is_float(dtype)
                                                  : dtype != DType::Bool;
  if (!fits) {
    ctx.error(args.locs[1],
              std::string("full: the value cannot fill a ") + dtype_name(dtype) + " tensor");
    return std::nullopt;
  }
  return tensor_of(dtype, std::move(shape));
}

std::optional<Type> zeros(const Call&, const BoundArgs& args, ShapeContext& ctx) {
  std::vector<sym::Expr> shape = shape_arg(args, 0);
  if (!require_nonnegative(shape, args.locs[0], "zeros", ctx)) return std::nullopt;
  return tensor_of(dtype_arg(args, 1), std::move(shape));
}

std::optional<Type> shape_of(const Call&, const BoundArgs& args, ShapeContext&) {
  return tensor_of(DType::I64, {sym::Expr(static_cast<int64_t>(args.types[0].rank()))});
}

// A fresh symbol named after `hint` for a count known only at run time, with `count <= the
// product of dims` assumed (true by construction).
sym::Expr bounded_count(const Call& call, const std::vector<sym::Expr>& dims, const char* hint,
                        ShapeContext& ctx) {
  sym::Expr count = ctx.fresh_symbol(hint);
  sym::Expr elements(1);
  for (const sym::Expr& d : dims) elements = elements * d;
  ctx.record(sym::le(count, sym::simplify(elements)), call.loc,
             call.callee + ": the count is at most the element count", ShapeFact::Origin::Op,
             ShapeFact::Status::Assumed);
  return count;
}

std::optional<Type> nonzero(const Call& call, const BoundArgs& args, ShapeContext& ctx) {
  const Type& x = args.types[0];
  sym::Expr count = bounded_count(call, x.shape, "nnz", ctx);
  return tensor_of(DType::I64, {count, sym::Expr(static_cast<int64_t>(x.rank()))});
}

// mask_select(x, mask) (`x[mask]`): the elements, or the rows, of x where the bool mask holds,
// in row-major order. The mask's shape is x's first mask.rank() dims (all of them: one element
// per hit; fewer: one sub-tensor per hit), so the result is [K, x's remaining dims...].
std::optional<Type> mask_select(const Call& call, const BoundArgs& args, ShapeContext& ctx) {
  const Type& x = args.types[0];
  const Type& mask = args.types[1];
  if (mask.dtype != DType::Bool || mask.rank() == 0 || mask.rank() > x.rank()) {
    ctx.error(args.locs[1], "mask_select: the mask must be a bool tensor of rank 1 to " +
                                std::to_string(x.rank()) + " (x is " + to_string(x) + "), got " +
                                to_string(mask));
    return std::nullopt;
  }
  for (size_t d = 0; d < mask.rank(); ++d)
    if (!ctx.require_equal(mask.shape[d], x.shape[d], args.locs[1],
                           "mask_select: dim " + std::to_string(d) + " of the mask and of x"))
      return std::nullopt;
  sym::Expr count = bounded_count(
      call, std::vector<sym::Expr>(x.shape.begin(), x.shape.begin() + static_cast<long>(mask.rank())),
      "sel", ctx);
  std::vector<sym::Expr> shape = {count};
  shape.insert(shape.end(), x.shape.begin() + static_cast<long>(mask.rank()), x.shape.end());
  return tensor_of(x.dtype, std::move(shape));
}

// unique(x): the distinct values of x in ascending order (NaN last, all NaNs one value), as a
// one-dim tensor of a fresh length.
std::optional<Type> unique(const Call& call, const BoundArgs& args, ShapeContext& ctx) {
  const Type& x = args.types[0];
  return tensor_of(x.dtype, {bounded_count(call, x.shape, "uniq", ctx)});
}

// first_rows(x, n): the first n rows of x, n an integer scalar tensor whose value is known
// only at run time (0 <= n <= rows, checked then).
std::optional<Type> first_rows(const Call& call, const BoundArgs& args, ShapeContext& ctx) {
  const Type& x = args.types[0];
  const Type& n = args.types[1];
  if (x.rank() == 0) {
    ctx.error(args.locs[0], "first_rows: x must have at least one dim, got " + to_string(x));
    return std::nullopt;
  }
  if (n.rank() != 0 || (n.dtype != DType::I64 && n.dtype != DType::I32)) {
    ctx.error(args.locs[1], "first_rows: n must be an i64[] or i32[] tensor, got " + to_string(n));
    return std::nullopt;
  }
  sym::Expr count = ctx.fresh_symbol("rows");
  ctx.record(sym::le(count, x.shape[0]), call.loc,
             "first_rows: the count is at most the rows of x", ShapeFact::Origin::Op,
             ShapeFact::Status::Assumed);
  std::vector<sym::Expr> shape = x.shape;
  shape[0] = count;
  return tensor_of(x.dtype, std::move(shape));
}

} // namespace

std::vector<OpDef> creation_ops() {
  return {
      OpDef{"arange",
            {{"start", ParamKind::Dim},
             {"end", ParamKind::Dim, true, nullptr},
             {"step", ParamKind::Dim, true, default_int1},
             {"dtype", ParamKind::DType, true, default_i64}},
            arange},
      OpDef{"full",
            {{"shape", ParamKind::Shape},
             {"value", ParamKind::Scalar},
             {"dtype", ParamKind::DType, true, default_f32}},
            full},
      OpDef{"zeros",
            {{"shape", ParamKind::Shape}, {"dtype", ParamKind::DType, true, default_f32}},
            zeros},
      OpDef{"shape_of", {{"x", ParamKind::Tensor}}, shape_of},
      OpDef{"nonzero", {{"x", ParamKind::Tensor}}, nonzero},
      OpDef{"mask_select", {{"x", ParamKind::Tensor}, {"mask", ParamKind::Tensor}}, mask_select},
      OpDef{"unique", {{"x", ParamKind::Tensor}}, unique},
      OpDef{"first_rows", {{"x", ParamKind::Tensor}, {"n", ParamKind::Tensor}}, first_rows},
  };
}

} // namespace dsc::ir::ops
