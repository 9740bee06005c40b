// Creation ops, maps whose element is a function of its index alone: arange, full and zeros
// fill a result of symbolic shape; shape_of's element k is its operand's dim k (it takes the
// operand as an input only so that its symbols are bound; the element picks the dim with
// guarding selects).
// nonzero, mask_select and first_rows give results whose row count depends on the data: see
// lower_data_dependent in Families.h.

#include <algorithm>
#include <functional>

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

// The serial scan of a data-dependent op as a prim, called with `args`: `body` (given the name
// of its row counter, a local from 0) makes the loop nest that fills `all` (and `scratch`, more
// outputs it may use); the prim ends by storing the counter into `count`. Returns the call's
// (all, scratch..., count) tuple, bound.
ir::Expr scan_prim(const ir::Call& call, std::vector<ir::Buffer> inputs, ir::Buffer all,
                   const std::vector<ir::Expr>& args, NameSet& names,
                   const std::function<Stmt(const std::string& next)>& body, FnContext& ctx,
                   std::vector<ir::Buffer> scratch = {}) {
  const std::string count = names.fresh("count"), next = names.fresh("next");
  auto* prim = new ir::PrimFunc();
  prim->name = ctx.new_decl_name(call.callee);
  prim->inputs = std::move(inputs);
  prim->outputs = {all};
  prim->outputs.insert(prim->outputs.end(), scratch.begin(), scratch.end());
  prim->outputs.push_back(ir::Buffer{count, DType::I64, {}, ctx.loc()});
  prim->body = ir::Seq::make({ir::LocalDecl::make(next, DType::I64, true, int_imm(DType::I64, 0)),
                              body(next),
                              ir::Store::make(count, {}, ir::LocalRef::make(DType::I64, next))});
  prim->loc = ctx.loc();
  ctx.add_prim(Ref<ir::PrimFunc>(prim));
  std::vector<ir::Type> fields;
  for (const ir::Buffer& b : prim->outputs) fields.push_back(ir::Type::tensor(b.dtype, b.shape));
  ir::Type result = ir::Type::tuple(std::move(fields));
  return ctx.insert_binding(call.callee, ir::Call::make(prim->name, args, {}, result, ctx.loc()),
                            result);
}

// prim <fn>_nonzero_<n>(x: T[d0, ..]) -> (all: i64[d0*.., rank], count: i64[]): a serial scan
// that writes the index of each nonzero element of x, in row-major order, to the next row of
// `all`, and the number of rows written to `count`.
ir::Expr compact_nonzero(const ir::Call& call, const ir::Expr& x, FnContext& ctx) {
  const ir::Type& xt = x->type;
  NameSet names(ctx.symbols());
  const std::string in = names.fresh("x"), all = names.fresh("all");
  sym::Expr elements(1);
  for (const sym::Expr& d : xt.shape) elements = elements * d;
  const auto rank = static_cast<int64_t>(xt.rank());
  std::vector<std::string> vars;
  std::vector<PrimExpr> at;
  for (int64_t d = 0; d < rank; ++d) {
    vars.push_back(names.fresh("i" + std::to_string(d)));
    at.push_back(index(sym::sym(vars.back())));
  }
  auto body = [&](const std::string& next) {
    PrimExpr element = ir::Load::make(xt.dtype, in, at);
    PrimExpr hit = xt.dtype == DType::Bool ? element
                                           : binary(ir::BinaryOp::NE, element, zero(xt.dtype));
    PrimExpr row = ir::LocalRef::make(DType::I64, next);
    std::vector<Stmt> record;
    for (int64_t d = 0; d < rank; ++d)
      record.push_back(ir::Store::make(all, {row, index(sym::Expr(d))}, at[d]));
    record.push_back(
        ir::Assign::make(next, binary(ir::BinaryOp::Add, row, int_imm(DType::I64, 1))));
    Stmt loops = ir::IfStmt::make(hit, ir::Seq::make(std::move(record)), Stmt());
    for (int64_t d = rank; d-- > 0;)
      loops = ir::For::make(vars[d], sym::Expr(0), xt.shape[d], ir::ForKind::Serial, loops);
    return loops;
  };
  return scan_prim(call, {ir::Buffer{in, xt.dtype, xt.shape, ctx.loc()}},
                   ir::Buffer{all, DType::I64, {sym::simplify(elements), sym::Expr(rank)}, ctx.loc()},
                   {x}, names, body, ctx);
}

