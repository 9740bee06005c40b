// matmul: batched matrix product with NumPy semantics. The last two dims are the matrices
// (a 1-D operand is a vector: [K] acts as [1, K] on the left and [K, 1] on the right, and the
// added dim is dropped from the result); the batch dims before them broadcast; the contracted
// dims must be equal. matmul_q: a product with weights quantized per group (below).

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

// matmul_q(x, w, scales, bits=8): x[..., K] times weights quantized per group, the way
// nn.Linear holds them, one row per output (docs/language.md, "Quantized weights"): w is
// i8[N, K] (bits = 8) or i8[N, K/2] (bits = 4: two values a byte, the low nibble first, a
// nibble u meaning u - 8), scales is f16 or f32 [N, G], and value k of row n is
// q(n, k) * scales[n, k / (K / G)]. The result is x's dtype, [..., N].
std::optional<Type> matmul_q(const Call& call, const BoundArgs& args, ShapeContext& ctx) {
  const Type& x = args.types[0];
  const Type& w = args.types[1];
  const Type& s = args.types[2];
  const int64_t bits = int_arg(args, 3);
  const std::string& op = call.callee;
  if (x.rank() < 1 || !is_float(x.dtype)) {
    ctx.error(args.locs[0], op + ": x must be a float tensor of rank >= 1, got " + to_string(x));
    return std::nullopt;
  }
  if (w.rank() != 2 || w.dtype != DType::I8) {
    ctx.error(args.locs[1], op + ": w must be i8[N, K] (bits=8) or i8[N, K/2] (bits=4), got " +
                                to_string(w));
    return std::nullopt;
  }
  if (s.rank() != 2 || (s.dtype != DType::F16 && s.dtype != DType::F32)) {
    ctx.error(args.locs[2], op + ": scales must be f16[N, G] or f32[N, G], got " + to_string(s));
    return std::nullopt;
  }
  if (bits != 4 && bits != 8) {
    ctx.error(args.locs[3], op + ": bits must be 4 or 8, got " + std::to_string(bits));
    return std::nullopt;
  }
  const symbolic::Expr& k = x.shape.back();
  const symbolic::Expr& n = w.shape[0];
  const symbolic::Expr& groups = s.shape[1];
  const symbolic::Expr stored = bits == 8 ? k : w.shape[1] * 2;
  if (!ctx.require_equal(stored, k, args.locs[1],
                         op + ": w's values per row (" + std::to_string(bits) + " bits each)") ||
      !ctx.require_equal(s.shape[0], n, args.locs[2], op + ": one row of scales per row of w") ||
      !ctx.require(symbolic::ge(groups, symbolic::Expr(1)), args.locs[2],
                   op + ": at least one group") ||
      !ctx.require(symbolic::eq(symbolic::floormod(k, groups), symbolic::Expr(0)), args.locs[2],
                   op + ": the groups divide x's last dim"))
    return std::nullopt;
  std::vector<symbolic::Expr> shape(x.shape.begin(), x.shape.end() - 1);
  shape.push_back(n);
  return tensor_of(x.dtype, std::move(shape));
}

Expr default_bits() {
  return Literal::make(int64_t{8});
}

} // namespace

std::vector<OpDef> matmul_ops() {
  return {OpDef{"matmul", {{"a", ParamKind::Tensor}, {"b", ParamKind::Tensor}}, matmul},
          OpDef{"matmul_q",
                {{"x", ParamKind::Tensor},
                 {"w", ParamKind::Tensor},
                 {"scales", ParamKind::Tensor},
                 {"bits", ParamKind::Int, true, default_bits}},
                matmul_q}};
}

} // namespace dsc::ir::ops
