#pragma once
// Kernel code generation, target-neutral: one ir::PrimFunc to one LLVM function with the
// kernel ABI of runtime/HostABI.h, for the target described by a KernelTarget
// (KernelTarget.h says where the line between the two runs):
//
//   void NAME(ptr buffers, ptr symbols)
//     buffers: the prim's inputs then outputs, as data pointers (dense, row-major; aligned to
//              their element size only; never overlapping);
//     symbols: int64 values of ir::prim_signature_symbols(prim), in that order (sorted by name).
//
// The function has external linkage; callers that want internal linkage set it. When the
// module already declares `symbol_name` (with this type), the declaration gets the body.
// Helpers it creates in the module are internal: math functions ("dsc.math.*") and integer
// pow ("dsc.ipow.*"), shared by the kernels of one module, and whatever the target outlines,
// which it names "NAME.*". The math helpers are `alwaysinline` (every PassBuilder default
// pipeline, O0 included, inlines them; vectorizing a loop that calls one needs that).
// f32/f16/bf16 math is inline code; f64 exp, log, tanh, erf and pow go through
// KernelTarget::call_math_library.
//
// Semantics (docs/language.md, prim level):
// - Values live in registers as: bool i1, i8/i32/i64 as themselves, f16/bf16/f32 as float,
//   f64 as double; in memory bool is an i8 0/1 (loads treat any non-zero byte as true), f16
//   and bf16 are their 16 bits. f16/bf16 are storage formats: loads widen to f32, arithmetic
//   and locals are f32, and only stores into buffers and casts to f16/bf16 round (to nearest,
//   ties to even; see FloatConversion.h). FloatImm constants of dtype f16/bf16 are rounded.
// - Integers wrap (two's complement); `/` and `%` floor as in symbolic/Expr.h, x/0 == 0 and
//   x%0 == x. Index arithmetic (symbolic expressions over symbols and loop variables) is
//   emitted in the target's index type (KernelTarget::index_bits) with nsw: an index whose
//   value does not fit it has no meaning.
// - Float ops are IEEE without fast-math flags. min/max propagate NaN (llvm.minimum and
//   llvm.maximum); comparisons are ordered except `!=`, which is true on NaN.
// - Casts: float -> int saturates through i64 (NaN -> 0) then wraps to narrower integers;
//   anything -> bool is `!= 0`; bool -> number is 0 or 1.
// - Loops run min, ..., min + extent - 1 (none when extent <= 0). `vectorize` loops carry
//   llvm.loop.vectorize.enable (LLVM's loop vectorizer then vectorizes them with a scalar
//   tail, and may reorder float reductions into vector accumulators; loops that call the
//   math library or integer pow get no hint, since the vectorizer cannot widen those calls);
//   `unroll` loops carry llvm.loop.unroll.full when the extent is a constant, else
//   llvm.loop.unroll.enable. Loops of other kinds are the target's (KernelTarget::emit_for).
// - `alloc` of constant size is a stack slot in the function's entry block (per thread in a
//   function the target outlined); larger or of symbolic size, KernelTarget::heap_alloc at
//   the statement and heap_free at the end of the enclosing block. All scopes (local, shared,
//   global) are treated alike.
// - Buffers never overlap: every access carries scoped noalias metadata (a scope per buffer).
//
// User errors have been reported before code generation; a construct the target cannot run
// is an internal error (the target checks prims first: cpu::check_kernel). A `vectorize` loop
// that LLVM still cannot vectorize (a conditional store of a type the target cannot mask,
// say) makes LLVM report a "loop not vectorized" warning through the LLVMContext's diagnostic
// handler; the code stays correct.

#include <string>

#include <llvm/IR/Function.h>
#include <llvm/IR/Module.h>

#include "backends/llvm/KernelTarget.h"
#include "ir/Module.h"

namespace dsc::llvmgen {

llvm::Function* emit_kernel(llvm::Module& m, const ir::PrimFunc& p, const std::string& symbol_name,
                            KernelTarget& target);

// Runs llvm::verifyFunction on `f` and the functions its target outlined ("NAME.*"); returns
// the verifier's messages, empty when the IR is well formed.
std::string verify_kernel(const llvm::Function& f);

} // namespace dsc::llvmgen
