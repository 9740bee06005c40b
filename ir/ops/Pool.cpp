// max_pool2d and avg_pool2d: NCHW input; kernel, stride and padding are ints or [h, w] pairs
// (stride defaults to the kernel). Each spatial output dim is
//   (H + 2*padding - kernel) / stride + 1   (floor division, as conv2d's)
// and the padded input must be at least as large as the kernel. Padding must be less than the
// kernel, so that every window holds at least one element of the input: max_pool2d ignores
// the padding (as if it held -inf), avg_pool2d divides by the number of input elements in the
// window unless count_include_pad (ONNX AveragePool's default, and PyTorch's with
// count_include_pad=False).

#include "ir/ops/OpUtil.h"
#include "symbolic/Printer.h"

namespace dsc::ir::ops {

namespace sym = symbolic;

namespace {

std::optional<Type> pool2d(const Call& call, const BoundArgs& args, ShapeContext& ctx) {
  const std::string& op = call.callee;
  const Type& x = args.types[0];
  if (x.rank() != 4) {
    ctx.error(args.locs[0], op + " expects a rank-4 NCHW input, got " + to_string(x));
    return std::nullopt;
  }
  bool average = op_id(op) == OpId::avg_pool2d;
  if (average ? !is_float(x.dtype) : x.dtype == DType::Bool) {
    ctx.error(args.locs[0],
              op + (average ? " expects a float tensor, got " : " expects a numeric tensor, got ") +
                  to_string(x));
    return std::nullopt;
  }
  auto kernel = int_pair_arg(args, 1, op, "kernel", 1, ctx);
  if (!kernel) return std::nullopt;
  auto stride = args[2].defined() ? int_pair_arg(args, 2, op, "stride", 1, ctx) : kernel;
  if (!stride) return std::nullopt;
  auto padding = int_pair_arg(args, 3, op, "padding", 0, ctx);
  if (!padding) return std::nullopt;

  std::vector<sym::Expr> shape = {canon(x.shape[0]), canon(x.shape[1])};
  const char* names[2] = {"height", "width"};
  int64_t k[2] = {kernel->first, kernel->second}, s[2] = {stride->first, stride->second},
          p[2] = {padding->first, padding->second};
  for (int a = 0; a < 2; ++a) {
    if (p[a] >= k[a]) {
      ctx.error(args.locs[3], op + ": padding " + std::to_string(p[a]) +
                                  " must be less than the kernel " + names[a] + " " +
                                  std::to_string(k[a]));
      return std::nullopt;
    }
    sym::Expr padded = canon(x.shape[2 + a] + sym::Expr(2) * sym::Expr(p[a]));
    sym::Expr room = canon(padded - sym::Expr(k[a]));
    if (!ctx.require(sym::le(sym::Expr(0), room), args.locs[0],
                     op + ": the padded input " + names[a] + " " + sym::to_string(padded) +
                         " must be at least the kernel " + names[a] + " " + std::to_string(k[a])))
      return std::nullopt;
    shape.push_back(canon(sym::floordiv(room, sym::Expr(s[a])) + sym::Expr(1)));
  }
  return tensor_of(x.dtype, std::move(shape));
}

std::vector<ParamSpec> window_params() {
  return {{"x", ParamKind::Tensor},
          {"kernel", ParamKind::IntOrShape},
          {"stride", ParamKind::IntOrShape, true}, // absent: the kernel
          {"padding", ParamKind::IntOrShape, true, default_int0}};
}

} // namespace

std::vector<OpDef> pool_ops() {
  std::vector<ParamSpec> avg = window_params();
  avg.push_back({"count_include_pad", ParamKind::Bool, true, default_false});
  return {OpDef{"max_pool2d", window_params(), pool2d}, OpDef{"avg_pool2d", avg, pool2d}};
}

} // namespace dsc::ir::ops
