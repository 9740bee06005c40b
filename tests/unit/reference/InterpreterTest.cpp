// The reference interpreter on .dsc programs through the front end, against expected values
// computed here with plain loops in double precision, at several shapes (1, primes, sizes that
// are not multiples of 16), and its run-time errors.

#include "backends/reference/Interpreter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>
#include <sstream>

#include "lang/Frontend.h"
#include "tests/unit/PipelineUtil.h"
#include "tests/unit/SourceDir.h"

namespace dsc::testing {
namespace {

using runtime::Tensor;
using Shape = std::vector<int64_t>;

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s)
    n *= d;
  return n;
}

// A host f32 tensor and the same values in double, for the expected results.
struct Data {
  Shape shape;
  std::vector<double> v;
  double at(std::initializer_list<int64_t> idx) const {
    int64_t o = 0;
    size_t d = 0;
    for (int64_t i : idx)
      o = o * shape[d++] + i;
    return v[static_cast<size_t>(o)];
  }
};

class InterpreterTest : public ::testing::Test {
protected:
  // Parses, infers shapes and decides facts; the test fails on any diagnostic.
  ir::Module compile(const std::string& text) {
    uint32_t file = sources_.add("test.dsc", text);
    lang::FrontendOptions options;
    options.stdlib_dirs = {source_dir() + "/stdlib"};
    std::optional<ir::Module> m = lang::parse_module(sources_, file, diags_, options);
    passes::PassContext ctx{diags_, prover_};
    ir::Module out;
    if (m && !diags_.has_errors()) out = typecheck(std::move(*m), ctx);
    std::string errors;
    for (const Diagnostic& d : diags_.diagnostics())
      errors +=
          std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col) + ": " + d.message + "\n";
    EXPECT_EQ(errors, "");
    return out;
  }

  Data random(Shape shape, double lo = -2.0, double hi = 2.0) {
    std::uniform_real_distribution<double> dist(lo, hi);
    Data d{std::move(shape), {}};
    for (int64_t i = 0; i < numel(d.shape); ++i)
      d.v.push_back(static_cast<float>(dist(rng_))); // representable in f32
    return d;
  }

  static Tensor to_tensor(const Data& d) {
    Tensor t = Tensor::zeros(runtime::dl_float(32), d.shape);
    for (size_t i = 0; i < d.v.size(); ++i)
      t.data_as<float>()[i] = static_cast<float>(d.v[i]);
    return t;
  }
  static Tensor i64_tensor(Shape shape, const std::vector<int64_t>& v) {
    Tensor t = Tensor::zeros(runtime::dl_int(64), std::move(shape));
    for (size_t i = 0; i < v.size(); ++i)
      t.data_as<int64_t>()[i] = v[i];
    return t;
  }

  static void expect_close(const Tensor& got, const Shape& shape, const std::vector<double>& want,
                           const std::string& what, double tol = 1e-5) {
    ASSERT_EQ(got.shape(), shape) << what;
    ASSERT_EQ(runtime::dtype_name(got.dtype()), "f32") << what;
    ASSERT_EQ(static_cast<size_t>(got.numel()), want.size()) << what;
    for (size_t i = 0; i < want.size(); ++i) {
      double g = got.data_as<float>()[i];
      if (std::isinf(want[i])) {
        ASSERT_EQ(g, want[i]) << what << " at " << i;
        continue;
      }
      ASSERT_NEAR(g, want[i], tol * (1.0 + std::fabs(want[i]))) << what << " at " << i;
    }
  }

  // Tensors are move-only, so the inputs are passed one by one.
  template <typename... Ts>
  reference::RunResult run_on(const ir::Module& m, const std::string& entry, Ts&&... inputs) {
    std::vector<Tensor> v;
    (v.push_back(std::forward<Ts>(inputs)), ...);
    return reference::interpret(m, entry, v);
  }
  template <typename... Ts> reference::RunResult run(const ir::Module& m, Ts&&... inputs) {
    return run_on(m, "f", std::forward<Ts>(inputs)...);
  }

  SourceManager sources_;
  DiagnosticEngine diags_{sources_};
  symbolic::Prover prover_;
  std::mt19937 rng_{1234};
};

