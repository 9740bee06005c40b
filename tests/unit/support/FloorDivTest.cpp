// support/FloorDiv.h against the definition of floor division: q is the largest integer with
// q*b <= a (for b > 0; q*b >= a for b < 0) and r = a - q*b, computed by search in 128-bit
// arithmetic, plus the total cases (x / 0, x % 0, INT64_MIN / -1) that the definition leaves
// open.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "support/FloorDiv.h"
#include "support/Int128.h"

namespace dsc {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// Python's a // b, b != 0, by stepping from the truncated quotient toward the floor.
i128 brute_div(i128 a, i128 b) {
  i128 q = a / b;
  while (q * b > a && b > 0)
    --q;
  while (q * b < a && b < 0)
    --q;
  return q;
}

TEST(FloorDivTest, MatchesDefinition) {
  const std::vector<int64_t> values = {kMin, kMin + 1, -100, -9, -8, -7, -3,  -2,       -1,  0,
                                       1,    2,        3,    7,  8,  9,  100, kMax - 1, kMax};
  for (int64_t a : values) {
    for (int64_t b : values) {
      if (b == 0 || (a == kMin && b == -1)) continue;
      i128 q = brute_div(a, b);
      EXPECT_EQ(floor_div(a, b), static_cast<int64_t>(q)) << a << " / " << b;
      EXPECT_EQ(floor_mod(a, b), static_cast<int64_t>(i128(a) - q * b)) << a << " % " << b;
      // The remainder has the divisor's sign and is smaller in magnitude.
      int64_t r = floor_mod(a, b);
      EXPECT_TRUE(r == 0 || ((r < 0) == (b < 0))) << a << " % " << b;
    }
  }
}

TEST(FloorDivTest, SignsAsInPython) {
  static_assert(floor_div(7, 2) == 3 && floor_mod(7, 2) == 1);
  static_assert(floor_div(-7, 2) == -4 && floor_mod(-7, 2) == 1);
  static_assert(floor_div(7, -2) == -4 && floor_mod(7, -2) == -1);
  static_assert(floor_div(-7, -2) == 3 && floor_mod(-7, -2) == -1);
  static_assert(floor_div(-8, 2) == -4 && floor_mod(-8, 2) == 0);
}

TEST(FloorDivTest, TotalCases) {
  static_assert(floor_div(5, 0) == 0 && floor_div(-5, 0) == 0 && floor_div(kMin, 0) == 0);
  static_assert(floor_mod(5, 0) == 5 && floor_mod(-5, 0) == -5 && floor_mod(kMin, 0) == kMin);
  static_assert(floor_div(kMin, -1) == kMin); // wraps, as the compiled code does
  static_assert(floor_mod(kMin, -1) == 0);
  static_assert(floor_div(kMax, -1) == -kMax && floor_mod(kMax, -1) == 0);
}

} // namespace
} // namespace dsc
