// Every dtype in kernels (backends/llvm/KernelCodegen.h): f16 and bf16 conversions over all
// 65536 bit patterns and around every rounding boundary against a reference written here
// (nearest value by search, ties to even), storage-only f16 arithmetic, the whole cast
// matrix, integer wrap-around, floor division and modulo by negative and zero divisors, and
// bools in memory.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "support/FloorDiv.h"
#include "tests/unit/cpu/KernelTestUtil.h"

namespace dsc::testing {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// ---- reference 16-bit formats: decoding by the definition, rounding by search

double half_value(uint16_t h) {
  int sign = h >> 15, e = (h >> 10) & 31, m = h & 1023;
  double v = e == 0 ? std::ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : std::ldexp(1024 + m, e - 25);
  return sign ? -v : v;
}
double bf16_value(uint16_t h) {
  int sign = h >> 15, e = (h >> 7) & 255, m = h & 127;
  double v = e == 0 ? std::ldexp(m, -133) : e == 255 ? (m ? NAN : INFINITY) : std::ldexp(128 + m, e - 134);
  return sign ? -v : v;
}

// The non-negative finite values of a format in increasing order, then infinity's bits
// standing for the next power of two (where values round up to it).
struct Format {
  std::vector<double> values;
  uint16_t inf_bits;
  uint16_t quiet_bit;
  double (*decode)(uint16_t);

  explicit Format(bool half) {
    decode = half ? half_value : bf16_value;
    inf_bits = half ? 0x7c00 : 0x7f80;
    quiet_bit = half ? 0x200 : 0x40;
    for (uint32_t b = 0; b < inf_bits; ++b)
      values.push_back(decode(static_cast<uint16_t>(b)));
    values.push_back(half ? 65536.0 : std::ldexp(1.0, 128));
  }

  uint16_t round(float x) const {
    uint16_t sign = std::signbit(x) ? 0x8000 : 0;
    if (std::isnan(x)) return 0; // checked apart
    double a = std::fabs(static_cast<double>(x));
    if (a >= values.back()) return sign | inf_bits;
    size_t hi = static_cast<size_t>(std::upper_bound(values.begin(), values.end(), a) - values.begin());
    size_t lo = hi - 1;
    if (values[lo] == a) return static_cast<uint16_t>(sign | lo);
    double dl = a - values[lo], dh = values[hi] - a;
    size_t pick = dl < dh ? lo : dh < dl ? hi : (lo % 2 == 0 ? lo : hi);
    return static_cast<uint16_t>(sign | pick);
  }
};

const Format& half_format() {
  static const Format f(true);
  return f;
}
const Format& bf16_format() {
  static const Format f(false);
  return f;
}

// Floats around every rounding boundary of the format: each value, the midpoints to the next,
// one float ulp either side of them; then random bit patterns and the special values.
std::vector<float> boundary_inputs(const Format& f) {
  std::vector<float> out;
  for (size_t i = 0; i + 1 < f.values.size(); ++i) {
    float v = static_cast<float>(f.values[i]);
    float mid = static_cast<float>((f.values[i] + f.values[i + 1]) / 2); // exact in float
    for (float x : {v, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, kInf)}) {
      out.push_back(x);
      out.push_back(-x);
    }
  }
  std::mt19937 rng(99);
  for (int i = 0; i < (1 << 20); ++i)
    out.push_back(bits_float(static_cast<uint32_t>(rng())));
  for (float x : {0.0f, -0.0f, kInf, -kInf, kNaN, -kNaN, std::numeric_limits<float>::max(),
                  std::numeric_limits<float>::denorm_min(), 1e-30f, -1e-30f, 65504.0f, 65519.99f, 65520.0f,
                  bits_float(0x7f800001), bits_float(0xffc00001), bits_float(0x7fbfffff)})
    out.push_back(x);
  return out;
}

const char* const kConversions = R"(
prim h2f(x: f16[n]) -> (y: f32[n]) { vectorize for i in 0..n { y[i] = cast(x[i], "f32") } }
prim b2f(x: bf16[n]) -> (y: f32[n]) { vectorize for i in 0..n { y[i] = cast(x[i], "f32") } }
prim f2h(x: f32[n]) -> (y: f16[n]) { vectorize for i in 0..n { y[i] = cast(x[i], "f16") } }
prim f2b(x: f32[n]) -> (y: bf16[n]) { vectorize for i in 0..n { y[i] = cast(x[i], "bf16") } }
prim s2h(x: f32[n]) -> (y: f16[n]) { for i in 0..n { y[i] = cast(x[i], "f16") } }
)";

