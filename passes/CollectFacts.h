#pragma once
// collect_facts: decides every ShapeFact a function relies on. `where` clauses are Assumed
// (checked once on entry at run time); each other fact is Proved under them, or becomes a
// RuntimeCheck carrying the prover's counterexample. A `where` clause that contradicts the
// signature (no values satisfy the clauses together) is an error.

#include "ir/Module.h"
#include "passes/PassContext.h"

namespace dsc::passes {

ir::Module collect_facts(const ir::Module& m, PassContext& ctx);

} // namespace dsc::passes
