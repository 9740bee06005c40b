// Creation ops, maps whose element is a function of its index alone: arange, full and zeros
// fill a result of symbolic shape; shape_of's element k is its operand's dim k (it takes the
// operand as an input only so that its symbols are bound; the element picks the dim with
// guarding selects).
// nonzero and first_rows give results whose row count depends on the data: see
// lower_data_dependent in Families.h.

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

namespace {

// prim <fn>_nonzero_<n>(x: T[d0, ..]) -> (all: i64[d0*.., rank], count: i64[]): a serial scan
// that writes the index of each nonzero element of x, in row-major order, to the next row of
// `all`, and the number of rows written to `count`.
ir::Expr compact_nonzero(const ir::Call& call, const ir::Expr& x, FnContext& ctx) {
  const ir::Type& xt = x->type;
  NameSet names(ctx.symbols());
  const std::string in = names.fresh("x"), all = names.fresh("all"), count = names.fresh("count"),
                    next = names.fresh("next");
  sym::Expr elements(1);
  for (const sym::Expr& d : xt.shape) elements = elements * d;
  const auto rank = static_cast<int64_t>(xt.rank());
  std::vector<ir::Buffer> outputs = {
      ir::Buffer{all, DType::I64, {sym::simplify(elements), sym::Expr(rank)}, ctx.loc()},
      ir::Buffer{count, DType::I64, {}, ctx.loc()}};
  std::vector<std::string> vars;
  std::vector<PrimExpr> at;
  for (int64_t d = 0; d < rank; ++d) {
    vars.push_back(names.fresh("i" + std::to_string(d)));
    at.push_back(index(sym::sym(vars.back())));
  }
  PrimExpr element = ir::Load::make(xt.dtype, in, at);
  PrimExpr hit = xt.dtype == DType::Bool ? element
                                         : binary(ir::BinaryOp::NE, element, zero(xt.dtype));
  PrimExpr row = ir::LocalRef::make(DType::I64, next);
  std::vector<Stmt> record;
  for (int64_t d = 0; d < rank; ++d)
    record.push_back(ir::Store::make(all, {row, index(sym::Expr(d))}, at[d]));
  record.push_back(ir::Assign::make(next, binary(ir::BinaryOp::Add, row, int_imm(DType::I64, 1))));
  Stmt body = ir::IfStmt::make(hit, ir::Seq::make(std::move(record)), Stmt());
  for (int64_t d = rank; d-- > 0;)
    body = ir::For::make(vars[d], sym::Expr(0), xt.shape[d], ir::ForKind::Serial, body);
  auto* prim = new ir::PrimFunc();
  prim->name = ctx.new_decl_name(call.callee);
  prim->inputs = {ir::Buffer{in, xt.dtype, xt.shape, ctx.loc()}};
  prim->outputs = outputs;
  prim->body = ir::Seq::make({ir::LocalDecl::make(next, DType::I64, true, int_imm(DType::I64, 0)),
                              body, ir::Store::make(count, {}, row)});
  prim->loc = ctx.loc();
  ctx.add_prim(Ref<ir::PrimFunc>(prim));
  ir::Type result = ir::Type::tuple({ir::Type::tensor(DType::I64, outputs[0].shape),
                                     ir::Type::tensor(DType::I64, {})});
  return ctx.insert_binding(call.callee, ir::Call::make(prim->name, {x}, {}, result, ctx.loc()),
                            result);
}

} // namespace

std::optional<ir::Expr> lower_data_dependent(const ir::Expr& value, FnContext& ctx) {
  const ir::Call& call = *value.as<ir::Call>();
  const ir::OpId op = ir::find_op(call.callee)->id;
  if (op == ir::OpId::first_rows) return value;
  if (op != ir::OpId::nonzero || call.args.size() != 1 || !call.args[0].is<ir::Var>()) {
    ctx.unsupported("'" + call.callee + "' (its result's size depends on the data)");
    return std::nullopt;
  }
  ir::Expr scan = compact_nonzero(call, call.args[0], ctx);
  const ir::Type& scanned = scan->type;
  ir::Expr rows = ir::GetItem::make(scan, 0, scanned.fields[0], call.loc);
  ir::Expr count = ir::GetItem::make(scan, 1, scanned.fields[1], call.loc);
  return ir::Call::make(ir::op_name(ir::OpId::first_rows), {rows, count}, {}, call.type, call.loc);
}

} // namespace dsc::passes::lowering
