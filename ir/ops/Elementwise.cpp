// Elementwise ops: NumPy-broadcasting binary arithmetic, comparisons and logic, `where`,
// `cast`, and the unary intrinsics of ir/Intrinsics.def that Ops.def lists. Operands share one
// dtype (weak literals adopt it); comparisons give bool; the transcendental functions (the
// Float domain) need floats.

#include <algorithm>
#include <string_view>

#include "ir/Intrinsics.h"
#include "ir/ops/OpUtil.h"

namespace dsc::ir::ops {

namespace {

// What a family of elementwise ops accepts.
enum class Accepts : uint8_t { Numbers, Floats, Bools, Anything };

bool accepts(Accepts a, DType d) {
  switch (a) {
  case Accepts::Numbers:
    return d != DType::Bool;
  case Accepts::Floats:
    return is_float(d);
  case Accepts::Bools:
    return d == DType::Bool;
  case Accepts::Anything:
    return true;
  }
  return false;
}

const char* accepts_name(Accepts a) {
  switch (a) {
  case Accepts::Numbers:
    return "numeric";
  case Accepts::Floats:
    return "float";
  case Accepts::Bools:
    return "bool";
  case Accepts::Anything:
    return "any";
  }
  return "?";
}

bool check_accepts(const Call& call, const BoundArgs& args, const std::vector<size_t>& which,
                   DType unified, bool weak, Accepts a, ShapeContext& ctx) {
  if (accepts(a, unified)) return true;
  // A weak integer literal alone may become a float (`exp(2)`); report everything else.
  if (weak && a == Accepts::Floats && is_int(unified)) return true;
  size_t at = which.front();
  for (size_t i : which)
    if (!args.types[i].weak) at = i;
  ctx.error(args.locs[at], call.callee + " expects " + accepts_name(a) + " tensors, got " +
                               to_string(args.types[at]));
  return false;
}

std::optional<Type> binary(const Call& call, const BoundArgs& args, ShapeContext& ctx, Accepts a,
                           bool gives_bool) {
  std::optional<UnifiedDType> d = unify_dtypes(call.callee, args, {0, 1}, ctx);
  if (!d) return std::nullopt;
  if (!check_accepts(call, args, {0, 1}, d->dtype, d->weak, a, ctx)) return std::nullopt;
  std::optional<std::vector<symbolic::Expr>> shape =
      broadcast_shapes(call.callee, args, {0, 1}, ctx);
  if (!shape) return std::nullopt;
  DType out = gives_bool ? DType::Bool : d->dtype;
  if (d->weak && a == Accepts::Floats && is_int(out)) out = DType::F32;
  return tensor_of(out, std::move(*shape), d->weak);
}

std::optional<Type> arith(const Call& call, const BoundArgs& args, ShapeContext& ctx) {
  return binary(call, args, ctx, Accepts::Numbers, false);
}
std::optional<Type> equality(const Call& call, const BoundArgs& args, ShapeContext& ctx) {
  return binary(call, args, ctx, Accepts::Anything, true);
}
std::optional<Type> ordering(const Call& call, const BoundArgs& args, ShapeContext& ctx) {
  return binary(call, args, ctx, Accepts::Numbers, true);
}
std::optional<Type> logical(const Call& call, const BoundArgs& args, ShapeContext& ctx) {
  return binary(call, args, ctx, Accepts::Bools, false);
}

std::optional<Type> unary(const Call& call, const BoundArgs& args, ShapeContext& ctx, Accepts a) {
  const Type& t = args.types[0];
  if (!check_accepts(call, args, {0}, t.dtype, t.weak, a, ctx)) return std::nullopt;
  DType out = t.dtype;
  if (t.weak && a == Accepts::Floats && is_int(out)) out = DType::F32;
  return tensor_of(out, t.shape, t.weak);
}

std::optional<Type> float_unary(const Call& call, const BoundArgs& args, ShapeContext& ctx) {
  return unary(call, args, ctx, Accepts::Floats);
}
std::optional<Type> number_unary(const Call& call, const BoundArgs& args, ShapeContext& ctx) {
  return unary(call, args, ctx, Accepts::Numbers);
}
std::optional<Type> bool_unary(const Call& call, const BoundArgs& args, ShapeContext& ctx) {
  return unary(call, args, ctx, Accepts::Bools);
}

// where(cond, a, b): cond is bool; a and b share a dtype; all three broadcast.
std::optional<Type> where(const Call& call, const BoundArgs& args, ShapeContext& ctx) {
  const Type& c = args.types[0];
  if (c.dtype != DType::Bool) {
    ctx.error(args.locs[0], "where expects a bool condition, got " + to_string(c));
    return std::nullopt;
  }
  std::optional<UnifiedDType> d = unify_dtypes(call.callee, args, {1, 2}, ctx);
  if (!d) return std::nullopt;
  std::optional<std::vector<symbolic::Expr>> shape =
      broadcast_shapes(call.callee, args, {0, 1, 2}, ctx);
  if (!shape) return std::nullopt;
  return tensor_of(d->dtype, std::move(*shape), d->weak && c.weak);
}

std::optional<Type> cast(const Call&, const BoundArgs& args, ShapeContext&) {
  DType to = *parse_dtype(args[1].as<StringImm>()->value);
  return tensor_of(to, args.types[0].shape);
}

// Whether ir/Ops.def lists `name`: the unary intrinsics that are also tensor ops.
bool is_listed_op(std::string_view name) {
  static constexpr std::string_view kOps[] = {
#define DSC_OP(name, ...) #name,
#include "ir/Ops.def"
  };
  return std::find(std::begin(kOps), std::end(kOps), name) != std::end(kOps);
}

// The rule of the op applying the unary intrinsic `fn` to each element.
std::optional<Type> (*unary_rule(const IntrinsicDef& fn))(const Call&, const BoundArgs&,
                                                          ShapeContext&) {
  switch (fn.domain) {
  case IntrinsicDomain::Float:
    return float_unary;
  case IntrinsicDomain::Number:
    return number_unary;
  case IntrinsicDomain::Bool:
    return bool_unary;
  default:
    internal_error << "the intrinsic '" << fn.name << "' cannot be an elementwise op";
  }
}

OpDef op(const char* name, std::vector<ParamSpec> params,
         std::optional<Type> (*infer)(const Call&, const BoundArgs&, ShapeContext&)) {
  return OpDef{name, std::move(params), infer};
}

} // namespace

std::vector<OpDef> elementwise_ops() {
  const std::vector<ParamSpec> ab = {{"a", ParamKind::Tensor}, {"b", ParamKind::Tensor}};
  const std::vector<ParamSpec> x = {{"x", ParamKind::Tensor}};
  std::vector<OpDef> ops;
  for (const char* n : {"add", "sub", "mul", "div", "pow", "maximum", "minimum"})
    ops.push_back(op(n, ab, arith));
  for (const char* n : {"eq", "ne"})
    ops.push_back(op(n, ab, equality));
  for (const char* n : {"lt", "le", "gt", "ge"})
    ops.push_back(op(n, ab, ordering));
  for (const char* n : {"logical_and", "logical_or"})
    ops.push_back(op(n, ab, logical));
  ops.push_back(
      op("where", {{"cond", ParamKind::Tensor}, {"a", ParamKind::Tensor}, {"b", ParamKind::Tensor}},
         where));
  ops.push_back(op("cast", {{"x", ParamKind::Tensor}, {"dtype", ParamKind::DType}}, cast));
  for (const IntrinsicDef& fn : all_intrinsics())
    if (fn.arity == 1 && is_listed_op(fn.name)) ops.push_back(op(fn.name, x, unary_rule(fn)));
  return ops;
}

} // namespace dsc::ir::ops
