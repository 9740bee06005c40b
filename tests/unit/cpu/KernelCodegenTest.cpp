// Kernel code generation for the CPU (backends/llvm/KernelCodegen.h with backends/cpu/
// CpuKernel.h) end to end: prims from .dsc text,
// JIT-compiled at O3 for the host, run on host data and compared with values computed here,
// at sizes 0, 1, primes, 33 and other non-multiples of the vector width. Also what the
// optimized IR must show: vector types in `vectorize` loops, vector accumulators in
// reductions, one outlined body for a collapsed parallel nest.

#include "backends/cpu/KernelJit.h"

#include <gtest/gtest.h>

#include <numeric>
#include <random>
#include <regex>

#include "tests/unit/cpu/KernelTestUtil.h"

namespace dsc::testing {
namespace {

const std::vector<int64_t> kSizes = {0, 1, 2, 7, 16, 31, 33, 97, 1000, 4099};

std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -2.0f, float hi = 2.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v)
    x = d(rng);
  return v;
}

// The text of the function `name` in an LLVM IR dump: from its `define` to the closing brace.
std::string function_ir(const std::string& ir, const std::string& name) {
  size_t at = ir.find("@" + name + "(");
  while (at != std::string::npos && ir.rfind("define", at) < ir.rfind('\n', at)) break;
  size_t start = ir.rfind("define", at);
  if (at == std::string::npos || start == std::string::npos) return "";
  size_t end = ir.find("\n}\n", at);
  return ir.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

bool has_float_vectors(const std::string& ir) {
  return std::regex_search(ir, std::regex("<(4|8|16|32|64) x float>"));
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

TEST(KernelCodegen, AddRelu) {
  CompiledPrims k(R"(
prim add_relu(a: f32[n], b: f32[n]) -> (y: f32[n]) {
  parallel for i in 0..n {
    y[i] = max(a[i] + b[i], 0.0)
  }
}
)");
  ASSERT_TRUE(k.ok());
  for (int64_t n : {0, 1, 7, 16, 33, 1000, 100003}) {
    std::vector<float> a = random_floats(n, 1), b = random_floats(n, 2), y(n, -1.0f);
    k.run("add_relu", {a.data(), b.data(), y.data()}, {{"n", n}});
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(y[i], std::max(a[i] + b[i], 0.0f)) << "n=" << n << " i=" << i;
  }
}

TEST(KernelCodegen, VectorizedLoopHasVectorTypes) {
  CompiledPrims k(R"(
prim axpy(x: f32[n], y: f32[n]) -> (z: f32[n]) {
  vectorize for i in 0..n {
    z[i] = x[i] * 2.5 + y[i]
  }
}
)");
  ASSERT_TRUE(k.ok());
  std::string ir = function_ir(k.jit().optimized_ir(), "dsc_kernel_axpy");
  EXPECT_TRUE(has_float_vectors(ir)) << ir;
  for (int64_t n : kSizes) {
    std::vector<float> x = random_floats(n, 3), y = random_floats(n, 4), z(n);
    k.run("axpy", {x.data(), y.data(), z.data()}, {{"n", n}});
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(z[i], x[i] * 2.5f + y[i]) << "n=" << n << " i=" << i;
  }
}

TEST(KernelCodegen, BroadcastingThroughIndexExpressions) {
  // y = a * b[None, :] + c[:, 0:1] + d[] with broadcasting written as index expressions.
  CompiledPrims k(R"(
prim bcast(a: f32[m, n], b: f32[n], c: f32[m, 1], d: f32[]) -> (y: f32[m, n]) {
  parallel for i in 0..m {
    vectorize for j in 0..n {
      y[i, j] = a[i, j] * b[j] + c[i, 0] + d[]
    }
  }
}
)");
  ASSERT_TRUE(k.ok());
  for (int64_t m : {1, 3, 17}) {
    for (int64_t n : kSizes) {
      std::vector<float> a = random_floats(m * n, 5), b = random_floats(n, 6), c = random_floats(m, 7), y(m * n);
      float d = 0.75f;
      k.run("bcast", {a.data(), b.data(), c.data(), &d, y.data()}, {{"m", m}, {"n", n}});
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j)
          ASSERT_EQ(y[i * n + j], a[i * n + j] * b[j] + c[i] + d) << m << "x" << n;
    }
  }
}

TEST(KernelCodegen, RowSumGetsVectorAccumulators) {
  CompiledPrims k(R"(
prim row_sum(x: f32[m, k]) -> (y: f32[m]) {
  parallel for i in 0..m {
    var acc: f32 = 0.0
    vectorize for j in 0..k {
      acc = acc + x[i, j]
    }
    y[i] = acc
  }
}
)");
  ASSERT_TRUE(k.ok());
  // The reduction is reordered into vector accumulators (a vector phi), then reduced.
  std::string body = function_ir(k.jit().optimized_ir(), "dsc_kernel_row_sum.parallel.0");
  EXPECT_TRUE(std::regex_search(body, std::regex("phi <(4|8|16|32) x float>"))) << body;
  EXPECT_NE(body.find("llvm.vector.reduce.fadd"), std::string::npos) << body;
  for (int64_t m : {1, 5, 64}) {
    for (int64_t n : kSizes) {
      // Small integers: every order of summation gives the same float.
      std::vector<float> x(m * n), y(m, -1.0f);
      for (size_t i = 0; i < x.size(); ++i)
        x[i] = static_cast<float>(static_cast<int>(i % 13) - 6);
      k.run("row_sum", {x.data(), y.data()}, {{"m", m}, {"k", n}});
      for (int64_t i = 0; i < m; ++i) {
        float want = 0.0f;
        for (int64_t j = 0; j < n; ++j)
          want += x[i * n + j];
        ASSERT_EQ(y[i], want) << m << "x" << n << " row " << i;
      }
    }
  }
}

TEST(KernelCodegen, SoftmaxRowsWithMaxAndSumReductions) {
  CompiledPrims k(R"(
prim softmax(x: f32[m, n]) -> (y: f32[m, n]) {
  parallel for i in 0..m {
    var mx: f32 = -1e30
    vectorize for j in 0..n { mx = max(mx, x[i, j]) }
    var s: f32 = 0.0
    vectorize for j in 0..n {
      let e: f32 = exp(x[i, j] - mx)
      y[i, j] = e
      s = s + e
    }
    vectorize for j in 0..n { y[i, j] = y[i, j] / s }
  }
}
)");
  ASSERT_TRUE(k.ok());
  std::string body = function_ir(k.jit().optimized_ir(), "dsc_kernel_softmax.parallel.0");
  EXPECT_NE(body.find("llvm.vector.reduce.fmaximum"), std::string::npos) << body;
  for (int64_t m : {1, 4, 300}) {
    for (int64_t n : {1, 5, 33, 1000}) {
      std::vector<float> x = random_floats(m * n, 21, -20.0f, 20.0f), y(m * n);
      k.run("softmax", {x.data(), y.data()}, {{"m", m}, {"n", n}});
      for (int64_t i = 0; i < m; ++i) {
        // The kernel's x - max is a float subtraction; the rest is compared in double.
        float mx = -1e30f;
        double s = 0.0;
        for (int64_t j = 0; j < n; ++j)
          mx = std::max(mx, x[i * n + j]);
        for (int64_t j = 0; j < n; ++j)
          s += std::exp(static_cast<double>(x[i * n + j] - mx));
        for (int64_t j = 0; j < n; ++j) {
          double want = std::exp(static_cast<double>(x[i * n + j] - mx)) / s;
          ASSERT_NEAR(y[i * n + j], want, 1e-5 * want + 1e-38) << m << "x" << n;
        }
      }
    }
  }
}

TEST(KernelCodegen, UnrolledRowSum) {
  CompiledPrims k(R"(
prim row_sum(x: f32[m, k]) -> (y: f32[m]) where k % 4 == 0 {
  parallel for i in 0..m {
    var acc: f32 = 0.0
    for j in 0..k/4 {
      unroll for u in 0..4 {
        acc = acc + x[i, j*4 + u]
      }
    }
    y[i] = acc
  }
}
prim unroll_symbolic(x: f32[n]) -> (y: f32[n]) {
  unroll for i in 0..n {
    y[i] = x[i] + 1.0
  }
}
)");
  ASSERT_TRUE(k.ok());
  for (int64_t m : {1, 3}) {
    for (int64_t n : {0, 4, 8, 36, 1000}) {
      std::vector<float> x(m * n), y(m);
      for (size_t i = 0; i < x.size(); ++i)
        x[i] = static_cast<float>(i % 7);
      k.run("row_sum", {x.data(), y.data()}, {{"m", m}, {"k", n}});
      for (int64_t i = 0; i < m; ++i)
        ASSERT_EQ(y[i], std::accumulate(x.begin() + i * n, x.begin() + (i + 1) * n, 0.0f));
    }
  }
  for (int64_t n : kSizes) {
    std::vector<float> x = random_floats(n, 8), y(n);
    k.run("unroll_symbolic", {x.data(), y.data()}, {{"n", n}});
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(y[i], x[i] + 1.0f);
  }
}

TEST(KernelCodegen, CollapsedParallelNest) {
  CompiledPrims k(R"(
prim two(a: f32[p, q]) -> (y: f32[p, q]) {
  parallel for i in 0..p {
    parallel for j in 0..q {
      y[i, j] = a[i, j] * 2.0 + cast(i * 1000 + j, "f32")
    }
  }
}
prim three(a: f32[p, q, r]) -> (y: f32[p, q, r]) {
  parallel for i in 0..p {
    parallel for j in 1..q {
      parallel for l in 0..r {
        y[i, j, l] = a[i, j, l] + cast(i * 10000 + j * 100 + l, "f32")
      }
    }
  }
}
)");
  ASSERT_TRUE(k.ok());
  // One outlined body each, one parallel_for call each: the nests are collapsed.
  const std::string& ir = k.jit().emitted_ir();
  EXPECT_EQ(count(ir, "define internal void @dsc_kernel_two.parallel."), 1) << ir;
  EXPECT_EQ(count(ir, "define internal void @dsc_kernel_three.parallel."), 1) << ir;
  EXPECT_EQ(count(ir, "call void @dsc_rt_parallel_for"), 2) << ir;
  for (int64_t p : {0, 1, 3, 7}) {
    for (int64_t q : {0, 1, 5, 33, 300}) {
      std::vector<float> a = random_floats(p * q, 9), y(p * q, -1.0f);
      k.run("two", {a.data(), y.data()}, {{"p", p}, {"q", q}});
      for (int64_t i = 0; i < p; ++i)
        for (int64_t j = 0; j < q; ++j)
          ASSERT_EQ(y[i * q + j], a[i * q + j] * 2.0f + static_cast<float>(i * 1000 + j)) << p << "x" << q;
    }
  }
  for (int64_t p : {1, 2, 5}) {
    for (int64_t q : {1, 2, 4}) {
      for (int64_t r : {1, 3, 1000}) {
        std::vector<float> a = random_floats(p * q * r, 10), y(p * q * r, -1.0f);
        k.run("three", {a.data(), y.data()}, {{"p", p}, {"q", q}, {"r", r}});
        for (int64_t i = 0; i < p; ++i)
          for (int64_t j = 0; j < q; ++j)
            for (int64_t l = 0; l < r; ++l) {
              size_t at = static_cast<size_t>((i * q + j) * r + l);
              float want = j == 0 ? -1.0f : a[at] + static_cast<float>(i * 10000 + j * 100 + l);
              ASSERT_EQ(y[at], want) << p << "x" << q << "x" << r;
            }
      }
    }
  }
}

TEST(KernelCodegen, NestedParallelNotPerfectRunsSerially) {
  CompiledPrims k(R"(
prim f(a: f32[p, q]) -> (y: f32[p, q], s: f32[p]) {
  parallel for i in 0..p {
    s[i] = 0.0
    parallel for j in 0..q {
      y[i, j] = a[i, j] + 1.0
    }
  }
}
prim g(a: f32[p, p]) -> (y: f32[p, p]) {
  parallel for i in 0..p {
    parallel for j in 0..i + 1 {
      y[i, j] = a[i, j]
    }
  }
}
)");
  ASSERT_TRUE(k.ok());
  const std::string& ir = k.jit().emitted_ir();
  EXPECT_EQ(count(ir, "define internal void @dsc_kernel_f.parallel."), 1) << ir;
  // The inner bound uses the outer variable: no collapse, and the inner loop runs serially.
  EXPECT_EQ(count(ir, "define internal void @dsc_kernel_g.parallel."), 1) << ir;
  for (int64_t p : {1, 4, 50}) {
    for (int64_t q : {0, 1, 17}) {
      std::vector<float> a = random_floats(p * q, 11), y(p * q), s(p, -1.0f);
      k.run("f", {a.data(), y.data(), s.data()}, {{"p", p}, {"q", q}});
      for (int64_t i = 0; i < p * q; ++i)
        ASSERT_EQ(y[i], a[i] + 1.0f);
      for (float v : s)
        ASSERT_EQ(v, 0.0f);
    }
    std::vector<float> a = random_floats(p * p, 12), y(p * p, -7.0f);
    k.run("g", {a.data(), y.data()}, {{"p", p}});
    for (int64_t i = 0; i < p; ++i)
      for (int64_t j = 0; j < p; ++j)
        ASSERT_EQ(y[i * p + j], j <= i ? a[i * p + j] : -7.0f);
  }
}

TEST(KernelCodegen, ParallelBodiesCaptureAndPrivatizeLocals) {
  // `scale` is declared outside and read inside; `acc` is declared inside (one per row, per
  // thread); `t` is assigned inside but declared outside: a private copy per chunk.
  CompiledPrims k(R"(
prim f(x: f32[m, n], s: f32[2]) -> (y: f32[m]) {
  let scale: f32 = s[0]
  var t: f32 = s[1]
  parallel for i in 0..m {
    var acc: f32 = 0.0
    for j in 0..n {
      acc = acc + x[i, j]
    }
    t = t + 1.0
    y[i] = acc * scale + t - cast(i, "f32") * 0.0
  }
}
)");
  ASSERT_TRUE(k.ok());
  for (int64_t m : {1, 3, 5000}) {
    for (int64_t n : {1, 4, 64}) {
      std::vector<float> x(m * n), y(m), s = {0.5f, 10.0f};
      for (size_t i = 0; i < x.size(); ++i)
        x[i] = static_cast<float>(i % 5);
      k.run("f", {x.data(), s.data(), y.data()}, {{"m", m}, {"n", n}});
      for (int64_t i = 0; i < m; ++i) {
        float acc = 0.0f;
        for (int64_t j = 0; j < n; ++j)
          acc += x[i * n + j];
        // t's private copy starts at 10 in every chunk, so t is 11 or more; and every row's
        // accumulator starts from 0.
        float rest = y[i] - acc * 0.5f;
        ASSERT_GE(rest, 11.0f) << m << "x" << n << " row " << i;
        ASSERT_EQ(rest, std::floor(rest));
      }
    }
  }
}

TEST(KernelCodegen, GrainComesFromInnerWork) {
  CompiledPrims k(R"(
prim f(x: f32[m, n]) -> (y: f32[m, n]) {
  parallel for i in 0..m {
    for j in 0..n {
      y[i, j] = x[i, j]
    }
  }
}
)");
  ASSERT_TRUE(k.ok());
  // 16384 / (n * 1) rows per chunk, computed at run time.
  std::string ir = function_ir(k.jit().emitted_ir(), "dsc_kernel_f");
  EXPECT_NE(ir.find("sdiv i64 16384"), std::string::npos) << ir;
  EXPECT_NE(ir.find("%grain"), std::string::npos) << ir;
}

TEST(KernelCodegen, LocalsIfSelectAndLogic) {
  CompiledPrims k(R"(
prim f(x: f32[n]) -> (y: f32[n], c: bool[n]) {
  vectorize for i in 0..n {
    let v: f32 = x[i]
    if v > 0.0 && !(v > 1.0) {
      y[i] = v * 2.0
    } else if v < -1.0 || v == -0.5 {
      y[i] = select(v < -1.5, -1.5, v)
    } else {
      y[i] = 0.0
    }
    c[i] = v >= 0.25
  }
}
)");
  ASSERT_TRUE(k.ok());
  for (int64_t n : kSizes) {
    std::vector<float> x = random_floats(n, 13), y(n, 99.0f);
    if (n > 1) x[1] = -0.5f;
    std::vector<uint8_t> c(n, 7);
    k.run("f", {x.data(), y.data(), c.data()}, {{"n", n}});
    for (int64_t i = 0; i < n; ++i) {
      float v = x[i], want;
      if (v > 0.0f && !(v > 1.0f))
        want = v * 2.0f;
      else if (v < -1.0f || v == -0.5f)
        want = v < -1.5f ? -1.5f : v;
      else
        want = 0.0f;
      ASSERT_EQ(y[i], want) << i;
      ASSERT_EQ(c[i], v >= 0.25f ? 1 : 0) << i;
    }
  }
}

TEST(KernelCodegen, LoopBoundsAndEmptyRanges) {
  CompiledPrims k(R"(
prim f(x: f32[n]) -> (y: f32[n]) {
  for i in 0..n {
    y[i] = 0.0
  }
  vectorize for i in 3..n {
    y[i] = x[i - 3]
  }
  for i in n..n - 5 {
    y[0] = 100.0
  }
}
)");
  ASSERT_TRUE(k.ok());
  for (int64_t n : {1, 3, 4, 33}) {
    std::vector<float> x = random_floats(n, 14), y(n, -1.0f);
    k.run("f", {x.data(), y.data()}, {{"n", n}});
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(y[i], i < 3 ? 0.0f : x[i - 3]) << n << " " << i;
  }
}

TEST(KernelCodegen, LocalAllocations) {
  // A constant-size scratch buffer (stack), one of symbolic size (heap), inside a parallel
  // body too (one per thread).
  CompiledPrims k(R"(
prim f(x: f32[m, n]) -> (y: f32[m, n]) {
  parallel for i in 0..m {
    alloc t: f32[16] local
    alloc u: f32[n] local
    for j in 0..16 {
      t[j] = cast(j, "f32")
    }
    vectorize for j in 0..n {
      u[j] = x[i, j] + t[j % 16]
    }
    vectorize for j in 0..n {
      y[i, n - 1 - j] = u[j]
    }
  }
}
)");
  ASSERT_TRUE(k.ok());
  for (int64_t m : {1, 3, 2000}) {
    for (int64_t n : {1, 17, 40}) {
      std::vector<float> x = random_floats(m * n, 15), y(m * n);
      k.run("f", {x.data(), y.data()}, {{"m", m}, {"n", n}});
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j)
          ASSERT_EQ(y[i * n + n - 1 - j], x[i * n + j] + static_cast<float>(j % 16));
    }
  }
}