const std::vector<std::pair<int64_t, int64_t>> kShapes2 = {{1, 1},  {1, 7},  {3, 17},
                                                           {13, 1}, {5, 33}, {31, 19}};

TEST_F(InterpreterTest, ElementwiseWithBroadcasting) {
  ir::Module m = compile(R"(
fn f(x: f32[A, B], y: f32[B], z: f32[A, 1]) {
  let a = maximum(x * y + 1.0, x - z) / (abs(y) + 2.0)
  let b = where(x > y, exp(x), tanh(y) - sigmoid(z))
  let c = pow(abs(x) + 0.5, 1.5) + sqrt(abs(y)) * rsqrt(abs(z) + 1.0) + erf(-x) + log(abs(x) + 1.0)
  let d = minimum(neg(x), 0.25)
  return (a, b, c, d)
})");
  for (auto [A, B] : kShapes2) {
    Data x = random({A, B}), y = random({B}), z = random({A, 1});
    reference::RunResult r = run(m, to_tensor(x), to_tensor(y), to_tensor(z));
    ASSERT_TRUE(r.ok()) << r.error;
    ASSERT_EQ(r.outputs.size(), 4u);
    std::vector<double> a, b, c, d;
    for (int64_t i = 0; i < A; ++i)
      for (int64_t j = 0; j < B; ++j) {
        double xv = x.at({i, j}), yv = y.at({j}), zv = z.at({i, 0});
        a.push_back(std::max(xv * yv + 1.0, xv - zv) / (std::fabs(yv) + 2.0));
        b.push_back(xv > yv ? std::exp(xv) : std::tanh(yv) - 1.0 / (1.0 + std::exp(-zv)));
        c.push_back(std::pow(std::fabs(xv) + 0.5, 1.5) +
                    std::sqrt(std::fabs(yv)) / std::sqrt(std::fabs(zv) + 1.0) + std::erf(-xv) +
                    std::log(std::fabs(xv) + 1.0));
        d.push_back(std::min(-xv, 0.25));
      }
    std::string at = " at " + std::to_string(A) + "x" + std::to_string(B);
    expect_close(r.outputs[0], {A, B}, a, "a" + at);
    expect_close(r.outputs[1], {A, B}, b, "b" + at);
    expect_close(r.outputs[2], {A, B}, c, "c" + at);
    expect_close(r.outputs[3], {A, B}, d, "d" + at);
  }
}

TEST_F(InterpreterTest, Reductions) {
  ir::Module m = compile(R"(
fn f(x: f32[A, B, C]) {
  return (sum(x, axis=1), max(x, axis=-1, keepdims=true), min(x, axis=[0, 2]), mean(x),
          mean(x, axis=[-1, 0], keepdims=true))
})");
  for (Shape s : {Shape{1, 1, 1}, Shape{2, 3, 5}, Shape{7, 1, 17}, Shape{3, 19, 2}}) {
    int64_t A = s[0], B = s[1], C = s[2];
    Data x = random(s);
    reference::RunResult r = run(m, to_tensor(x));
    ASSERT_TRUE(r.ok()) << r.error;
    ASSERT_EQ(r.outputs.size(), 5u);
    std::vector<double> sum_b(static_cast<size_t>(A * C), 0.0), max_c, min_ac, mean_ac;
    double total = 0;
    for (int64_t i = 0; i < A; ++i)
      for (int64_t k = 0; k < C; ++k)
        for (int64_t j = 0; j < B; ++j)
          sum_b[static_cast<size_t>(i * C + k)] += x.at({i, j, k});
    for (int64_t i = 0; i < A; ++i)
      for (int64_t j = 0; j < B; ++j) {
        double mx = -INFINITY;
        for (int64_t k = 0; k < C; ++k)
          mx = std::max(mx, x.at({i, j, k}));
        max_c.push_back(mx);
      }
    for (int64_t j = 0; j < B; ++j) {
      double mn = INFINITY, acc = 0;
      for (int64_t i = 0; i < A; ++i)
        for (int64_t k = 0; k < C; ++k)
          mn = std::min(mn, x.at({i, j, k})), acc += x.at({i, j, k});
      min_ac.push_back(mn);
      mean_ac.push_back(acc / static_cast<double>(A * C));
      total += acc;
    }
    expect_close(r.outputs[0], {A, C}, sum_b, "sum");
    expect_close(r.outputs[1], {A, B, 1}, max_c, "max");
    expect_close(r.outputs[2], {B}, min_ac, "min");
    expect_close(r.outputs[3], {}, {total / static_cast<double>(A * B * C)}, "mean");
    expect_close(r.outputs[4], {1, B, 1}, mean_ac, "mean keepdims");
  }
}

