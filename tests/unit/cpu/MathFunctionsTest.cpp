// The kernels' math functions (backends/llvm/MathFunctions.h) against the C library in double:
// random floats over the whole range (random bit patterns) and dense sweeps where the
// functions change method, with the largest error in ulps reported and bounded; plus the
// special values (0, +-inf, NaN, overflow and underflow boundaries).

#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <limits>
#include <random>

#include "tests/unit/cpu/KernelTestUtil.h"

namespace dsc::testing {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

const char* const kUnaryPrims = R"(
prim f_exp(x: f32[n]) -> (y: f32[n]) { vectorize for i in 0..n { y[i] = exp(x[i]) } }
prim f_log(x: f32[n]) -> (y: f32[n]) { vectorize for i in 0..n { y[i] = log(x[i]) } }
prim f_tanh(x: f32[n]) -> (y: f32[n]) { vectorize for i in 0..n { y[i] = tanh(x[i]) } }
prim f_erf(x: f32[n]) -> (y: f32[n]) { vectorize for i in 0..n { y[i] = erf(x[i]) } }
prim f_sigmoid(x: f32[n]) -> (y: f32[n]) { vectorize for i in 0..n { y[i] = sigmoid(x[i]) } }
prim f_pow(x: f32[n], e: f32[n]) -> (y: f32[n]) { vectorize for i in 0..n { y[i] = pow(x[i], e[i]) } }
prim f_sin(x: f32[n]) -> (y: f32[n]) { vectorize for i in 0..n { y[i] = sin(x[i]) } }
prim f_cos(x: f32[n]) -> (y: f32[n]) { vectorize for i in 0..n { y[i] = cos(x[i]) } }
prim s_exp(x: f32[n]) -> (y: f32[n]) { for i in 0..n { y[i] = exp(x[i]) } }
prim s_sin(x: f32[n]) -> (y: f32[n]) { for i in 0..n { y[i] = sin(x[i]) } }
prim d_exp(x: f64[n]) -> (y: f64[n]) { vectorize for i in 0..n { y[i] = exp(x[i]) } }
prim d_log(x: f64[n]) -> (y: f64[n]) { vectorize for i in 0..n { y[i] = log(x[i]) } }
prim d_tanh(x: f64[n]) -> (y: f64[n]) { vectorize for i in 0..n { y[i] = tanh(x[i]) } }
prim d_erf(x: f64[n]) -> (y: f64[n]) { vectorize for i in 0..n { y[i] = erf(x[i]) } }
prim d_sigmoid(x: f64[n]) -> (y: f64[n]) { vectorize for i in 0..n { y[i] = sigmoid(x[i]) } }
prim d_pow(x: f64[n], e: f64[n]) -> (y: f64[n]) { vectorize for i in 0..n { y[i] = pow(x[i], e[i]) } }
prim d_sin(x: f64[n]) -> (y: f64[n]) { vectorize for i in 0..n { y[i] = sin(x[i]) } }
prim d_cos(x: f64[n]) -> (y: f64[n]) { vectorize for i in 0..n { y[i] = cos(x[i]) } }
)";

class MathFunctions : public ::testing::Test {
protected:
  static void SetUpTestSuite() { prims_ = new CompiledPrims(kUnaryPrims); }
  static void TearDownTestSuite() {
    delete prims_;
    prims_ = nullptr;
  }

  static std::vector<float> run(const std::string& prim, const std::vector<float>& x) {
    std::vector<float> y(x.size(), -12345.0f);
    prims_->run(prim, {const_cast<float*>(x.data()), y.data()}, {{"n", static_cast<int64_t>(x.size())}});
    return y;
  }
  static std::vector<float> run2(const std::string& prim, const std::vector<float>& x, const std::vector<float>& e) {
    std::vector<float> y(x.size(), -12345.0f);
    prims_->run(prim, {const_cast<float*>(x.data()), const_cast<float*>(e.data()), y.data()},
                {{"n", static_cast<int64_t>(x.size())}});
    return y;
  }

  // Random floats over every exponent (random bit patterns, NaNs skipped), then a dense
  // uniform sweep of [lo, hi].
  static std::vector<float> inputs(float lo, float hi, size_t random = 1 << 20, size_t dense = 1 << 20) {
    std::mt19937 rng(42);
    std::vector<float> x;
    while (x.size() < random) {
      float f = bits_float(static_cast<uint32_t>(rng()));
      if (!std::isnan(f)) x.push_back(f);
    }
    for (size_t i = 0; i < dense; ++i)
      x.push_back(lo + (hi - lo) * static_cast<float>(static_cast<double>(i) / static_cast<double>(dense - 1)));
    return x;
  }

