// conv2d, NCHW input and OIHW weights, as a direct loop nest: loops over the result
// [N, O, OH, OW] around an accumulator (f32 for f16/bf16), then loops over the group's input
// channels and the kernel window. A padded axis tests that the input row (column) is inside
// the image; an unpadded one never leaves it, by the output size's definition.

#include "passes/legalize/Families.h"
#include "passes/legalize/LoopBuilder.h"
#include "symbolic/Simplify.h"

namespace dsc::passes::lowering {

namespace {

// An int or an [h, w] pair of ints.
std::pair<int64_t, int64_t> pair_arg(const ir::BoundArgs& args, size_t i) {
  if (const ir::ShapeExpr* s = args[i].as<ir::ShapeExpr>()) {
    auto at = [&](size_t k) { return sym::simplify(s->dims.at(k)).as<sym::Const>()->value; };
    return {at(0), at(1)};
  }
  int64_t v = std::get<int64_t>(args[i].as<ir::Literal>()->value);
  return {v, v};
}

} // namespace

ir::Expr lower_conv(const ir::Call&, const ir::BoundArgs& args, const ir::Type& type,
                    FnContext& ctx) {
  PrimBuilder pb(ctx, "conv2d");
  Operand x = pb.input(args[0], "x"), w = pb.input(args[1], "w");
  Operand out = pb.output(type, "out");
  auto [sh, sw] = pair_arg(args, 2);
  auto [ph, pw] = pair_arg(args, 3);
  auto [dh, dw] = pair_arg(args, 4);
  int64_t groups = std::get<int64_t>(args[5].as<ir::Literal>()->value);
  DType d = type.dtype;
  DType acc_dtype = compute_dtype(d);
  const std::vector<sym::Expr>& xs = args.types[0].shape;
  const std::vector<sym::Expr>& ws = args.types[1].shape;
  sym::Expr H = xs[2], W = xs[3];
  sym::Expr O = ws[0], I = ws[1], KH = ws[2], KW = ws[3];

  Stmt body = pb.loops(type.shape, [&](const Indices& o) {
    const sym::Expr &n = o[0], &oc = o[1], &oh = o[2], &ow = o[3];
    std::string acc;
    Stmt decl = pb.var("acc", zero(acc_dtype), &acc);
    PrimExpr acc_ref = ir::LocalRef::make(acc_dtype, acc);
    // The first input channel of the output channel's group.
    sym::Expr group_base(0);
    if (groups > 1) group_base = sym::floordiv(oc, sym::floordiv(O, sym::Expr(groups))) * I;
    Stmt reduce = pb.loops(
        {I, KH, KW},
        [&](const Indices& r) {
          sym::Expr h = oh * sh - ph + r[1] * dh;
          sym::Expr wc = ow * sw - pw + r[2] * dw;
          Indices xi = {n, group_base + r[0], h, wc};
          Indices wi = {oc, r[0], r[1], r[2]};
          PrimExpr prod = binary(BinaryOp::Mul, pb.read(x, xi, d), pb.read(w, wi, d));
          Stmt update = ir::Assign::make(acc, binary(BinaryOp::Add, acc_ref, prod));
          PrimExpr inside;
          auto require = [&](PrimExpr c) {
            inside = inside.defined() ? binary(BinaryOp::And, inside, c) : c;
          };
          if (ph > 0) {
            require(binary(BinaryOp::LE, index(sym::Expr(0)), index(h)));
            require(binary(BinaryOp::LT, index(h), index(H)));
          }
          if (pw > 0) {
            require(binary(BinaryOp::LE, index(sym::Expr(0)), index(wc)));
            require(binary(BinaryOp::LT, index(wc), index(W)));
          }
          if (!inside.defined()) return update;
          return ir::IfStmt::make(inside, update, Stmt());
        },
        "r");
    return ir::Seq::make({decl, reduce, pb.write(out, o, acc_ref)});
  });
  return pb.finish(body, type);
}

} // namespace dsc::passes::lowering