// prim <fn>_mask_select_<n>(x: T[m0.., r0..], mask: bool[m0..]) -> (all: T[m0*.., r0..],
// count: i64[]): a serial scan that copies the sub-tensor x[i..] of each true mask[i..], in
// row-major order, to the next row of `all`.
ir::Expr compact_mask_select(const ir::Call& call, FnContext& ctx) {
  const ir::Type& xt = call.args[0]->type;
  const ir::Type& mt = call.args[1]->type;
  NameSet names(ctx.symbols());
  const std::string x = names.fresh("x"), mask = names.fresh("mask"), all = names.fresh("all");
  sym::Expr hits(1);
  std::vector<std::string> vars;
  std::vector<PrimExpr> at;
  for (size_t d = 0; d < xt.rank(); ++d) {
    if (d < mt.rank()) hits = hits * xt.shape[d];
    vars.push_back(names.fresh("i" + std::to_string(d)));
    at.push_back(index(sym::sym(vars.back())));
  }
  std::vector<sym::Expr> all_shape = {sym::simplify(hits)};
  all_shape.insert(all_shape.end(), xt.shape.begin() + static_cast<long>(mt.rank()), xt.shape.end());
  const size_t lead = mt.rank();
  auto body = [&](const std::string& next) {
    PrimExpr row = ir::LocalRef::make(DType::I64, next);
    std::vector<PrimExpr> to = {row};
    to.insert(to.end(), at.begin() + static_cast<long>(lead), at.end());
    Stmt copy = ir::Store::make(all, to, ir::Load::make(xt.dtype, x, at));
    for (size_t d = xt.rank(); d-- > lead;)
      copy = ir::For::make(vars[d], sym::Expr(0), xt.shape[d], ir::ForKind::Serial, copy);
    Stmt hit = ir::IfStmt::make(
        ir::Load::make(DType::Bool, mask, std::vector<PrimExpr>(at.begin(), at.begin() + static_cast<long>(lead))),
        ir::Seq::make({copy, ir::Assign::make(next, binary(ir::BinaryOp::Add, row,
                                                          int_imm(DType::I64, 1)))}),
        Stmt());
    for (size_t d = lead; d-- > 0;)
      hit = ir::For::make(vars[d], sym::Expr(0), xt.shape[d], ir::ForKind::Serial, hit);
    return hit;
  };
  return scan_prim(call,
                   {ir::Buffer{x, xt.dtype, xt.shape, ctx.loc()},
                    ir::Buffer{mask, DType::Bool, mt.shape, ctx.loc()}},
                   ir::Buffer{all, xt.dtype, all_shape, ctx.loc()}, call.args, names, body, ctx);
}

