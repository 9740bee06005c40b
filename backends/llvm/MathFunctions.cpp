#include "backends/llvm/MathFunctions.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>
#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>

#include "support/Assert.h"

namespace dsc::llvmgen {

namespace {

// Polynomial coefficients, lowest degree first. Each was fitted for this file: a weighted
// least-squares fit on Chebyshev nodes, iterated (Lawson) towards minimax of the error of the
// final result, with the coefficients rounded to float one at a time, lowest first, and the
// rest refitted after each rounding. The weighted errors are before evaluation rounding.

// e^r = 1 + r + r^2 Q(r) on [-ln2/2, ln2/2]; error relative to e^r 3.1e-9.
constexpr float kExpQ[] = {0x1.fffffcp-2f, 0x1.555492p-3f, 0x1.5558aep-5f, 0x1.12397cp-7f, 0x1.6a4f52p-10f};
// log1p(f) = f - f^2/2 + f^3 Q(f) on [sqrt(1/2) - 1, sqrt(2) - 1]; error relative to
// log1p(f) 7.7e-10.
constexpr float kLog1pQ[] = {0x1.555548p-2f,  -0x1.000006p-2f, 0x1.99a478p-3f,  -0x1.555c4ep-3f, 0x1.233b78p-3f,
                             -0x1.fc26acp-4f, 0x1.e6c03ep-4f,  -0x1.de1004p-4f, 0x1.1484e8p-4f};
// tanh(x) = x + x^3 Q(x^2) for |x| <= 0.55; error relative to tanh 1.1e-9.
constexpr float kTanhQ[] = {-0x1.55554ap-2f, 0x1.110cf2p-3f, -0x1.b91f92p-5f, 0x1.58f088p-6f, -0x1.996dcap-8f};
// erf(x) = x + x P(x^2) for |x| <= 1; error relative to erf 1.4e-9.
constexpr float kErfSmall[] = {0x1.06eba8p-3f,  -0x1.81273ep-2f, 0x1.ce2ce6p-4f, -0x1.b7f71ap-6f,
                               0x1.53f224p-8f,  -0x1.a3515ep-11f, 0x1.4771fcp-14f};
// erfc(x) e^(x^2) = R(x - 2.46) for 1 <= x <= 3.92; error relative to erf 9e-12.
constexpr float kErfcCenter = 2.46f;
constexpr float kErfcScaled[] = {0x1.b5e79ep-3f,  -0x1.38dbb8p-4f,  0x1.a8b5b6p-6f,  -0x1.138beep-7f, 0x1.5732aap-9f,
                                 -0x1.9b0b72p-11f, 0x1.e8036ap-13f, -0x1.0a57b8p-14f, 0x1.b82660p-17f, -0x1.179d7ep-17f,
                                 0x1.5bccc8p-20f, 0x1.d96a5ap-21f,  0x1.121006p-21f};

// 2/pi in binary, most significant bit first (2/pi = 0x0.a2f9836e4e44...): 288 bits, of which
// sin and cos read up to bit 211.
constexpr uint32_t kTwoOverPiBits[] = {0xa2f9836e, 0x4e441529, 0xfc2757d1, 0xf534ddc0, 0xdb629599,
                                       0x3c439041, 0xfe5163ab, 0xdebbc561, 0xb7246e3a};

// ln 2 split so that n * kLn2Hi is exact for |n| < 2^9; kLn2Lo is the float nearest the rest.
constexpr float kLn2Hi = 0x1.62e4p-1f;
constexpr float kLn2Lo = 0x1.7f7d1cp-20f;
constexpr float kLog2E = 0x1.715476p+0f;
// Adding 1.5 * 2^23 + 254 rounds a float of magnitude < 2^22 to an integer, which plus 254 is
// then the low bits of the sum's representation (emit_exp_f32).
constexpr float kExpMagic = 0x1.8p23f + 254.0f;
constexpr int32_t kSqrtHalfBits = 0x3f3504f3;

constexpr double kLn2D = 0x1.62e42fefa39efp-1;
constexpr double kLog2ED = 0x1.71547652b82fep+0;
constexpr double kRoundMagicD = 0x1.8p52;
constexpr int64_t kRoundMagicBitsD = 0x4338000000000000;
constexpr int64_t kSqrtHalfBitsD = 0x3fe6a09e667f3bcd;

constexpr double kPiOver2D = 0x1.921fb54442d18p+0;

// Emission helpers over one floating-point type (scalar or vector of it).
class Ops {
public:
  Ops(llvm::IRBuilder<>& builder, llvm::Type* type) : b(builder), t(type) {}