TEST(KernelCodegen, GatherWithLoadedIndices) {
  CompiledPrims k(R"(
prim take(x: f32[v, d], idx: i32[n]) -> (y: f32[n, d]) {
  parallel for i in 0..n {
    vectorize for j in 0..d {
      y[i, j] = x[idx[i], j]
    }
  }
}
)");
  ASSERT_TRUE(k.ok());
  int64_t v = 10, d = 7, n = 25;
  std::vector<float> x = random_floats(v * d, 16), y(n * d);
  std::vector<int32_t> idx(n);
  for (int64_t i = 0; i < n; ++i)
    idx[i] = static_cast<int32_t>((i * 7) % v);
  k.run("take", {x.data(), idx.data(), y.data()}, {{"v", v}, {"d", d}, {"n", n}});
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < d; ++j)
      ASSERT_EQ(y[i * d + j], x[idx[i] * d + j]);
}

TEST(KernelCodegen, MinMaxPropagateNaN) {
  CompiledPrims k(R"(
prim f(a: f32[n], b: f32[n]) -> (lo: f32[n], hi: f32[n]) {
  vectorize for i in 0..n {
    lo[i] = min(a[i], b[i])
    hi[i] = max(a[i], b[i])
  }
}
)");
  ASSERT_TRUE(k.ok());
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> a = {1.0f, nan, 3.0f, -0.0f, 0.0f, 5.0f, -2.0f, 8.0f, nan};
  std::vector<float> b = {2.0f, 1.0f, nan, 0.0f, -0.0f, 4.0f, -3.0f, 9.0f, nan};
  int64_t n = static_cast<int64_t>(a.size());
  std::vector<float> lo(n), hi(n);
  k.run("f", {a.data(), b.data(), lo.data(), hi.data()}, {{"n", n}});
  for (int64_t i = 0; i < n; ++i) {
    if (std::isnan(a[i]) || std::isnan(b[i])) {
      EXPECT_TRUE(std::isnan(lo[i]) && std::isnan(hi[i])) << i;
      continue;
    }
    EXPECT_EQ(lo[i], std::min(a[i], b[i])) << i;
    EXPECT_EQ(hi[i], std::max(a[i], b[i])) << i;
  }
  // -0 < +0 for min and max.
  EXPECT_TRUE(std::signbit(lo[3]) && !std::signbit(hi[3]));
  EXPECT_TRUE(std::signbit(lo[4]) && !std::signbit(hi[4]));
}

