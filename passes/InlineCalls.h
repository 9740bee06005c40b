#pragma once
// inline_calls: every call to a graph function, the module's own `fn`s and imported generic
// composites (`nn.softmax`) alike, is replaced by the callee's body, so that each fn's body is
// one Block of `let` bindings whose calls are primitive ops, prims and externs only.
//
// Input: the module after infer_shapes and collect_facts. For each call the callee's
// parameters are bound to the arguments (positional, keyword, then defaults); its symbols are
// bound from the argument types as the call's inference bound them (`2*S` solved for S),
// symbols its body introduces get fresh names, and attribute parameters (`axis: int`,
// `eps: float`) become literals, so ops see constants. Nested expressions are flattened: every
// operand of a call is a var or a literal, each binding named after the value it computes
// (callee bindings get fresh names). The result of an inlined call is asserted to have the
// call's original type, so bindings keep their types. Graph-level `if` stays (legalize
// rejects it); its branches are inlined too.
//
// The inlined body is typed again with infer_shapes (one level of calls per round, until none
// is left). Facts: the fn keeps every fact it had, which includes the `where` clauses of the
// callees and the facts recorded inside their instantiations; facts the new body implies that
// were not among them are added and decided by collect_facts. Generic fns, never called once
// inlined and never entry points, are dropped from the result; prims and externs stay.

#include "ir/Module.h"
#include "passes/PassContext.h"

namespace dsc::passes {

ir::Module inline_calls(const ir::Module& typed, PassContext& ctx);

} // namespace dsc::passes