  llvm::Value* c(double v) const { return llvm::ConstantFP::get(t, v); }
  llvm::Value* ci(int64_t v) const { return llvm::ConstantInt::get(int_type(), static_cast<uint64_t>(v), true); }
  llvm::Type* int_type() const { return b.getIntNTy(t->getScalarSizeInBits()); }
  llvm::Value* fma(llvm::Value* x, llvm::Value* y, llvm::Value* z) const {
    return b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {t}, {x, y, z});
  }
  template <size_t N> llvm::Value* horner(llvm::Value* x, const float (&coeffs)[N]) const {
    llvm::Value* p = c(coeffs[N - 1]);
    for (size_t i = N - 1; i-- > 0;)
      p = fma(p, x, c(coeffs[i]));
    return p;
  }
  llvm::Value* horner(llvm::Value* x, const double* coeffs, size_t n) const {
    llvm::Value* p = c(coeffs[n - 1]);
    for (size_t i = n - 1; i-- > 0;)
      p = fma(p, x, c(coeffs[i]));
    return p;
  }
  llvm::Value* fabs(llvm::Value* x) const { return b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x); }
  llvm::Value* copysign(llvm::Value* mag, llvm::Value* sign) const {
    return b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, mag, sign);
  }
  llvm::Value* is_nan(llvm::Value* x) const { return b.CreateFCmpUNO(x, x); }
  // x clamped to [lo, hi]; NaN passes through.
  llvm::Value* clamp(llvm::Value* x, double lo, double hi) const {
    x = b.CreateSelect(b.CreateFCmpOGT(x, c(hi)), c(hi), x);
    return b.CreateSelect(b.CreateFCmpOLT(x, c(lo)), c(lo), x);
  }
  llvm::Value* bits(llvm::Value* x) const { return b.CreateBitCast(x, int_type()); }
  llvm::Value* from_bits(llvm::Value* i) const { return b.CreateBitCast(i, t); }

  llvm::IRBuilder<>& b;
  llvm::Type* t;
};

// ---------------------------------------------------------------- f32

llvm::Value* emit_exp_f32(llvm::IRBuilder<>& b, llvm::Value* x) {
  Ops o(b, x->getType());
  // Beyond [-104, 89] the result is 0 or inf anyway; the clamp keeps the scale exponents in
  // range. A NaN passes the clamp (its compares are false) and stays NaN through the
  // arithmetic below; the integer work on its bits only builds scale factors it multiplies.
  llvm::Value* xc = o.clamp(x, -104.0, 89.0);
  // n = round(x / ln2), r = x - n ln2 in [-ln2/2, ln2/2] (Cody and Waite). Adding the magic
  // number rounds to an integer and leaves n + 254 in the low bits of t (254 + n is in
  // [104, 383] here).
  llvm::Value* t = o.fma(xc, o.c(kLog2E), o.c(kExpMagic));
  llvm::Value* nf = b.CreateFSub(t, o.c(kExpMagic));
  llvm::Value* r = o.fma(nf, o.c(-kLn2Hi), xc);
  r = o.fma(nf, o.c(-kLn2Lo), r);
  llvm::Value* q = o.horner(r, kExpQ);
  llvm::Value* p = b.CreateFAdd(o.fma(b.CreateFMul(r, r), q, r), o.c(1.0));
  // 2^n in two factors, each a normal float for n in [-150, 129]: the first product is exact,
  // the second rounds once, also into the subnormals. Their biased exponents are
  // e1 = (n + 254) >> 1 = (n >> 1) + 127 and e2 = (n + 254) - e1 = n - (n >> 1) + 127. They are
  // read from t's bits directly: shifting left by 23 drops everything above their 9 low bits,
  // where t's own exponent bits are zero.
  llvm::Value* tb = o.bits(t);
  llvm::Value* half = b.CreateLShr(tb, 1);
  llvm::Value* s1 = o.from_bits(b.CreateShl(half, 23));
  llvm::Value* s2 = o.from_bits(b.CreateShl(b.CreateSub(tb, half), 23));
  return b.CreateFMul(b.CreateFMul(p, s1), s2);
}