TEST(KernelCodegen, IntrinsicsElementwise) {
  CompiledPrims k(R"(
prim f(x: f32[n]) -> (y: f32[n, 11]) {
  vectorize for i in 0..n {
    let v: f32 = x[i]
    y[i, 0] = sqrt(abs(v))
    y[i, 1] = rsqrt(abs(v) + 1.0)
    y[i, 2] = -v
    y[i, 3] = abs(v)
    y[i, 4] = exp(v)
    y[i, 5] = log(abs(v) + 0.5)
    y[i, 6] = tanh(v) + erf(v)
    y[i, 7] = sigmoid(v)
    y[i, 8] = pow(abs(v), v)
    y[i, 9] = sin(v)
    y[i, 10] = cos(v)
  }
}
)");
  ASSERT_TRUE(k.ok());
  // The math functions are inlined and vectorized (sin's and cos's table reads become
  // gathers): no calls remain.
  std::string ir = function_ir(k.jit().optimized_ir(), "dsc_kernel_f");
  EXPECT_TRUE(has_float_vectors(ir)) << ir;
  EXPECT_FALSE(std::regex_search(ir, std::regex("call [a-z0-9<> ]+ @(?!llvm\\.)"))) << ir;
  int64_t n = 101;
  std::vector<float> x = random_floats(n, 17, -3.0f, 3.0f), y(n * 11);
  k.run("f", {x.data(), y.data()}, {{"n", n}});
  for (int64_t i = 0; i < n; ++i) {
    double v = x[i];
    const double want[] = {std::sqrt(std::fabs(v)),   1.0 / std::sqrt(std::fabs(v) + 1.0),
                           -v,
                           std::fabs(v),
                           std::exp(v),
                           std::log(std::fabs(v) + 0.5),
                           std::tanh(v) + std::erf(v),
                           1.0 / (1.0 + std::exp(-v)),
                           std::pow(std::fabs(v), v),
                           std::sin(v),
                           std::cos(v)};
    for (int c = 0; c < 11; ++c)
      EXPECT_NEAR(y[i * 11 + c], want[c], 4e-7 * (std::fabs(want[c]) + 1.0)) << "column " << c << " x=" << v;
  }
}