TEST_F(InterpreterTest, BatchedMatmulAndVectors) {
  ir::Module m = compile(R"(
fn f(a: f32[B, 1, M, K], b: f32[H, K, N], v: f32[K]) {
  return (matmul(a, b), matmul(v, b), matmul(a, v))
})");
  for (Shape s : {Shape{1, 1, 1, 1, 1}, Shape{2, 3, 5, 7, 11}, Shape{3, 2, 17, 1, 19}}) {
    int64_t B = s[0], H = s[1], M = s[2], K = s[3], N = s[4];
    Data a = random({B, 1, M, K}), b = random({H, K, N}), v = random({K});
    reference::RunResult r = run(m, to_tensor(a), to_tensor(b), to_tensor(v));
    ASSERT_TRUE(r.ok()) << r.error;
    std::vector<double> ab, vb, av;
    for (int64_t bi = 0; bi < B; ++bi)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t i = 0; i < M; ++i)
          for (int64_t j = 0; j < N; ++j) {
            double acc = 0;
            for (int64_t p = 0; p < K; ++p)
              acc += a.at({bi, 0, i, p}) * b.at({h, p, j});
            ab.push_back(acc);
          }
    for (int64_t h = 0; h < H; ++h)
      for (int64_t j = 0; j < N; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < K; ++p)
          acc += v.at({p}) * b.at({h, p, j});
        vb.push_back(acc);
      }
    for (int64_t bi = 0; bi < B; ++bi)
      for (int64_t i = 0; i < M; ++i) {
        double acc = 0;
        for (int64_t p = 0; p < K; ++p)
          acc += a.at({bi, 0, i, p}) * v.at({p});
        av.push_back(acc);
      }
    expect_close(r.outputs[0], {B, H, M, N}, ab, "a@b");
    expect_close(r.outputs[1], {H, N}, vb, "v@b");
    expect_close(r.outputs[2], {B, 1, M}, av, "a@v");
  }
}

// out[n, o, y, x] = sum over (i, ky, kx) of x[n, g*I + i, y*s - p + ky*d, ...] * w[o, i, ky, kx]
std::vector<double> conv_ref(const Data& x, const Data& w, int64_t sh, int64_t sw, int64_t ph,
                             int64_t pw, int64_t dh, int64_t dw, int64_t G, Shape* out_shape) {
  int64_t N = x.shape[0], H = x.shape[2], W = x.shape[3];
  int64_t O = w.shape[0], I = w.shape[1], KH = w.shape[2], KW = w.shape[3];
  int64_t OH = (H + 2 * ph - dh * (KH - 1) - 1) / sh + 1;
  int64_t OW = (W + 2 * pw - dw * (KW - 1) - 1) / sw + 1;
  *out_shape = {N, O, OH, OW};
  std::vector<double> out;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t oy = 0; oy < OH; ++oy)
        for (int64_t ox = 0; ox < OW; ++ox) {
          double acc = 0;
          int64_t g = o / (O / G);
          for (int64_t i = 0; i < I; ++i)
            for (int64_t ky = 0; ky < KH; ++ky)
              for (int64_t kx = 0; kx < KW; ++kx) {
                int64_t yy = oy * sh - ph + ky * dh, xx = ox * sw - pw + kx * dw;
                if (yy < 0 || yy >= H || xx < 0 || xx >= W) continue;
                acc += x.at({n, g * I + i, yy, xx}) * w.at({o, i, ky, kx});
              }
          out.push_back(acc);
        }
  return out;
}

