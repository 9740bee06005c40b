// Elementwise ops: a map over the result, each operand read through NumPy broadcasting (a dim
// proved 1 reads index 0). Operands are rounded to their shared dtype and
// computed in its compute dtype (f32 for f16/bf16); the result is rounded once on store.
// Semantics follow the reference interpreter. Where the prim level already has them, the
// scalar op is used as it is: integer `/` is floor division with x / 0 == 0 and x / -1 == -x
// (wrapping), integer pow wraps and gives 0 for negative exponents but for bases 1 and -1,
// integer abs and neg wrap. Float maximum/minimum are written out so that they also pick the
// interpreter's zero: NaN if either is NaN, else (a < b ? b : a) and (b < a ? b : a).

#include "ir/Intrinsics.h"
#include "passes/legalize/DescBuilder.h"
#include "passes/legalize/Families.h"

namespace dsc::passes::lowering {

BinaryOp binary_op(ir::OpId op) {
  using ir::OpId;
  switch (op) {
  case OpId::add:
    return BinaryOp::Add;
  case OpId::sub:
    return BinaryOp::Sub;
  case OpId::mul:
    return BinaryOp::Mul;
  case OpId::div:
    return BinaryOp::Div;
  case OpId::eq:
    return BinaryOp::EQ;
  case OpId::ne:
    return BinaryOp::NE;
  case OpId::lt:
    return BinaryOp::LT;
  case OpId::le:
    return BinaryOp::LE;
  case OpId::gt:
    return BinaryOp::GT;
  case OpId::ge:
    return BinaryOp::GE;
  case OpId::logical_and:
    return BinaryOp::And;
  case OpId::logical_or:
    return BinaryOp::Or;
  default:
    internal_error << "'" << ir::op_name(op) << "' is not a binary operator";
  }
}

namespace {

bool is_comparison_op(ir::OpId op) {
  using ir::OpId;
  return op == OpId::eq || op == OpId::ne || op == OpId::lt || op == OpId::le || op == OpId::gt ||
         op == OpId::ge;
}

PrimExpr binary_element(DescBuilder& db, Element& e, ir::OpId op, PrimExpr a, PrimExpr b) {
  DType d = a->dtype;
  const bool is_max = op == ir::OpId::maximum;
  if (is_max || op == ir::OpId::minimum) {
    if (!ir::is_float(d)) return binary(is_max ? BinaryOp::Max : BinaryOp::Min, a, b);
    // NaN-propagating; otherwise std::max(a, b) == (a < b ? b : a) and std::min(a, b) ==
    // (b < a ? b : a), which also fixes which zero wins.
    PrimExpr ar = db.let(e, "a_value", a);
    PrimExpr br = db.let(e, "b_value", b);
    PrimExpr pick_b = is_max ? binary(BinaryOp::LT, ar, br) : binary(BinaryOp::LT, br, ar);
    return select(is_nan(br), br, select(pick_b, br, ar));
  }
  if (op == ir::OpId::pow) return intrinsic(ir::IntrinsicId::pow, {a, b});
  return binary(binary_op(op), a, b);
}

} // namespace

std::optional<ComputeDesc> describe_elementwise(const ir::Call& call, const ir::BoundArgs& args,
                                                const ir::Type& type, FnContext& ctx) {
  const std::string& name = call.callee;
  const ir::OpId op = ir::find_op(name)->id;
  DescBuilder db(ctx, name);
  MapOutput m;
  if (op == ir::OpId::where) {
    Operand c = db.input(args[0], "cond"), a = db.input(args[1], "a"), b = db.input(args[2], "b");
    DType d = shared_dtype({args.types[1], args.types[2]});
    db.output(type, "out");
    m.space = db.space(type.shape);
    const Indices& i = m.space.vars;
    PrimExpr cv = db.read(c, db.broadcast_indices(c, i), DType::Bool);
    PrimExpr av = db.read(a, db.broadcast_indices(a, i), d);
    PrimExpr bv = db.read(b, db.broadcast_indices(b, i), d);
    m.element.value = select(cv, av, bv);
  } else if (op == ir::OpId::cast) {
    Operand x = db.input(args[0], "x");
    DType from = args.types[0].dtype;
    db.output(type, "out");
    m.space = db.space(type.shape);
    m.element.value = convert(db.read(x, db.broadcast_indices(x, m.space.vars), from), type.dtype);
  } else if (const ir::IntrinsicDef* fn = ir::find_intrinsic(name); fn && fn->arity == 1) {
    // The op applies the intrinsic of its name to each element (ir/Intrinsics.def).
    Operand x = db.input(args[0], "x");
    // A float function of an integer literal computes in the result's float dtype.
    DType d = type.dtype;
    db.output(type, "out");
    m.space = db.space(type.shape);
    m.element.value = intrinsic(fn->id, {db.read(x, db.broadcast_indices(x, m.space.vars), d)});
  } else {
    Operand a = db.input(args[0], "a"), b = db.input(args[1], "b");
    DType d = shared_dtype({args.types[0], args.types[1]});
    if (!is_comparison_op(op) && op != ir::OpId::logical_and && op != ir::OpId::logical_or &&
        !type.weak)
      d = type.dtype;
    db.output(type, "out");
    m.space = db.space(type.shape);
    PrimExpr av = db.read(a, db.broadcast_indices(a, m.space.vars), d);
    PrimExpr bv = db.read(b, db.broadcast_indices(b, m.space.vars), d);
    m.element.value = binary_element(db, m.element, op, av, bv);
  }
  return db.map({std::move(m)}, type);
}

} // namespace dsc::passes::lowering
