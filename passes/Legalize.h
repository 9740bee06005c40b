#pragma once
// legalize: every primitive op call of every fn becomes something the target's backend runs.
//
// Input: the output of inline_calls (each fn one Block of let bindings whose op operands are
// vars and literals). Output: the same fns, in which each op call is replaced by
//   - a call to a new `prim` (destination-passing style: the op's tensor operands are its
//     inputs, its results its outputs; literal operands and integer attributes are folded into
//     the code), named `<fn>_<op>_<n>`, with buffer types in the fn's own symbols; the binding
//     keeps the op's result type (a tuple for split, destructured as before);
//   - for an op a library routine computes (an f32 matmul whose operands each have the full
//     batch or none, an f32 conv2d), when the target offers one, a call to an
//     `extern fn <fn>_sgemm_<n>(a, b) -> result = "dsc.sgemm"` (the target's preferred routine
//     of the op's role, ir/LibraryRoutines.def, or the one `--gemm` names);
//   - for a view op (reshape), the op itself (the host makes it an alias, no copy).
// Generated prims are placed before the fn that calls them. Generic fns (never called once
// inlined) are dropped. The branches of a graph-level `if` and the condition and body of a
// loop are legalized as blocks of their own; ops whose result size depends on the data
// (`nonzero`, `unique`, a mask's selection) become a kernel that also writes the count, which
// lower_host binds to the run-time symbol.
//
// Two halves, in passes/legalize/: each op call is first described (ComputeDesc.h: a map from
// the output's index space to an element expression over its inputs' elements, a reduction, a
// library call or a view; one file per op family, dispatched by Describe.cpp), then the
// description is materialized (Materialize.h) into the prim, extern call or alias. fuse
// composes descriptions between the two.

#include "ir/Module.h"
#include "passes/PassContext.h"

namespace dsc::passes {

ir::Module legalize(const ir::Module& inlined, PassContext& ctx);

} // namespace dsc::passes