llvm::Value* emit_log_f32(llvm::IRBuilder<>& b, llvm::Value* x) {
  Ops o(b, x->getType());
  // Subnormals are scaled into the normals first.
  llvm::Value* tiny = b.CreateFCmpOLT(x, o.c(0x1p-126));
  llvm::Value* xs = b.CreateSelect(tiny, b.CreateFMul(x, o.c(0x1p23)), x);
  // x = 2^k m with m in [sqrt(1/2), sqrt(2)); f = m - 1 is exact.
  llvm::Value* ix = o.bits(xs);
  llvm::Value* e = b.CreateAShr(b.CreateSub(ix, o.ci(kSqrtHalfBits)), 23);
  llvm::Value* k = b.CreateAdd(e, b.CreateSelect(tiny, o.ci(-23), o.ci(0)));
  llvm::Value* m = o.from_bits(b.CreateSub(ix, b.CreateShl(e, 23)));
  llvm::Value* f = b.CreateFSub(m, o.c(1.0));
  llvm::Value* f2 = b.CreateFMul(f, f);
  llvm::Value* y = o.fma(b.CreateFMul(f2, f), o.horner(f, kLog1pQ), b.CreateFMul(f2, o.c(-0.5)));
  llvm::Value* kf = b.CreateSIToFP(k, o.t);
  llvm::Value* res = o.fma(kf, o.c(kLn2Lo), y);
  res = b.CreateFAdd(res, f);
  res = o.fma(kf, o.c(kLn2Hi), res);
  const double inf = std::numeric_limits<double>::infinity();
  res = b.CreateSelect(b.CreateFCmpOEQ(x, o.c(0.0)), o.c(-inf), res);
  res = b.CreateSelect(b.CreateFCmpOLT(x, o.c(0.0)), o.c(std::numeric_limits<double>::quiet_NaN()), res);
  res = b.CreateSelect(b.CreateFCmpOEQ(x, o.c(inf)), o.c(inf), res);
  return b.CreateSelect(o.is_nan(x), x, res);
}

llvm::Value* emit_tanh_f32(llvm::IRBuilder<>& b, llvm::Value* x) {
  Ops o(b, x->getType());
  llvm::Value* a = o.fabs(x);
  llvm::Value* u = b.CreateFMul(a, a);
  llvm::Value* small = o.fma(b.CreateFMul(a, u), o.horner(u, kTanhQ), a);
  // 1 - 2 / (e^(2a) + 1); tanh(20) is 1 in float.
  llvm::Value* e = emit_exp_f32(b, b.CreateFMul(o.clamp(a, 0.0, 20.0), o.c(2.0)));
  llvm::Value* large = b.CreateFSub(o.c(1.0), b.CreateFDiv(o.c(2.0), b.CreateFAdd(e, o.c(1.0))));
  llvm::Value* res = b.CreateSelect(b.CreateFCmpOLT(a, o.c(0.55)), small, large);
  return o.copysign(res, x);
}

