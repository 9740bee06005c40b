// Data movement: permute, broadcast_to, concat, split, slice, take, pad and update_slice, each a
// map over its result (split: one per piece) whose element is one element of an input, read at
// an index map of the result's indices (permuted, held at 0, affine), so that the stores are
// contiguous. Elements are copied unchanged. concat selects its input by the index along the
// axis, pad its fill outside the input and update_slice its update inside the slice, with
// guarding selects (ComputeDesc.h). take reads at an index loaded from its indices. reshape is
// a view: it stays a graph op, which the host turns into an alias of its operand. An
// update_slice written in place (passes/legalize/InPlaceUpdates.h) is never described: it
// stays a graph op too, which the host turns into a copy into its operand's buffer.

#include <algorithm>

#include "passes/legalize/DescBuilder.h"
#include "passes/legalize/Families.h"
#include "symbolic/Simplify.h"

namespace dsc::passes::lowering {

namespace {

size_t axis_arg(const ir::BoundArgs& args, size_t i, size_t rank) {
  int64_t a = std::get<int64_t>(args[i].as<ir::Literal>()->value);
  return static_cast<size_t>(a < 0 ? a + static_cast<int64_t>(rank) : a);
}

std::optional<int64_t> as_const(const sym::Expr& e) {
  sym::Expr c = sym::simplify(e);
  if (const sym::Const* k = c.as<sym::Const>()) return k->value;
  return std::nullopt;
}

// x's element at `idx`, as the result's dtype (a weak literal item of concat converts).
PrimExpr element(DescBuilder& db, const Operand& x, const Indices& idx, DType out) {
  if (x.immediate() || x.dtype != out) return db.read(x, idx, out);
  return db.load(x, idx);
}

ComputeDesc permute(DescBuilder& db, const ir::BoundArgs& args, const ir::Type& type) {
  Operand x = db.input(args[0], "x");
  Operand out = db.output(type, "out");
  std::vector<size_t> perm;
  for (const sym::Expr& p : args[1].as<ir::ShapeExpr>()->dims) {
    int64_t a = *as_const(p);
    perm.push_back(static_cast<size_t>(a < 0 ? a + static_cast<int64_t>(x.rank()) : a));
  }
  MapOutput m;
  m.space = db.space(type.shape);
  Indices src(x.rank());
  for (size_t d = 0; d < perm.size(); ++d)
    src[perm[d]] = m.space.vars[d];
  m.element.value = element(db, x, src, out.dtype);
  return db.map({std::move(m)}, type);
}

ComputeDesc broadcast_to(DescBuilder& db, const ir::BoundArgs& args, const ir::Type& type) {
  Operand x = db.input(args[0], "x");
  Operand out = db.output(type, "out");
  MapOutput m;
  m.space = db.space(type.shape);
  m.element.value = element(db, x, db.broadcast_indices(x, m.space.vars), out.dtype);
  return db.map({std::move(m)}, type);
}

ComputeDesc concat(DescBuilder& db, const ir::BoundArgs& args, const ir::Type& type) {
  const ir::ListExpr* list = args[0].as<ir::ListExpr>();
  std::vector<Operand> xs;
  for (const ir::Expr& item : list->items)
    xs.push_back(db.input(item, "x"));
  Operand out = db.output(type, "out");
  size_t axis = axis_arg(args, 1, type.rank());
  MapOutput m;
  m.space = db.space(type.shape);
  const Indices& i = m.space.vars;
  // Each input's element at its offset along the axis; the last one's where no other's is.
  std::vector<sym::Expr> offsets{sym::Expr(0)};
  for (size_t k = 0; k < xs.size(); ++k)
    offsets.push_back(sym::simplify(offsets.back() + args.types[0].fields[k].shape[axis]));
  auto piece = [&](size_t k) {
    Indices src = i;
    src[axis] = sym::simplify(i[axis] - offsets[k]);
    return element(db, xs[k], src, out.dtype);
  };
  PrimExpr value = piece(xs.size() - 1);
  for (size_t k = xs.size() - 1; k-- > 0;)
    value = select(binary(BinaryOp::LT, index(i[axis]), index(offsets[k + 1])), piece(k), value);
  m.element.value = value;
  return db.map({std::move(m)}, type);
}

ComputeDesc split(DescBuilder& db, const ir::BoundArgs& args, const ir::Type& type) {
  Operand x = db.input(args[0], "x");
  size_t axis = axis_arg(args, 2, x.rank());
  std::vector<MapOutput> maps;
  sym::Expr offset(0);
  for (const ir::Type& piece : type.fields) {
    Operand out = db.output(piece, "out");
    MapOutput m;
    m.space = db.space(piece.shape);
    Indices src = m.space.vars;
    src[axis] = offset + src[axis];
    m.element.value = element(db, x, src, out.dtype);
    maps.push_back(std::move(m));
    offset = sym::simplify(offset + piece.shape[axis]);
  }
  return db.map(std::move(maps), type);
}

ComputeDesc slice(DescBuilder& db, const ir::BoundArgs& args, const ir::Type& type) {
  Operand x = db.input(args[0], "x");
  Operand out = db.output(type, "out");
  size_t axis = axis_arg(args, 1, x.rank());
  // The start as the shape rule reads it: negative constants count from the end, and with
  // everything constant the bounds are clamped as in Python.
  sym::Expr d = sym::simplify(x.shape[axis]);
  sym::Expr start = dim_arg(args, 2), step = dim_arg(args, 4);
  sym::Expr end = args[3].defined() ? dim_arg(args, 3) : d;
  if (std::optional<int64_t> c = as_const(start); c && *c < 0) start = sym::simplify(d + start);
  if (std::optional<int64_t> c = as_const(end); c && *c < 0) end = sym::simplify(d + end);
  std::optional<int64_t> cd = as_const(d), cs = as_const(start), ce = as_const(end);
  if (cd && cs && ce && as_const(step)) start = sym::Expr(std::clamp<int64_t>(*cs, 0, *cd));
  MapOutput m;
  m.space = db.space(type.shape);
  Indices src = m.space.vars;
  src[axis] = start + src[axis] * step;
  m.element.value = element(db, x, src, out.dtype);
  return db.map({std::move(m)}, type);
}

ComputeDesc take(DescBuilder& db, const ir::BoundArgs& args, const ir::Type& type) {
  Operand x = db.input(args[0], "x");
  Operand indices = db.input(args[1], "indices");
  db.output(type, "out");
  size_t axis = axis_arg(args, 2, x.rank());
  size_t n_idx = indices.immediate() ? 0 : indices.rank();
  sym::Expr dim = x.shape[axis];
  MapOutput m;
  m.space = db.space(type.shape);
  const Indices& i = m.space.vars;
  Indices at(i.begin() + static_cast<long>(axis), i.begin() + static_cast<long>(axis + n_idx));
  PrimExpr k = db.let(m.element, "k", db.read(indices, at, DType::I64));
  // Negative indices count from the end; out-of-range ones (an error in the interpreter)
  // are clamped so that the read stays inside x.
  PrimExpr wrapped =
      select(binary(BinaryOp::LT, k, zero(DType::I64)), binary(BinaryOp::Add, k, index(dim)), k);
  PrimExpr clamped = binary(BinaryOp::Min, binary(BinaryOp::Max, wrapped, zero(DType::I64)),
                            index(dim - sym::Expr(1)));
  PrimExpr j = db.let(m.element, "j", clamped);
  std::vector<PrimExpr> src;
  for (size_t a = 0; a < axis; ++a)
    src.push_back(index(i[a]));
  src.push_back(j);
  for (size_t a = axis + 1; a < x.rank(); ++a)
    src.push_back(index(i[a - 1 + n_idx]));
  m.element.value = ir::Load::make(x.dtype, x.buffer, std::move(src));
  return db.map({std::move(m)}, type);
}

ComputeDesc pad(DescBuilder& db, const ir::BoundArgs& args, const ir::Type& type) {
  Operand x = db.input(args[0], "x");
  Operand out = db.output(type, "out");
  std::vector<sym::Expr> pads;
  for (const sym::Expr& p : args[1].as<ir::ShapeExpr>()->dims)
    pads.push_back(sym::simplify(p));
  // The fill as the interpreter stores it: as_float(value), then store_f.
  double fill = args[2].defined() ? literal_as_double(args[2].as<ir::Literal>()->value) : 0.0;
  PrimExpr fill_value = stored_constant(LiteralValue(fill), out.dtype);
  MapOutput m;
  m.space = db.space(type.shape);
  const Indices& i = m.space.vars;
  Indices src;
  PrimExpr inside;
  for (size_t d = 0; d < x.rank(); ++d) {
    const sym::Expr& before = pads[2 * d];
    const sym::Expr& after = pads[2 * d + 1];
    src.push_back(i[d] - before);
    if (as_const(before) == 0 && as_const(after) == 0) continue;
    PrimExpr cond = binary(BinaryOp::And, binary(BinaryOp::LE, index(before), index(i[d])),
                           binary(BinaryOp::LT, index(i[d]), index(before + x.shape[d])));
    inside = inside.defined() ? binary(BinaryOp::And, inside, cond) : cond;
  }
  PrimExpr copy = element(db, x, src, out.dtype);
  m.element.value = inside.defined() ? select(inside, copy, fill_value) : copy;
  return db.map({std::move(m)}, type);
}

// The copy form of update_slice: every element of dst, the update's inside the slice.
ComputeDesc update_slice(DescBuilder& db, const ir::BoundArgs& args, const ir::Type& type) {
  Operand dst = db.input(args[0], "dst");
  Operand src = db.input(args[1], "src");
  Operand out = db.output(type, "out");
  size_t axis = axis_arg(args, 2, dst.rank());
  sym::Expr start = sym::simplify(dim_arg(args, 3));
  MapOutput m;
  m.space = db.space(type.shape);
  const Indices& i = m.space.vars;
  Indices from_src = i;
  from_src[axis] = i[axis] - start;
  PrimExpr inside =
      binary(BinaryOp::And, binary(BinaryOp::LE, index(start), index(i[axis])),
             binary(BinaryOp::LT, index(i[axis]), index(start + src.shape[axis])));
  m.element.value = select(inside, element(db, src, from_src, out.dtype),
                           element(db, dst, i, out.dtype));
  return db.map({std::move(m)}, type);
}

} // namespace

std::optional<ComputeDesc> describe_layout(const ir::Call& call, const ir::BoundArgs& args,
                                           const ir::Type& type, FnContext& ctx) {
  DescBuilder db(ctx, call.callee);
  const ir::OpDef* op = ir::find_op(call.callee);
  if (op->is_view()) {
    // lower_host makes the result an alias of the operand's buffer.
    ComputeDesc view(NameSet(ctx.symbols()));
    view.kind = ComputeDesc::Kind::View;
    view.op = call.callee;
    view.type = type;
    view.call = ir::Call::make(call.callee, call.args, call.kwargs, type, call.loc);
    return view;
  }
  switch (op->id) {
  case ir::OpId::permute:
    return permute(db, args, type);
  case ir::OpId::broadcast_to:
    return broadcast_to(db, args, type);
  case ir::OpId::concat:
    return concat(db, args, type);
  case ir::OpId::split:
    return split(db, args, type);
  case ir::OpId::slice:
    return slice(db, args, type);
  case ir::OpId::take:
    return take(db, args, type);
  case ir::OpId::pad:
    return pad(db, args, type);
  case ir::OpId::update_slice:
    return update_slice(db, args, type);
  default:
    ctx.unsupported("'" + call.callee + "'");
    return std::nullopt;
  }
}

} // namespace dsc::passes::lowering
