// Creation ops: arange, full and zeros fill a result of symbolic shape; shape_of stores the
// dims of its operand (which it takes as an input only so that their symbols are bound).
// nonzero binds a data-dependent symbol, which the CPU backend does not support yet.

#include "passes/legalize/Families.h"
#include "passes/legalize/LoopBuilder.h"
#include "symbolic/Simplify.h"

namespace dsc::passes::lowering {

namespace {

ir::Expr fill(PrimBuilder& pb, const ir::Type& type, const PrimExpr& value) {
  Operand out = pb.output(type, "out");
  Stmt body = pb.loops(type.shape, [&](const Indices& i) { return pb.write(out, i, value); });
  return pb.finish(body, type);
}

} // namespace

ir::Expr lower_creation(const ir::Call& call, const ir::BoundArgs& args, const ir::Type& type,
                        FnContext& ctx) {
  const ir::OpId op = ir::find_op(call.callee)->id;
  PrimBuilder pb(ctx, call.callee);
  if (op == ir::OpId::arange) {
    sym::Expr start = dim_arg(args, 0), step = dim_arg(args, 2);
    if (!args[1].defined()) start = sym::Expr(0); // arange(n) counts from 0
    Operand out = pb.output(type, "out");
    Stmt body = pb.loops(type.shape, [&](const Indices& i) {
      return pb.write(out, i, convert(index(start + i[0] * step), type.dtype));
    });
    return pb.finish(body, type);
  }
  if (op == ir::OpId::full)
    return fill(pb, type, stored_constant(args[1].as<ir::Literal>()->value, type.dtype));
  if (op == ir::OpId::zeros) return fill(pb, type, zero(compute_dtype(type.dtype)));
  if (op == ir::OpId::shape_of) {
    Operand x = pb.input(args[0], "x");
    Operand out = pb.output(type, "out");
    std::vector<Stmt> stores;
    for (size_t k = 0; k < x.rank(); ++k)
      stores.push_back(pb.write(out, {sym::Expr(static_cast<int64_t>(k))}, index(x.shape[k])));
    return pb.finish(ir::Seq::make(std::move(stores)), type);
  }
  ctx.unsupported("'" + call.callee + "' (its result's size depends on the data)");
  return ir::Expr();
}

} // namespace dsc::passes::lowering
