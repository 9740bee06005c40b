// Products with quantized weights (runtime/gemm/QuantGemm.h), the kernels of every instruction
// set this CPU runs, against double-precision loops over the dequantized weights: 8 and 4
// bits, every byte value (negative ones included), groups of 32 and 128 and of sizes that are
// no whole vector, one row, a few, and more than the small-m path takes (the f32 GEMM over
// dequantized panels), outputs that are primes.

#include "runtime/gemm/QuantGemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "runtime/HostABI.h"
#include "support/HalfFloat.h"

namespace dsc::runtime::gemm {
namespace {

std::vector<const QuantKernels*> runnable() {
  std::vector<const QuantKernels*> out = {&quant_kernels()};
  if (&quant_kernels() != &kGenericQuantKernels) out.push_back(&kGenericQuantKernels);
  return out;
}

struct Case {
  int bits;
  int64_t m, n, k, group;
};

void check(const QuantKernels& K, const Case& c, std::mt19937& rng) {
  const std::string what = std::string(K.isa) + " bits=" + std::to_string(c.bits) +
                           " m=" + std::to_string(c.m) + " n=" + std::to_string(c.n) +
                           " k=" + std::to_string(c.k) + " group=" + std::to_string(c.group);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::uniform_int_distribution<int> byte(-128, 127);
  const int64_t groups = c.k / c.group, row_bytes = c.bits == 8 ? c.k : c.k / 2;
  std::vector<float> x(static_cast<size_t>(c.m * c.k)), y(static_cast<size_t>(c.m * c.n), NAN);
  std::vector<int8_t> w(static_cast<size_t>(c.n * row_bytes));
  std::vector<uint16_t> scales(static_cast<size_t>(c.n * groups));
  for (float& v : x) v = d(rng);
  for (int8_t& v : w) v = static_cast<int8_t>(byte(rng));
  for (uint16_t& v : scales) v = float_to_half(d(rng) / 64.0f);
  multiply_quantized(K, c.bits, x.data(), w.data(), scales.data(), y.data(), c.m, c.n, c.k, groups);
  for (int64_t j = 0; j < c.n; ++j) {
    std::vector<double> row(static_cast<size_t>(c.k));
    double magnitude = 0;
    for (int64_t q = 0; q < c.k; ++q) {
      int value = w[j * row_bytes + (c.bits == 8 ? q : q / 2)];
      if (c.bits == 4) {
        const auto u = static_cast<uint8_t>(value);
        value = (q % 2 == 0 ? u & 15 : u >> 4) - 8;
      }
      row[q] = value * static_cast<double>(half_to_float(scales[j * groups + q / c.group]));
    }
    for (int64_t i = 0; i < c.m; ++i) {
      double want = 0;
      magnitude = 0;
      for (int64_t q = 0; q < c.k; ++q) {
        want += x[i * c.k + q] * row[q];
        magnitude += std::fabs(x[i * c.k + q] * row[q]);
      }
      ASSERT_NEAR(y[i * c.n + j], want, 1e-6 * magnitude + 1e-7) << what << " at [" << i << ", " << j << "]";
    }
  }
}

TEST(QuantGemm, AgainstDequantizedLoops) {
  std::mt19937 rng(41);
  const Case cases[] = {{8, 1, 37, 64, 32},    {4, 1, 37, 64, 32},    {8, 3, 131, 256, 128},
                        {4, 3, 131, 256, 128}, {8, 16, 67, 96, 32},   {4, 16, 67, 96, 32},
                        {8, 1, 5, 36, 12},     {4, 2, 5, 36, 12},     {8, 17, 61, 288, 32},
                        {4, 40, 97, 320, 32},  {4, 300, 33, 544, 32}, {8, 97, 130, 128, 128}};
  for (const QuantKernels* K : runnable())
    for (const Case& c : cases) {
      check(*K, c, rng);
      if (HasFatalFailure()) return;
    }
}

// Sizes that are no such product leave y alone; k = 0 zeroes it.
TEST(QuantGemm, BadSizesDoNothing) {
  std::vector<float> x(8, 1.0f), y(4, 5.0f);
  std::vector<int8_t> w(8, 1);
  std::vector<uint16_t> s(4, float_to_half(1.0f));
  dsc_rt_gemm_q8_f32(x.data(), w.data(), s.data(), y.data(), 1, 2, 3, 2); // 3 % 2 != 0
  dsc_rt_gemm_q4_f32(x.data(), w.data(), s.data(), y.data(), 1, 2, 3, 1); // odd k at 4 bits
  EXPECT_EQ(y, std::vector<float>(4, 5.0f));
  dsc_rt_gemm_q8_f32(x.data(), w.data(), s.data(), y.data(), 2, 2, 0, 1);
  EXPECT_EQ(y, std::vector<float>(4, 0.0f));
}

} // namespace
} // namespace dsc::runtime::gemm
