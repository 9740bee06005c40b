#pragma once
// Kernels for the CPU: the target-neutral emitter of backends/llvm/KernelCodegen.h (which has
// the semantics and the kernel ABI) with the CPU's answers to its KernelTarget questions:
//
// - Index arithmetic is ir::Target::index_bits wide (64 by default).
// - `parallel` loops are outlined into "NAME.parallel.K"(ptr ctx, i64 begin, i64 end) and run
//   by dsc_rt_parallel_for (runtime/HostABI.h). Perfectly nested parallel loops (a parallel
//   loop whose body is just another parallel loop whose bounds do not use the outer
//   variable) are collapsed into one range over the product of their extents. A parallel
//   loop inside a parallel body runs serially. The grain is chosen at run time so that a
//   chunk does at least ~16K statement executions: grain = max(1, 16384 / work), where
//   `work` estimates one iteration's statement count from the extents of the inner loops
//   whose bounds are known when the loop starts. The body captures, by value, every symbol,
//   loop variable and local in scope, and every buffer pointer: locals declared outside and
//   assigned inside are private copies (their assignments are not seen after the loop),
//   locals declared inside are private to the iteration, and buffers allocated outside are
//   shared. Constant-size allocs in the body are stack slots of each thread.
// - Effects (ir/Intrinsics.def rows with CpuLowering::Nothing, such as sync_threads) mean
//   nothing to one CPU thread and emit nothing.
// - f64 exp, log, tanh, erf and pow call libm (exp, log, tanh, erf, pow): modules with f64
//   transcendental math need libm at link time.
// - Large or symbolic-size local buffers are malloc'ed and freed.
//
// Kernels call only dsc_rt_parallel_for, malloc/free and libm.

#include <string>

#include <llvm/IR/Function.h>
#include <llvm/IR/Module.h>

#include "ir/Module.h"

namespace dsc::cpu {

// emit_kernel (backends/llvm/KernelCodegen.h) for the CPU, with `index_bits` (32 or 64) wide
// index arithmetic.
llvm::Function* emit_cpu_kernel(llvm::Module& m, const ir::PrimFunc& p, const std::string& symbol_name,
                                int index_bits = 64);

// Why the CPU backend cannot compile `p`, or empty when it can: the only user-reachable
// case is an intrinsic called as a statement that the CPU does not know (`foo(x)`; the
// known no-op is sync_threads()). Call it before emit_cpu_kernel, which treats such prims as
// internal errors. The message names the prim and the intrinsic; its location is the call's.
struct KernelProblem {
  std::string message; // empty when there is none
  SourceLoc loc;
};
KernelProblem check_kernel(const ir::PrimFunc& p);

} // namespace dsc::cpu
