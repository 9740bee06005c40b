#pragma once
// Symbolic shape expressions (symbolic/Expr.h) to LLVM IR, for kernels and host functions.
//
// Semantics are exactly symbolic/Expr.h's: Add, Sub and Mul wrap (the host checks shapes
// before any kernel runs, so in-range values never wrap); FloorDiv rounds toward negative
// infinity and FloorMod takes the divisor's sign; x / 0 == 0 and x % 0 == x; INT64_MIN / -1
// wraps to INT64_MIN instead of trapping. Constant divisors get branch-free code that LLVM
// turns into shifts and multiplications; other divisors get one guarded sdiv/srem pair.
//
// Values: integer-valued expressions are i64, or SymbolicOptions::type (a kernel's index
// type; constants are then truncated to it). `emit_symbolic` returns that type for every
// expression, booleans as 0 or 1; `emit_symbolic_bool` returns i1 for every expression,
// integers as `!= 0`. `symbol` maps a symbol's name to its value (any integer type; it is
// sign-extended or truncated to the type) and is called once per occurrence; it must not
// return null.

#include <functional>
#include <string>

#include <llvm/IR/IRBuilder.h>

#include "symbolic/Expr.h"

namespace dsc::llvmgen {

using SymbolLookup = std::function<llvm::Value*(const std::string&)>;

struct SymbolicOptions {
  // Put `nsw` on Add, Sub and Mul. Sound where the expression's value and every
  // subexpression's value fit int64 whenever the code runs (kernel index arithmetic over
  // buffers that exist); it lets LLVM's loop analyses see through the index arithmetic.
  bool no_signed_wrap = false;
  // The integer type of values; null for i64.
  llvm::IntegerType* type = nullptr;
  // When set, Add, Sub and Mul also detect signed overflow, and *overflowed becomes an i1
  // that is true when any of them overflowed (it is or-ed into a non-null *overflowed). For
  // sizes computed from user-given dims, which must not silently wrap.
  llvm::Value** overflowed = nullptr;
};

llvm::Value* emit_symbolic(llvm::IRBuilder<>& b, const symbolic::Expr& e,
                           const std::function<llvm::Value*(const std::string&)>& symbol);
llvm::Value* emit_symbolic(llvm::IRBuilder<>& b, const symbolic::Expr& e, const SymbolLookup& symbol,
                           const SymbolicOptions& options);

llvm::Value* emit_symbolic_bool(llvm::IRBuilder<>& b, const symbolic::Expr& e,
                                const std::function<llvm::Value*(const std::string&)>& symbol);
llvm::Value* emit_symbolic_bool(llvm::IRBuilder<>& b, const symbolic::Expr& e, const SymbolLookup& symbol,
                                const SymbolicOptions& options);

// Floor division and floor modulo of two integers of one type with the semantics above (constant
// divisors are recognised). Also used for the prim level's integer `/` and `%`; `a` and
// `b` may be any integer type of the same width.
llvm::Value* emit_floordiv(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y);
llvm::Value* emit_floormod(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y);

} // namespace dsc::llvmgen