// prim <fn>_unique_<n>(x: T[n]) -> (all: T[n], firsts: bool[n], count: i64[]): firsts[i]
// says whether x[i] is the first occurrence of its value; each first occurrence goes to the
// position that counts the distinct values below it, so `all` starts with the distinct values
// in ascending order (NaN last, all NaNs one value) and `count` is how many there are.
// O(n^2) comparisons, with no sort.
ir::Expr compact_unique(const ir::Call& call, const ir::Expr& flat, FnContext& ctx) {
  const ir::Type& xt = flat->type;
  const DType dt = xt.dtype;
  NameSet names(ctx.symbols());
  const std::string x = names.fresh("x"), all = names.fresh("all"), firsts = names.fresh("firsts"),
                    i = names.fresh("i"), j = names.fresh("j"), first = names.fresh("first"),
                    rank = names.fresh("rank");
  const sym::Expr& n = xt.shape[0];
  auto at = [&](const std::string& v) { return ir::Load::make(dt, x, {index(sym::sym(v))}); };
  auto is_nan = [&](const PrimExpr& v) { return binary(ir::BinaryOp::NE, v, v); };
  // less(a, b): a < b, a NaN after everything else; same(a, b): a == b, or both NaN.
  auto less = [&](const PrimExpr& a, const PrimExpr& b) {
    PrimExpr lt = binary(ir::BinaryOp::LT, a, b);
    if (!ir::is_float(dt)) return lt;
    PrimExpr a_is_number =
        ir::Intrinsic::make(DType::Bool, ir::IntrinsicId::logical_not, {is_nan(a)});
    return binary(ir::BinaryOp::Or, lt, binary(ir::BinaryOp::And, a_is_number, is_nan(b)));
  };
  auto same = [&](const PrimExpr& a, const PrimExpr& b) {
    PrimExpr eq = binary(ir::BinaryOp::EQ, a, b);
    if (!ir::is_float(dt)) return eq;
    return binary(ir::BinaryOp::Or, eq, binary(ir::BinaryOp::And, is_nan(a), is_nan(b)));
  };
  auto body = [&](const std::string& next) {
    PrimExpr first_ref = ir::LocalRef::make(DType::Bool, first);
    Stmt mark = ir::Seq::make(
        {ir::LocalDecl::make(first, DType::Bool, true, bool_imm(true)),
         ir::For::make(j, sym::Expr(0), sym::sym(i), ir::ForKind::Serial,
                       ir::IfStmt::make(same(at(j), at(i)), ir::Assign::make(first, bool_imm(false)),
                                        Stmt())),
         ir::Store::make(firsts, {index(sym::sym(i))}, first_ref)});
    PrimExpr rank_ref = ir::LocalRef::make(DType::I64, rank);
    PrimExpr one = int_imm(DType::I64, 1);
    Stmt count_below = ir::For::make(
        j, sym::Expr(0), n, ir::ForKind::Serial,
        ir::IfStmt::make(binary(ir::BinaryOp::And,
                                ir::Load::make(DType::Bool, firsts, {index(sym::sym(j))}),
                                less(at(j), at(i))),
                         ir::Assign::make(rank, binary(ir::BinaryOp::Add, rank_ref, one)), Stmt()));
    PrimExpr next_ref = ir::LocalRef::make(DType::I64, next);
    Stmt place = ir::IfStmt::make(
        ir::Load::make(DType::Bool, firsts, {index(sym::sym(i))}),
        ir::Seq::make({ir::LocalDecl::make(rank, DType::I64, true, int_imm(DType::I64, 0)),
                       count_below, ir::Store::make(all, {rank_ref}, at(i)),
                       ir::Assign::make(next, binary(ir::BinaryOp::Add, next_ref, one))}),
        Stmt());
    return ir::Seq::make({ir::For::make(i, sym::Expr(0), n, ir::ForKind::Serial, mark),
                          ir::For::make(i, sym::Expr(0), n, ir::ForKind::Serial, place)});
  };
  return scan_prim(call, {ir::Buffer{x, dt, xt.shape, ctx.loc()}},
                   ir::Buffer{all, dt, xt.shape, ctx.loc()}, {flat}, names, body, ctx,
                   {ir::Buffer{firsts, DType::Bool, xt.shape, ctx.loc()}});
}

} // namespace

std::optional<ir::Expr> lower_data_dependent(const ir::Expr& value, FnContext& ctx) {
  const ir::Call& call = *value.as<ir::Call>();
  const ir::OpId op = ir::find_op(call.callee)->id;
  if (op == ir::OpId::first_rows) return value;
  const bool vars = std::all_of(call.args.begin(), call.args.end(),
                                [](const ir::Expr& a) { return a.is<ir::Var>(); });
  const bool known = ((op == ir::OpId::nonzero || op == ir::OpId::unique) && call.args.size() == 1) ||
                     (op == ir::OpId::mask_select && call.args.size() == 2);
  if (!known || !vars) {
    ctx.unsupported("'" + call.callee + "' (its result's size depends on the data)");
    return std::nullopt;
  }
  ir::Expr scan;
  if (op == ir::OpId::nonzero) scan = compact_nonzero(call, call.args[0], ctx);
  if (op == ir::OpId::mask_select) scan = compact_mask_select(call, ctx);
  if (op == ir::OpId::unique) {
    // Over the elements in row-major order: a reshape to one dim (a view).
    const ir::Type& t = call.args[0]->type;
    sym::Expr n(1);
    for (const sym::Expr& d : t.shape) n = n * d;
    ir::Type flat_type = ir::Type::tensor(t.dtype, {sym::simplify(n)});
    ir::Expr flat = ctx.insert_binding(
        "flat", ir::Call::make(ir::op_name(ir::OpId::reshape),
                               {call.args[0], ir::ShapeExpr::make(flat_type.shape, call.loc)}, {},
                               flat_type, call.loc),
        flat_type);
    scan = compact_unique(call, flat, ctx);
  }
  const ir::Type& scanned = scan->type;
  const int last = static_cast<int>(scanned.fields.size()) - 1;
  ir::Expr rows = ir::GetItem::make(scan, 0, scanned.fields[0], call.loc);
  ir::Expr count = ir::GetItem::make(scan, last, scanned.fields[last], call.loc);
  return ir::Call::make(ir::op_name(ir::OpId::first_rows), {rows, count}, {}, call.type, call.loc);
}

} // namespace dsc::passes::lowering
