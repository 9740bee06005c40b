#include "symbolic/Interval.h"

#include <algorithm>
#include <numeric>

#include "support/FloorDiv.h"
#include "support/Int128.h"

namespace dsc::symbolic {

using dsc::i128;

namespace {

bool is_inf(int64_t v) { return v == kNegInf || v == kPosInf; }

// Saturating helpers: any result past int64 becomes the matching infinity. That is sound for
// bounds because an infinite end only loosens the interval.
int64_t sat(i128 v) {
  if (v <= static_cast<i128>(kNegInf)) return kNegInf;
  if (v >= static_cast<i128>(kPosInf)) return kPosInf;
  return static_cast<int64_t>(v);
}

int64_t add_end(int64_t a, int64_t b, int64_t inf_if_mixed) {
  if (is_inf(a) || is_inf(b)) {
    if (is_inf(a) && is_inf(b) && a != b) return inf_if_mixed;
    return is_inf(a) ? a : b;
  }
  return sat(static_cast<i128>(a) + b);
}

int sign(int64_t v) { return v < 0 ? -1 : (v > 0 ? 1 : 0); }

int64_t mul_end(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  if (is_inf(a) || is_inf(b)) return sign(a) * sign(b) > 0 ? kPosInf : kNegInf;
  return sat(static_cast<i128>(a) * b);
}

// a / b for one end each, where b is finite and nonzero and a may be infinite.
int64_t div_end(int64_t a, int64_t b) {
  if (is_inf(a)) return sign(a) * sign(b) > 0 ? kPosInf : kNegInf;
  if (a == kNegInf + 1 && b == -1) return kPosInf;
  return floor_div(a, b);
}

int64_t gcd64(int64_t a, int64_t b) {
  // Works on magnitudes; callers keep values well away from INT64_MIN.
  return std::gcd(a < 0 ? -a : a, b < 0 ? -b : b);
}

} // namespace

Interval intersect(Interval a, Interval b) { return {std::max(a.lo, b.lo), std::min(a.hi, b.hi)}; }
Interval hull(Interval a, Interval b) { return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)}; }

Interval operator+(Interval a, Interval b) {
  return {add_end(a.lo, b.lo, kNegInf), add_end(a.hi, b.hi, kPosInf)};
}

Interval negate(Interval a) {
  auto neg = [](int64_t v) {
    if (v == kNegInf) return kPosInf;
    if (v == kPosInf) return kNegInf;
    return -v; // v > INT64_MIN here
  };
  return {neg(a.hi), neg(a.lo)};
}

Interval operator-(Interval a, Interval b) { return a + negate(b); }

Interval operator*(Interval a, Interval b) {
  int64_t c[4] = {mul_end(a.lo, b.lo), mul_end(a.lo, b.hi), mul_end(a.hi, b.lo),
                  mul_end(a.hi, b.hi)};
  return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
}