class KernelDType : public ::testing::Test {
protected:
  static void SetUpTestSuite() { conv_ = new CompiledPrims(kConversions); }
  static void TearDownTestSuite() {
    delete conv_;
    conv_ = nullptr;
  }
  static CompiledPrims* conv_;
};
CompiledPrims* KernelDType::conv_ = nullptr;

void check_widening(const CompiledPrims& k, const std::string& prim, double (*decode)(uint16_t)) {
  std::vector<uint16_t> x(65536);
  for (uint32_t b = 0; b < 65536; ++b)
    x[b] = static_cast<uint16_t>(b);
  std::vector<float> y(65536);
  k.run(prim, {x.data(), y.data()}, {{"n", 65536}});
  for (uint32_t b = 0; b < 65536; ++b) {
    double want = decode(static_cast<uint16_t>(b));
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(y[b])) << prim << " " << std::hex << b;
      ASSERT_EQ(std::signbit(y[b]), (b & 0x8000) != 0) << prim << " " << std::hex << b;
      continue;
    }
    ASSERT_EQ(float_bits(y[b]), float_bits(static_cast<float>(want))) << prim << " " << std::hex << b;
  }
}

TEST_F(KernelDType, WideningIsExactForAll65536Patterns) {
  ASSERT_TRUE(conv_->ok());
  check_widening(*conv_, "h2f", half_value);
  check_widening(*conv_, "b2f", bf16_value);
}

void check_narrowing(const CompiledPrims& k, const std::string& prim, const Format& f, bool half) {
  std::vector<float> x = boundary_inputs(f);
  std::vector<uint16_t> y(x.size());
  k.run(prim, {x.data(), y.data()}, {{"n", static_cast<int64_t>(x.size())}});
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i])) {
      // NaN stays NaN, quiet, with its sign.
      ASSERT_TRUE(std::isnan(f.decode(y[i]))) << prim << " NaN " << std::hex << float_bits(x[i]);
      ASSERT_TRUE(y[i] & f.quiet_bit) << prim;
      ASSERT_EQ((y[i] & 0x8000) != 0, std::signbit(x[i])) << prim;
      continue;
    }
    ASSERT_EQ(y[i], f.round(x[i])) << prim << " x=" << x[i] << " bits " << std::hex << float_bits(x[i]);
  }
  // Round trips: every finite value of the format comes back unchanged.
  std::vector<float> values;
  for (uint32_t b = 0; b < 65536; ++b) {
    double v = f.decode(static_cast<uint16_t>(b));
    if (!std::isnan(v)) values.push_back(static_cast<float>(v));
  }
  std::vector<uint16_t> back(values.size());
  k.run(prim, {values.data(), back.data()}, {{"n", static_cast<int64_t>(values.size())}});
  for (size_t i = 0; i < values.size(); ++i)
    ASSERT_EQ(f.decode(back[i]), values[i]) << (half ? "f16 " : "bf16 ") << values[i];
}

TEST_F(KernelDType, NarrowingRoundsToNearestEven) {
  check_narrowing(*conv_, "f2h", half_format(), true);
  check_narrowing(*conv_, "s2h", half_format(), true);
  check_narrowing(*conv_, "f2b", bf16_format(), false);
}

