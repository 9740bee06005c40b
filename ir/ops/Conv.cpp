// conv2d: NCHW input, OIHW weights. stride, padding and dilation are ints or [h, w] pairs;
// groups splits the channels. Each spatial output dim is
//   (H + 2*padding - dilation*(k - 1) - 1) / stride + 1   (floor division)
// and the input must be at least as large as the dilated kernel.

#include "ir/ops/OpUtil.h"
#include "symbolic/Printer.h"

namespace dsc::ir::ops {

namespace sym = symbolic;

namespace {

// An int or a pair of ints; `min` is the least allowed value.
std::optional<std::pair<int64_t, int64_t>>
pair_arg(const BoundArgs& args, size_t i, const char* name, int64_t min, ShapeContext& ctx) {
  int64_t h = 0, w = 0;
  if (is_shape_arg(args, i)) {
    std::vector<sym::Expr> dims = shape_arg(args, i);
    std::optional<int64_t> ch = dims.size() == 2 ? as_const(dims[0]) : std::nullopt;
    std::optional<int64_t> cw = dims.size() == 2 ? as_const(dims[1]) : std::nullopt;
    if (!ch || !cw) {
      ctx.error(args.locs[i], std::string("conv2d: ") + name +
                                  " must be an int or a pair of ints, got " + shape_string(dims));
      return std::nullopt;
    }
    h = *ch;
    w = *cw;
  } else {
    h = w = int_arg(args, i);
  }
  if (h < min || w < min) {
    ctx.error(args.locs[i], std::string("conv2d: ") + name + " must be >= " + std::to_string(min) +
                                ", got " + (h < min ? std::to_string(h) : std::to_string(w)));
    return std::nullopt;
  }
  return std::make_pair(h, w);
}

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
  auto stride = pair_arg(args, 2, "stride", 1, ctx);
  if (!stride) return std::nullopt;
  auto padding = pair_arg(args, 3, "padding", 0, ctx);
  if (!padding) return std::nullopt;
  auto dilation = pair_arg(args, 4, "dilation", 1, ctx);
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
