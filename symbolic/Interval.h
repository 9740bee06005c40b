#pragma once
// Closed integer intervals with infinite ends, and the saturating arithmetic on them that
// bounds analysis needs. kNegInf and kPosInf stand for -inf and +inf.

#include <cstdint>
#include <limits>

namespace dsc::symbolic {

inline constexpr int64_t kNegInf = std::numeric_limits<int64_t>::min();
inline constexpr int64_t kPosInf = std::numeric_limits<int64_t>::max();

struct Interval {
  int64_t lo = kNegInf;
  int64_t hi = kPosInf;

  static Interval everything() { return {kNegInf, kPosInf}; }
  static Interval point(int64_t v) { return {v, v}; }
  static Interval at_least(int64_t v) { return {v, kPosInf}; }
  static Interval at_most(int64_t v) { return {kNegInf, v}; }

  bool is_point() const { return lo == hi && lo != kNegInf && lo != kPosInf; }
  bool is_empty() const { return lo > hi; }
  bool has_lower() const { return lo != kNegInf; }
  bool has_upper() const { return hi != kPosInf; }
  bool contains(int64_t v) const { return lo <= v && v <= hi; }
  bool operator==(const Interval&) const = default;
};

Interval intersect(Interval a, Interval b);
Interval hull(Interval a, Interval b);
Interval operator+(Interval a, Interval b);
Interval operator-(Interval a, Interval b);
Interval operator*(Interval a, Interval b);
Interval negate(Interval a);
// Floor division and floor modulo by an interval divisor, following Expr.h (x / 0 == 0,
// x % 0 == x). Sound but not always tight.
Interval floordiv(Interval a, Interval b);
Interval floormod(Interval a, Interval b);
Interval min(Interval a, Interval b);
Interval max(Interval a, Interval b);

// Divisibility: the value is congruent to `remainder` modulo `modulus`. modulus == 0 means the
// value is exactly `remainder`; modulus == 1 means nothing is known.
struct ModRem {
  int64_t modulus = 1;
  int64_t remainder = 0;
  static ModRem unknown() { return {1, 0}; }
  static ModRem exactly(int64_t v) { return {0, v}; }
  bool operator==(const ModRem&) const = default;
};

ModRem operator+(ModRem a, ModRem b);
ModRem operator*(ModRem a, ModRem b);
ModRem negate(ModRem a);
// The weakest fact implied by both (for min/max, whose value is one of the two).
ModRem unify(ModRem a, ModRem b);
// Both facts at once (for intersecting what several sources know), via the CRT when possible.
ModRem combine(ModRem a, ModRem b);

} // namespace dsc::symbolic
