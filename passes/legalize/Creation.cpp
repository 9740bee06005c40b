// Creation ops, maps whose element is a function of its index alone: arange, full and zeros
// fill a result of symbolic shape; shape_of's element k is its operand's dim k (it takes the
// operand as an input only so that its symbols are bound; the element picks the dim with
// guarding selects).
// nonzero binds a data-dependent symbol, which the CPU backend does not support yet.

#include "passes/legalize/DescBuilder.h"
#include "passes/legalize/Families.h"
#include "symbolic/Simplify.h"

namespace dsc::passes::lowering {

namespace {

ComputeDesc fill(DescBuilder& db, const ir::Type& type, const PrimExpr& value) {
  db.output(type, "out");
  MapOutput m;
  m.space = db.space(type.shape);
  m.element.value = value;
  return db.map({std::move(m)}, type);
}

} // namespace

std::optional<ComputeDesc> describe_creation(const ir::Call& call, const ir::BoundArgs& args,
                                             const ir::Type& type, FnContext& ctx) {
  const ir::OpId op = ir::find_op(call.callee)->id;
  DescBuilder db(ctx, call.callee);
  if (op == ir::OpId::arange) {
    sym::Expr start = dim_arg(args, 0), step = dim_arg(args, 2);
    if (!args[1].defined()) start = sym::Expr(0); // arange(n) counts from 0
    db.output(type, "out");
    MapOutput m;
    m.space = db.space(type.shape);
    m.element.value = convert(index(start + m.space.vars[0] * step), type.dtype);
    return db.map({std::move(m)}, type);
  }
  if (op == ir::OpId::full)
    return fill(db, type, stored_constant(args[1].as<ir::Literal>()->value, type.dtype));
  if (op == ir::OpId::zeros) return fill(db, type, zero(compute_dtype(type.dtype)));
  if (op == ir::OpId::shape_of) {
    Operand x = db.input(args[0], "x");
    db.output(type, "out");
    MapOutput m;
    m.space = db.space(type.shape);
    const sym::Expr& k = m.space.vars[0];
    // select(k < 1, dim 0, select(k < 2, dim 1, ...)), which materializes as one store each.
    PrimExpr value = zero(DType::I64);
    for (size_t d = x.rank(); d-- > 0;) {
      PrimExpr dim = index(x.shape[d]);
      if (d + 1 == x.rank()) {
        value = dim;
        continue;
      }
      sym::Expr next(static_cast<int64_t>(d + 1));
      value = select(binary(BinaryOp::LT, index(k), index(next)), dim, value);
    }
    m.element.value = value;
    return db.map({std::move(m)}, type);
  }
  ctx.unsupported("'" + call.callee + "' (its result's size depends on the data)");
  return std::nullopt;
}

} // namespace dsc::passes::lowering