  // The largest ulp error over `x`, reporting the worst input.
  template <typename Ref> static double max_ulp(const std::string& what, const std::vector<float>& x, const std::vector<float>& y, Ref ref) {
    double worst = 0.0;
    float worst_x = 0.0f;
    for (size_t i = 0; i < x.size(); ++i) {
      double e = ulp_error(y[i], ref(static_cast<double>(x[i])));
      if (e > worst || std::isnan(e)) {
        worst = e;
        worst_x = x[i];
      }
    }
    std::cout << "[ ulp ] " << what << ": max error " << worst << " ulp (at x = " << worst_x << ")\n";
    return worst;
  }

  static CompiledPrims* prims_;
};

CompiledPrims* MathFunctions::prims_ = nullptr;

double sigmoid_ref(double x) { return 1.0 / (1.0 + std::exp(-x)); }

TEST_F(MathFunctions, ExpAccuracy) {
  ASSERT_TRUE(prims_->ok());
  std::vector<float> x = inputs(-104.0f, 89.0f);
  EXPECT_LE(max_ulp("exp f32 (vectorized)", x, run("f_exp", x), [](double v) { return std::exp(v); }), 1.5);
  EXPECT_LE(max_ulp("exp f32 (scalar)", x, run("s_exp", x), [](double v) { return std::exp(v); }), 1.5);
}

TEST_F(MathFunctions, LogAccuracy) {
  std::vector<float> x = inputs(0.0f, 4.0f);
  std::vector<float> tiny = inputs(0.0f, 1e-37f, 0, 1 << 16);
  x.insert(x.end(), tiny.begin(), tiny.end());
  EXPECT_LE(max_ulp("log f32", x, run("f_log", x), [](double v) { return std::log(v); }), 1.5);
}

TEST_F(MathFunctions, TanhAccuracy) {
  std::vector<float> x = inputs(-10.0f, 10.0f);
  EXPECT_LE(max_ulp("tanh f32", x, run("f_tanh", x), [](double v) { return std::tanh(v); }), 2.5);
}

TEST_F(MathFunctions, ErfAccuracy) {
  std::vector<float> x = inputs(-5.0f, 5.0f);
  EXPECT_LE(max_ulp("erf f32", x, run("f_erf", x), [](double v) { return std::erf(v); }), 2.0);
}

TEST_F(MathFunctions, SigmoidAccuracy) {
  std::vector<float> x = inputs(-110.0f, 30.0f);
  EXPECT_LE(max_ulp("sigmoid f32", x, run("f_sigmoid", x), sigmoid_ref), 3.0);
}

// The reduction by pi/2 is exact to far more bits than a float has and the polynomials are
// evaluated in double, so sin and cos round correctly but for results within about 1e-4 ulp
// of a tie: on random bit patterns (every exponent up to 2^127), a dense sweep, and the floats
// nearest the multiples of pi/2 (where the reduced argument is tiny).
TEST_F(MathFunctions, SinCosAccuracy) {
  std::vector<float> x = inputs(-20.0f, 20.0f);
  for (int k = 1; k < (1 << 17); ++k) {
    double m = k * 1.5707963267948966;
    for (float f : {std::nextafter(static_cast<float>(m), 0.0f), static_cast<float>(m),
                    std::nextafter(static_cast<float>(m), kInf)}) {
      x.push_back(f);
      x.push_back(-f);
    }
  }
  // The float nearest a multiple of pi/2 of all (x 2/pi is 2^-29.9 from an integer).
  x.push_back(std::ldexp(16367173.0f, 72));
  auto sin_ref = [](double v) { return std::sin(v); };
  auto cos_ref = [](double v) { return std::cos(v); };
  EXPECT_LE(max_ulp("sin f32 (vectorized)", x, run("f_sin", x), sin_ref), 0.501);
  EXPECT_LE(max_ulp("sin f32 (scalar)", x, run("s_sin", x), sin_ref), 0.501);
  EXPECT_LE(max_ulp("cos f32", x, run("f_cos", x), cos_ref), 0.501);
}

