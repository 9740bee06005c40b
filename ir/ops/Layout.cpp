// Layout ops: reshape, permute, broadcast_to, concat, split, slice, take, pad and update_slice.
// symbolic condition they need (element counts, divisibility, slice bounds) is proved, or is
// an error when it can never hold, or becomes a run-time fact.

#include <algorithm>
#include <set>

#include "ir/ops/OpUtil.h"
#include "symbolic/Polynomial.h"
#include "symbolic/Printer.h"
#include "symbolic/Simplify.h"

namespace dsc::ir::ops {

namespace sym = symbolic;

namespace {

// A tuple is built per piece; far more pieces than any model uses is a mistake.
constexpr int64_t kMaxPieces = 1 << 16;

std::string str(const sym::Expr& e) {
  return sym::to_string(e);
}

// total / known with the factors they share cancelled: {quotient, remaining total, remaining
// known}. The quotient is exact when the structure shows it (the remaining known dims divide
// every term); otherwise it is a floordiv whose exactness the caller must establish.
struct Quotient {
  sym::Expr value, total, known;
  bool exact;
};

Quotient cancel_and_divide(std::vector<sym::Expr> total, std::vector<sym::Expr> known) {
  for (auto k = known.begin(); k != known.end();) {
    auto t =
        std::find_if(total.begin(), total.end(), [&](const sym::Expr& e) { return e.same_as(*k); });
    if (t == total.end()) {
      ++k;
      continue;
    }
    total.erase(t);
    k = known.erase(k);
  }
  sym::Expr rt = product(total), rk = product(known);
  if (as_const(rk) == 1) return {rt, rt, rk, true};
  sym::Polynomial pt = sym::Polynomial::from_expr(rt), pk = sym::Polynomial::from_expr(rk);
  sym::Polynomial q;
  if (pt.ok() && pk.ok() && pk.terms().size() == 1 && pk.constant_term() == 0 &&
      pt.divide_by_monomial(pk, &q) && q.ok())
    return {canon(q.to_expr()), rt, rk, true};
  if (std::optional<int64_t> c = as_const(rk); c && *c != 0 && pt.ok()) {
    bool exact = pt.constant_term() % *c == 0;
    for (const sym::Term& term : pt.terms())
      exact &= term.coeff % *c == 0;
    if (exact) return {canon(pt.divided_exactly(*c).to_expr()), rt, rk, true};
  }
  sym::Expr value = canon(sym::floordiv(rt, rk));
  return {value, rt, rk, sym::canonically_equal(value * rk, rt)};
}

std::optional<Type> reshape(const Call&, const BoundArgs& args, ShapeContext& ctx) {
  const Type& x = args.types[0];
  std::vector<sym::Expr> shape = shape_arg(args, 1);
  SourceLoc loc = args.locs[1];
  std::optional<size_t> infer_at;
  std::vector<sym::Expr> known;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (as_const(shape[i]) != -1) {
      known.push_back(shape[i]);
      continue;
    }
    if (infer_at) {
      ctx.error(loc, "reshape: only one dim may be -1, got " + shape_string(shape));
      return std::nullopt;
    }
    infer_at = i;
  }
  if (!require_nonnegative(known, loc, "reshape", ctx)) return std::nullopt;
  sym::Expr total = product(x.shape);
  if (!infer_at) {
    if (!ctx.require_equal(total, product(shape), loc, "reshape: element counts"))
      return std::nullopt;
    return tensor_of(x.dtype, shape, x.weak);
  }
  Quotient q = cancel_and_divide(x.shape, known);
  if (!q.exact &&
      !ctx.require(sym::eq(sym::floormod(q.total, q.known), sym::Expr(0)), loc,
                   "reshape: the element count " + str(total) + " must be divisible by " +
                       str(product(known)) + " to infer the -1 dim"))
    return std::nullopt;
  shape[*infer_at] = q.value;
  return tensor_of(x.dtype, shape, x.weak);
}

std::optional<Type> permute(const Call&, const BoundArgs& args, ShapeContext& ctx) {
  const Type& x = args.types[0];
  std::vector<sym::Expr> perm = shape_arg(args, 1);
  auto fail = [&]() {
    ctx.error(args.locs[1], "permute expects a permutation of the " + std::to_string(x.rank()) +
                                " axes, got " + shape_string(perm));
    return std::nullopt;
  };
  if (perm.size() != x.rank()) return fail();
  std::vector<sym::Expr> shape;
  std::set<size_t> seen;
  for (const sym::Expr& p : perm) {
    std::optional<int64_t> c = as_const(p);
    if (!c) return fail();
    std::optional<size_t> axis = normalize_axis(*c, x.rank(), "permute", args.locs[1], ctx);
    if (!axis) return std::nullopt;
    if (!seen.insert(*axis).second) return fail();
    shape.push_back(x.shape[*axis]);
  }
  return tensor_of(x.dtype, std::move(shape), x.weak);
}

std::optional<Type> broadcast_to(const Call&, const BoundArgs& args, ShapeContext& ctx) {
  const Type& x = args.types[0];
  std::vector<sym::Expr> target = shape_arg(args, 1);
  SourceLoc loc = args.locs[1];
  if (!require_nonnegative(target, loc, "broadcast_to", ctx)) return std::nullopt;
  if (x.rank() > target.size()) {
    ctx.error(loc, "broadcast_to: cannot broadcast rank " + std::to_string(x.rank()) + " to rank " +
                       std::to_string(target.size()));
    return std::nullopt;
  }
  size_t offset = target.size() - x.rank();
  for (size_t i = 0; i < x.rank(); ++i) {
    sym::Expr d = canon(x.shape[i]), t = target[offset + i];
    if (d.same_as(t) || as_const(d) == 1) continue;
    sym::Verdict v = ctx.decide(sym::eq(d, t));
    if (v == sym::Verdict::Proved || ctx.proved(sym::eq(d, sym::Expr(1)))) continue;
    if (v == sym::Verdict::Disproved) {
      ctx.error(loc, "broadcast_to: cannot broadcast dim " + str(d) + " to " + str(t))
          .notes.push_back({loc, "broadcasting from " + shape_string(x.shape) + " to " +
                                     shape_string(target) + " needs each dim equal or 1"});
      return std::nullopt;
    }
    ctx.record(sym::eq(d, t), loc, "broadcast_to: dim " + std::to_string(offset + i));
  }
  return tensor_of(x.dtype, std::move(target), x.weak);
}

std::optional<Type> concat(const Call& call, const BoundArgs& args, ShapeContext& ctx) {
  const std::vector<Type>& ts = args.types[0].fields;
  const ListExpr* list = args[0].as<ListExpr>();
  auto item_loc = [&](size_t k) { return argument_loc(list->items[k], args.locs[0]); };
  if (ts.empty()) {
    ctx.error(args.locs[0], "concat expects at least one tensor");
    return std::nullopt;
  }
  const Type& first = ts[0];
  if (first.rank() == 0) {
    ctx.error(item_loc(0), "concat expects tensors of rank >= 1, got " + to_string(first));
    return std::nullopt;
  }
  std::optional<size_t> axis =
      normalize_axis(int_arg(args, 1), first.rank(), call.callee, args.locs[1], ctx);
  if (!axis) return std::nullopt;
  sym::Expr along = first.shape[*axis];
  for (size_t k = 1; k < ts.size(); ++k) {
    const Type& t = ts[k];
    if (t.dtype != first.dtype) {
      ctx.error(item_loc(k), "concat: dtypes differ: " + std::string(dtype_name(first.dtype)) +
                                 " vs " + dtype_name(t.dtype));
      return std::nullopt;
    }
    if (t.rank() != first.rank()) {
      ctx.error(item_loc(k), "concat: ranks differ: " + to_string(first) + " vs " + to_string(t));
      return std::nullopt;
    }
    for (size_t i = 0; i < t.rank(); ++i) {
      if (i == *axis) continue;
      if (!ctx.require_equal(first.shape[i], t.shape[i], item_loc(k),
                             "concat: dim " + std::to_string(i) + " of the inputs"))
        return std::nullopt;
    }
    along = along + t.shape[*axis];
  }
  std::vector<sym::Expr> shape = first.shape;
  shape[*axis] = along;
  return tensor_of(first.dtype, std::move(shape));
}

std::optional<Type> split(const Call&, const BoundArgs& args, ShapeContext& ctx) {
  const Type& x = args.types[0];
  if (x.rank() == 0) {
    ctx.error(args.locs[0], "split expects a tensor of rank >= 1, got " + to_string(x));
    return std::nullopt;
  }
  std::optional<size_t> axis =
      normalize_axis(int_arg(args, 2), x.rank(), "split", args.locs[2], ctx);
  if (!axis) return std::nullopt;
  sym::Expr d = canon(x.shape[*axis]);
  SourceLoc loc = args.locs[1];
  std::vector<sym::Expr> sizes;
  if (is_shape_arg(args, 1)) {
    sizes = shape_arg(args, 1);
    if (sizes.empty()) {
      ctx.error(loc, "split expects at least one size");
      return std::nullopt;
    }
    if (!require_nonnegative(sizes, loc, "split", ctx)) return std::nullopt;
    sym::Expr total(0);
    for (const sym::Expr& s : sizes)
      total = total + s;
    if (!ctx.require_equal(canon(total), d, loc,
                           "split: the sum of the sizes and dim " + std::to_string(*axis)))
      return std::nullopt;
  } else {
    int64_t n = int_arg(args, 1);
    if (n < 1 || n > kMaxPieces) {
      ctx.error(loc, "split: the number of pieces must be between 1 and " +
                         std::to_string(kMaxPieces) + ", got " + std::to_string(n));
      return std::nullopt;
    }
    if (!ctx.require(sym::eq(sym::floormod(d, sym::Expr(n)), sym::Expr(0)), loc,
                     "split: dim " + str(d) + " must be divisible by " + std::to_string(n)))
      return std::nullopt;
    sizes.assign(static_cast<size_t>(n), canon(sym::floordiv(d, sym::Expr(n))));
  }
  std::vector<Type> pieces;
  for (const sym::Expr& s : sizes) {
    std::vector<sym::Expr> shape = x.shape;
    shape[*axis] = s;
    pieces.push_back(tensor_of(x.dtype, std::move(shape), x.weak));
  }
  return Type::tuple(std::move(pieces));
}

std::optional<Type> slice(const Call&, const BoundArgs& args, ShapeContext& ctx) {
  const Type& x = args.types[0];
  if (x.rank() == 0) {
    ctx.error(args.locs[0], "slice expects a tensor of rank >= 1, got " + to_string(x));
    return std::nullopt;
  }
  std::optional<size_t> axis =
      normalize_axis(int_arg(args, 1), x.rank(), "slice", args.locs[1], ctx);
  if (!axis) return std::nullopt;
  sym::Expr d = canon(x.shape[*axis]);
  sym::Expr start = dim_arg(args, 2), step = dim_arg(args, 4);
  sym::Expr end = args[3].defined() ? dim_arg(args, 3) : d;
  // Python's negative indices count from the end.
  if (std::optional<int64_t> c = as_const(start); c && *c < 0) start = canon(d + start);
  if (std::optional<int64_t> c = as_const(end); c && *c < 0) end = canon(d + end);
  std::optional<int64_t> cstep = as_const(step);
  if (cstep && *cstep <= 0) {
    ctx.error(args.locs[4], "slice: step must be positive, got " + std::to_string(*cstep));
    return std::nullopt;
  }
  if (!cstep && !ctx.require(sym::le(sym::Expr(1), step), args.locs[4],
                             "slice: step " + str(step) + " must be >= 1"))
    return std::nullopt;

  std::vector<sym::Expr> shape = x.shape;
  std::optional<int64_t> cd = as_const(d), cs = as_const(start), ce = as_const(end);
  if (cd && cs && ce && cstep) {
    // All known: clamp like Python.
    int64_t s = std::clamp<int64_t>(*cs, 0, *cd), e = std::clamp<int64_t>(*ce, 0, *cd);
    int64_t n = e > s ? (e - s) / *cstep + ((e - s) % *cstep != 0) : 0;
    shape[*axis] = sym::Expr(n);
    return tensor_of(x.dtype, std::move(shape), x.weak);
  }
  if (!ctx.require(sym::le(sym::Expr(0), start), args.locs[2],
                   "slice: start " + str(start) + " must be >= 0"))
    return std::nullopt;
  if (!ctx.require(sym::le(start, end), args.locs[3],
                   "slice: start " + str(start) + " must be <= end " + str(end)))
    return std::nullopt;
  if (!ctx.require(sym::le(end, d), args.locs[3],
                   "slice: end " + str(end) + " must be <= dim " + std::to_string(*axis) + " (" +
                       str(d) + ")"))
    return std::nullopt;
  shape[*axis] = canon(sym::floordiv(end - start + step - sym::Expr(1), step));
  return tensor_of(x.dtype, std::move(shape), x.weak);
}

std::optional<Type> take(const Call&, const BoundArgs& args, ShapeContext& ctx) {
  const Type& x = args.types[0];
  const Type& idx = args.types[1];
  if (!is_int(idx.dtype)) {
    ctx.error(args.locs[1], "take expects integer indices, got " + to_string(idx));
    return std::nullopt;
  }
  if (x.rank() == 0) {
    ctx.error(args.locs[0], "take expects a tensor of rank >= 1, got " + to_string(x));
    return std::nullopt;
  }
  std::optional<size_t> axis =
      normalize_axis(int_arg(args, 2), x.rank(), "take", args.locs[2], ctx);
  if (!axis) return std::nullopt;
  std::vector<sym::Expr> shape(x.shape.begin(), x.shape.begin() + static_cast<long>(*axis));
  shape.insert(shape.end(), idx.shape.begin(), idx.shape.end());
  shape.insert(shape.end(), x.shape.begin() + static_cast<long>(*axis) + 1, x.shape.end());
  return tensor_of(x.dtype, std::move(shape), x.weak);
}

std::optional<Type> pad(const Call&, const BoundArgs& args, ShapeContext& ctx) {
  const Type& x = args.types[0];
  std::vector<sym::Expr> pads = shape_arg(args, 1);
  if (pads.size() != 2 * x.rank()) {
    ctx.error(args.locs[1], "pad expects 2 entries per dim (" + std::to_string(2 * x.rank()) +
                                " for rank " + std::to_string(x.rank()) + "), got " +
                                std::to_string(pads.size()));
    return std::nullopt;
  }
  if (args[2].defined()) {
    const auto& v = args[2].as<Literal>()->value;
    bool fits = std::holds_alternative<bool>(v)     ? x.dtype == DType::Bool
                : std::holds_alternative<double>(v) ? is_float(x.dtype)
                                                    : x.dtype != DType::Bool;
    if (!fits) {
      ctx.error(args.locs[2],
                std::string("pad: the value cannot fill a ") + dtype_name(x.dtype) + " tensor");
      return std::nullopt;
    }
  }
  std::vector<sym::Expr> shape;
  for (size_t i = 0; i < x.rank(); ++i)
    shape.push_back(canon(x.shape[i] + pads[2 * i] + pads[2 * i + 1]));
  if (!require_nonnegative(shape, args.locs[1], "pad", ctx)) return std::nullopt;
  return tensor_of(x.dtype, std::move(shape), x.weak);
}


// update_slice(dst, src, axis, start): dst with positions [start, start + n) along `axis`
// holding src, whose dims are dst's except n along `axis`. Pure like every op; legalize writes
// it into dst's buffer when nothing else reads dst (passes/legalize/InPlaceUpdates.h).
std::optional<Type> update_slice(const Call&, const BoundArgs& args, ShapeContext& ctx) {
  const Type& dst = args.types[0];
  const Type& src = args.types[1];
  if (dst.rank() == 0) {
    ctx.error(args.locs[0], "update_slice expects a tensor of rank >= 1, got " + to_string(dst));
    return std::nullopt;
  }
  if (src.dtype != dst.dtype || src.rank() != dst.rank()) {
    ctx.error(args.locs[1], "update_slice: the update " + to_string(src) +
                                " must have the dtype and rank of the tensor updated, " +
                                to_string(dst));
    return std::nullopt;
  }
  std::optional<size_t> axis =
      normalize_axis(int_arg(args, 2), dst.rank(), "update_slice", args.locs[2], ctx);
  if (!axis) return std::nullopt;
  for (size_t d = 0; d < dst.rank(); ++d) {
    if (d == *axis) continue;
    if (!ctx.require_equal(canon(src.shape[d]), canon(dst.shape[d]), args.locs[1],
                           "update_slice: dim " + std::to_string(d) + " of the update and of the tensor updated"))
      return std::nullopt;
  }
  const sym::Expr start = dim_arg(args, 3);
  if (!ctx.require(sym::le(sym::Expr(0), start), args.locs[3],
                   "update_slice: start " + str(start) + " must be >= 0"))
    return std::nullopt;
  const sym::Expr end = canon(start + src.shape[*axis]);
  if (!ctx.require(sym::le(end, canon(dst.shape[*axis])), args.locs[3],
                   "update_slice: the update's end " + str(end) + " must be <= dim " +
                       std::to_string(*axis) + " (" + str(dst.shape[*axis]) + ")"))
    return std::nullopt;
  return tensor_of(dst.dtype, dst.shape, dst.weak);
}
} // namespace

