#pragma once
// Scalar expressions inside generated prims, with the reference interpreter's semantics
// (backends/reference/Value.h): floats of 16 bits compute in f32 and round once on store.
// A prim's cast already converts as the interpreter does between bool and numbers and from
// floats to integers (saturating, NaN to 0); conversions that the interpreter rounds twice
// (i64 to f32 through f64, f64 to f16 through f32) are written out so that they round the same
// way.
//
// Every i64 constant is an Index, as the front end reads an integer literal in an i64
// context, so that the printed prim parses back to an equal one.

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "ir/IR.h"
#include "ir/Type.h"

namespace dsc::passes::lowering {

using LiteralValue = std::variant<int64_t, double, bool>;

// A literal's value as a double, as the interpreter's as_float reads it (true is 1.0).
double literal_as_double(const LiteralValue& v);

// The dtype arithmetic of `d` is done in: f32 for f16 and bf16, else d itself (ir/DTypes.def).
using ir::compute_dtype;
// The dtype operands share, as the shape rules unify them: a non-weak operand's, else the
// widest literal kind (bool < int < float).
ir::DType shared_dtype(const std::vector<ir::Type>& operand_types);

// An integer index: the canonical form of `e`.
ir::PrimExpr index(const symbolic::Expr& e);

// Constants of a compute dtype (a float dtype must be f32 or f64; i64 gives an Index).
ir::PrimExpr float_imm(ir::DType d, double v);
ir::PrimExpr int_imm(ir::DType d, int64_t v);
ir::PrimExpr bool_imm(bool v);
ir::PrimExpr zero(ir::DType d);
ir::PrimExpr one(ir::DType d);
// -inf and +inf of f32/f64, written -1.0 / 0.0 and 1.0 / 0.0 (.dsc has no infinity literal).
ir::PrimExpr neg_infinity(ir::DType d);
ir::PrimExpr infinity(ir::DType d);
// The least and greatest value of an integer dtype.
ir::PrimExpr int_lowest(ir::DType d);
ir::PrimExpr int_highest(ir::DType d);

// A literal operand of an op whose operands share `op_dtype`, in compute_dtype(op_dtype): it is
// rounded to op_dtype first, as the interpreter rounds each operand to the shared dtype.
ir::PrimExpr immediate(const LiteralValue& v, ir::DType op_dtype);

// A literal stored into a tensor of dtype `d` as the interpreter's full and pad store it
// (store_i of an integer, store_f of a float: saturating to integers, `!= 0` to bool), in
// compute_dtype(d). Folded here, so the prim holds one constant.
ir::PrimExpr stored_constant(const LiteralValue& v, ir::DType d);

// `v` converted to dtype `to` as the interpreter's convert() does.
ir::PrimExpr convert(ir::PrimExpr v, ir::DType to);
// `v` (of a storage dtype) in its compute dtype: an exact widening.
ir::PrimExpr widen(ir::PrimExpr v);
ir::PrimExpr binary(ir::BinaryOp op, ir::PrimExpr a, ir::PrimExpr b);
ir::PrimExpr select(ir::PrimExpr cond, ir::PrimExpr a, ir::PrimExpr b);
// An intrinsic whose dtype is its first argument's (exp, log, neg, abs, pow, ...).
ir::PrimExpr intrinsic(ir::IntrinsicId id, std::vector<ir::PrimExpr> args);
// A float is NaN: `v != v`.
ir::PrimExpr is_nan(ir::PrimExpr v);

} // namespace dsc::passes::lowering