TEST_F(InterpreterTest, Conv2dWithPaddingStrideDilationGroups) {
  ir::Module m = compile(R"(
fn f(x: f32[N, 4, H, W], w: f32[6, 2, 3, 3], w1: f32[5, 4, 2, 3]) where H >= 5, W >= 5 {
  return (conv2d(x, w, stride=2, padding=1, groups=2),
          conv2d(x, w1, stride=[1, 2], padding=[2, 0], dilation=2),
          conv2d(x, w1))
})");
  for (Shape s : {Shape{1, 5, 5}, Shape{2, 7, 11}, Shape{3, 17, 6}}) {
    Data x = random({s[0], 4, s[1], s[2]}), w = random({6, 2, 3, 3}), w1 = random({5, 4, 2, 3});
    reference::RunResult r = run(m, to_tensor(x), to_tensor(w), to_tensor(w1));
    ASSERT_TRUE(r.ok()) << r.error;
    Shape shape;
    std::vector<double> want = conv_ref(x, w, 2, 2, 1, 1, 1, 1, 2, &shape);
    expect_close(r.outputs[0], shape, want, "grouped");
    want = conv_ref(x, w1, 1, 2, 2, 0, 2, 2, 1, &shape);
    expect_close(r.outputs[1], shape, want, "dilated");
    want = conv_ref(x, w1, 1, 1, 0, 0, 1, 1, 1, &shape);
    expect_close(r.outputs[2], shape, want, "plain");
  }
}

// Windows worked out by hand on a 4x4 image x[h][w] = 4h + w, negated for the max so that
// padding read as 0 would win.
TEST_F(InterpreterTest, PoolsOnAWorkedExample) {
  ir::Module m = compile(R"(
fn f(x: f32[1, 1, 4, 4]) {
  return (max_pool2d(-x - 1.0, 3, stride=2, padding=1), avg_pool2d(x, 3, stride=2, padding=1),
          avg_pool2d(x, 3, stride=2, padding=1, count_include_pad=true),
          max_pool2d(x, [1, 2]), avg_pool2d(x, [3, 1], stride=[1, 2], padding=[1, 0]))
})");
  Data x{{1, 1, 4, 4}, {}};
  for (int v = 0; v < 16; ++v)
    x.v.push_back(v);
  reference::RunResult r = run(m, to_tensor(x));
  ASSERT_TRUE(r.ok()) << r.error;
  ASSERT_EQ(r.outputs.size(), 5u);
  expect_close(r.outputs[0], {1, 1, 2, 2}, {-1, -2, -5, -6}, "max, padded");
  // The windows cover 4, 6, 6 and 9 elements of the input.
  expect_close(r.outputs[1], {1, 1, 2, 2}, {10.0 / 4, 24.0 / 6, 51.0 / 6, 90.0 / 9}, "avg");
  expect_close(r.outputs[2], {1, 1, 2, 2}, {10.0 / 9, 24.0 / 9, 51.0 / 9, 90.0 / 9},
               "avg counting the padding");
  expect_close(r.outputs[3], {1, 1, 4, 2}, {1, 3, 5, 7, 9, 11, 13, 15}, "max, default stride");
  // Column windows of 3 rows, padded top and bottom, over columns 0 and 2.
  expect_close(r.outputs[4], {1, 1, 4, 2}, {2, 4, 4, 6, 8, 10, 10, 12}, "avg, per axis");
}