TEST_F(KernelDType, HalfArithmeticIsF32RoundedOnStore) {
  CompiledPrims k(R"(
prim h(a: f16[n], b: f16[n], c: f16[n]) -> (y: f16[n], z: f32[n]) {
  vectorize for i in 0..n {
    let t: f16 = a[i] * b[i] + c[i]
    y[i] = t
    z[i] = cast(t, "f32") + cast(a[i] * 0.1, "f32")
  }
}
prim b(a: bf16[n], b: bf16[n]) -> (y: bf16[n]) {
  vectorize for i in 0..n { y[i] = exp(a[i]) / (b[i] + 1.0) }
}
)");
  ASSERT_TRUE(k.ok());
  const Format& hf = half_format();
  const Format& bf = bf16_format();
  std::mt19937 rng(5);
  int64_t n = 10007;
  std::vector<uint16_t> a(n), b(n), c(n), y(n);
  std::vector<float> z(n);
  std::uniform_int_distribution<int> pick(0, 0x7bff);
  for (int64_t i = 0; i < n; ++i) {
    a[i] = static_cast<uint16_t>(pick(rng) | (rng() & 0x8000));
    b[i] = static_cast<uint16_t>(pick(rng) & 0x4fff);
    c[i] = static_cast<uint16_t>(pick(rng) & 0x4fff);
  }
  k.run("h", {a.data(), b.data(), c.data(), y.data(), z.data()}, {{"n", n}});
  const float tenth = static_cast<float>(half_value(hf.round(0.1f))); // the f16 literal
  for (int64_t i = 0; i < n; ++i) {
    float fa = static_cast<float>(half_value(a[i])), fb = static_cast<float>(half_value(b[i]));
    float fc = static_cast<float>(half_value(c[i]));
    float t = fa * fb + fc; // f32 arithmetic; the local is not rounded
    ASSERT_EQ(y[i], hf.round(t)) << i;
    // f16 intermediates stay f32 until stored; casting one to f32 changes nothing.
    ASSERT_EQ(z[i], t + fa * tenth) << i;
  }
  std::vector<uint16_t> ba(n), bb(n), by(n);
  std::uniform_real_distribution<float> u(-3.0f, 3.0f);
  for (int64_t i = 0; i < n; ++i) {
    ba[i] = bf.round(u(rng));
    bb[i] = bf.round(std::fabs(u(rng)));
  }
  k.run("b", {ba.data(), bb.data(), by.data()}, {{"n", n}});
  for (int64_t i = 0; i < n; ++i) {
    double want = std::exp(bf16_value(ba[i])) / (bf16_value(bb[i]) + 1.0);
    double got = bf16_value(by[i]);
    ASSERT_NEAR(got, want, std::fabs(want) * 0x1p-8 * 1.01) << i; // within one bf16 rounding
  }
}

// ---- the cast matrix

const char* const kDTypes[] = {"bool", "i8", "i32", "i64", "f16", "bf16", "f32", "f64"};

// Values in a uniform carrier: every source value as a double, plus raw i64 for integers.
struct Value {
  double f;
  int64_t i;
};

int64_t saturate(double x) {
  if (std::isnan(x)) return 0;
  if (x >= 0x1p63) return std::numeric_limits<int64_t>::max();
  if (x <= -0x1p63) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(x);
}

bool is_float_name(const std::string& d) { return d[0] == 'f' || d == "bf16"; }

// Writes v (already a value of dtype `d`) into memory as `d`.
void store(const std::string& d, void* p, size_t i, const Value& v) {
  if (d == "bool") static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(v.i);
  else if (d == "i8") static_cast<int8_t*>(p)[i] = static_cast<int8_t>(v.i);
  else if (d == "i32") static_cast<int32_t*>(p)[i] = static_cast<int32_t>(v.i);
  else if (d == "i64") static_cast<int64_t*>(p)[i] = v.i;
  else if (d == "f16") static_cast<uint16_t*>(p)[i] = half_format().round(static_cast<float>(v.f)) | (std::isnan(v.f) ? 0x7e00 : 0);
  else if (d == "bf16") static_cast<uint16_t*>(p)[i] = bf16_format().round(static_cast<float>(v.f)) | (std::isnan(v.f) ? 0x7fc0 : 0);
  else if (d == "f32") static_cast<float*>(p)[i] = static_cast<float>(v.f);
  else static_cast<double*>(p)[i] = v.f;
}

Value load(const std::string& d, const void* p, size_t i) {
  if (d == "bool") return {static_cast<const uint8_t*>(p)[i] ? 1.0 : 0.0, static_cast<const uint8_t*>(p)[i] ? 1 : 0};
  if (d == "i8") return {0.0, static_cast<const int8_t*>(p)[i]};
  if (d == "i32") return {0.0, static_cast<const int32_t*>(p)[i]};
  if (d == "i64") return {0.0, static_cast<const int64_t*>(p)[i]};
  if (d == "f16") return {half_value(static_cast<const uint16_t*>(p)[i]), 0};
  if (d == "bf16") return {bf16_value(static_cast<const uint16_t*>(p)[i]), 0};
  if (d == "f32") return {static_cast<const float*>(p)[i], 0};
  return {static_cast<const double*>(p)[i], 0};
}

