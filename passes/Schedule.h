#pragma once
// schedule: the default schedule of every prim whose loops are all serial (prims whose
// author chose loop kinds are left alone): on a GPU target, passes/GpuSchedule.h; on the CPU:
//
//   - Reductions whose reduced axes are not last: a loop over the kept last axis around a
//     local accumulator and the reduction loops (legalize's form for sum/mean/max/min over a
//     non-last axis, matmul and conv2d loop nests) is interchanged so that the kept axis
//     becomes the inner loop, accumulating into the output in place (init, update, finish
//     loops), when the accumulator has the output's dtype and the kept axis is at least as
//     contiguous in the accesses as the innermost reduction loop.
//   - The innermost loop of a nest is `vectorize`d when it runs over the contiguous (last)
//     axis of an access, its iterations write distinct elements, and any local it updates is
//     a plain add/mul/min/max reduction.
//   - The outer loops of each top-level nest are `parallel`, down its perfectly nested chain
//     (the code generator collapses such a chain into one parallel range), stopping at the
//     vectorized loop and at the first loop whose iterations might write the same element or
//     update a local declared outside it. A nest that is a single vectorized loop is split
//     into a parallel loop over chunks around the vectorized loop.

#include "ir/Module.h"
#include "passes/PassContext.h"

namespace dsc::passes {

ir::Module schedule(const ir::Module& legalized, PassContext& ctx);

} // namespace dsc::passes
