#pragma once
// The second half of legalize: one compute description (passes/legalize/ComputeDesc.h) becomes
// the value that replaces its op call.
//   - Map: a prim (destination-passing style, named `<fn>_<op>_<n>`) with one loop nest per
//     output over its index space, storing the element (its locals first). A select that
//     guards its branches (see ComputeDesc.h) at the top of the element becomes an if with a
//     store in each branch, so that the branch not taken is never read.
//   - Reduce: a prim whose nest over the output declares a local accumulator set to the
//     identity, loops over the reduced axes combining the body into it (under the condition,
//     when there is one), then stores the finish. This is the form schedule interchanges
//     and vectorizes (passes/Schedule.h).
//   - Library: a call to an extern bound to the routine (one per signature).
//   - View: the call itself, which the host makes an alias.
// Stores convert to the output's dtype (16-bit floats, computed in f32, round once here). A
// prim whose code uses a symbol that no buffer has as a plain dim (a slice's symbolic start)
// takes FnContext::symbol_carrier as an extra input.

#include "passes/legalize/ComputeDesc.h"
#include "passes/legalize/Context.h"

namespace dsc::passes::lowering {

ir::Expr materialize(ComputeDesc desc, FnContext& ctx);

} // namespace dsc::passes::lowering
