#pragma once
// Small hand-built host programs over prims parsed from .dsc text, shared by the host codegen,
// JIT and shared-library tests, with the C++ loops that compute their expected results.

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/CpuBackend.h"
#include "runtime/Tensor.h"
#include "symbolic/Parser.h"
#include "symbolic/Simplify.h"
#include "tests/unit/FrontendUtil.h"

namespace dsc::testing {

using runtime::Tensor;
using Storage = ir::HostBuffer::Storage;
using StepKind = ir::HostStep::Kind;

inline symbolic::Expr expr(const std::string& text) {
  symbolic::ParseResult r = symbolic::parse_expr(text);
  EXPECT_TRUE(r.ok()) << text;
  return r.expr;
}

inline symbolic::Expr predicate(const std::string& text) {
  symbolic::ParseResult r = symbolic::parse_predicate(text);
  EXPECT_TRUE(r.ok()) << text;
  return r.expr;
}

inline std::vector<symbolic::Expr> dims(std::initializer_list<const char*> texts) {
  std::vector<symbolic::Expr> out;
  for (const char* t : texts)
    out.push_back(expr(t));
  return out;
}

constexpr const char* kPrims = R"(
prim add_relu(a: f32[n], b: f32[n]) -> (y: f32[n]) {
  parallel for i in 0..n {
    y[i] = max(a[i] + b[i], 0.0)
  }
}

prim scale(x: f32[n]) -> (y: f32[n]) {
  for i in 0..n {
    y[i] = x[i] * 2.0
  }
}
)";

// The prims above as a module; the test fails on any diagnostic.
inline ir::Module parse_prims(const std::string& text = kPrims) {
  std::optional<ir::Module> m = parse_clean(text, "prims.dsc");
  return m ? *m : ir::Module{};
}

inline ir::Buffer param(const std::string& name, ir::DType dtype,
                        std::initializer_list<const char*> shape) {
  ir::Buffer b;
  b.name = name;
  b.dtype = dtype;
  b.shape = dims(shape);
  return b;
}

inline ir::HostBuffer buffer(const std::string& name, std::initializer_list<const char*> shape,
                             Storage storage, int index, const char* offset = "0",
                             ir::DType dtype = ir::DType::F32) {
  ir::HostBuffer b;
  b.name = name;
  b.dtype = dtype;
  b.shape = dims(shape);
  b.storage = storage;
  b.index = index;
  if (storage == Storage::Arena) b.offset = expr(offset);
  return b;
}

inline ir::HostDim binds(int param, int axis, const std::string& symbol) {
  return ir::HostDim{param, axis, symbol, symbolic::Expr()};
}

inline ir::HostDim equals(int param, int axis, const std::string& expected) {
  return ir::HostDim{param, axis, "", expr(expected)};
}

inline ir::HostStep kernel(const std::string& callee, std::vector<int> buffers,
                           std::initializer_list<const char*> ints) {
  ir::HostStep s;
  s.kind = StepKind::Kernel;
  s.callee = callee;
  s.buffers = std::move(buffers);
  s.ints = dims(ints);
  return s;
}

// Library routine blas.sgemm on buffers {a, b, c}, dense, given {batch, m, n, k,
// a_batch_stride, b_batch_stride, trans_b ("0" or "1")}: its scalars (those of dsc.sgemm,
// runtime/HostABI.h) for that layout.
inline ir::HostStep matmul(std::vector<int> buffers, std::initializer_list<const char*> ints) {
  const std::vector<symbolic::Expr> d = dims(ints);
  const symbolic::Expr &m = d[1], &n = d[2], &k = d[3];
  const bool trans_b = std::string(ints.begin()[6]) == "1";
  ir::HostStep s;
  s.kind = StepKind::Library;
  s.callee = "blas.sgemm";
  s.buffers = std::move(buffers);
  s.ints = {d[0], 1, m, n, k, 0, d[4], 0, k, 1, 0, d[5], 0, trans_b ? symbolic::Expr(1) : n,
            trans_b ? k : symbolic::Expr(1), 0, symbolic::simplify(m * n), 0, n};
  return s;
}

inline ir::HostStep copy(int from, int to) {
  ir::HostStep s;
  s.kind = StepKind::Copy;
  s.buffers = {from, to};
  return s;
}

// y = add_relu(add_relu(x, x), x) where n <= 100, through an arena temporary:
//   %0 x (param 0), %1 t (arena), %2 y (output 0).
inline ir::HostProgram add_relu_program() {
  ir::HostProgram p;
  p.name = "f";
  p.params = {param("x", ir::DType::F32, {"n"})};
  p.dims = {binds(0, 0, "n")};
  p.checks = {{predicate("n <= 100"), "where n <= 100", "test.dsc:3:5", {"n"}}};
  p.buffers = {buffer("x", {"n"}, Storage::Param, 0), buffer("t", {"n"}, Storage::Arena, 0, "0"),
               buffer("y", {"n"}, Storage::Output, 0)};
  p.outputs = {2};
  p.arena_bytes = expr("(n*4 + 63)/64*64");
  p.peak_bytes = expr("n*4");
  p.steps = {kernel("add_relu", {0, 0, 1}, {"n"}), kernel("add_relu", {1, 0, 2}, {"n"})};
  return p;
}