Interval floordiv(Interval a, Interval b) {
  if (a.is_empty() || b.is_empty()) return a;
  // Split the divisor at zero: x / 0 == 0, and each sign is monotone on its own side.
  Interval result{kPosInf, kNegInf};
  bool any = false;
  if (b.contains(0)) {
    result = hull(result, Interval::point(0));
    any = true;
  }
  auto side = [&](Interval d) {
    if (d.is_empty()) return;
    any = true;
    int64_t c[4] = {div_end(a.lo, d.lo), div_end(a.lo, d.hi), div_end(a.hi, d.lo),
                    div_end(a.hi, d.hi)};
    Interval q{*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
    // With an unbounded divisor the quotient also approaches 0 from the numerator's side, and
    // flooring takes a negative numerator to -1.
    if (is_inf(d.lo) || is_inf(d.hi)) q = hull(q, Interval{a.lo < 0 ? -1 : 0, 0});
    result = hull(result, q);
  };
  if (b.hi >= 1) side(Interval{std::max<int64_t>(b.lo, 1), b.hi});
  if (b.lo <= -1) side(Interval{b.lo, std::min<int64_t>(b.hi, -1)});
  if (!any) return Interval::everything();
  return result;
}

Interval floormod(Interval a, Interval b) {
  if (a.is_empty() || b.is_empty()) return a;
  if (b.is_point() && b.lo > 0 && a.lo >= 0 && a.hi < b.lo) return a;
  Interval result{kPosInf, kNegInf};
  if (b.contains(0)) result = hull(result, a); // x % 0 == x
  if (b.hi >= 1) {
    // 0 <= r <= d - 1 <= b.hi - 1; and for a >= 0 also r <= a.
    int64_t hi = b.hi == kPosInf ? kPosInf : b.hi - 1;
    if (a.lo >= 0) hi = std::min(hi, a.hi);
    result = hull(result, Interval{0, hi});
  }
  if (b.lo <= -1) {
    int64_t lo = b.lo == kNegInf ? kNegInf : b.lo + 1;
    if (a.hi <= 0) lo = std::max(lo, a.lo);
    result = hull(result, Interval{lo, 0});
  }
  return result;
}

Interval min(Interval a, Interval b) { return {std::min(a.lo, b.lo), std::min(a.hi, b.hi)}; }
Interval max(Interval a, Interval b) { return {std::max(a.lo, b.lo), std::max(a.hi, b.hi)}; }

namespace {

// Keeps moduli small and exact; anything past this is treated as unknown.
constexpr int64_t kModulusLimit = int64_t{1} << 40;

ModRem normalized(i128 modulus, i128 remainder) {
  if (modulus < 0) modulus = -modulus;
  if (modulus == 0) {
    if (remainder <= static_cast<i128>(kNegInf) + 1 ||
        remainder >= static_cast<i128>(kPosInf))
      return ModRem::unknown();
    return ModRem::exactly(static_cast<int64_t>(remainder));
  }
  if (modulus > kModulusLimit) return ModRem::unknown();
  auto m = static_cast<int64_t>(modulus);
  i128 r = remainder % m;
  if (r < 0) r += m;
  return {m, static_cast<int64_t>(r)};
}

} // namespace

ModRem operator+(ModRem a, ModRem b) {
  if (a.modulus == 0 && b.modulus == 0)
    return normalized(0, static_cast<i128>(a.remainder) + b.remainder);
  int64_t m = a.modulus == 0 ? b.modulus : (b.modulus == 0 ? a.modulus : gcd64(a.modulus, b.modulus));
  return normalized(m, static_cast<i128>(a.remainder) + b.remainder);
}

ModRem negate(ModRem a) { return normalized(a.modulus, -static_cast<i128>(a.remainder)); }

ModRem operator*(ModRem a, ModRem b) {
  // (m1*x + r1)(m2*y + r2) = m1*m2*xy + m1*r2*x + m2*r1*y + r1*r2.
  i128 r = static_cast<i128>(a.remainder) * b.remainder;
  if (a.modulus == 0 && b.modulus == 0) return normalized(0, r);
  i128 m1 = a.modulus, m2 = b.modulus;
  i128 g = 0;
  auto fold = [&](i128 v) {
    if (v < 0) v = -v;
    if (v > kModulusLimit) v = 1; // too large to track exactly; weakening to 1 stays sound
    g = std::gcd(static_cast<int64_t>(g), static_cast<int64_t>(v));
  };
  fold(m1 * m2);
  fold(m1 * b.remainder);
  fold(m2 * a.remainder);
  if (g == 0) return normalized(0, r);
  return normalized(g, r);
}

ModRem unify(ModRem a, ModRem b) {
  // Both a and b hold for one of the two values: the modulus must divide both moduli and the
  // difference of the remainders.
  i128 diff = static_cast<i128>(a.remainder) - b.remainder;
  if (diff < 0) diff = -diff;
  if (diff > kModulusLimit) return ModRem::unknown();
  int64_t g = std::gcd(std::gcd(a.modulus, b.modulus), static_cast<int64_t>(diff));
  if (g == 0) return a; // identical exact values
  return normalized(g, a.remainder);
}

ModRem combine(ModRem a, ModRem b) {
  if (a.modulus == 0) return a;
  if (b.modulus == 0) return b;
  if (a.modulus == 1) return b;
  if (b.modulus == 1) return a;
  // Chinese remainder by search over the smaller modulus' residues (moduli here are small).
  int64_t big = std::max(a.modulus, b.modulus);
  ModRem small_one = a.modulus < b.modulus ? a : b;
  ModRem big_one = a.modulus < b.modulus ? b : a;
  int64_t lcm = std::lcm(a.modulus, b.modulus);
  if (lcm > kModulusLimit || lcm / big > 4096) return big_one;
  for (int64_t k = 0; k < lcm / big; ++k) {
    int64_t v = big_one.remainder + k * big;
    if (floor_mod(v, small_one.modulus) == small_one.remainder) return {lcm, v};
  }
  return big_one; // inconsistent; the caller detects contradictions elsewhere
}

} // namespace dsc::symbolic
