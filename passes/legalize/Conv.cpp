// conv2d, NCHW input and OIHW weights, as a reduction: over the result [N, O, OH, OW], the sum
// (in f32 for f16/bf16) over the group's input channels and the kernel window of input times
// weight. On a padded axis the reduction's condition requires the input row (column) to be
// inside the image; an unpadded one never leaves it, by the output size's definition.
// An f32 convolution is a library call of the target's convolution instead (dsc.conv2d, GEMMs
// over unrolled windows, on the CPU; cudnn.conv2d on CUDA), with stride, padding, dilation and
// groups as the routine's attributes.

#include "passes/legalize/DescBuilder.h"
#include "passes/legalize/Families.h"
#include "symbolic/Simplify.h"

namespace dsc::passes::lowering {

namespace {

std::optional<ComputeDesc> library(const ir::BoundArgs& args, const ir::Type& type,
                                   FnContext& ctx) {
  const ir::LibraryRoutine* routine =
      ctx.pass().target.preferred_routine(ir::RoutineRole::Conv2d);
  if (!routine || type.dtype != DType::F32 || args.types[0].weak ||
      args.types[1].weak || !args[0].is<ir::Var>() || !args[1].is<ir::Var>())
    return std::nullopt;
  auto [sh, sw] = int_pair_arg(args, 2);
  auto [ph, pw] = int_pair_arg(args, 3);
  auto [dh, dw] = int_pair_arg(args, 4);
  const int64_t groups = std::get<int64_t>(args[5].as<ir::Literal>()->value);
  ComputeDesc desc(NameSet(ctx.symbols()));
  desc.kind = ComputeDesc::Kind::Library;
  desc.op = ir::op_name(ir::OpId::conv2d);
  desc.type = type;
  desc.library = LibraryCall{routine, {args[0], args[1]}, nullptr, {}, std::nullopt, {}};
  desc.library.attributes = {
      {"stride", {sh, sw}}, {"padding", {ph, pw}}, {"dilation", {dh, dw}}, {"groups", {groups}}};
  return desc;
}

} // namespace

std::optional<ComputeDesc> describe_conv(const ir::Call&, const ir::BoundArgs& args,
                                         const ir::Type& type, FnContext& ctx) {
  if (std::optional<ComputeDesc> call = library(args, type, ctx)) return call;
  DescBuilder db(ctx, ir::op_name(ir::OpId::conv2d));
  Operand x = db.input(args[0], "x"), w = db.input(args[1], "w");
  db.output(type, "out");
  auto [sh, sw] = int_pair_arg(args, 2);
  auto [ph, pw] = int_pair_arg(args, 3);
  auto [dh, dw] = int_pair_arg(args, 4);
  int64_t groups = std::get<int64_t>(args[5].as<ir::Literal>()->value);
  DType d = type.dtype;
  const std::vector<sym::Expr>& xs = args.types[0].shape;
  const std::vector<sym::Expr>& ws = args.types[1].shape;
  sym::Expr H = xs[2], W = xs[3];
  sym::Expr O = ws[0], I = ws[1], KH = ws[2], KW = ws[3];

  Reduction r;
  r.identity = zero(compute_dtype(d));
  r.space = db.space(type.shape);
  r.accumulator = db.local_name("acc");
  r.reduced = db.space({I, KH, KW}, "r");
  const Indices& o = r.space.vars;
  const Indices& k = r.reduced.vars;
  const sym::Expr &n = o[0], &oc = o[1], &oh = o[2], &ow = o[3];
  // The first input channel of the output channel's group.
  sym::Expr group_base(0);
  if (groups > 1) group_base = sym::floordiv(oc, sym::floordiv(O, sym::Expr(groups))) * I;
  sym::Expr h = oh * sh - ph + k[1] * dh;
  sym::Expr wc = ow * sw - pw + k[2] * dw;
  Indices xi = {n, group_base + k[0], h, wc};
  Indices wi = {oc, k[0], k[1], k[2]};
  r.body.value = binary(BinaryOp::Mul, db.read(x, xi, d), db.read(w, wi, d));
  auto require = [&](PrimExpr c) {
    r.condition = r.condition.defined() ? binary(BinaryOp::And, r.condition, c) : c;
  };
  if (ph > 0) {
    require(binary(BinaryOp::LE, index(sym::Expr(0)), index(h)));
    require(binary(BinaryOp::LT, index(h), index(H)));
  }
  if (pw > 0) {
    require(binary(BinaryOp::LE, index(sym::Expr(0)), index(wc)));
    require(binary(BinaryOp::LT, index(wc), index(W)));
  }
  return db.reduce(std::move(r), type);
}

} // namespace dsc::passes::lowering
