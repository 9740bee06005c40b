// Elementwise ops: one loop nest over the result, each operand read through NumPy
// broadcasting (a dim proved 1 reads index 0). Operands are rounded to their shared dtype and
// computed in its compute dtype (f32 for f16/bf16); the result is rounded once on store.
// Semantics follow the reference interpreter. Where the prim level already has them, the
// scalar op is used as it is: integer `/` is floor division with x / 0 == 0 and x / -1 == -x
// (wrapping), integer pow wraps and gives 0 for negative exponents but for bases 1 and -1,
// integer abs and neg wrap. Float maximum/minimum are written out so that they also pick the
// interpreter's zero: NaN if either is NaN, else (a < b ? b : a) and (b < a ? b : a).

#include "ir/Intrinsics.h"
#include "passes/legalize/Families.h"
#include "passes/legalize/LoopBuilder.h"

namespace dsc::passes::lowering {

namespace {

// The value of one element, after the statements that compute it.
struct Element {
  std::vector<Stmt> pre;
  PrimExpr value;
};

bool is_comparison_op(ir::OpId op) {
  using ir::OpId;
  return op == OpId::eq || op == OpId::ne || op == OpId::lt || op == OpId::le || op == OpId::gt ||
         op == OpId::ge;
}

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

Element binary_element(PrimBuilder& pb, ir::OpId op, PrimExpr a, PrimExpr b) {
  Element out;
  DType d = a->dtype;
  const bool is_max = op == ir::OpId::maximum;
  if (is_max || op == ir::OpId::minimum) {
    if (!ir::is_float(d)) {
      out.value = binary(is_max ? BinaryOp::Max : BinaryOp::Min, a, b);
      return out;
    }
    // NaN-propagating; otherwise std::max(a, b) == (a < b ? b : a) and std::min(a, b) ==
    // (b < a ? b : a), which also fixes which zero wins.
    PrimExpr ar, br;
    out.pre.push_back(pb.let("a_value", a, &ar));
    out.pre.push_back(pb.let("b_value", b, &br));
    PrimExpr pick_b = is_max ? binary(BinaryOp::LT, ar, br) : binary(BinaryOp::LT, br, ar);
    out.value = select(is_nan(br), br, select(pick_b, br, ar));
    return out;
  }
  if (op == ir::OpId::pow) {
    out.value = intrinsic(ir::intrinsic(ir::IntrinsicId::pow).name, {a, b});
    return out;
  }
  out.value = binary(binary_op(op), a, b);
  return out;
}

Stmt seq(std::vector<Stmt> pre, Stmt last) {
  if (pre.empty()) return last;
  pre.push_back(std::move(last));
  return ir::Seq::make(std::move(pre));
}

} // namespace

ir::Expr lower_elementwise(const ir::Call& call, const ir::BoundArgs& args, const ir::Type& type,
                           FnContext& ctx) {
  const std::string& name = call.callee;
  const ir::OpId op = ir::find_op(name)->id;
  PrimBuilder pb(ctx, name);
  Stmt body;
  if (op == ir::OpId::where) {
    Operand c = pb.input(args[0], "cond"), a = pb.input(args[1], "a"), b = pb.input(args[2], "b");
    DType d = shared_dtype({args.types[1], args.types[2]});
    Operand out = pb.output(type, "out");
    body = pb.loops(type.shape, [&](const PrimBuilder::Indices& i) {
      PrimExpr cv = pb.read(c, pb.broadcast_indices(c, i), DType::Bool);
      PrimExpr av = pb.read(a, pb.broadcast_indices(a, i), d);
      PrimExpr bv = pb.read(b, pb.broadcast_indices(b, i), d);
      return pb.write(out, i, select(cv, av, bv));
    });
  } else if (op == ir::OpId::cast) {
    Operand x = pb.input(args[0], "x");
    DType from = args.types[0].dtype;
    Operand out = pb.output(type, "out");
    body = pb.loops(type.shape, [&](const PrimBuilder::Indices& i) {
      return pb.write(out, i, convert(pb.read(x, pb.broadcast_indices(x, i), from), type.dtype));
    });
  } else if (const ir::IntrinsicDef* fn = ir::find_intrinsic(name); fn && fn->arity == 1) {
    // The op applies the intrinsic of its name to each element (ir/Intrinsics.def).
    Operand x = pb.input(args[0], "x");
    // A float function of an integer literal computes in the result's float dtype.
    DType d = type.dtype;
    Operand out = pb.output(type, "out");
    body = pb.loops(type.shape, [&](const PrimBuilder::Indices& i) {
      return pb.write(out, i, intrinsic(name, {pb.read(x, pb.broadcast_indices(x, i), d)}));
    });
  } else {
    Operand a = pb.input(args[0], "a"), b = pb.input(args[1], "b");
    DType d = shared_dtype({args.types[0], args.types[1]});
    if (!is_comparison_op(op) && op != ir::OpId::logical_and && op != ir::OpId::logical_or &&
        !type.weak)
      d = type.dtype;
    Operand out = pb.output(type, "out");
    body = pb.loops(type.shape, [&](const PrimBuilder::Indices& i) {
      PrimExpr av = pb.read(a, pb.broadcast_indices(a, i), d);
      PrimExpr bv = pb.read(b, pb.broadcast_indices(b, i), d);
      Element e = binary_element(pb, op, av, bv);
      return seq(std::move(e.pre), pb.write(out, i, e.value));
    });
  }
  return pb.finish(body, type);
}

} // namespace dsc::passes::lowering
