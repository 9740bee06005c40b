#pragma once
// Kernel code generation: one ir::PrimFunc to one LLVM function with the kernel ABI of
// runtime/HostABI.h:
//
//   void NAME(ptr buffers, ptr symbols)
//     buffers: the prim's inputs then outputs, as data pointers (dense, row-major; aligned to
//              their element size only; never overlapping);
//     symbols: int64 values of ir::prim_signature_symbols(prim), in that order (sorted by name).
//
// The function has external linkage; callers that want internal linkage set it. When the
// module already declares `symbol_name` (with this type), the declaration gets the body.
// Helpers it creates in the module (the bodies of parallel loops, "NAME.parallel.K"; math
// functions, "dsc.math.*"; integer pow, "dsc.ipow.*") are internal, the latter two shared by
// the kernels of one module. The math helpers are `alwaysinline` (every PassBuilder default
// pipeline, O0 included, inlines them; vectorizing a loop that calls one needs that).
// Kernels call only dsc_rt_parallel_for (HostABI.h), and malloc/free for local buffers of
// symbolic size; f32/f16/bf16 math is inline code. f64 exp, log, tanh, erf and pow call libm
// (exp, log, tanh, erf, pow): modules with f64 transcendental math need libm at link time.
//
// Semantics (docs/language.md, prim level):
// - Values live in registers as: bool i1, i8/i32/i64 as themselves, f16/bf16/f32 as float,
//   f64 as double; in memory bool is an i8 0/1 (loads treat any non-zero byte as true), f16
//   and bf16 are their 16 bits. f16/bf16 are storage formats: loads widen to f32, arithmetic
//   and locals are f32, and only stores into buffers and casts to f16/bf16 round (to nearest,
//   ties to even; see FloatConversion.h). FloatImm constants of dtype f16/bf16 are rounded.
// - Integers wrap (two's complement); `/` and `%` floor as in symbolic/Expr.h, x/0 == 0 and
//   x%0 == x. Index arithmetic (symbolic expressions over symbols and loop variables) is
//   emitted with nsw: an index whose value does not fit int64 has no meaning.
// - Float ops are IEEE without fast-math flags. min/max propagate NaN (llvm.minimum and
//   llvm.maximum); comparisons are ordered except `!=`, which is true on NaN.
// - Casts: float -> int saturates through i64 (NaN -> 0) then wraps to narrower integers;
//   anything -> bool is `!= 0`; bool -> number is 0 or 1.
// - Loops run min, ..., min + extent - 1 (none when extent <= 0). `vectorize` loops carry
//   llvm.loop.vectorize.enable (LLVM's loop vectorizer then vectorizes them with a scalar
//   tail, and may reorder float reductions into vector accumulators; loops that call libm
//   or integer pow get no hint, since the vectorizer cannot widen those calls); `unroll`
//   loops carry llvm.loop.unroll.full when the extent is a constant, else
//   llvm.loop.unroll.enable.
// - `parallel` loops are outlined into "NAME.parallel.K"(ptr ctx, i64 begin, i64 end) and run
//   by dsc_rt_parallel_for. Perfectly nested parallel loops (a parallel loop whose body is
//   just another parallel loop whose bounds do not use the outer variable) are collapsed
//   into one range over the product of their extents. A parallel loop inside a parallel
//   body runs serially. The grain is chosen at run time so that a chunk does at least ~16K
//   statement executions: grain = max(1, 16384 / work), where `work` estimates one
//   iteration's statement count from the extents of the inner loops whose bounds are known
//   when the loop starts. The body captures, by value, every symbol, loop variable and local
//   in scope, and every buffer pointer: locals declared outside and assigned inside are
//   private copies (their assignments are not seen after the loop), locals declared inside
//   are private to the iteration, and buffers allocated outside are shared.
// - `alloc` of constant size is a stack slot in the function's entry block (per thread in a
//   parallel body); of symbolic size, malloc at the statement and free at the end of the
//   enclosing block. All scopes (local, shared, global) are treated alike.
// - Buffers never overlap: every access carries scoped noalias metadata (a scope per buffer).
//
// User errors have been reported before code generation; a construct no CPU kernel can run
// (an intrinsic statement the CPU does not know) is an internal error: see check_kernel.
// A `vectorize` loop that LLVM still cannot vectorize (a conditional store of a type the
// target cannot mask, say) makes LLVM report a "loop not vectorized" warning through the
// LLVMContext's diagnostic handler; the code stays correct.

#include <string>

#include <llvm/IR/Function.h>
#include <llvm/IR/Module.h>

#include "ir/Module.h"

namespace dsc::cpu {

llvm::Function* emit_kernel(llvm::Module& m, const ir::PrimFunc& p, const std::string& symbol_name);

// Why the CPU backend cannot compile `p`, or empty when it can: the only user-reachable
// case is an intrinsic called as a statement that the CPU does not know (`foo(x)`; the
// known no-op is sync_threads()). Call it before emit_kernel, which treats such prims as
// internal errors. The message names the prim and the intrinsic; its location is the call's.
struct KernelProblem {
  std::string message; // empty when there is none
  SourceLoc loc;
};
KernelProblem check_kernel(const ir::PrimFunc& p);

// Runs llvm::verifyFunction on `f` and the functions it outlined (same name prefix); returns
// the verifier's messages, empty when the IR is well formed.
std::string verify_kernel(const llvm::Function& f);

} // namespace dsc::cpu
