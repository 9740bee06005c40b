#pragma once
// infer_shapes: gives every graph value its type. Parameter types are as written, with `?`
// dims as fresh symbols; each binding's type comes from its op's shape rule (ir/OpRegistry.h),
// from the callee's signature for calls to module functions, stdlib composites and externs
// (their symbols instantiated from the arguments), or from a type assertion, which also binds
// symbols first named there. The facts each op implies are recorded on the Function
// (`Function::facts`) for collect_facts. Errors are diagnostics; the returned module is only
// meaningful when none was reported.

#include "ir/Module.h"
#include "passes/PassContext.h"

namespace dsc::passes {

ir::Module infer_shapes(const ir::Module& m, PassContext& ctx);

} // namespace dsc::passes