// The semantics of cast(x, to) for x of dtype `from` (KernelCodegen.h).
Value cast_ref(const std::string& from, const std::string& to, const Value& x) {
  const bool ff = is_float_name(from);
  if (to == "bool") {
    bool b = ff ? x.f != 0.0 || std::isnan(x.f) : x.i != 0;
    return {b ? 1.0 : 0.0, b ? 1 : 0};
  }
  if (is_float_name(to)) {
    double v;
    if (ff) v = x.f;
    else v = to == "f64" ? static_cast<double>(x.i) : static_cast<double>(static_cast<float>(x.i));
    if (to == "f32") v = static_cast<float>(v);
    if (to == "f16") v = std::isnan(v) ? v : half_value(half_format().round(static_cast<float>(v)));
    if (to == "bf16") v = std::isnan(v) ? v : bf16_value(bf16_format().round(static_cast<float>(v)));
    return {v, 0};
  }
  int64_t wide = ff ? saturate(x.f) : x.i;
  if (to == "i8") return {0.0, static_cast<int8_t>(wide)};
  if (to == "i32") return {0.0, static_cast<int32_t>(wide)};
  return {0.0, wide};
}

TEST(KernelCasts, EveryPairOfDTypes) {
  std::string text;
  for (const char* from : kDTypes)
    for (const char* to : kDTypes)
      text += std::string("prim c_") + from + "_" + to + "(x: " + from + "[n]) -> (y: " + to +
              "[n]) { vectorize for i in 0..n { y[i] = cast(x[i], \"" + to + "\") } }\n";
  CompiledPrims k(text);
  ASSERT_TRUE(k.ok());
  const double floats[] = {0.0, -0.0, 1.0, -1.0, 0.1, 2.5, -2.5, 127.7, -128.9, 255.5, 300.4, 65519.0, 65520.0,
                           1e5, -1e10, 3e9, 1e20, -1e20, 1e300, -1e300, 9.3e18, -9.3e18, 3.4e38, 1e-30, 1e-40,
                           INFINITY, -INFINITY, NAN};
  const int64_t ints[] = {0, 1, -1, 2, 127, -128, 128, 255, 256, 1000, -100000, 16777217, 2147483647,
                          -2147483648LL, 4294967296LL, 9007199254740993LL, std::numeric_limits<int64_t>::max(),
                          std::numeric_limits<int64_t>::min()};
  for (const char* from : kDTypes) {
    // The source values, as values of `from`.
    std::vector<Value> xs;
    if (std::string(from) == "bool") {
      xs = {{0.0, 0}, {1.0, 1}};
    } else if (is_float_name(from)) {
      for (double f : floats)
        xs.push_back(cast_ref("f64", from, {f, 0}));
    } else {
      for (int64_t i : ints)
        xs.push_back(cast_ref("i64", from, {0.0, i}));
    }
    std::vector<uint64_t> in(xs.size());
    for (size_t i = 0; i < xs.size(); ++i)
      store(from, in.data(), i, xs[i]);
    for (const char* to : kDTypes) {
      std::vector<uint64_t> out(xs.size());
      std::string prim = std::string("c_") + from + "_" + to;
      k.run(prim, {in.data(), out.data()}, {{"n", static_cast<int64_t>(xs.size())}});
      for (size_t i = 0; i < xs.size(); ++i) {
        Value x = load(from, in.data(), i);
        Value want = cast_ref(from, to, x), got = load(to, out.data(), i);
        std::string what = prim + " of " + (is_float_name(from) ? std::to_string(x.f) : std::to_string(x.i));
        if (is_float_name(to)) {
          if (std::isnan(want.f))
            EXPECT_TRUE(std::isnan(got.f)) << what;
          else
            EXPECT_TRUE(got.f == want.f && std::signbit(got.f) == std::signbit(want.f))
                << what << ": got " << got.f << ", want " << want.f;
        } else {
          EXPECT_EQ(got.i, want.i) << what;
        }
      }
    }
  }
}