TEST(KernelCodegen, StatementIntrinsicIsANoOpOnCpu) {
  CompiledPrims k(R"(
prim f(x: f32[n]) -> (y: f32[n]) {
  for i in 0..n {
    y[i] = x[i]
    sync_threads()
  }
}
)");
  ASSERT_TRUE(k.ok());
  std::vector<float> x = {1.0f, 2.0f}, y(2);
  k.run("f", {x.data(), y.data()}, {{"n", 2}});
  EXPECT_EQ(y, x);
}

TEST(KernelCodegen, UnknownStatementIntrinsicIsReported) {
  std::optional<ir::Module> m = parse_clean(R"(
prim f(x: f32[n]) -> (y: f32[n]) {
  for i in 0..n {
    launch_missiles(x[i])
  }
}
)");
  ASSERT_TRUE(m);
  std::string error;
  std::unique_ptr<cpu::KernelJit> jit = cpu::KernelJit::compile(prims_of(*m), error);
  EXPECT_EQ(jit, nullptr);
  EXPECT_EQ(error, "prim 'f': the CPU backend has no intrinsic 'launch_missiles'");
}

TEST(KernelCodegen, SeveralKernelsShareOneModule) {
  CompiledPrims k(R"(
prim a(x: f32[n]) -> (y: f32[n]) { vectorize for i in 0..n { y[i] = exp(x[i]) } }
prim b(x: f32[n]) -> (y: f32[n]) { vectorize for i in 0..n { y[i] = exp(x[i]) + 1.0 } }
prim c(x: f32[n]) -> (y: f32[n]) { parallel for i in 0..n { y[i] = x[i] } }
prim d(x: f32[n]) -> (y: f32[n]) { parallel for i in 0..n { y[i] = -x[i] } }
)");
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(count(k.jit().emitted_ir(), "define internal float @dsc.math.exp.f32("), 1);
  std::vector<float> x = {0.0f, 1.0f}, y(2);
  k.run("d", {x.data(), y.data()}, {{"n", 2}});
  EXPECT_EQ(y[1], -1.0f);
  k.run("b", {x.data(), y.data()}, {{"n", 2}});
  EXPECT_EQ(y[0], 2.0f);
}

