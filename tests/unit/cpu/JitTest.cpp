// The LLJIT path (backends/cpu/Jit.cpp): models of host code alone (no prims), batched
// matmul steps, several models alive at once, models outliving their inputs, and concurrent
// compiles and calls.

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "tests/unit/SourceDir.h"
#include "tests/unit/cpu/HostTestPrograms.h"

namespace dsc::testing {
namespace {

// The JIT's symbol map (runtime/HostABIFunctions.def) names every function runtime/HostABI.h
// declares for compiled code, and nothing else.
TEST(JitTest, SymbolListMatchesHostAbi) {
  std::ifstream in(source_dir() + "/runtime/HostABI.h");
  ASSERT_TRUE(in) << source_dir();
  std::set<std::string> declared;
  const std::regex declaration(R"((dsc_rt_\w+)\s*[(;)])");
  for (std::string line; std::getline(in, line);) {
    const std::string code = line.substr(0, line.find("//"));
    const size_t first = code.find_first_not_of(' ');
    if (first != std::string::npos && code[first] == '*') continue; // inside a /* */ comment
    for (std::sregex_iterator m(code.begin(), code.end(), declaration), end; m != end; ++m)
      declared.insert((*m)[1]);
  }
  std::set<std::string> listed;
#define DSC_HOST_ABI_FUNCTION(name) listed.insert(#name);
#include "runtime/HostABIFunctions.def"
  EXPECT_EQ(declared, listed);
  EXPECT_GE(listed.size(), 20u);
}

// out = a @ b^T per batch, b broadcast: a f32[B, m, k], b f32[n, k], out f32[B, m, n].
ir::HostProgram batched_matmul_program() {
  ir::HostProgram p;
  p.name = "bmm";
  p.params = {param("a", ir::DType::F32, {"B", "m", "k"}), param("b", ir::DType::F32, {"n", "k"})};
  p.dims = {binds(0, 0, "B"), binds(0, 1, "m"), binds(0, 2, "k"), binds(1, 0, "n"),
            equals(1, 1, "k")};
  p.buffers = {buffer("a", {"B", "m", "k"}, Storage::Param, 0),
               buffer("b", {"n", "k"}, Storage::Param, 1),
               buffer("out", {"B", "m", "n"}, Storage::Output, 0)};
  p.outputs = {2};
  p.arena_bytes = expr("0");
  p.peak_bytes = expr("0");
  p.steps = {matmul({0, 1, 2}, {"B", "m", "n", "k", "m*k", "0", "1"})};
  return p;
}

TEST(JitTest, HostCodeWithoutPrims) {
  std::string error;
  auto model = cpu::jit_compile(ir::Module{}, {batched_matmul_program(), matmul_program()},
                                runtime::Manifest{}, {}, &error);
  ASSERT_TRUE(model) << error;
  for (int64_t size : {1, 7, 33}) {
    const int64_t batch = size % 3 + 1, m = size, k = size % 6 + 2, n = size % 5 + 1;
    std::vector<float> a = random_floats(size_t(batch * m * k), 1);
    std::vector<float> b = random_floats(size_t(n * k), 2);
    runtime::CallResult r =
        run(*model, "bmm", tensors(f32_tensor({batch, m, k}, a), f32_tensor({n, k}, b)));
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_EQ(r.outputs[0].shape(), (std::vector<int64_t>{batch, m, n}));
    std::vector<float> bt(size_t(k * n));
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < k; ++j)
        bt[size_t(j * n + i)] = b[size_t(i * k + j)];
    std::vector<float> expected;
    for (int64_t i = 0; i < batch; ++i) {
      std::vector<float> ai(a.begin() + i * m * k, a.begin() + (i + 1) * m * k);
      std::vector<float> c = matmul_expected(ai, bt, m, k, n);
      expected.insert(expected.end(), c.begin(), c.end());
    }
    expect_near(values(r.outputs[0]), expected, 1e-4f);
  }
}

TEST(JitTest, ModelOutlivesItsInputs) {
  std::unique_ptr<runtime::Model> model;
  {
    ir::Module prims = parse_prims();
    std::vector<ir::HostProgram> hosts = {add_relu_program()};
    runtime::Manifest manifest;
    manifest.functions.push_back(cpu::describe_host_program(hosts[0]));
    manifest.functions[0].host_symbol = "stale";
    std::string error;
    model = cpu::jit_compile(prims, hosts, manifest, {}, &error);
    ASSERT_TRUE(model) << error;
  }
  EXPECT_EQ(model->manifest().functions[0].host_symbol, "dsc_host_f");
  runtime::CallResult r = run(*model, "f", tensors(f32_tensor({3}, {-1.0f, 0.5f, 2.0f})));
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(values(r.outputs[0]), (std::vector<float>{0.0f, 1.5f, 6.0f}));
}

TEST(JitTest, ManyModelsAtOnce) {
  ir::Module prims = parse_prims();
  std::vector<std::unique_ptr<runtime::Model>> models;
  for (int i = 0; i < 4; ++i) {
    std::string error;
    models.push_back(cpu::jit_compile(prims, {add_relu_program(), two_outputs_program()},
                                      runtime::Manifest{}, {}, &error));
    ASSERT_TRUE(models.back()) << error;
  }
  models.erase(models.begin() + 1);
  for (const auto& model : models) {
    runtime::CallResult r = run(*model, "f", tensors(f32_tensor({2}, {1.0f, -3.0f})));
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_EQ(values(r.outputs[0]), (std::vector<float>{3.0f, 0.0f}));
  }
}

TEST(JitTest, ConcurrentCompilesAndCalls) {
  ir::Module prims = parse_prims();
  std::vector<std::unique_ptr<runtime::Model>> models(3);
  std::vector<std::string> errors(3);
  {
    std::vector<std::thread> threads;
    for (size_t i = 0; i < models.size(); ++i)
      threads.emplace_back([&, i] {
        models[i] =
            cpu::jit_compile(prims, {add_relu_program()}, runtime::Manifest{}, {}, &errors[i]);
      });
    for (std::thread& t : threads)
      t.join();
  }
  for (size_t i = 0; i < models.size(); ++i)
    ASSERT_TRUE(models[i]) << errors[i];

  const runtime::Model& model = *models[0];
  std::vector<std::string> failures(8);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < failures.size(); ++i)
    threads.emplace_back([&, i] {
      for (int64_t n : {1, 7, 33, 100, 101}) {
        std::vector<float> x = random_floats(size_t(n), i * 1000 + size_t(n));
        runtime::CallResult r = run(model, "f", tensors(f32_tensor({n}, x)));
        if (n == 101) {
          if (r.error != "where n <= 100 violated: n = 101 (test.dsc:3:5)")
            failures[i] = "n = 101: " + r.error;
        } else if (!r.ok() || values(r.outputs[0]) != add_relu_expected(x)) {
          failures[i] = "n = " + std::to_string(n) + ": " + r.error;
        }
      }
    });
  for (std::thread& t : threads)
    t.join();
  for (const std::string& f : failures)
    EXPECT_EQ(f, "");
}

} // namespace
} // namespace dsc::testing
