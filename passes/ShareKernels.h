#pragma once
// share_kernels: structurally identical prims are compiled once. A model that calls one layer
// fn per layer gets, once calls are inlined and legalized, a copy of the layer's kernels per
// layer (bert_matmul_add_0, bert_matmul_add_3, ...) that differ only in the names of their
// buffers and locals, which come from the graph values they were made from. Each group of
// such prims keeps its first member; every call of the others (in the fns' bodies, and as an
// extern's epilogue) is renamed to it, and externs that then agree in everything but their
// name are merged the same way. The code generator then compiles one layer's kernels
// whatever the depth, and the host program calls them once per layer.
//
// Two prims are identical when they are structurally equal (ir/StructuralEqual.h) once their
// buffers are named by position (inputs, then outputs) and their locals and allocations by
// first appearance. The renaming is a bijection on each side, so prims that compare equal
// compute the same thing from the same positional arguments. Loop variables and symbols keep
// their names: they are part of the signature (`where` clauses, the host's symbol values)
// or generated alike.

#include "passes/Compilation.h"
#include "passes/PassContext.h"

namespace dsc::passes {

struct SharedKernels {
  size_t prims_merged = 0;   // prims dropped for an identical one
  size_t externs_merged = 0; // externs dropped likewise
};

SharedKernels share_kernels(Compilation& c);

} // namespace dsc::passes
