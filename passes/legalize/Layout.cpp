// Data movement: permute, broadcast_to, concat, split, slice, take and pad, each one prim
// whose loops run over the result (for concat, over each input; for split, over each piece),
// so that the stores are contiguous. Elements are copied unchanged. reshape is not lowered:
// it stays a graph op, which the host turns into an alias of its operand.

#include <algorithm>

#include "passes/legalize/Families.h"
#include "passes/legalize/LoopBuilder.h"
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
PrimExpr element(PrimBuilder& pb, const Operand& x, const Indices& idx, DType out) {
  if (x.immediate() || x.dtype != out) return pb.read(x, idx, out);
  return pb.load(x, idx);
}

ir::Expr permute(PrimBuilder& pb, const ir::BoundArgs& args, const ir::Type& type) {
  Operand x = pb.input(args[0], "x");
  Operand out = pb.output(type, "out");
  std::vector<size_t> perm;
  for (const sym::Expr& p : args[1].as<ir::ShapeExpr>()->dims) {
    int64_t a = *as_const(p);
    perm.push_back(static_cast<size_t>(a < 0 ? a + static_cast<int64_t>(x.rank()) : a));
  }
  Stmt body = pb.loops(type.shape, [&](const Indices& i) {
    Indices src(x.rank());
    for (size_t d = 0; d < perm.size(); ++d)
      src[perm[d]] = i[d];
    return pb.write(out, i, element(pb, x, src, out.dtype));
  });
  return pb.finish(body, type);
}

ir::Expr broadcast_to(PrimBuilder& pb, const ir::BoundArgs& args, const ir::Type& type) {
  Operand x = pb.input(args[0], "x");
  Operand out = pb.output(type, "out");
  Stmt body = pb.loops(type.shape, [&](const Indices& i) {
    return pb.write(out, i, element(pb, x, pb.broadcast_indices(x, i), out.dtype));
  });
  return pb.finish(body, type);
}

ir::Expr concat(PrimBuilder& pb, const ir::BoundArgs& args, const ir::Type& type) {
  const ir::ListExpr* list = args[0].as<ir::ListExpr>();
  std::vector<Operand> xs;
  for (const ir::Expr& item : list->items)
    xs.push_back(pb.input(item, "x"));
  Operand out = pb.output(type, "out");
  size_t axis = axis_arg(args, 1, type.rank());
  std::vector<Stmt> nests;
  sym::Expr offset(0);
  for (size_t k = 0; k < xs.size(); ++k) {
    const ir::Type& t = args.types[0].fields[k];
    nests.push_back(pb.loops(t.shape, [&](const Indices& i) {
      Indices dst = i;
      dst[axis] = offset + i[axis];
      return pb.write(out, dst, element(pb, xs[k], i, out.dtype));
    }));
    offset = sym::simplify(offset + t.shape[axis]);
  }
  return pb.finish(ir::Seq::make(std::move(nests)), type);
}

ir::Expr split(PrimBuilder& pb, const ir::BoundArgs& args, const ir::Type& type) {
  Operand x = pb.input(args[0], "x");
  size_t axis = axis_arg(args, 2, x.rank());
  std::vector<Stmt> nests;
  sym::Expr offset(0);
  for (const ir::Type& piece : type.fields) {
    Operand out = pb.output(piece, "out");
    nests.push_back(pb.loops(piece.shape, [&](const Indices& i) {
      Indices src = i;
      src[axis] = offset + i[axis];
      return pb.write(out, i, element(pb, x, src, out.dtype));
    }));
    offset = sym::simplify(offset + piece.shape[axis]);
  }
  return pb.finish(ir::Seq::make(std::move(nests)), type);
}