llvm::Value* emit_erf_f32(llvm::IRBuilder<>& b, llvm::Value* x) {
  Ops o(b, x->getType());
  llvm::Value* a = o.fabs(x);
  llvm::Value* small = o.fma(a, o.horner(b.CreateFMul(a, a), kErfSmall), a);
  // erf = 1 - e^(-a^2) R(a); past 3.92 erf(a) rounds to 1.
  llvm::Value* ac = o.clamp(a, 1.0, 3.92);
  llvm::Value* r = o.horner(b.CreateFSub(ac, o.c(kErfcCenter)), kErfcScaled);
  llvm::Value* e = emit_exp_f32(b, b.CreateFNeg(b.CreateFMul(ac, ac)));
  llvm::Value* large = o.fma(b.CreateFNeg(e), r, o.c(1.0));
  llvm::Value* res = b.CreateSelect(b.CreateFCmpOLT(a, o.c(1.0)), small, large);
  res = b.CreateSelect(b.CreateFCmpOGT(a, o.c(3.92)), o.c(1.0), res);
  return o.copysign(res, x);
}

// Bits [first, first + count) of 2/pi, bit i worth 2^-i, as an integer; count <= 53.
uint64_t two_over_pi_bits(int first, int count) {
  internal_assert(first >= 1 && count <= 53 &&
                  static_cast<size_t>(first + count - 1) <= 32 * std::size(kTwoOverPiBits))
      << "bits " << first << ".." << first + count - 1 << " of 2/pi";
  uint64_t v = 0;
  for (int i = first; i < first + count; ++i) {
    uint32_t word = kTwoOverPiBits[(i - 1) / 32];
    v = (v << 1) | ((word >> (31 - (i - 1) % 32)) & 1u);
  }
  return v;
}

// The argument reduction of sin and cos on floats (Payne and Hanek, with a table). A finite
// |x| is M 2^E with M an integer below 2^24 and E in [-149, 104]; then x 2/pi is, modulo 4
// (which the quadrant only needs), M F_E with F_E = 2^E 2/pi less its multiples of 4: the bits
// of 2/pi from 2^1 down, at most 4. Row e - 1 of the table (e the biased exponent, 1 for
// subnormals) holds F_E as three doubles of 28, 28 and 53 bits, so that M F1 and M F2 are
// exact: the reduced v is within 2^-82 of exact before its last rounding, and the float nearest
// a multiple of pi/2, 16367173 * 2^72, has |v| = 2^-29.9 (an exhaustive search), so v keeps
// more than 50 bits for every float.
llvm::GlobalVariable* reduction_table(llvm::Module& m) {
  const char* name = "dsc.math.two_over_pi_by_exponent";
  if (llvm::GlobalVariable* g = m.getNamedGlobal(name)) return g;
  std::vector<double> rows;
  for (int e = 1; e <= 254; ++e) {
    int exp2 = e - 150; // E
    int first = std::max(1, exp2 - 1);
    rows.push_back(std::ldexp(static_cast<double>(two_over_pi_bits(first, 28)), exp2 - first - 27));
    rows.push_back(
        std::ldexp(static_cast<double>(two_over_pi_bits(first + 28, 28)), exp2 - first - 55));
    rows.push_back(
        std::ldexp(static_cast<double>(two_over_pi_bits(first + 56, 53)), exp2 - first - 108));
  }
  llvm::Constant* init = llvm::ConstantDataArray::get(m.getContext(), rows);
  auto* g = new llvm::GlobalVariable(m, init->getType(), true, llvm::GlobalValue::PrivateLinkage,
                                     init, name);
  g->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  return g;
}

