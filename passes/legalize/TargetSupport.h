#pragma once
// What legalize refuses because the target cannot run it (ir/Target.h): loop kinds it does not
// run in hand-written prims, and dtypes it does not compute (ir/TargetKinds.def's `native` and
// `widened` columns) anywhere, reported where the user wrote them.

#include "ir/Module.h"
#include "passes/PassContext.h"

namespace dsc::passes::lowering {

// A hand-written prim: its loop kinds and the dtypes of its buffers, allocations, locals and
// casts.
void check_target_support(const ir::PrimFunc& prim, PassContext& ctx);

// A function before legalize (`f`) and the prims legalize made of it (`generated`): the first
// dtype their code computes in that the target does not compute, reported at a parameter of
// that dtype, else at the function. A parameter nothing computes with is no error.
void check_target_dtypes(const ir::Function& f, const ir::Module& generated, PassContext& ctx);

} // namespace dsc::passes::lowering