TEST_F(InterpreterTest, LayoutOps) {
  ir::Module m = compile(R"(
fn f(x: f32[A, B, C], idx: i64[K]) where C >= 1 {
  let p = permute(x, [2, 0, 1])
  let r = reshape(x, [A*B, -1])
  let c = concat([x, x * 2.0], axis=1)
  let s0, s1 = split(c, 2, axis=1)
  let sl = slice(x, axis=2, start=1, end=C, step=2)
  let t = take(x, idx, axis=-1)
  let pd = pad(x, [0, 0, 1, 2, 2, 0], value=-1.0)
  let bc = broadcast_to(slice(x, axis=0, start=0, end=1), [3, A, B, C])
  return (p, r, s1, sl, t, pd, bc)
})");
  for (Shape s : {Shape{1, 1, 1}, Shape{2, 3, 5}, Shape{5, 1, 17}, Shape{3, 7, 2}}) {
    int64_t A = s[0], B = s[1], C = s[2];
    Data x = random(s);
    std::vector<int64_t> idx = {C - 1, 0, -1, C / 2};
    reference::RunResult r = run(m, to_tensor(x), i64_tensor({4}, idx));
    ASSERT_TRUE(r.ok()) << r.error;
    ASSERT_EQ(r.outputs.size(), 7u);
    std::vector<double> p, re, s1, sl, t, pd, bc;
    for (int64_t k = 0; k < C; ++k)
      for (int64_t i = 0; i < A; ++i)
        for (int64_t j = 0; j < B; ++j)
          p.push_back(x.at({i, j, k}));
    re = x.v;
    for (int64_t i = 0; i < A; ++i)
      for (int64_t j = 0; j < B; ++j)
        for (int64_t k = 0; k < C; ++k)
          s1.push_back(2.0 * x.at({i, j, k}));
    for (int64_t i = 0; i < A; ++i)
      for (int64_t j = 0; j < B; ++j)
        for (int64_t k = 1; k < C; k += 2)
          sl.push_back(x.at({i, j, k}));
    for (int64_t i = 0; i < A; ++i)
      for (int64_t j = 0; j < B; ++j)
        for (int64_t q : idx)
          t.push_back(x.at({i, j, q < 0 ? q + C : q}));
    for (int64_t i = 0; i < A; ++i)
      for (int64_t j = -1; j < B + 2; ++j)
        for (int64_t k = -2; k < C; ++k)
          pd.push_back(j < 0 || j >= B || k < 0 ? -1.0 : x.at({i, j, k}));
    for (int64_t rep = 0; rep < 3; ++rep)
      for (int64_t i = 0; i < A; ++i)
        for (int64_t j = 0; j < B; ++j)
          for (int64_t k = 0; k < C; ++k)
            bc.push_back(x.at({0, j, k}));
    expect_close(r.outputs[0], {C, A, B}, p, "permute");
    expect_close(r.outputs[1], {A * B, C}, re, "reshape");
    expect_close(r.outputs[2], {A, B, C}, s1, "concat+split");
    expect_close(r.outputs[3], {A, B, C / 2}, sl, "slice");
    expect_close(r.outputs[4], {A, B, 4}, t, "take");
    expect_close(r.outputs[5], {A, B + 3, C + 2}, pd, "pad");
    expect_close(r.outputs[6], {3, A, B, C}, bc, "broadcast_to");
  }
}

