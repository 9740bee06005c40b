#pragma once
// Internal to the shape rules (ir/ops/*.cpp): the op families, and the helpers they share for
// reading bound arguments, normalizing axes, unifying dtypes and broadcasting.
//
// bind_arguments normalizes what the rules read: an Int parameter is a Literal holding an
// int64; a Dim parameter is a one-dim ShapeExpr; a Shape parameter is a ShapeExpr; an
// IntOrShape parameter is one of those two; Float and Scalar parameters are Literals.

#include <optional>
#include <string>
#include <vector>

#include "ir/OpRegistry.h"

namespace dsc::ir::ops {

std::vector<OpDef> elementwise_ops();
std::vector<OpDef> reduce_ops();
std::vector<OpDef> layout_ops();
std::vector<OpDef> matmul_ops();
std::vector<OpDef> conv_ops();
std::vector<OpDef> pool_ops();
std::vector<OpDef> creation_ops();

// Defaults for ParamSpec::make_default.
Expr default_int0();
Expr default_int1();
Expr default_false();
Expr default_f32();
Expr default_i64();

// ---- Reading literals and bound arguments.

// An integer literal, also written `-3` (neg of a literal).
std::optional<int64_t> literal_int(const Expr& e);
// An int or float literal as a double.
std::optional<double> literal_number(const Expr& e);
// The argument of an Int parameter (bind_arguments guarantees the literal).
int64_t int_arg(const BoundArgs& args, size_t i);
// The dim of a Dim parameter, canonical; undefined for an absent optional parameter.
symbolic::Expr dim_arg(const BoundArgs& args, size_t i);
// The dims of a Shape (or IntOrShape holding a list) parameter, canonical.
std::vector<symbolic::Expr> shape_arg(const BoundArgs& args, size_t i);
bool is_shape_arg(const BoundArgs& args, size_t i);
// Argument `i` of an IntOrShape parameter that takes an int or an [h, w] pair of ints
// (conv2d's and the pools' stride, padding, ...), as (h, w); each must be >= `min`. nullopt
// after an error naming `op` and the parameter `name`.
std::optional<std::pair<int64_t, int64_t>> int_pair_arg(const BoundArgs& args, size_t i,
                                                        const std::string& op, const char* name,
                                                        int64_t min, ShapeContext& ctx);

// ---- Dims.

// The canonical form with no facts: keeps user symbols (no substitution) while folding.
symbolic::Expr canon(const symbolic::Expr& e);
std::optional<int64_t> as_const(const symbolic::Expr& e); // of the canonical form
symbolic::Expr product(const std::vector<symbolic::Expr>& dims);
std::string shape_string(const std::vector<symbolic::Expr>& dims); // "[B, S, 768]"
// Requires every dim of a written shape to be >= 0 (a constant below 0 is an error).
bool require_nonnegative(const std::vector<symbolic::Expr>& dims, SourceLoc loc,
                         const std::string& op, ShapeContext& ctx);

// An axis in [-rank, rank) made nonnegative; an error otherwise.
std::optional<size_t> normalize_axis(int64_t axis, size_t rank, const std::string& op,
                                     SourceLoc loc, ShapeContext& ctx);

// ---- Types.

// The common dtype of the tensor operands `which` (indices into args): strongly typed operands
// must agree; weak literals take the others' dtype when their kind fits (an int literal fits
// any number, a float literal a float, a bool literal a bool). All weak: the widest, weak.
struct UnifiedDType {
  DType dtype;
  bool weak;
};
std::optional<UnifiedDType> unify_dtypes(const std::string& op, const BoundArgs& args,
                                         const std::vector<size_t>& which, ShapeContext& ctx);

// NumPy broadcasting of the shapes of `which`, right-aligned. Dims proved equal merge; a dim
// that is (or is proved) 1 takes the other; dims proved unequal are an error; anything else
// records a run-time fact `a == b` and keeps a.
std::optional<std::vector<symbolic::Expr>> broadcast_shapes(const std::string& op,
                                                            const BoundArgs& args,
                                                            const std::vector<size_t>& which,
                                                            ShapeContext& ctx);
// The same for two dim lists (matmul's batch dims); `what` names them in facts.
std::optional<std::vector<symbolic::Expr>> broadcast_dims(const std::string& op,
                                                          const std::vector<symbolic::Expr>& a,
                                                          const std::vector<symbolic::Expr>& b,
                                                          SourceLoc loc, const std::string& what,
                                                          ShapeContext& ctx);

// A tensor type for results.
Type tensor_of(DType dtype, std::vector<symbolic::Expr> shape, bool weak = false);

} // namespace dsc::ir::ops