// sin or cos of a float: x = (n + v) pi/2 with |v| <= 1/2 computed in double from the table,
// then the Taylor polynomial of sin or cos at r = v pi/2 (|r| <= pi/4, truncation below 1e-11
// relative), chosen and signed by n mod 4, rounded once to float. Branch-free: the three
// table reads vectorize as gathers.
llvm::Value* emit_sin_cos_f32(llvm::IRBuilder<>& b, llvm::Module& m, llvm::Value* x, bool cosine) {
  Ops o(b, x->getType());
  llvm::Type* f64 = b.getDoubleTy();
  Ops d(b, f64);
  llvm::Type* i32 = o.int_type();
  auto k32 = [&](int64_t v) { return llvm::ConstantInt::get(i32, static_cast<uint64_t>(v), true); };
  llvm::Value* ix = b.CreateAnd(o.bits(x), k32(0x7fffffff));
  llvm::Value* e = b.CreateLShr(ix, 23);
  llvm::Value* normal = b.CreateICmpNE(e, k32(0));
  llvm::Value* mant = b.CreateAnd(ix, k32(0x7fffff));
  llvm::Value* big_m = b.CreateSelect(normal, b.CreateOr(mant, k32(0x800000)), mant);
  // Infinity and NaN (e = 255) read the last row; their result is replaced below.
  llvm::Value* row = b.CreateSub(b.CreateSelect(normal, e, k32(1)), k32(1));
  row = b.CreateSelect(b.CreateICmpUGT(row, k32(253)), k32(253), row);
  llvm::GlobalVariable* table = reduction_table(m);
  llvm::Value* base = b.CreateZExt(b.CreateMul(row, k32(3)), b.getInt64Ty());
  auto part = [&](int k) {
    llvm::Value* at = b.CreateInBoundsGEP(f64, table, b.CreateAdd(base, b.getInt64(k)));
    return b.CreateLoad(f64, at);
  };
  llvm::Value* md = b.CreateUIToFP(big_m, f64);
  auto nearest = [&](llvm::Value* v) { // |v| < 2^51
    return b.CreateFSub(b.CreateFAdd(v, d.c(kRoundMagicD)), d.c(kRoundMagicD));
  };
  // M F1 = n1 + lo1 exactly; lo1 + M F2 = n2 + hi, exact where |hi| < 1/2 (where a tiny
  // result cancels); then the last part.
  llvm::Value* a = b.CreateFMul(md, part(0));
  llvm::Value* n1 = nearest(a);
  llvm::Value* lo1 = b.CreateFSub(a, n1);
  llvm::Value* p2 = b.CreateFMul(md, part(1));
  llvm::Value* n2 = nearest(b.CreateFAdd(lo1, p2));
  llvm::Value* hi = b.CreateFAdd(b.CreateFSub(lo1, n2), p2);
  llvm::Value* v = d.fma(md, part(2), hi);
  llvm::Value* r = b.CreateFMul(v, d.c(kPiOver2D));
  llvm::Value* r2 = b.CreateFMul(r, r);
  double sin_series[6], cos_series[7]; // (-1)^k / (2k+1)! and (-1)^k / (2k)!
  double f = 1.0;
  for (int k = 0; k < 7; ++k) {
    if (k > 0) f *= -(2.0 * k - 1) * (2.0 * k);
    cos_series[k] = 1.0 / f;
    if (k < 6) sin_series[k] = 1.0 / (f * (2.0 * k + 1));
  }
  llvm::Value* sin_r = b.CreateFMul(r, d.horner(r2, sin_series, 6));
  llvm::Value* cos_r = d.horner(r2, cos_series, 7);
  // sin(x) for x = n pi/2 + r by n mod 4: sin r, cos r, -sin r, -cos r; cos(x) = sin(x + pi/2).
  llvm::Value* q = b.CreateAdd(b.CreateFPToSI(n1, i32), b.CreateFPToSI(n2, i32));
  if (cosine) q = b.CreateAdd(q, k32(1));
  llvm::Value* odd = b.CreateICmpNE(b.CreateAnd(q, k32(1)), k32(0));
  llvm::Value* negate = b.CreateAnd(q, k32(2));
  // sin is odd, cos even.
  if (!cosine) negate = b.CreateXor(negate, b.CreateLShr(o.bits(x), 30));
  llvm::Value* res = b.CreateFPTrunc(b.CreateSelect(odd, cos_r, sin_r), o.t);
  res = b.CreateSelect(b.CreateICmpNE(b.CreateAnd(negate, k32(2)), k32(0)), b.CreateFNeg(res), res);
  // sin and cos of infinity and NaN are NaN.
  return b.CreateSelect(b.CreateICmpUGE(ix, k32(0x7f800000)), b.CreateFSub(x, x), res);
}

