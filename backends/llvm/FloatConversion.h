#pragma once
// f16 and bf16 are storage formats in compiled kernels: a load widens the 16 bits to f32, all
// arithmetic is f32, and a store narrows back. These emit the conversions as branch-free
// integer IR (shifts, masks, selects, one exact uitofp), so that they vectorize and need no
// compiler-rt helper (__extendhfsf2, __truncsfhf2, ...) in the JIT or in a linked `.so`.
//
// Narrowing rounds to nearest, ties to even; values beyond the largest finite result become
// infinity, tiny ones become subnormals or zero with the sign kept. NaN stays NaN: its payload's
// high bits are kept and the quiet bit is set. Widening is exact, subnormals and NaN payloads
// included. All four work on scalars and on vectors of the same shape (i16 <-> float).

#include <llvm/IR/IRBuilder.h>

namespace dsc::llvmgen {

// i16 bits of an IEEE binary16 -> float.
llvm::Value* emit_f16_to_f32(llvm::IRBuilder<>& b, llvm::Value* bits);
// float -> i16 bits of the nearest binary16.
llvm::Value* emit_f32_to_f16(llvm::IRBuilder<>& b, llvm::Value* value);
// i16 bits of a bfloat16 -> float.
llvm::Value* emit_bf16_to_f32(llvm::IRBuilder<>& b, llvm::Value* bits);
// float -> i16 bits of the nearest bfloat16.
llvm::Value* emit_f32_to_bf16(llvm::IRBuilder<>& b, llvm::Value* value);

} // namespace dsc::llvmgen
