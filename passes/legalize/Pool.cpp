// max_pool2d and avg_pool2d, NCHW, as reductions: over the result [N, C, OH, OW], the max (or
// the sum) over the kernel window [KH, KW] of the input at (oh*sh - ph + kh, ow*sw - pw + kw).
// On a padded axis the reduction's condition keeps the window inside the image, so padding is
// never read: max ignores it (as if it held -inf), as conv2d's padding adds nothing.
//
// avg_pool2d's finish divides by the window's size, or, without count_include_pad, by the
// number of input elements it covers: per padded axis min(start + k, H) - max(start, 0) with
// start = o*s - p, which is >= 1 because the shape rule requires padding < kernel. An unpadded
// axis never leaves the image (the output size's definition), so its count is k.
//
// Accumulators are those of the reductions (passes/legalize/Reduce.cpp): max starts at -inf
// (or the least integer) and uses the prim's NaN-propagating max; avg sums in f32 (f64 for
// f64).

#include "passes/legalize/DescBuilder.h"
#include "passes/legalize/Families.h"

namespace dsc::passes::lowering {

std::optional<ComputeDesc> describe_pool(const ir::Call& call, const ir::BoundArgs& args,
                                         const ir::Type& type, FnContext& ctx) {
  const bool average = ir::find_op(call.callee)->id == ir::OpId::avg_pool2d;
  DescBuilder db(ctx, call.callee);
  Operand x = db.input(args[0], "x");
  db.output(type, "out");
  auto [kh, kw] = int_pair_arg(args, 1);
  auto [sh, sw] = args[2].defined() ? int_pair_arg(args, 2) : std::make_pair(kh, kw);
  auto [ph, pw] = int_pair_arg(args, 3);
  bool include_pad = average && std::get<bool>(args[4].as<ir::Literal>()->value);
  DType d = type.dtype;
  DType acc_dtype = compute_dtype(d);
  const std::vector<sym::Expr>& xs = args.types[0].shape;

  Reduction r;
  if (average)
    r.identity = zero(acc_dtype);
  else
    r.identity = ir::is_float(acc_dtype) ? neg_infinity(acc_dtype) : int_lowest(acc_dtype);
  r.combiner = average ? BinaryOp::Add : BinaryOp::Max;
  r.space = db.space(type.shape);
  r.accumulator = db.local_name("acc");
  r.reduced = db.space({sym::Expr(kh), sym::Expr(kw)}, "r");
  const Indices& o = r.space.vars;
  const Indices& k = r.reduced.vars;

  // Per spatial axis: the window's first input index, the index read, and the number of input
  // elements the window covers.
  const int64_t kernel[2] = {kh, kw}, stride[2] = {sh, sw}, pad[2] = {ph, pw};
  Indices xi = {o[0], o[1]};
  int64_t whole = 1;              // the factors of the count that are a whole kernel side
  std::vector<sym::Expr> clipped; // those clipped by the padding
  for (int a = 0; a < 2; ++a) {
    sym::Expr start = o[2 + a] * sym::Expr(stride[a]) - sym::Expr(pad[a]);
    sym::Expr at = start + k[a];
    xi.push_back(at);
    if (pad[a] == 0) {
      whole *= kernel[a];
      continue;
    }
    PrimExpr inside = binary(BinaryOp::And, binary(BinaryOp::LE, index(sym::Expr(0)), index(at)),
                             binary(BinaryOp::LT, index(at), index(xs[2 + a])));
    r.condition = r.condition.defined() ? binary(BinaryOp::And, r.condition, inside) : inside;
    if (include_pad)
      whole *= kernel[a];
    else
      clipped.push_back(sym::min(start + sym::Expr(kernel[a]), xs[2 + a]) -
                        sym::max(start, sym::Expr(0)));
  }
  r.body.value = db.read(x, xi, d);
  if (average) {
    PrimExpr acc = ir::LocalRef::make(acc_dtype, r.accumulator);
    // A product of index expressions, not one expression: the canonical form would expand
    // (a - b)*(c - d) into four products.
    PrimExpr n = clipped.empty() || whole != 1 ? index(sym::Expr(whole)) : PrimExpr();
    for (const sym::Expr& e : clipped)
      n = n.defined() ? binary(BinaryOp::Mul, n, index(e)) : index(e);
    // At most kh*kw: converting it directly is exact.
    r.finish = binary(BinaryOp::Div, acc,
                      n.is<ir::Index>() ? convert(n, acc_dtype) : ir::Cast::make(acc_dtype, n));
  }
  return db.reduce(std::move(r), type);
}

} // namespace dsc::passes::lowering