TEST_F(MathFunctions, PowAccuracy) {
  std::mt19937 rng(7);
  std::vector<float> x, e;
  // Random positive bases over every exponent with exponents that keep most results finite,
  // then integer exponents on negative bases, then random bit patterns for both.
  std::uniform_real_distribution<float> small(-30.0f, 30.0f);
  for (int i = 0; i < (1 << 19); ++i) {
    float b = std::fabs(bits_float(static_cast<uint32_t>(rng())));
    if (std::isnan(b)) continue;
    x.push_back(b);
    e.push_back(small(rng) / std::max(1.0f, std::fabs(std::log2(std::max(b, 1e-38f)))));
  }
  std::uniform_int_distribution<int> ints(-40, 40);
  std::uniform_real_distribution<float> base(-4.0f, 4.0f);
  for (int i = 0; i < (1 << 18); ++i) {
    x.push_back(base(rng));
    e.push_back(static_cast<float>(ints(rng)));
  }
  for (int i = 0; i < (1 << 18); ++i) {
    float b = bits_float(static_cast<uint32_t>(rng()));
    float p = bits_float(static_cast<uint32_t>(rng()));
    if (std::isnan(b) || std::isnan(p)) continue;
    x.push_back(b);
    e.push_back(p);
  }
  std::vector<float> y = run2("f_pow", x, e);
  double worst = 0.0;
  size_t at = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    double err = ulp_error(y[i], std::pow(static_cast<double>(x[i]), static_cast<double>(e[i])));
    if (err > worst || std::isnan(err)) {
      worst = err;
      at = i;
    }
  }
  std::cout << "[ ulp ] pow f32: max error " << worst << " ulp (at x = " << x[at] << ", y = " << e[at] << ")\n";
  EXPECT_LE(worst, 1.0);
}

// Bitwise agreement (NaN with NaN) on values where the result is exact by definition.
void expect_same(float got, float want, const std::string& what) {
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << what << ": got " << got;
    return;
  }
  EXPECT_EQ(float_bits(got), float_bits(want)) << what << ": got " << got << ", want " << want;
}

TEST_F(MathFunctions, SpecialValues) {
  const float denorm = std::numeric_limits<float>::denorm_min();
  struct Case {
    const char* prim;
    float x;
    float want;
  };
  const Case cases[] = {
      {"f_exp", 0.0f, 1.0f},       {"f_exp", -0.0f, 1.0f},       {"f_exp", kInf, kInf},
      {"f_exp", -kInf, 0.0f},      {"f_exp", kNaN, kNaN},        {"f_exp", 89.0f, kInf},
      {"f_exp", 88.8f, kInf},      {"f_exp", -104.0f, 0.0f},     {"f_exp", -1000.0f, 0.0f},
      {"f_exp", 1000.0f, kInf},    {"f_exp", -103.5f, denorm},   {"f_log", 1.0f, 0.0f},
      {"f_log", 0.0f, -kInf},      {"f_log", -0.0f, -kInf},      {"f_log", -1.0f, kNaN},
      {"f_log", -kInf, kNaN},      {"f_log", kInf, kInf},        {"f_log", kNaN, kNaN},
      {"f_tanh", 0.0f, 0.0f},      {"f_tanh", -0.0f, -0.0f},     {"f_tanh", 20.0f, 1.0f},
      {"f_tanh", -20.0f, -1.0f},   {"f_tanh", 1e30f, 1.0f},      {"f_tanh", -kInf, -1.0f},
      {"f_tanh", kInf, 1.0f},      {"f_tanh", kNaN, kNaN},       {"f_erf", 0.0f, 0.0f},
      {"f_erf", -0.0f, -0.0f},     {"f_erf", 4.0f, 1.0f},        {"f_erf", -4.0f, -1.0f},
      {"f_erf", kInf, 1.0f},       {"f_erf", -kInf, -1.0f},      {"f_erf", kNaN, kNaN},
      {"f_sigmoid", 0.0f, 0.5f},   {"f_sigmoid", kInf, 1.0f},    {"f_sigmoid", -kInf, 0.0f},
      {"f_sigmoid", 100.0f, 1.0f}, {"f_sigmoid", -200.0f, 0.0f}, {"f_sigmoid", kNaN, kNaN},
      {"f_sin", 0.0f, 0.0f},       {"f_sin", -0.0f, -0.0f},      {"f_sin", kInf, kNaN},
      {"f_sin", -kInf, kNaN},      {"f_sin", kNaN, kNaN},        {"f_sin", denorm, denorm},
      {"f_sin", -1e-30f, -1e-30f}, {"f_cos", 0.0f, 1.0f},        {"f_cos", -0.0f, 1.0f},
      {"f_cos", kInf, kNaN},       {"f_cos", -kInf, kNaN},       {"f_cos", kNaN, kNaN},
      {"f_cos", 1e-20f, 1.0f},
  };
  for (const Case& c : cases) {
    std::vector<float> y = run(c.prim, {c.x});
    expect_same(y[0], c.want, std::string(c.prim) + "(" + std::to_string(c.x) + ")");
  }
  // Subnormal results: exp and sigmoid far left, and the log of subnormals.
  for (float x : {-87.5f, -95.0f, -100.0f, -103.0f}) {
    EXPECT_LE(ulp_error(run("f_exp", {x})[0], std::exp(static_cast<double>(x))), 1.0) << x;
    EXPECT_LE(ulp_error(run("f_sigmoid", {x})[0], sigmoid_ref(x)), 1.5) << x;
  }
  for (float x : {denorm, 1e-40f, 1e-45f, 1.17e-38f})
    EXPECT_LE(ulp_error(run("f_log", {x})[0], std::log(static_cast<double>(x))), 1.0) << x;
}