TEST_F(InterpreterTest, StdlibSoftmaxLayerNormGelu) {
  ir::Module m = compile(R"(
import nn
fn f(x: f32[B, S, D], g: f32[D], b: f32[D]) {
  return (nn.softmax(x, axis=-1), nn.layer_norm(x, g, b, eps=1e-5), nn.gelu(x),
          nn.softmax(x, axis=1))
})");
  for (Shape s : {Shape{1, 1, 1}, Shape{2, 3, 5}, Shape{1, 7, 33}, Shape{3, 13, 17}}) {
    int64_t B = s[0], S = s[1], D = s[2];
    Data x = random(s, -4.0, 4.0), g = random({D}), b = random({D});
    reference::RunResult r = run(m, to_tensor(x), to_tensor(g), to_tensor(b));
    ASSERT_TRUE(r.ok()) << r.error;
    ASSERT_EQ(r.outputs.size(), 4u);
    std::vector<double> sm, ln, ge, sm1(x.v.size());
    for (int64_t i = 0; i < B; ++i)
      for (int64_t j = 0; j < S; ++j) {
        double mx = -INFINITY, z = 0, mu = 0, var = 0;
        for (int64_t k = 0; k < D; ++k)
          mx = std::max(mx, x.at({i, j, k}));
        for (int64_t k = 0; k < D; ++k)
          z += std::exp(x.at({i, j, k}) - mx), mu += x.at({i, j, k});
        mu /= static_cast<double>(D);
        for (int64_t k = 0; k < D; ++k)
          var += (x.at({i, j, k}) - mu) * (x.at({i, j, k}) - mu);
        var /= static_cast<double>(D);
        for (int64_t k = 0; k < D; ++k) {
          double v = x.at({i, j, k});
          sm.push_back(std::exp(v - mx) / z);
          ln.push_back((v - mu) / std::sqrt(var + 1e-5) * g.at({k}) + b.at({k}));
          ge.push_back(0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))));
        }
      }
    for (int64_t i = 0; i < B; ++i)
      for (int64_t k = 0; k < D; ++k) {
        double mx = -INFINITY, z = 0;
        for (int64_t j = 0; j < S; ++j)
          mx = std::max(mx, x.at({i, j, k}));
        for (int64_t j = 0; j < S; ++j)
          z += std::exp(x.at({i, j, k}) - mx);
        for (int64_t j = 0; j < S; ++j)
          sm1[static_cast<size_t>((i * S + j) * D + k)] = std::exp(x.at({i, j, k}) - mx) / z;
      }
    expect_close(r.outputs[0], s, sm, "softmax");
    expect_close(r.outputs[1], s, ln, "layer_norm", 1e-4);
    expect_close(r.outputs[2], s, ge, "gelu");
    expect_close(r.outputs[3], s, sm1, "softmax axis 1");
  }
}

TEST_F(InterpreterTest, CreationAndDataDependentShapes) {
  ir::Module m = compile(R"(
fn f(x: f32[N]) {
  let idx = nonzero(x > 0.0)
  let k: i64[M, 1] = idx
  let pos = take(x, reshape(k, [M]), axis=0)
  return (pos, cast(shape_of(idx), dtype="f32"), cast(arange(0, N, step=2), dtype="f32"),
          full([2, N], 1.5), zeros([N]))
})");
  for (int64_t N : {1, 2, 13, 40}) {
    Data x = random({N});
    reference::RunResult r = run(m, to_tensor(x));
    ASSERT_TRUE(r.ok()) << r.error;
    ASSERT_EQ(r.outputs.size(), 5u);
    std::vector<double> pos, ar;
    for (double v : x.v)
      if (v > 0) pos.push_back(v);
    for (int64_t i = 0; i < N; i += 2)
      ar.push_back(static_cast<double>(i));
    int64_t M = static_cast<int64_t>(pos.size());
    expect_close(r.outputs[0], {M}, pos, "nonzero+take");
    expect_close(r.outputs[1], {2}, {static_cast<double>(M), 1.0}, "shape_of");
    expect_close(r.outputs[2], {(N + 1) / 2}, ar, "arange");
    expect_close(r.outputs[3], {2, N}, std::vector<double>(static_cast<size_t>(2 * N), 1.5),
                 "full");
    expect_close(r.outputs[4], {N}, std::vector<double>(static_cast<size_t>(N), 0.0), "zeros");
  }
}

