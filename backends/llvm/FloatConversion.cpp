#include "backends/llvm/FloatConversion.h"

#include <llvm/IR/Constants.h>

namespace dsc::llvmgen {

namespace {

// A constant of `like`'s type (a scalar or a splat vector of the same shape).
llvm::Constant* k(llvm::Value* like, uint64_t v) { return llvm::ConstantInt::get(like->getType(), v); }

// The integer type with `bits` bits, of the same shape as `like` (scalar or vector).
llvm::Type* int_like(llvm::Value* like, unsigned bits) {
  llvm::Type* t = llvm::IntegerType::get(like->getContext(), bits);
  if (auto* vt = llvm::dyn_cast<llvm::VectorType>(like->getType())) return llvm::VectorType::get(t, vt);
  return t;
}

llvm::Type* float_like(llvm::Value* like) {
  llvm::Type* t = llvm::Type::getFloatTy(like->getContext());
  if (auto* vt = llvm::dyn_cast<llvm::VectorType>(like->getType())) return llvm::VectorType::get(t, vt);
  return t;
}

// Rounds `m >> s` to nearest, ties to even (s in [1, 31]; all values i32).
llvm::Value* shift_right_rne(llvm::IRBuilder<>& b, llvm::Value* m, llvm::Value* s) {
  llvm::Value* q = b.CreateLShr(m, s);
  llvm::Value* one = k(m, 1);
  llvm::Value* half = b.CreateShl(one, b.CreateSub(s, one));
  llvm::Value* rem = b.CreateAnd(m, b.CreateSub(b.CreateShl(one, s), one));
  llvm::Value* up = b.CreateOr(b.CreateICmpUGT(rem, half),
                               b.CreateAnd(b.CreateICmpEQ(rem, half), b.CreateICmpNE(b.CreateAnd(q, one), k(m, 0))));
  return b.CreateAdd(q, b.CreateZExt(up, m->getType()));
}

} // namespace

llvm::Value* emit_f16_to_f32(llvm::IRBuilder<>& b, llvm::Value* bits) {
  llvm::Value* h = b.CreateZExt(bits, int_like(bits, 32));
  llvm::Value* sign = b.CreateShl(b.CreateAnd(h, k(h, 0x8000)), 16);
  llvm::Value* em = b.CreateAnd(h, k(h, 0x7fff)); // exponent and mantissa
  // Normal: move the fields into place and rebias the exponent (15 -> 127).
  llvm::Value* normal = b.CreateAdd(b.CreateShl(em, 13), k(h, (127 - 15) << 23));
  // Infinity and NaN: all-ones exponent, the payload kept.
  llvm::Value* special = b.CreateOr(b.CreateShl(em, 13), k(h, 0x7f800000));
  // Zero and subnormal: em * 2^-24 exactly (em < 2^10, so the float is exact and normal).
  llvm::Value* tiny_f = b.CreateFMul(b.CreateUIToFP(em, float_like(h)),
                                     llvm::ConstantFP::get(float_like(h), 0x1p-24));
  llvm::Value* tiny = b.CreateBitCast(tiny_f, h->getType());
  llvm::Value* mag = b.CreateSelect(b.CreateICmpUGE(em, k(h, 0x7c00)), special, normal);
  mag = b.CreateSelect(b.CreateICmpULT(em, k(h, 0x0400)), tiny, mag);
  return b.CreateBitCast(b.CreateOr(sign, mag), float_like(h));
}

llvm::Value* emit_f32_to_f16(llvm::IRBuilder<>& b, llvm::Value* value) {
  llvm::Value* u = b.CreateBitCast(value, int_like(value, 32));
  llvm::Value* sign = b.CreateAnd(b.CreateLShr(u, 16), k(u, 0x8000));
  llvm::Value* a = b.CreateAnd(u, k(u, 0x7fffffff));
  // NaN: quiet, with the payload's top bits.
  llvm::Value* nan = b.CreateOr(k(u, 0x7e00), b.CreateAnd(b.CreateLShr(a, 13), k(u, 0x3ff)));
  // Normal results: rebias (127 -> 15) and round the 13 dropped bits to nearest even. A carry
  // out of the mantissa correctly bumps the exponent.
  llvm::Value* lsb = b.CreateAnd(b.CreateLShr(a, 13), k(u, 1));
  llvm::Value* rounded = b.CreateAdd(a, b.CreateAdd(k(u, 0xfff), lsb));
  llvm::Value* normal = b.CreateLShr(b.CreateSub(rounded, k(u, (127 - 15) << 23)), 13);
  // Subnormal results (|x| < 2^-14): the significand with its implicit bit, shifted right by
  // 126 - e, rounded. Shifts of 25 or more leave nothing; clamping them to 31 keeps the shift
  // defined and still gives 0 (the significand is below 2^24).
  llvm::Value* e = b.CreateLShr(a, 23);
  llvm::Value* m = b.CreateOr(b.CreateAnd(a, k(u, 0x7fffff)), k(u, 0x800000));
  llvm::Value* s = b.CreateSub(k(u, 126), e);
  s = b.CreateSelect(b.CreateICmpUGT(s, k(u, 31)), k(u, 31), s);
  llvm::Value* sub = shift_right_rne(b, m, s);
  // 0x38800000 is 2^-14, the smallest normal half; 0x477ff000 is 65520, the first value that
  // rounds to infinity (65504 is the largest half).
  llvm::Value* mag = b.CreateSelect(b.CreateICmpULT(a, k(u, 0x38800000)), sub, normal);
  mag = b.CreateSelect(b.CreateICmpUGE(a, k(u, 0x477ff000)), k(u, 0x7c00), mag);
  mag = b.CreateSelect(b.CreateICmpUGT(a, k(u, 0x7f800000)), nan, mag);
  return b.CreateTrunc(b.CreateOr(sign, mag), int_like(u, 16));
}

llvm::Value* emit_bf16_to_f32(llvm::IRBuilder<>& b, llvm::Value* bits) {
  llvm::Value* h = b.CreateZExt(bits, int_like(bits, 32));
  return b.CreateBitCast(b.CreateShl(h, 16), float_like(h));
}

llvm::Value* emit_f32_to_bf16(llvm::IRBuilder<>& b, llvm::Value* value) {
  llvm::Value* u = b.CreateBitCast(value, int_like(value, 32));
  llvm::Value* a = b.CreateAnd(u, k(u, 0x7fffffff));
  // Round the 16 dropped bits to nearest even; finite values that round past the largest
  // bf16 carry into the exponent and become infinity, as they should.
  llvm::Value* lsb = b.CreateAnd(b.CreateLShr(u, 16), k(u, 1));
  llvm::Value* rounded = b.CreateLShr(b.CreateAdd(u, b.CreateAdd(k(u, 0x7fff), lsb)), 16);
  llvm::Value* nan = b.CreateOr(b.CreateLShr(u, 16), k(u, 0x40));
  llvm::Value* r = b.CreateSelect(b.CreateICmpUGT(a, k(u, 0x7f800000)), nan, rounded);
  return b.CreateTrunc(r, int_like(u, 16));
}

} // namespace dsc::llvmgen