std::vector<OpDef> layout_ops() {
  return {
      OpDef{"reshape", {{"x", ParamKind::Tensor}, {"shape", ParamKind::Shape}}, reshape},
      OpDef{"permute", {{"x", ParamKind::Tensor}, {"perm", ParamKind::Shape}}, permute},
      OpDef{"broadcast_to", {{"x", ParamKind::Tensor}, {"shape", ParamKind::Shape}}, broadcast_to},
      OpDef{"concat",
            {{"tensors", ParamKind::TensorList}, {"axis", ParamKind::Int, true, default_int0}},
            concat},
      OpDef{"split",
            {{"x", ParamKind::Tensor},
             {"sections", ParamKind::IntOrShape},
             {"axis", ParamKind::Int, true, default_int0}},
            split},
      OpDef{"slice",
            {{"x", ParamKind::Tensor},
             {"axis", ParamKind::Int, true, default_int0},
             {"start", ParamKind::Dim, true, default_int0},
             {"end", ParamKind::Dim, true, nullptr},
             {"step", ParamKind::Dim, true, default_int1}},
            slice},
      OpDef{"take",
            {{"x", ParamKind::Tensor},
             {"indices", ParamKind::Tensor},
             {"axis", ParamKind::Int, true, default_int0}},
            take},
      OpDef{"pad",
            {{"x", ParamKind::Tensor},
             {"pads", ParamKind::Shape},
             {"value", ParamKind::Scalar, true, nullptr}},
            pad},
      OpDef{"update_slice",
            {{"dst", ParamKind::Tensor},
             {"src", ParamKind::Tensor},
             {"axis", ParamKind::Int, true, default_int0},
             {"start", ParamKind::Dim, true, default_int0}},
            update_slice},
  };
}

} // namespace dsc::ir::ops