llvm::Value* emit_sigmoid(llvm::IRBuilder<>& b, llvm::Value* x,
                          const std::function<llvm::Value*(llvm::IRBuilder<>&, llvm::Value*)>& exp) {
  Ops o(b, x->getType());
  // With e = e^-|x|: 1 / (1 + e) for x >= 0, e / (1 + e) below; neither overflows, and the
  // left tail keeps exp's relative accuracy.
  llvm::Value* e = exp(b, b.CreateFNeg(o.fabs(x)));
  llvm::Value* num = b.CreateSelect(b.CreateFCmpOGE(x, o.c(0.0)), o.c(1.0), e);
  return b.CreateFDiv(num, b.CreateFAdd(o.c(1.0), e));
}

// log2(d) for a positive, finite, normal double, to about 1e-15 relative:
// d = 2^k m with m in [sqrt(1/2), sqrt(2)), ln m = 2 atanh(s) with s = (m - 1) / (m + 1).
llvm::Value* emit_log2_f64_core(llvm::IRBuilder<>& b, llvm::Value* d) {
  Ops o(b, d->getType());
  llvm::Value* id = o.bits(d);
  llvm::Value* e = b.CreateAShr(b.CreateSub(id, o.ci(kSqrtHalfBitsD)), 52);
  llvm::Value* m = o.from_bits(b.CreateSub(id, b.CreateShl(e, 52)));
  llvm::Value* s = b.CreateFDiv(b.CreateFSub(m, o.c(1.0)), b.CreateFAdd(m, o.c(1.0)));
  llvm::Value* s2 = b.CreateFMul(s, s);
  // 2 atanh(s) = 2s (1 + s^2/3 + s^4/5 + ...); |s| < 0.172, so nine terms leave < 4e-14.
  double series[9];
  for (int i = 0; i < 9; ++i)
    series[i] = 1.0 / (2 * i + 1);
  llvm::Value* ln_m = b.CreateFMul(b.CreateFMul(s, o.c(2.0)), o.horner(s2, series, 9));
  return o.fma(ln_m, o.c(kLog2ED), b.CreateSIToFP(e, o.t));
}

// 2^t for t in [-1022, 1023] (finite, not NaN), to about 1e-15 relative.
llvm::Value* emit_exp2_f64_core(llvm::IRBuilder<>& b, llvm::Value* t) {
  Ops o(b, t->getType());
  llvm::Value* sum = b.CreateFAdd(t, o.c(kRoundMagicD));
  llvm::Value* nf = b.CreateFSub(sum, o.c(kRoundMagicD));
  llvm::Value* n = b.CreateSub(o.bits(sum), o.ci(kRoundMagicBitsD));
  llvm::Value* u = b.CreateFMul(b.CreateFSub(t, nf), o.c(kLn2D)); // |u| <= ln2/2
  // Taylor series of e^u to degree 11: the remainder is below 7e-15 relative.
  double series[12];
  double f = 1.0;
  for (int i = 0; i < 12; ++i) {
    if (i > 0) f *= i;
    series[i] = 1.0 / f;
  }
  llvm::Value* p = o.horner(u, series, 12);
  llvm::Value* scale = o.from_bits(b.CreateShl(b.CreateAdd(n, o.ci(1023)), 52));
  return b.CreateFMul(p, scale);
}

