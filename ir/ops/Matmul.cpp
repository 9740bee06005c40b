// matmul: batched matrix product with NumPy semantics. The last two dims are the matrices
// (a 1-D operand is a vector: [K] acts as [1, K] on the left and [K, 1] on the right, and the
// added dim is dropped from the result); the batch dims before them broadcast; the contracted
// dims must be equal.

#include "ir/ops/OpUtil.h"

namespace dsc::ir::ops {

namespace {

std::optional<Type> matmul(const Call& call, const BoundArgs& args, ShapeContext& ctx) {
  const Type& a = args.types[0];
  const Type& b = args.types[1];
  for (size_t i : {size_t{0}, size_t{1}}) {
    if (args.types[i].rank() == 0) {
      ctx.error(args.locs[i],
                "matmul: operands must have rank >= 1, got " + to_string(args.types[i]));
      return std::nullopt;
    }
  }
  std::optional<UnifiedDType> d = unify_dtypes(call.callee, args, {0, 1}, ctx);
  if (!d) return std::nullopt;
  if (d->dtype == DType::Bool) {
    ctx.error(args.locs[0], "matmul expects numeric tensors, got " + to_string(a));
    return std::nullopt;
  }
  bool a_vec = a.rank() == 1, b_vec = b.rank() == 1;
  std::vector<symbolic::Expr> as = a.shape, bs = b.shape;
  if (a_vec) as.insert(as.begin(), symbolic::Expr(1));
  if (b_vec) bs.push_back(symbolic::Expr(1));
  symbolic::Expr m = as[as.size() - 2], ka = as.back();
  symbolic::Expr kb = bs[bs.size() - 2], n = bs.back();
  if (!ctx.require_equal(ka, kb, args.locs[1], "matmul: contracted dims")) return std::nullopt;
  std::vector<symbolic::Expr> a_batch(as.begin(), as.end() - 2), b_batch(bs.begin(), bs.end() - 2);
  std::optional<std::vector<symbolic::Expr>> shape =
      broadcast_dims("matmul", a_batch, b_batch, args.locs[1], "broadcast of batch dim", ctx);
  if (!shape) return std::nullopt;
  if (!a_vec) shape->push_back(m);
  if (!b_vec) shape->push_back(n);
  return tensor_of(d->dtype, std::move(*shape));
}

} // namespace

std::vector<OpDef> matmul_ops() {
  return {OpDef{"matmul", {{"a", ParamKind::Tensor}, {"b", ParamKind::Tensor}}, matmul}};
}

} // namespace dsc::ir::ops