TEST(KernelCasts, BoolsInMemoryAreZeroOrOne) {
  CompiledPrims k(R"(
prim f(a: bool[n], b: bool[n]) -> (y: bool[n], z: bool[n], w: i32[n]) {
  vectorize for i in 0..n {
    y[i] = a[i] && !b[i]
    z[i] = a[i] < b[i] || a[i] == b[i]
    w[i] = cast(a[i], "i32") + cast(b[i] != a[i], "i32") * 10
  }
}
)");
  ASSERT_TRUE(k.ok());
  // Any non-zero byte reads as true.
  std::vector<uint8_t> a = {0, 0, 1, 1, 2, 255, 0, 7}, b = {0, 1, 0, 1, 0, 3, 9, 200};
  int64_t n = static_cast<int64_t>(a.size());
  std::vector<uint8_t> y(n, 5), z(n, 5);
  std::vector<int32_t> w(n);
  k.run("f", {a.data(), b.data(), y.data(), z.data(), w.data()}, {{"n", n}});
  for (int64_t i = 0; i < n; ++i) {
    bool x = a[i] != 0, v = b[i] != 0;
    EXPECT_EQ(y[i], x && !v ? 1 : 0) << i;
    EXPECT_EQ(z[i], (x < v || x == v) ? 1 : 0) << i;
    EXPECT_EQ(w[i], (x ? 1 : 0) + (v != x ? 10 : 0)) << i;
  }
}

// ---- integers (against support/FloorDiv.h, itself checked by brute force in FloorDivTest)

template <typename T> void check_division(const CompiledPrims& k, const std::string& dtype) {
  const int64_t lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  std::vector<int64_t> values = {lo, lo + 1, -100, -9, -8, -7, -3, -2, -1, 0, 1, 2, 3, 7, 8, 9, 100, hi - 1, hi};
  std::vector<T> a, b;
  for (int64_t x : values)
    for (int64_t y : values)
      if (x >= lo && x <= hi && y >= lo && y <= hi) {
        a.push_back(static_cast<T>(x));
        b.push_back(static_cast<T>(y));
      }
  int64_t n = static_cast<int64_t>(a.size());
  std::vector<T> q(n), r(n), c(n * 8);
  k.run("div_" + dtype, {a.data(), b.data(), q.data(), r.data(), c.data()}, {{"n", n}});
  for (int64_t i = 0; i < n; ++i) {
    // Computed in i64 then wrapped, which is the i8/i32 semantics too.
    EXPECT_EQ(q[i], static_cast<T>(floor_div(a[i], b[i]))) << dtype << " " << +a[i] << " / " << +b[i];
    EXPECT_EQ(r[i], static_cast<T>(floor_mod(a[i], b[i]))) << dtype << " " << +a[i] << " % " << +b[i];
    const int64_t divisors[] = {4, -4, 7, -7, 1, -1, 0, 3};
    for (int d = 0; d < 4; ++d) {
      int64_t v = divisors[d * 2], u = divisors[d * 2 + 1];
      EXPECT_EQ(c[i * 8 + d * 2], static_cast<T>(floor_div(a[i], v))) << dtype << " " << +a[i] << " / " << v;
      EXPECT_EQ(c[i * 8 + d * 2 + 1], static_cast<T>(floor_mod(a[i], u))) << dtype << " " << +a[i] << " % " << u;
    }
  }
}

TEST(KernelIntegers, FloorDivisionAndModulo) {
  std::string text;
  for (const char* d : {"i8", "i32", "i64"})
    text += std::string("prim div_") + d + "(a: " + d + "[n], b: " + d + "[n]) -> (q: " + d + "[n], r: " + d +
            "[n], c: " + d + "[n, 8]) { vectorize for i in 0..n { q[i] = a[i] / b[i]; r[i] = a[i] % b[i]; " +
            "c[i, 0] = a[i] / 4; c[i, 1] = a[i] % -4; c[i, 2] = a[i] / 7; c[i, 3] = a[i] % -7; " +
            "c[i, 4] = a[i] / 1; c[i, 5] = a[i] % -1; c[i, 6] = a[i] / 0; c[i, 7] = a[i] % 3 } }\n";
  CompiledPrims k(text);
  ASSERT_TRUE(k.ok());
  check_division<int8_t>(k, "i8");
  check_division<int32_t>(k, "i32");
  check_division<int64_t>(k, "i64");
}