// powf: |x|^y as 2^(y log2|x|) in double, rounded once to float, then C99's special cases.
llvm::Value* emit_pow_f32(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y) {
  Ops o(b, x->getType());
  llvm::Type* f64 = b.getDoubleTy();
  Ops d(b, f64);
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  llvm::Value* ax = o.fabs(x);
  llvm::Value* ay = o.fabs(y);
  // Floats, subnormals included, are normal doubles.
  llvm::Value* l = emit_log2_f64_core(b, b.CreateFPExt(ax, f64));
  l = b.CreateSelect(b.CreateFCmpOEQ(ax, o.c(0.0)), d.c(-inf), l);
  l = b.CreateSelect(b.CreateFCmpOEQ(ax, o.c(inf)), d.c(inf), l);
  llvm::Value* t = b.CreateFMul(b.CreateFPExt(y, f64), l);
  t = b.CreateSelect(d.is_nan(t), d.c(0.0), d.clamp(t, -200.0, 200.0));
  llvm::Value* res = b.CreateFPTrunc(emit_exp2_f64_core(b, t), o.t);

  // Whether y is an integer, and an odd one (floats of magnitude >= 2^24 are even integers;
  // infinity counts as one here, which is what the rules below need).
  llvm::Value* big = b.CreateFCmpUGE(ay, o.c(0x1p24)); // NaN: not big, not an integer
  llvm::Value* small_y = b.CreateSelect(b.CreateFCmpOLT(ay, o.c(0x1p24)), y, o.c(0.0));
  llvm::Value* yi = b.CreateFPToSI(small_y, b.getInt32Ty());
  llvm::Value* exact = b.CreateFCmpOEQ(b.CreateSIToFP(yi, o.t), y);
  big = b.CreateAnd(big, b.CreateNot(o.is_nan(y)));
  llvm::Value* is_int = b.CreateOr(big, exact);
  llvm::Value* is_odd = b.CreateAnd(exact, b.CreateICmpNE(b.CreateAnd(yi, b.getInt32(1)), b.getInt32(0)));

  llvm::Value* negative = b.CreateICmpSLT(o.bits(x), o.ci(0)); // -0 included
  res = b.CreateSelect(b.CreateAnd(negative, is_odd), b.CreateFNeg(res), res);
  // A finite negative base with a non-integer exponent.
  llvm::Value* bad = b.CreateAnd(b.CreateAnd(b.CreateFCmpOLT(x, o.c(0.0)), b.CreateFCmpOGT(x, o.c(-inf))),
                                 b.CreateNot(is_int));
  res = b.CreateSelect(bad, o.c(nan), res);
  res = b.CreateSelect(b.CreateOr(o.is_nan(x), o.is_nan(y)), o.c(nan), res);
  res = b.CreateSelect(b.CreateAnd(b.CreateFCmpOEQ(ax, o.c(1.0)), b.CreateFCmpOEQ(ay, o.c(inf))), o.c(1.0), res);
  res = b.CreateSelect(b.CreateFCmpOEQ(x, o.c(1.0)), o.c(1.0), res);
  return b.CreateSelect(b.CreateFCmpOEQ(y, o.c(0.0)), o.c(1.0), res);
}

// ---------------------------------------------------------------- functions

llvm::Function* make_function(llvm::Module& m, const std::string& name, llvm::Type* ret,
                              const std::vector<llvm::Type*>& params, bool inline_always) {
  auto* type = llvm::FunctionType::get(ret, params, false);
  llvm::Function* f = llvm::Function::Create(type, llvm::Function::InternalLinkage, name, m);
  f->setDoesNotThrow();
  f->setWillReturn();
  if (inline_always) f->addFnAttr(llvm::Attribute::AlwaysInline);
  return f;
}

} // namespace

llvm::Function* get_math_function(llvm::Module& m, const ir::IntrinsicDef& fn, llvm::Type* type,
                                  const MathLibrary& library) {
  internal_assert(type->isFloatTy() || type->isDoubleTy()) << "math functions take float or double";
  internal_assert(fn.cpu == ir::CpuLowering::Polynomial) << "'" << fn.name << "' is not a math function";
  const bool f32 = type->isFloatTy();
  std::string name = std::string("dsc.math.") + fn.name + (f32 ? ".f32" : ".f64");
  if (llvm::Function* existing = m.getFunction(name)) return existing;
  std::vector<llvm::Type*> params(static_cast<size_t>(fn.arity), type);
  llvm::Function* f = make_function(m, name, type, params, true);
  if (f32) f->setDoesNotAccessMemory();
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(m.getContext(), "entry", f));
  llvm::Value* x = f->getArg(0);
  llvm::Value* res = nullptr;
  using ir::IntrinsicId;
  if (fn.id == IntrinsicId::sigmoid) {
    auto exp_f64 = [&library](llvm::IRBuilder<>& eb, llvm::Value* v) {
      return library(eb, ir::intrinsic(ir::IntrinsicId::exp), {v});
    };
    if (f32)
      res = emit_sigmoid(b, x, emit_exp_f32);
    else
      res = emit_sigmoid(b, x, exp_f64);
  } else if (!f32) {
    std::vector<llvm::Value*> args;
    for (llvm::Argument& a : f->args())
      args.push_back(&a);
    res = library(b, fn, args);
  } else {
    switch (fn.id) {
    case IntrinsicId::exp:
      res = emit_exp_f32(b, x);
      break;
    case IntrinsicId::log:
      res = emit_log_f32(b, x);
      break;
    case IntrinsicId::tanh:
      res = emit_tanh_f32(b, x);
      break;
    case IntrinsicId::erf:
      res = emit_erf_f32(b, x);
      break;
    case IntrinsicId::pow:
      res = emit_pow_f32(b, x, f->getArg(1));
      break;
    case IntrinsicId::sin:
      res = emit_sin_cos_f32(b, m, x, false);
      break;
    case IntrinsicId::cos:
      res = emit_sin_cos_f32(b, m, x, true);
      break;
    default:
      internal_error << "no f32 polynomial for '" << fn.name << "'";
    }
  }
  b.CreateRet(res);
  return f;
}

