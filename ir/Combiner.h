#pragma once
// Reductions in prims: which scalar operators combine associatively (+ * min max), and how an
// update that accumulates into a local or a buffer element reads (`t = t op e`, either order).
// The access analysis (passes/AccessAnalysis.h) decides from these which loops are reductions,
// and the CUDA C emitter which thread-loop locals it combines over a block.

#include <functional>
#include <optional>
#include <string>

#include "ir/IR.h"

namespace dsc::ir {

// + * min max: an accumulation with it can be split and combined in any order.
bool is_combiner(BinaryOp op);

// `value` as `self op other` (or `other op self`) with a combiner op, where is_self picks
// `self`; nullopt otherwise.
struct Update {
  BinaryOp op;
  PrimExpr self, other;
};
std::optional<Update> as_update(const PrimExpr& value,
                                const std::function<bool(const PrimExpr&)>& is_self);

// Whether `e` reads local `name`.
bool reads_local(const PrimExpr& e, const std::string& name);

// The combiner of every assignment to local `name` in `s`: each `name = name op e` (either
// order), one op for all, e not reading `name`; nullopt when some assignment is of another form
// or there is none.
std::optional<BinaryOp> local_combiner(const Stmt& s, const std::string& name);

} // namespace dsc::ir