TEST_F(InterpreterTest, ModuleFunctionCallsAndIf) {
  ir::Module m = compile(R"(
fn double_it(y: f32[K]) -> f32[K] { return y * 2.0 }
fn f(x: f32[N], flag: bool[]) {
  let z = double_it(x)
  return if flag { z + 1.0 } else { z - 1.0 }
})");
  Data x = random({7});
  for (bool flag : {true, false}) {
    Tensor fl = Tensor::zeros(runtime::dl_bool(), {});
    fl.data_as<uint8_t>()[0] = flag;
    reference::RunResult r = run(m, to_tensor(x), std::move(fl));
    ASSERT_TRUE(r.ok()) << r.error;
    std::vector<double> want;
    for (double v : x.v)
      want.push_back(2.0 * v + (flag ? 1.0 : -1.0));
    expect_close(r.outputs[0], {7}, want, "if");
  }
}

TEST_F(InterpreterTest, HalfPrecisionRoundsOnStore) {
  ir::Module m = compile(R"(
fn f(x: f32[N]) { return (cast(cast(x, dtype="f16") * 3.0, dtype="f32"),
                          cast(cast(x, dtype="bf16"), dtype="f32")) })");
  Data x{{4}, {1.0, 0.1, 65504.0, 1.0 / 3.0}};
  reference::RunResult r = run(m, to_tensor(x));
  ASSERT_TRUE(r.ok()) << r.error;
  // f16(0.1) = 0.0999755859375; times 3 is 0.2999267578125, a tie that rounds to even.
  expect_close(r.outputs[0], {4}, {3.0, 0.2998046875, INFINITY, 1.0}, "f16", 0);
  expect_close(r.outputs[1], {4}, {1.0, 0.10009765625, 65536.0, 0.333984375}, "bf16", 0);
}

TEST_F(InterpreterTest, IntegerArithmetic) {
  ir::Module m = compile(R"(
fn f(a: i64[N], b: i64[N]) { return (a / b, a * b - 3, sum(a, axis=0), max(a, axis=0), -a) })");
  std::vector<int64_t> a = {7, -7, 7, -7, 5}, b = {2, 2, -2, -2, 1};
  reference::RunResult r = run(m, i64_tensor({5}, a), i64_tensor({5}, b));
  ASSERT_TRUE(r.ok()) << r.error;
  auto values = [](const Tensor& t) {
    return std::vector<int64_t>(t.data_as<int64_t>(), t.data_as<int64_t>() + t.numel());
  };
  EXPECT_EQ(values(r.outputs[0]), (std::vector<int64_t>{3, -4, -4, 3, 5})); // floor division
  EXPECT_EQ(values(r.outputs[1]), (std::vector<int64_t>{11, -17, -17, 11, 2}));
  EXPECT_EQ(values(r.outputs[2]), (std::vector<int64_t>{5}));
  EXPECT_EQ(values(r.outputs[3]), (std::vector<int64_t>{7}));
  EXPECT_EQ(values(r.outputs[4]), (std::vector<int64_t>{-7, 7, -7, 7, -5}));
}