llvm::Function* get_integer_pow_function(llvm::Module& m, llvm::IntegerType* type) {
  std::string name = "dsc.ipow.i" + std::to_string(type->getBitWidth());
  if (llvm::Function* existing = m.getFunction(name)) return existing;
  llvm::Function* f = make_function(m, name, type, {type, type}, false);
  f->setDoesNotAccessMemory();
  llvm::LLVMContext& ctx = m.getContext();
  llvm::Value* base = f->getArg(0);
  llvm::Value* exponent = f->getArg(1);
  auto k = [&](int64_t v) { return llvm::ConstantInt::get(type, static_cast<uint64_t>(v), true); };
  auto* entry = llvm::BasicBlock::Create(ctx, "entry", f);
  auto* negative = llvm::BasicBlock::Create(ctx, "negative", f);
  auto* loop = llvm::BasicBlock::Create(ctx, "loop", f);
  auto* step = llvm::BasicBlock::Create(ctx, "step", f);
  auto* done = llvm::BasicBlock::Create(ctx, "done", f);
  llvm::IRBuilder<> b(entry);
  b.CreateCondBr(b.CreateICmpSLT(exponent, k(0)), negative, loop);
  // x^-n is 0 in integers, except 1^-n = 1 and (-1)^-n = +-1.
  b.SetInsertPoint(negative);
  llvm::Value* odd = b.CreateICmpNE(b.CreateAnd(exponent, k(1)), k(0));
  llvm::Value* minus_one = b.CreateSelect(odd, k(-1), k(1));
  b.CreateRet(b.CreateSelect(b.CreateICmpEQ(base, k(1)), k(1),
                             b.CreateSelect(b.CreateICmpEQ(base, k(-1)), minus_one, k(0))));
  // Squaring, wrapping.
  b.SetInsertPoint(loop);
  llvm::PHINode* acc = b.CreatePHI(type, 2, "acc");
  llvm::PHINode* sq = b.CreatePHI(type, 2, "sq");
  llvm::PHINode* e = b.CreatePHI(type, 2, "e");
  b.CreateCondBr(b.CreateICmpEQ(e, k(0)), done, step);
  b.SetInsertPoint(step);
  llvm::Value* bit = b.CreateICmpNE(b.CreateAnd(e, k(1)), k(0));
  llvm::Value* acc_next = b.CreateSelect(bit, b.CreateMul(acc, sq), acc);
  llvm::Value* sq_next = b.CreateMul(sq, sq);
  llvm::Value* e_next = b.CreateLShr(e, 1);
  b.CreateBr(loop);
  acc->addIncoming(k(1), entry);
  acc->addIncoming(acc_next, step);
  sq->addIncoming(base, entry);
  sq->addIncoming(sq_next, step);
  e->addIncoming(exponent, entry);
  e->addIncoming(e_next, step);
  b.SetInsertPoint(done);
  b.CreateRet(acc);
  return f;
}

} // namespace dsc::llvmgen