ir::Expr slice(PrimBuilder& pb, const ir::BoundArgs& args, const ir::Type& type) {
  Operand x = pb.input(args[0], "x");
  Operand out = pb.output(type, "out");
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
  Stmt body = pb.loops(type.shape, [&](const Indices& i) {
    Indices src = i;
    src[axis] = start + i[axis] * step;
    return pb.write(out, i, element(pb, x, src, out.dtype));
  });
  return pb.finish(body, type);
}

ir::Expr take(PrimBuilder& pb, const ir::BoundArgs& args, const ir::Type& type) {
  Operand x = pb.input(args[0], "x");
  Operand indices = pb.input(args[1], "indices");
  Operand out = pb.output(type, "out");
  size_t axis = axis_arg(args, 2, x.rank());
  size_t n_idx = indices.immediate() ? 0 : indices.rank();
  sym::Expr dim = x.shape[axis];
  Stmt body = pb.loops(type.shape, [&](const Indices& i) {
    Indices at(i.begin() + static_cast<long>(axis), i.begin() + static_cast<long>(axis + n_idx));
    PrimExpr k;
    Stmt let_k = pb.let("k", pb.read(indices, at, DType::I64), &k);
    // Negative indices count from the end; out-of-range ones (an error in the interpreter)
    // are clamped so that the read stays inside x.
    PrimExpr wrapped =
        select(binary(BinaryOp::LT, k, zero(DType::I64)), binary(BinaryOp::Add, k, index(dim)), k);
    PrimExpr clamped = binary(BinaryOp::Min, binary(BinaryOp::Max, wrapped, zero(DType::I64)),
                              index(dim - sym::Expr(1)));
    PrimExpr j;
    Stmt let_j = pb.let("j", clamped, &j);
    std::vector<PrimExpr> src;
    for (size_t a = 0; a < axis; ++a)
      src.push_back(index(i[a]));
    src.push_back(j);
    for (size_t a = axis + 1; a < x.rank(); ++a)
      src.push_back(index(i[a - 1 + n_idx]));
    PrimExpr v = ir::Load::make(x.dtype, x.buffer, std::move(src));
    return ir::Seq::make({let_k, let_j, pb.write(out, i, v)});
  });
  return pb.finish(body, type);
}

ir::Expr pad(PrimBuilder& pb, const ir::BoundArgs& args, const ir::Type& type) {
  Operand x = pb.input(args[0], "x");
  Operand out = pb.output(type, "out");
  std::vector<sym::Expr> pads;
  for (const sym::Expr& p : args[1].as<ir::ShapeExpr>()->dims)
    pads.push_back(sym::simplify(p));
  // The fill as the interpreter stores it: as_float(value), then store_f.
  double fill = args[2].defined() ? literal_as_double(args[2].as<ir::Literal>()->value) : 0.0;
  PrimExpr fill_value = stored_constant(LiteralValue(fill), out.dtype);
  Stmt body = pb.loops(type.shape, [&](const Indices& i) {
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
    Stmt copy = pb.write(out, i, element(pb, x, src, out.dtype));
    if (!inside.defined()) return copy;
    return ir::IfStmt::make(inside, copy, pb.write(out, i, fill_value));
  });
  return pb.finish(body, type);
}

} // namespace

ir::Expr lower_layout(const ir::Call& call, const ir::BoundArgs& args, const ir::Type& type,
                      FnContext& ctx) {
  PrimBuilder pb(ctx, call.callee);
  switch (ir::find_op(call.callee)->id) {
  case ir::OpId::permute:
    return permute(pb, args, type);
  case ir::OpId::broadcast_to:
    return broadcast_to(pb, args, type);
  case ir::OpId::concat:
    return concat(pb, args, type);
  case ir::OpId::split:
    return split(pb, args, type);
  case ir::OpId::slice:
    return slice(pb, args, type);
  case ir::OpId::take:
    return take(pb, args, type);
  case ir::OpId::pad:
    return pad(pb, args, type);
  default:
    ctx.unsupported("'" + call.callee + "'");
    return ir::Expr();
  }
}

} // namespace dsc::passes::lowering