// The BERT example end to end: with unit gamma and zero beta, every output row of the final
// layer_norm has mean 0 and variance 1.
TEST_F(InterpreterTest, BertLayerExampleNormalizesRows) {
  std::ifstream in(source_dir() + "/examples/bert_layer.dsc");
  std::stringstream text;
  text << in.rdbuf();
  ir::Module m = compile(text.str());
  for (auto [B, S] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {2, 3}}) {
    std::vector<Tensor> inputs;
    inputs.push_back(to_tensor(random({B, S, 768})));
    inputs.push_back(to_tensor(Data{{B, S}, std::vector<double>(static_cast<size_t>(B * S), 0.0)}));
    for (Shape s : {Shape{768, 2304}, Shape{2304}, Shape{768, 768}, Shape{768}})
      inputs.push_back(to_tensor(random(s, -0.05, 0.05)));
    inputs.push_back(to_tensor(Data{{768}, std::vector<double>(768, 1.0)}));
    inputs.push_back(to_tensor(Data{{768}, std::vector<double>(768, 0.0)}));
    for (Shape s : {Shape{768, 3072}, Shape{3072}, Shape{3072, 768}, Shape{768}})
      inputs.push_back(to_tensor(random(s, -0.05, 0.05)));
    inputs.push_back(to_tensor(Data{{768}, std::vector<double>(768, 1.0)}));
    inputs.push_back(to_tensor(Data{{768}, std::vector<double>(768, 0.0)}));
    reference::RunResult r = reference::interpret(m, "layer", inputs);
    ASSERT_TRUE(r.ok()) << r.error;
    ASSERT_EQ(r.outputs.size(), 1u);
    ASSERT_EQ(r.outputs[0].shape(), (Shape{B, S, 768}));
    const float* y = r.outputs[0].data_as<float>();
    for (int64_t row = 0; row < B * S; ++row) {
      double mu = 0, var = 0;
      for (int64_t k = 0; k < 768; ++k)
        mu += y[row * 768 + k];
      mu /= 768;
      for (int64_t k = 0; k < 768; ++k)
        var += (y[row * 768 + k] - mu) * (y[row * 768 + k] - mu);
      EXPECT_NEAR(mu, 0.0, 1e-5) << row;
      EXPECT_NEAR(var / 768, 1.0, 1e-4) << row;
    }
  }
  reference::RunResult r = reference::interpret(m, "layer", {});
  EXPECT_NE(r.error, "");
}

TEST_F(InterpreterTest, RunTimeErrors) {
  ir::Module m = compile(R"(
fn f(x: f32[B, 768], y: f32[B, S]) where S <= 512 { return sum(x, axis=1) + sum(y, axis=1) }
fn g(a: f32[A], b: f32[C]) { return a + b }
)");
  auto f32 = [](Shape s) { return Tensor::zeros(runtime::dl_float(32), std::move(s)); };
  reference::RunResult r = run(m, f32({2, 512}), f32({2, 3}));
  EXPECT_EQ(r.error, "x: expected f32[B, 768], got f32[2, 512] (dim 1)");
  r = run(m, f32({2, 768, 1}), f32({2, 3}));
  EXPECT_EQ(r.error, "x: expected f32[B, 768], got f32[2, 768, 1] (rank)");
  r = run(m, Tensor::zeros(runtime::dl_int(64), {2, 768}), f32({2, 3}));
  EXPECT_EQ(r.error, "x: expected f32[B, 768], got i64[2, 768] (dtype)");
  r = run(m, f32({2, 768}), f32({3, 3}));
  EXPECT_EQ(r.error, "y: expected f32[B, S], got f32[3, 3] (dim 0: B = 2)");
  r = run(m, f32({2, 768}), f32({2, 600}));
  EXPECT_EQ(r.error, "where S <= 512 violated: S = 600 (2:44)");
  r = run(m, f32({2, 768}));
  EXPECT_NE(r.error, "");
  r = run_on(m, "g", f32({3}), f32({4}));
  EXPECT_NE(r.error.find("violated: A = 3, C = 4 (3:39)"), std::string::npos) << r.error;
  r = run_on(m, "g", f32({1}), f32({4})); // never a guess that a dim is 1
  EXPECT_NE(r.error.find("violated"), std::string::npos) << r.error;
  r = run_on(m, "g", f32({5}), f32({5}));
  EXPECT_TRUE(r.ok()) << r.error;
  r = run_on(m, "h", f32({5}), f32({5}));
  EXPECT_EQ(r.error, "no function 'h' in the module");
}

} // namespace
} // namespace dsc::testing
