#pragma once
// The transcendental functions of kernels, as internal `alwaysinline` LLVM functions created in
// the module on first use ("dsc.math.exp.f32", ...), so that the loop vectorizer sees straight-
// line code it can widen after inlining.
//
// f32 (f16 and bf16 compute in f32): branch-free polynomial code, no calls.
//   exp      Cody-Waite reduction by ln 2, degree-6 polynomial, scaling in two steps so that
//            results that are subnormal round once. exp(x) = inf for x > 88.72, 0 below -103.97.
//   log      x = 2^k m with m in [sqrt(1/2), sqrt(2)), degree-11 polynomial of log1p(m - 1).
//            log(0) = -inf, log(x < 0) = NaN, log(inf) = inf; subnormals are exact.
//   tanh     odd polynomial below 0.55, else 1 - 2 / (exp(2|x|) + 1) with the sign restored.
//   erf      odd polynomial below 1, else 1 - exp(-x^2) R(x) with R a polynomial up to 3.92,
//            where erf rounds to 1.
//   sigmoid  e / (1 + e) or 1 / (1 + e) with e = exp(-|x|): no overflow, right tails.
//   pow      exp2(y log2 |x|) in double (polynomials accurate to ~1e-14), rounded once to
//            float, with every special case of C99 powf.
//   sin cos  x = (n + v) pi/2 in double for every finite x, exactly enough however large x is
//            (2/pi's bits by x's exponent from a table of 254 rows of three doubles, the
//            module's "dsc.math.two_over_pi_by_exponent"), then Taylor polynomials of sin and
//            cos of v pi/2 in double chosen and signed by n mod 4, rounded once to float.
//            sin(+-inf) = cos(+-inf) = NaN.
// f64: exp, log, tanh, erf, sin, cos and pow call the target's math library (libm on the CPU);
// sigmoid is built on exp. The loop vectorizer then keeps those loops scalar.
//
// Integer pow (`pow` on i8/i32/i64): x^y by squaring, wrapping; y < 0 gives 0 except for
// x = 1 (1) and x = -1 (+-1), as the reference interpreter does.

#include <functional>
#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include "ir/Intrinsics.h"

namespace dsc::llvmgen {

// Emits the math library's `fn` on `args` (KernelTarget::call_math_library).
using MathLibrary = std::function<llvm::Value*(llvm::IRBuilder<>& b, const ir::IntrinsicDef& fn,
                                               const std::vector<llvm::Value*>& args)>;

// The function computing `fn`, an intrinsic whose row in ir/Intrinsics.def says
// CpuLowering::Polynomial, on `type` (float or double), taking `fn.arity` arguments. `library`
// is called while the function is first created, for the f64 math.
llvm::Function* get_math_function(llvm::Module& m, const ir::IntrinsicDef& fn, llvm::Type* type,
                                  const MathLibrary& library);

// i8/i32/i64 (x, y) -> x^y.
llvm::Function* get_integer_pow_function(llvm::Module& m, llvm::IntegerType* type);

} // namespace dsc::llvmgen