TEST(KernelIntegers, WrapAbsNegMinMaxPow) {
  CompiledPrims k(R"(
prim f(a: i8[n], b: i8[n]) -> (y: i8[n, 6]) {
  for i in 0..n {
    y[i, 0] = a[i] + b[i]
    y[i, 1] = a[i] * b[i]
    y[i, 2] = abs(a[i])
    y[i, 3] = -a[i]
    y[i, 4] = max(a[i], b[i]) - min(a[i], b[i])
    y[i, 5] = pow(a[i], b[i])
  }
}
prim g(a: i64[n], b: i64[n]) -> (y: i64[n]) {
  vectorize for i in 0..n { y[i] = pow(a[i], b[i]) }
}
)");
  ASSERT_TRUE(k.ok());
  std::vector<int8_t> a = {127, -128, -128, 100, -3, 2, 1, -1, -1, 0, 5};
  std::vector<int8_t> b = {1, -1, 1, 100, 3, 7, -5, -3, -4, 0, -1};
  int64_t n = static_cast<int64_t>(a.size());
  std::vector<int8_t> y(n * 6);
  k.run("f", {a.data(), b.data(), y.data()}, {{"n", n}});
  auto ipow = [](int64_t base, int64_t e) -> int64_t {
    if (e < 0) return base == 1 ? 1 : base == -1 ? (e % 2 ? -1 : 1) : 0;
    uint64_t r = 1;
    for (int64_t j = 0; j < e; ++j)
      r *= static_cast<uint64_t>(base);
    return static_cast<int64_t>(r);
  };
  for (int64_t i = 0; i < n; ++i) {
    int x = a[i], v = b[i];
    EXPECT_EQ(y[i * 6 + 0], static_cast<int8_t>(x + v)) << i;
    EXPECT_EQ(y[i * 6 + 1], static_cast<int8_t>(x * v)) << i;
    EXPECT_EQ(y[i * 6 + 2], static_cast<int8_t>(x < 0 ? -x : x)) << i;
    EXPECT_EQ(y[i * 6 + 3], static_cast<int8_t>(-x)) << i;
    EXPECT_EQ(y[i * 6 + 4], static_cast<int8_t>(std::max(x, v) - std::min(x, v))) << i;
    EXPECT_EQ(y[i * 6 + 5], static_cast<int8_t>(ipow(x, v))) << i;
  }
  std::vector<int64_t> c = {3, 2, 2, -2, 10, 7}, d = {4, 62, 64, 63, 18, 0}, z(6);
  k.run("g", {c.data(), d.data(), z.data()}, {{"n", 6}});
  for (size_t i = 0; i < c.size(); ++i)
    EXPECT_EQ(z[i], ipow(c[i], d[i])) << c[i] << "^" << d[i];
}

TEST(KernelFloats, DoubleAndSingleArithmetic) {
  CompiledPrims k(R"(
prim f(a: f64[n], b: f64[n]) -> (y: f64[n], c: bool[n]) {
  vectorize for i in 0..n {
    y[i] = (a[i] - b[i]) / (a[i] * b[i] + 1.0)
    c[i] = a[i] != b[i]
  }
}
)");
  ASSERT_TRUE(k.ok());
  std::vector<double> a = {1.0, 2.0, NAN, 0.5, -3.0}, b = {1.0, -7.0, 1.0, NAN, 2.0}, y(5);
  std::vector<uint8_t> c(5);
  k.run("f", {a.data(), b.data(), y.data(), c.data()}, {{"n", 5}});
  for (size_t i = 0; i < 5; ++i) {
    double want = (a[i] - b[i]) / (a[i] * b[i] + 1.0);
    if (std::isnan(want))
      EXPECT_TRUE(std::isnan(y[i]));
    else
      EXPECT_EQ(y[i], want);
    EXPECT_EQ(c[i], a[i] != b[i] ? 1 : 0) << i; // true on NaN
  }
}

} // namespace
} // namespace dsc::testing
