#pragma once
// bucket_kernels (CPU): shape-bucket variants of kernels, picked per call by the host code, as
// in DietCode and Nimble. A kernel whose vectorized loops run over symbolic extents gets a
// variant for the calls where every one of those extents is a multiple of the vector lanes
// (16 f32 lanes in 512 bits). The variant is the same prim with that fact added to its `where`
// clause: the code generator hands its where clauses to LLVM as assumptions, and the loop
// vectorizer then emits neither remainder loops nor the checks that choose them.
//
// Per call, the prover decides the fact in the caller's symbols under the host program's checks
// (its `where` clauses and run-time shape facts):
//   proved      the call goes to the variant alone (where every call does, the kernel itself
//               takes the where clause instead, keeping its name);
//   disproved   the call keeps the kernel;
//   open        an If step tests the fact at run time and calls the variant or the kernel,
//               both compiled.
// The lanes are the target's vector width (512 bits when it keeps the CPU's preference) over
// the widest element the prim's buffers hold. A library call's epilogue is bucketed the same
// way, on its row length: the Library step calls the routine with the variant as its epilogue.
// Only vector loops inside another loop count (a remainder per row; a lone vector loop has
// one remainder per call). Loops whose extent depends on an enclosing loop (the last chunk of a
// flat elementwise kernel) or on an epilogue's block of rows (the routine picks it at run time), and CUDA
// kernels (their launch already adapts to the row length), get no variant.

#include "passes/Compilation.h"
#include "passes/PassContext.h"

namespace dsc::passes {

// Makes the variants (PrimFunc::variant_of names the kernel each is a variant of) and
// rewrites the host programs' Kernel steps.
void bucket_kernels(Compilation& c, PassContext& ctx);

} // namespace dsc::passes
