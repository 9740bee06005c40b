// conv2d: NCHW input, OIHW weights. stride, padding and dilation are ints or [h, w] pairs;
// groups splits the channels. Each spatial output dim is
//   (H + 2*padding - dilation*(k - 1) - 1) / stride + 1   (floor division)
// and the input must be at least as large as the dilated kernel.

#include "ir/ops/OpUtil.h"
#include "symbolic/Printer.h"

namespace dsc::ir::ops {

namespace sym = symbolic;

namespace {

std::optional<Type> conv2d(const Call& call, const BoundArgs& args, ShapeContext& ctx) {
  const Type& x = args.types[0];
  const Type& w = args.types[1];
  if (x.rank() != 4) {
    ctx.error(args.locs[0], "conv2d expects a rank-4 NCHW input, got " + to_string(x));
    return std::nullopt;
  }
  if (w.rank() != 4) {
    ctx.error(args.locs[1], "conv2d expects rank-4 OIHW weights, got " + to_string(w));
    return std::nullopt;
  }
  std::optional<UnifiedDType> d = unify_dtypes(call.callee, args, {0, 1}, ctx);
  if (!d) return std::nullopt;
  if (d->dtype == DType::Bool) {
    ctx.error(args.locs[0], "conv2d expects numeric tensors, got " + to_string(x));
    return std::nullopt;
  }
  auto stride = int_pair_arg(args, 2, call.callee, "stride", 1, ctx);
  if (!stride) return std::nullopt;
  auto padding = int_pair_arg(args, 3, call.callee, "padding", 0, ctx);
  if (!padding) return std::nullopt;
  auto dilation = int_pair_arg(args, 4, call.callee, "dilation", 1, ctx);
  if (!dilation) return std::nullopt;
  int64_t groups = int_arg(args, 5);
  if (groups < 1) {
    ctx.error(args.locs[5], "conv2d: groups must be >= 1, got " + std::to_string(groups));
    return std::nullopt;
  }
  sym::Expr c = canon(x.shape[1]), o = canon(w.shape[0]), i = canon(w.shape[1]);
  if (!ctx.require_equal(c, canon(sym::Expr(groups) * i), args.locs[1],
                         "conv2d: input channels and groups * weight in-channels"))
    return std::nullopt;
  if (groups > 1 &&
      !ctx.require(sym::eq(sym::floormod(o, sym::Expr(groups)), sym::Expr(0)), args.locs[1],
                   "conv2d: out-channels " + sym::to_string(o) + " must be divisible by groups " +
                       std::to_string(groups)))
    return std::nullopt;

  std::vector<sym::Expr> shape = {canon(x.shape[0]), o};
  const char* names[2] = {"height", "width"};
  int64_t s[2] = {stride->first, stride->second}, p[2] = {padding->first, padding->second},
          dl[2] = {dilation->first, dilation->second};
  for (int k = 0; k < 2; ++k) {
    sym::Expr in = canon(x.shape[2 + k]), kernel = canon(w.shape[2 + k]);
    // The extent the dilated kernel covers, less one.
    sym::Expr reach = canon(sym::Expr(dl[k]) * (kernel - sym::Expr(1)));
    sym::Expr padded = canon(in + sym::Expr(2) * sym::Expr(p[k]));
    sym::Expr room = canon(padded - reach - sym::Expr(1));
    if (!ctx.require(sym::le(sym::Expr(0), room), args.locs[0],
                     std::string("conv2d: the padded input ") + names[k] + " " +
                         sym::to_string(padded) + " must be at least the dilated kernel " +
                         names[k] + " " + sym::to_string(canon(reach + sym::Expr(1)))))
      return std::nullopt;
    shape.push_back(canon(sym::floordiv(room, sym::Expr(s[k])) + sym::Expr(1)));
  }
  return tensor_of(d->dtype, std::move(shape));
}

} // namespace

std::vector<OpDef> conv_ops() {
  return {OpDef{"conv2d",
                {{"x", ParamKind::Tensor},
                 {"w", ParamKind::Tensor},
                 {"stride", ParamKind::IntOrShape, true, default_int1},
                 {"padding", ParamKind::IntOrShape, true, default_int0},
                 {"dilation", ParamKind::IntOrShape, true, default_int1},
                 {"groups", ParamKind::Int, true, default_int1}},
                conv2d}};
}

} // namespace dsc::ir::ops