inline std::vector<float> add_relu_expected(const std::vector<float>& x) {
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    float t = std::max(x[i] + x[i], 0.0f);
    y[i] = std::max(t + x[i], 0.0f);
  }
  return y;
}

// out = reshape(matmul(a, b), [m*n]): a is f32[m, k], b f32[k, n] (its dim 0 checked against
// k), c an arena temporary, its reshape an alias, copied into the output.
//   %0 a, %1 b, %2 c (arena), %3 out (output 0), %4 c_flat (alias of %2).
inline ir::HostProgram matmul_program() {
  ir::HostProgram p;
  p.name = "mm";
  p.params = {param("a", ir::DType::F32, {"m", "k"}), param("b", ir::DType::F32, {"k", "n"})};
  p.dims = {binds(0, 0, "m"), binds(0, 1, "k"), equals(1, 0, "k"), binds(1, 1, "n")};
  p.buffers = {
      buffer("a", {"m", "k"}, Storage::Param, 0), buffer("b", {"k", "n"}, Storage::Param, 1),
      buffer("c", {"m", "n"}, Storage::Arena, 0, "0"), buffer("out", {"m*n"}, Storage::Output, 0),
      buffer("c_flat", {"m*n"}, Storage::Alias, 2)};
  p.outputs = {3};
  p.arena_bytes = expr("m*n*4");
  p.peak_bytes = expr("m*n*4");
  p.steps = {matmul({0, 1, 2}, {"1", "m", "n", "k", "0", "0", "0"}), copy(4, 3)};
  return p;
}

inline std::vector<float> matmul_expected(const std::vector<float>& a, const std::vector<float>& b,
                                          int64_t m, int64_t k, int64_t n) {
  std::vector<float> c(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t l = 0; l < k; ++l)
        acc += double(a[size_t(i * k + l)]) * double(b[size_t(l * n + j)]);
      c[size_t(i * n + j)] = float(acc);
    }
  return c;
}

// Two outputs of a square input x: f32[s, s] (dim 1 must equal the s dim 0 bound) and
// w: f32[s, 4]: output 0 is a copy of x, output 1 is scale(x viewed as f32[s*s]).
//   %0 x, %1 x_flat (alias of %0), %2 y0 (output 0), %3 y1 (output 1), %4 w.
inline ir::HostProgram two_outputs_program() {
  ir::HostProgram p;
  p.name = "two";
  p.params = {param("x", ir::DType::F32, {"s", "s"}), param("w", ir::DType::F32, {"s", "4"})};
  p.dims = {binds(0, 0, "s"), binds(0, 1, "s"), equals(1, 0, "s"), equals(1, 1, "4")};
  p.buffers = {
      buffer("x", {"s", "s"}, Storage::Param, 0), buffer("x_flat", {"s*s"}, Storage::Alias, 0),
      buffer("y0", {"s", "s"}, Storage::Output, 0), buffer("y1", {"s*s"}, Storage::Output, 1),
      buffer("w", {"s", "4"}, Storage::Param, 1)};
  p.outputs = {2, 3};
  p.arena_bytes = expr("0");
  p.peak_bytes = expr("0");
  p.steps = {copy(0, 2), kernel("scale", {1, 3}, {"s*s"})};
  return p;
}

inline std::vector<float> random_floats(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<float> v(n);
  for (float& x : v)
    x = dist(rng);
  return v;
}

inline Tensor f32_tensor(const std::vector<int64_t>& shape, const std::vector<float>& values) {
  Tensor t = Tensor::zeros(runtime::dl_float(32), shape);
  EXPECT_EQ(static_cast<size_t>(t.numel()), values.size());
  std::copy(values.begin(), values.end(), t.data_as<float>());
  return t;
}

inline std::vector<float> values(const Tensor& t) {
  return std::vector<float>(t.data_as<float>(), t.data_as<float>() + t.numel());
}

// Runs `function` of `model` on `inputs`.
inline runtime::CallResult run(const runtime::Model& model, const std::string& function,
                               std::vector<Tensor>& inputs) {
  std::vector<DLTensor> views;
  for (Tensor& t : inputs)
    views.push_back(t.dl_view());
  std::vector<const DLTensor*> pointers;
  for (const DLTensor& v : views)
    pointers.push_back(&v);
  return model.run(function, pointers);
}
inline runtime::CallResult run(const runtime::Model& model, const std::string& function,
                               std::vector<Tensor>&& inputs) {
  return run(model, function, inputs);
}

// The tensors as a list of inputs (a Tensor moves, so a braced list cannot hold them).
template <typename... T> std::vector<Tensor> tensors(T&&... ts) {
  std::vector<Tensor> out;
  out.reserve(sizeof...(ts));
  (out.push_back(std::forward<T>(ts)), ...);
  return out;
}

inline void expect_near(const std::vector<float>& actual, const std::vector<float>& expected,
                        float tolerance = 1e-5f) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i)
    ASSERT_NEAR(actual[i], expected[i], tolerance * (1.0f + std::abs(expected[i]))) << "at " << i;
}

} // namespace dsc::testing
