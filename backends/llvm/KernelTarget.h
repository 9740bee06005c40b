#pragma once
// What the target-neutral kernel emitter (KernelCodegen.h) asks of the target it emits for.
//
// The boundary: backends/llvm turns a prim into LLVM IR for any target LLVM can compile
// (statements, serial/unrolled/vectorized loops with their llvm.loop metadata, expressions,
// casts, buffer access with alias scopes, intrinsics through ir/Intrinsics.def, symbolic
// index arithmetic, f16/bf16 conversions, the inline math polynomials). Everything that
// depends on how the code runs comes through this interface: which loop kinds map to threads
// (`parallel` outlined onto the CPU runtime's thread pool; GPU block and thread indices),
// the width of index arithmetic, how an effect such as a barrier is emitted, which library
// computes the math that has no inline lowering (libm on the CPU, libdevice on NVPTX), and
// where local buffers too large for the stack live.
//
// The headers of backends/llvm use LLVM types: it is an LLVM emitter by definition, and a
// backend that does not go through LLVM (CUDA C) shares ir/ and the tables, not this folder.
// Backends' public APIs (backends/cpu/CpuBackend.h) do not expose LLVM.
//
// One KernelTarget serves one kernel at a time and may keep state (a count of outlined
// functions, whether it is inside one).

#include <string>
#include <vector>

#include <llvm/IR/IRBuilder.h>

#include "ir/IR.h"
#include "ir/Intrinsics.h"

namespace dsc::llvmgen {

class KernelEmitter;

class KernelTarget {
public:
  virtual ~KernelTarget() = default;

  // The integer width (32 or 64) of loop variables, shape symbols, strides and element
  // offsets: ir::Target::index_bits. Symbols arrive as int64 (runtime/HostABI.h) and are
  // truncated to it; an index that does not fit it has no meaning.
  virtual int index_bits() const = 0;

  // Emits `f`, a loop of a kind the neutral emitter does not run itself (it runs Serial,
  // Unrolled and Vectorized), at the emitter's insertion point: `parallel` on the CPU, block
  // and thread loops on a GPU. emitter.emit_serial_for(f) runs it as a plain loop.
  virtual void emit_for(KernelEmitter& emitter, const ir::For& f) = 0;

  // `call`, an intrinsic called as a statement for its effect (Purity::Effect, or one the
  // table does not know). One the target cannot run is an internal error here: targets
  // report it as a user error before emitting (cpu::check_kernel).
  virtual void emit_effect(KernelEmitter& emitter, const ir::Intrinsic& call) = 0;

  // `fn` on `args` (all of one float type) where it has no inline code: the f64 math of
  // CpuLowering::Polynomial rows (exp, log, tanh, erf, pow).
  virtual llvm::Value* call_math_library(llvm::IRBuilder<>& b, const ir::IntrinsicDef& fn,
                                         const std::vector<llvm::Value*>& args) = 0;

  // A local buffer of `bytes` (an index-typed value) that does not fit the stack: its
  // memory, and its release at the end of the block that allocated it.
  virtual llvm::Value* heap_alloc(llvm::IRBuilder<>& b, llvm::Value* bytes, const std::string& name) = 0;
  virtual void heap_free(llvm::IRBuilder<>& b, llvm::Value* data) = 0;
};

} // namespace dsc::llvmgen
