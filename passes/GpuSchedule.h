#pragma once
// The GPU schedule of one prim (what `schedule` does on a CUDA target). The loops it makes
// mean what ir/ForKinds.def says, read as the CUDA backend reads them
// (backends/cuda/CudaSource.h): a `block_x` or `block_rows` loop at the top runs one iteration per block, and a
// `thread_x` loop spreads its iterations over the block's threads, blockDim.x at a time; a
// local assigned inside a `thread_x` loop and declared outside it is combined over the threads
// after the loop. Serially, every loop still means what it says, so the reference interpreter
// and the CPU backend agree with the scheduled prim.
//
// The outer loops whose iterations are independent (the output space, for legalize's prims)
// are flattened into one index, and the rest is one of three forms:
//   - elements: nothing below them loops. Four elements per thread, 256 apart, so that each
//     thread has four independent loads in flight and a warp's accesses stay side by side:
//       block_x for b in 0..ceildiv(N, 1024) { thread_x for t in 0..256 {
//         unroll for u in 0..4 { if b*1024 + u*256 + t < N {..} } } }
//   - rows per block: what is below them is a row (a reduction, or a stitch of reductions and
//     maps) whose loops all run over a contiguous axis with independent iterations or a
//     reduction into locals. One row per block, its loops `thread_x`, the block loop
//     `block_rows`, which tells the backend that its body is one row (ir/ForKinds.def):
//       block_rows for r in 0..R { var acc = 0; thread_x for k in 0..K { acc = acc + .. } .. }
//   - rows per thread: any other row (loops over a strided axis, as a reduction over a
//     non-last axis or a direct convolution; short loops; loops carrying other dependences).
//     One row per thread, the element form around the row's serial loops.
// A prim with no independent outer loop runs on one thread of one block. (schedule leaves
// prims whose author chose loop kinds alone, and calls this for the others.)

#include "ir/Module.h"
#include "passes/PassContext.h"

namespace dsc::passes {

// Threads per block of the element and rows-per-thread forms, and the most a rows-per-block
// kernel uses: the CUDA target's (ir/Target.h), which the CUDA C emitter reads too.
using ir::kGpuThreadsPerBlock;
// Elements per thread of the element form.
constexpr int64_t kGpuElementsPerThread = 4;

ir::Stmt gpu_schedule(const ir::PrimFunc& p, PassContext& ctx);

} // namespace dsc::passes