TEST_F(MathFunctions, PowSpecialValues) {
  // Every pair of these against the C library's powf, which follows C99 Annex F.
  const float values[] = {0.0f, -0.0f, 1.0f,  -1.0f, 2.0f, -2.0f, 0.5f,  -0.5f, 3.0f, -3.0f,
                          2.5f, -2.5f, kInf, -kInf, kNaN, 1e-45f, 1e30f, -1e30f, 16777216.0f, 16777215.0f};
  std::vector<float> x, e;
  for (float a : values)
    for (float b : values) {
      x.push_back(a);
      e.push_back(b);
    }
  std::vector<float> y = run2("f_pow", x, e);
  for (size_t i = 0; i < x.size(); ++i) {
    float want = std::pow(x[i], e[i]);
    std::string what = "pow(" + std::to_string(x[i]) + ", " + std::to_string(e[i]) + ")";
    if (std::isnan(want) || std::isinf(want) || want == 0.0f || want == 1.0f || want == -1.0f)
      expect_same(y[i], want, what);
    else
      EXPECT_LE(ulp_error(y[i], std::pow(static_cast<double>(x[i]), static_cast<double>(e[i]))), 1.0) << what;
  }
}

TEST_F(MathFunctions, DoubleThroughLibm) {
  std::vector<double> x = {-700.0, -3.5, -1.0, -0.25, 0.0, 0.3, 1.0, 2.0, 10.0, 700.0};
  auto run_d = [&](const std::string& prim) {
    std::vector<double> y(x.size());
    prims_->run(prim, {x.data(), y.data()}, {{"n", static_cast<int64_t>(x.size())}});
    return y;
  };
  std::vector<double> ex = run_d("d_exp"), th = run_d("d_tanh"), er = run_d("d_erf"), sg = run_d("d_sigmoid");
  std::vector<double> sn = run_d("d_sin"), cs = run_d("d_cos");
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(sn[i], std::sin(x[i]));
    EXPECT_EQ(cs[i], std::cos(x[i]));
    EXPECT_EQ(ex[i], std::exp(x[i]));
    EXPECT_EQ(th[i], std::tanh(x[i]));
    EXPECT_EQ(er[i], std::erf(x[i]));
    EXPECT_NEAR(sg[i], 1.0 / (1.0 + std::exp(-x[i])), 1e-15 * std::fabs(sg[i]) + 1e-300);
  }
  std::vector<double> pos = {1e-300, 0.5, 1.0, 2.0, 1e300}, lg(pos.size()), pw(pos.size());
  prims_->run("d_log", {pos.data(), lg.data()}, {{"n", 5}});
  std::vector<double> ex2 = {3.0, -2.0, 0.5, 7.0, 0.01};
  prims_->run("d_pow", {pos.data(), ex2.data(), pw.data()}, {{"n", 5}});
  for (size_t i = 0; i < pos.size(); ++i) {
    EXPECT_EQ(lg[i], std::log(pos[i]));
    EXPECT_EQ(pw[i], std::pow(pos[i], ex2[i]));
  }
}

} // namespace
} // namespace dsc::testing