TEST(KernelCodegen, OptimizationLevelZeroAlsoRuns) {
  cpu::KernelJitOptions options;
  options.opt_level = 0;
  CompiledPrims k(R"(
prim f(x: f32[m, n]) -> (y: f32[m]) {
  parallel for i in 0..m {
    var acc: f32 = 0.0
    vectorize for j in 0..n { acc = acc + exp(x[i, j]) }
    y[i] = acc
  }
}
)",
                  options);
  ASSERT_TRUE(k.ok());
  std::vector<float> x = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f}, y(2);
  k.run("f", {x.data(), y.data()}, {{"m", 2}, {"n", 3}});
  EXPECT_EQ(y[0], 3.0f);
  EXPECT_EQ(y[1], 3.0f);
}

TEST(KernelCodegen, ThirtyTwoBitIndices) {
  // ir::Target::index_bits = 32: loops, strides, offsets and parallel ranges in i32.
  cpu::KernelJitOptions options;
  options.index_bits = 32;
  CompiledPrims k(R"(
prim f(x: f32[m, n]) -> (y: f32[m, n]) {
  parallel for i in 0..m {
    parallel for j in 0..n {
      alloc u: f32[n] local
      vectorize for l in 0..n {
        u[l] = x[i, l] + cast((i * n + j) / 3, "f32")
      }
      y[i, n - 1 - j] = u[j]
    }
  }
}
)",
                  options);
  ASSERT_TRUE(k.ok());
  const std::string& ir = k.jit().emitted_ir();
  EXPECT_NE(ir.find("phi i32"), std::string::npos) << ir;
  EXPECT_EQ(ir.find("phi i64"), std::string::npos) << ir;
  for (int64_t m : {1, 3, 40}) {
    for (int64_t n : {1, 17, 40}) {
      std::vector<float> x = random_floats(m * n, 21), y(m * n, -1.0f);
      k.run("f", {x.data(), y.data()}, {{"m", m}, {"n", n}});
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j)
          ASSERT_EQ(y[i * n + n - 1 - j], x[i * n + j] + static_cast<float>((i * n + j) / 3)) << m << "x" << n;
    }
  }
}

} // namespace
} // namespace dsc::testing
