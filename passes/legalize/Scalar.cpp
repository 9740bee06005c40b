#include "passes/legalize/Scalar.h"

#include <cmath>
#include <limits>
#include <optional>

#include "symbolic/Simplify.h"

namespace dsc::passes::lowering {

using ir::DType;
using ir::PrimExpr;

double literal_as_double(const LiteralValue& v) {
  if (const int64_t* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  if (const double* f = std::get_if<double>(&v)) return *f;
  return std::get<bool>(v) ? 1.0 : 0.0;
}

DType shared_dtype(const std::vector<ir::Type>& operand_types) {
  std::optional<DType> widest;
  auto rank = [](DType d) { return d == DType::Bool ? 0 : ir::is_int(d) ? 1 : 2; };
  for (const ir::Type& t : operand_types) {
    if (!t.is_tensor()) continue;
    if (!t.weak) return t.dtype;
    if (!widest || rank(t.dtype) > rank(*widest)) widest = t.dtype;
  }
  return widest.value_or(DType::F32);
}

PrimExpr index(const symbolic::Expr& e) {
  return ir::Index::make(symbolic::simplify(e));
}

PrimExpr float_imm(DType d, double v) {
  internal_assert(d == DType::F32 || d == DType::F64) << "float_imm of " << ir::dtype_name(d);
  return ir::FloatImm::make(d, v);
}

PrimExpr int_imm(DType d, int64_t v) {
  switch (d) {
  case DType::I64:
    return ir::Index::make(symbolic::Expr(v));
  case DType::I32:
    return ir::IntImm::make(d, static_cast<int32_t>(static_cast<uint64_t>(v)));
  case DType::I8:
    return ir::IntImm::make(d, static_cast<int8_t>(static_cast<uint64_t>(v)));
  case DType::Bool:
    return bool_imm(v != 0);
  default:
    return float_imm(d, static_cast<double>(v));
  }
}

PrimExpr bool_imm(bool v) {
  return ir::IntImm::make(DType::Bool, v ? 1 : 0);
}

PrimExpr zero(DType d) {
  return ir::is_float(d) ? float_imm(d, 0.0) : int_imm(d, 0);
}

PrimExpr one(DType d) {
  return ir::is_float(d) ? float_imm(d, 1.0) : int_imm(d, 1);
}

PrimExpr neg_infinity(DType d) {
  return binary(ir::BinaryOp::Div, float_imm(d, -1.0), float_imm(d, 0.0));
}

PrimExpr infinity(DType d) {
  return binary(ir::BinaryOp::Div, float_imm(d, 1.0), float_imm(d, 0.0));
}

PrimExpr int_lowest(DType d) {
  switch (d) {
  case DType::I8:
    return int_imm(d, std::numeric_limits<int8_t>::min());
  case DType::I32:
    return int_imm(d, std::numeric_limits<int32_t>::min());
  default:
    return int_imm(d, std::numeric_limits<int64_t>::min());
  }
}

PrimExpr int_highest(DType d) {
  switch (d) {
  case DType::I8:
    return int_imm(d, std::numeric_limits<int8_t>::max());
  case DType::I32:
    return int_imm(d, std::numeric_limits<int32_t>::max());
  default:
    return int_imm(d, std::numeric_limits<int64_t>::max());
  }
}

PrimExpr immediate(const LiteralValue& v, DType op_dtype) {
  if (op_dtype == DType::Bool) {
    if (const bool* b = std::get_if<bool>(&v)) return bool_imm(*b);
    if (const int64_t* i = std::get_if<int64_t>(&v)) return bool_imm(*i != 0);
    return bool_imm(std::get<double>(v) != 0.0);
  }
  if (ir::is_int(op_dtype)) {
    if (const int64_t* i = std::get_if<int64_t>(&v)) return int_imm(op_dtype, *i);
    if (const bool* b = std::get_if<bool>(&v)) return int_imm(op_dtype, *b ? 1 : 0);
    return convert(float_imm(DType::F64, std::get<double>(v)), op_dtype);
  }
  double x = literal_as_double(v);
  if (op_dtype == DType::F16 || op_dtype == DType::BF16)
    return ir::Cast::make(DType::F32, ir::Cast::make(op_dtype, float_imm(DType::F32, x)));
  return float_imm(op_dtype, x);
}

PrimExpr stored_constant(const LiteralValue& v, DType d) {
  if (const double* f = std::get_if<double>(&v)) {
    if (ir::is_float(d)) return immediate(v, d);
    if (d == DType::Bool) return bool_imm(*f != 0.0);
    int64_t i = 0; // the interpreter's float_to_int: saturating, NaN is 0
    if (*f >= 9223372036854775808.0)
      i = std::numeric_limits<int64_t>::max();
    else if (*f <= -9223372036854775808.0)
      i = std::numeric_limits<int64_t>::min();
    else if (!std::isnan(*f))
      i = static_cast<int64_t>(*f);
    return int_imm(d, i);
  }
  int64_t i = 0;
  if (const int64_t* iv = std::get_if<int64_t>(&v))
    i = *iv;
  else
    i = std::get<bool>(v) ? 1 : 0;
  if (ir::is_float(d)) return immediate(LiteralValue(static_cast<double>(i)), d);
  return int_imm(d, i); // truncates to the dtype, or `!= 0` for bool
}

PrimExpr convert(PrimExpr v, DType to) {
  DType from = v->dtype;
  if (from == to) return v;
  // To and from bool, float to int (saturating, NaN is 0, then truncating) and int to int
  // (truncating or sign-extending): a prim's cast is the interpreter's conversion.
  if (from == DType::Bool || to == DType::Bool) return ir::Cast::make(to, v);
  if (ir::is_float(from) && ir::is_float(to)) {
    // Back to the dtype a value was exactly widened from: the value itself.
    if (const ir::Cast* c = v.as<ir::Cast>();
        c && c->value->dtype == to && ir::dtype_bits(to) <= ir::dtype_bits(from))
      return c->value;
    // The interpreter rounds through f32 on its way to a 16-bit float.
    if (from == DType::F64 && (to == DType::F16 || to == DType::BF16))
      return ir::Cast::make(to, ir::Cast::make(DType::F32, v));
    return ir::Cast::make(to, v);
  }
  if (ir::is_float(from)) return ir::Cast::make(to, v);
  if (ir::is_float(to) && v.is<ir::Index>()) {
    // A dim or an index: far below 2^53, so converting it directly rounds the same.
    if (const symbolic::Const* c = v.as<ir::Index>()->value.as<symbolic::Const>()) {
      PrimExpr f = float_imm(compute_dtype(to), static_cast<double>(c->value));
      return f->dtype == to ? f : ir::Cast::make(to, f);
    }
    return ir::Cast::make(to, v);
  }
  if (ir::is_float(to)) {
    // Integers go through f64 (exact up to 2^53), then f32 for the 16-bit floats.
    PrimExpr x = v;
    if (from == DType::I64 && to != DType::F64) x = ir::Cast::make(DType::F64, x);
    if (to == DType::F16 || to == DType::BF16) {
      x = ir::Cast::make(DType::F32, x);
      return ir::Cast::make(to, x);
    }
    return ir::Cast::make(to, x);
  }
  return ir::Cast::make(to, v); // integer to integer: truncate or sign-extend
}

PrimExpr widen(PrimExpr v) {
  DType c = compute_dtype(v->dtype);
  return c == v->dtype ? v : ir::Cast::make(c, v);
}

PrimExpr binary(ir::BinaryOp op, PrimExpr a, PrimExpr b) {
  return ir::PrimBinary::make(op, std::move(a), std::move(b));
}

PrimExpr select(PrimExpr cond, PrimExpr a, PrimExpr b) {
  DType d = a->dtype;
  return ir::Intrinsic::make(d, ir::IntrinsicId::select,
                             {std::move(cond), std::move(a), std::move(b)});
}

PrimExpr intrinsic(ir::IntrinsicId id, std::vector<PrimExpr> args) {
  DType d = args.front()->dtype;
  return ir::Intrinsic::make(d, id, std::move(args));
}

PrimExpr is_nan(PrimExpr v) {
  return binary(ir::BinaryOp::NE, v, v);
}

} // namespace dsc::passes::lowering
