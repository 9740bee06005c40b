// Host functions (backends/cpu/HostCodegen.cpp) through the JIT: hand-built host programs
// over parsed prims, run at several sizes against plain C++ loops, and every error path:
// violated checks, wrong dtypes, ranks and dims at run time, malformed programs at compile time.

#include <gtest/gtest.h>

#include "tests/unit/cpu/HostTestPrograms.h"

namespace dsc::testing {
namespace {

class HostCodegenTest : public ::testing::Test {
protected:
  std::unique_ptr<runtime::Model> compile(const std::vector<ir::HostProgram>& hosts,
                                          const ir::Target& options = {}) {
    std::string error;
    std::unique_ptr<runtime::Model> model =
        cpu::jit_compile(prims_, hosts, runtime::Manifest{}, options, &error);
    EXPECT_TRUE(model) << error;
    return model;
  }

  // The compile-time error for `host` ("" when it compiles).
  std::string compile_error(const ir::HostProgram& host) {
    std::string error;
    std::unique_ptr<runtime::Model> model =
        cpu::jit_compile(prims_, {host}, runtime::Manifest{}, ir::Target{}, &error);
    EXPECT_FALSE(model);
    return error;
  }

  ir::Module prims_ = parse_prims();
};

TEST_F(HostCodegenTest, AddReluThroughArena) {
  auto model = compile({add_relu_program()});
  ASSERT_TRUE(model);
  for (int64_t n : {1, 7, 33, 100}) {
    std::vector<float> x = random_floats(size_t(n), uint64_t(n));
    runtime::CallResult r = run(*model, "f", tensors(f32_tensor({n}, x)));
    ASSERT_TRUE(r.ok()) << r.error;
    ASSERT_EQ(r.outputs.size(), 1u);
    EXPECT_EQ(r.outputs[0].shape(), std::vector<int64_t>{n});
    EXPECT_EQ(r.arena_bytes, (n * 4 + 63) / 64 * 64);
    expect_near(values(r.outputs[0]), add_relu_expected(x), 0.0f);
  }
}

TEST_F(HostCodegenTest, EmptyInput) {
  auto model = compile({add_relu_program()});
  ASSERT_TRUE(model);
  runtime::CallResult r = run(*model, "f", tensors(f32_tensor({0}, {})));
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.outputs[0].shape(), std::vector<int64_t>{0});
}

TEST_F(HostCodegenTest, MatmulAliasAndCopy) {
  auto model = compile({matmul_program()});
  ASSERT_TRUE(model);
  for (int64_t s : {1, 7, 33, 100}) {
    const int64_t m = s, k = s % 5 + 3, n = (s * 3) % 11 + 1;
    std::vector<float> a = random_floats(size_t(m * k), 1), b = random_floats(size_t(k * n), 2);
    runtime::CallResult r =
        run(*model, "mm", tensors(f32_tensor({m, k}, a), f32_tensor({k, n}, b)));
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_EQ(r.outputs[0].shape(), std::vector<int64_t>{m * n});
    expect_near(values(r.outputs[0]), matmul_expected(a, b, m, k, n), 1e-4f);
  }
}

TEST_F(HostCodegenTest, TwoOutputsRepeatedSymbolAndConstantDim) {
  auto model = compile({two_outputs_program()});
  ASSERT_TRUE(model);
  for (int64_t s : {1, 7, 33, 100}) {
    std::vector<float> x = random_floats(size_t(s * s), 3);
    runtime::CallResult r =
        run(*model, "two",
            tensors(f32_tensor({s, s}, x), f32_tensor({s, 4}, random_floats(size_t(s * 4), 4))));
    ASSERT_TRUE(r.ok()) << r.error;
    ASSERT_EQ(r.outputs.size(), 2u);
    EXPECT_EQ(r.outputs[0].shape(), (std::vector<int64_t>{s, s}));
    EXPECT_EQ(r.outputs[1].shape(), std::vector<int64_t>{s * s});
    EXPECT_EQ(values(r.outputs[0]), x);
    std::vector<float> doubled = x;
    for (float& v : doubled)
      v *= 2.0f;
    EXPECT_EQ(values(r.outputs[1]), doubled);
  }
}

TEST_F(HostCodegenTest, SeveralFunctionsInOneModel) {
  auto model = compile({add_relu_program(), matmul_program(), two_outputs_program()});
  ASSERT_TRUE(model);
  const runtime::Manifest& manifest = model->manifest();
  ASSERT_EQ(manifest.functions.size(), 3u);
  EXPECT_EQ(manifest.functions[0].host_symbol, "dsc_host_f");
  EXPECT_EQ(manifest.functions[1].host_symbol, "dsc_host_mm");
  EXPECT_EQ(manifest.functions[2].outputs.size(), 2u);
  EXPECT_EQ(manifest.functions[2].outputs[1].type_string(), "f32[s*s]");
  EXPECT_TRUE(model->host_function("f"));
  EXPECT_TRUE(model->host_function("two"));
  EXPECT_FALSE(model->host_function("nope"));
  runtime::CallResult r = run(*model, "f", tensors(f32_tensor({2}, {-1.0f, 2.0f})));
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(values(r.outputs[0]), (std::vector<float>{0.0f, 6.0f}));
}

TEST_F(HostCodegenTest, ViolatedWhereClause) {
  auto model = compile({add_relu_program()});
  ASSERT_TRUE(model);
  runtime::CallResult r = run(*model, "f", tensors(f32_tensor({101}, random_floats(101, 5))));
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error, "where n <= 100 violated: n = 101 (test.dsc:3:5)");
  EXPECT_TRUE(r.outputs.empty());
}

TEST_F(HostCodegenTest, WrongDtypeAndRank) {
  auto model = compile({add_relu_program()});
  ASSERT_TRUE(model);
  runtime::CallResult r = run(*model, "f", tensors(Tensor::zeros(runtime::dl_int(32), {7})));
  EXPECT_NE(r.error.find("input 'x' is i32[7]; expected f32[n]"), std::string::npos) << r.error;

  r = run(*model, "f", tensors(f32_tensor({2, 3}, random_floats(6, 6))));
  EXPECT_NE(r.error.find("input 'x' is f32[2, 3]; expected f32[n] (rank 1)"), std::string::npos)
      << r.error;
}

TEST_F(HostCodegenTest, DimMismatches) {
  auto model = compile({two_outputs_program(), matmul_program()});
  ASSERT_TRUE(model);
  runtime::CallResult r = run(
      *model, "two",
      tensors(f32_tensor({2, 3}, random_floats(6, 7)), f32_tensor({2, 4}, random_floats(8, 8))));
  EXPECT_EQ(r.error, "input 'x' dim 1 is 3, but it must equal s = 2");

  r = run(
      *model, "two",
      tensors(f32_tensor({2, 2}, random_floats(4, 9)), f32_tensor({3, 4}, random_floats(12, 10))));
  EXPECT_EQ(r.error, "input 'w' dim 0 is 3, but it must equal s = 2");

  r = run(
      *model, "two",
      tensors(f32_tensor({2, 2}, random_floats(4, 11)), f32_tensor({2, 5}, random_floats(10, 12))));
  EXPECT_EQ(r.error, "input 'w' dim 1 is 5, but it must equal 4");

  r = run(
      *model, "mm",
      tensors(f32_tensor({2, 3}, random_floats(6, 13)), f32_tensor({4, 2}, random_floats(8, 14))));
  EXPECT_EQ(r.error, "input 'b' dim 0 is 4, but it must equal k = 3");
}

TEST_F(HostCodegenTest, WrongNumberOfInputs) {
  auto model = compile({add_relu_program()});
  ASSERT_TRUE(model);
  std::vector<Tensor> none;
  runtime::CallResult r = run(*model, "f", none);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.error.find("takes 1 input"), std::string::npos) << r.error;
}

TEST_F(HostCodegenTest, NullInput) {
  auto model = compile({add_relu_program()});
  ASSERT_TRUE(model);
  runtime::CallResult r = model->run("f", {nullptr});
  EXPECT_NE(r.error.find("input 'x' is null"), std::string::npos) << r.error;
}

TEST_F(HostCodegenTest, EveryCheckFailureNamesItsSymbols) {
  ir::HostProgram p = two_outputs_program();
  p.checks = {{predicate("s*s <= 50 && s >= 2"), "where s*s <= 50", "", {"s"}},
              {predicate("s % 2 == 0"), "reshape to [s/2, 2*s]", "model.dsc:9:1", {"s"}}};
  auto model = compile({p});
  ASSERT_TRUE(model);
  auto run_at = [&](int64_t s) {
    return run(*model, "two",
               tensors(f32_tensor({s, s}, random_floats(size_t(s * s), 15)),
                       f32_tensor({s, 4}, random_floats(size_t(s * 4), 16))));
  };
  EXPECT_EQ(run_at(8).error, "where s*s <= 50 violated: s = 8");
  EXPECT_EQ(run_at(1).error, "where s*s <= 50 violated: s = 1");
  EXPECT_EQ(run_at(3).error, "reshape to [s/2, 2*s] violated: s = 3 (model.dsc:9:1)");
  EXPECT_TRUE(run_at(4).ok());
}

TEST_F(HostCodegenTest, TargetsAndOptimizationLevels) {
  std::vector<float> x = random_floats(33, 17);
  for (const char* cpu : {"native", "generic", "x86-64-v3"}) {
    for (int level : {0, 1, 2, 3}) {
      ir::Target options;
      options.cpu = cpu;
      options.opt_level = level;
      auto model = compile({add_relu_program()}, options);
      ASSERT_TRUE(model) << cpu << " -O" << level;
      runtime::CallResult r = run(*model, "f", tensors(f32_tensor({33}, x)));
      ASSERT_TRUE(r.ok()) << r.error;
      expect_near(values(r.outputs[0]), add_relu_expected(x), 0.0f);
    }
  }
}

// ---- Malformed programs are compile-time errors, never crashes. ----

TEST_F(HostCodegenTest, UnknownPrim) {
  ir::HostProgram p = add_relu_program();
  p.steps[0].callee = "nope";
  EXPECT_EQ(compile_error(p),
            "host program 'f': the call of prim 'nope': the module has no such prim");
}

TEST_F(HostCodegenTest, KernelCallDoesNotMatchItsPrim) {
  ir::HostProgram p = add_relu_program();
  p.steps[0].ints.clear();
  EXPECT_EQ(compile_error(p),
            "host program 'f': the call of prim 'add_relu' passes 0 symbols; the kernel takes 1");
  p = add_relu_program();
  p.steps[0].buffers = {0, 1};
  EXPECT_EQ(compile_error(p),
            "host program 'f': the call of prim 'add_relu' takes 3 buffers, not 2");
  p = add_relu_program();
  p.buffers[1].dtype = ir::DType::I32;
  EXPECT_EQ(compile_error(p), "host program 'f': the call of prim 'add_relu': buffer %1 (t) is "
                              "i32, but 'y' is f32");
}

// Sizes computed from huge dims must not wrap: here n*n*n*4 wraps to a negative int64, and
// n*n*2 (an output dim) to a positive one. Only the input's shape is read; the call fails
// before any kernel runs.
TEST_F(HostCodegenTest, SizesThatOverflowAreErrors) {
  auto run_huge = [&](const ir::HostProgram& p) {
    auto model = compile({p});
    if (!model) return std::string("(no model)");
    runtime::Tensor x = f32_tensor({1}, {0.0f});
    DLTensor view = x.dl_view();
    int64_t shape[] = {int64_t{3} << 20};
    view.shape = shape;
    runtime::CallResult r = model->run("f", {&view});
    return r.error;
  };
  ir::HostProgram p = add_relu_program();
  p.checks.clear();
  p.arena_bytes = expr("n*n*n*4");
  EXPECT_EQ(run_huge(p),
            "cannot allocate the arena of 'f' at n=3145728: its size overflows 64 bits");
  p = add_relu_program();
  p.checks.clear();
  p.buffers[2].shape = dims({"n*n*n*2"});
  EXPECT_EQ(run_huge(p),
            "cannot allocate output 0 of 'f' at n=3145728: its size overflows 64 bits");
}

TEST_F(HostCodegenTest, UnboundSymbol) {
  ir::HostProgram p = add_relu_program();
  p.arena_bytes = expr("q*4");
  EXPECT_EQ(compile_error(p), "host program 'f': symbol 'q' is used, but no input dim binds it");
  p = add_relu_program();
  p.dims.clear();
  EXPECT_EQ(compile_error(p), "host program 'f': symbol 'n' is used, but no input dim binds it");
}

TEST_F(HostCodegenTest, MalformedBuffersAndDims) {
  ir::HostProgram p = add_relu_program();
  p.dims = {binds(0, 1, "n")};
  EXPECT_EQ(compile_error(p), "host program 'f': dim 1 of 'x', which has rank 1");
  p = add_relu_program();
  p.buffers[2].index = 1;
  EXPECT_EQ(compile_error(p),
            "host program 'f': buffer %2 (y) is output 1, but the program has 1 outputs");
  p = add_relu_program();
  p.steps[1].buffers = {1, 0, 9};
  EXPECT_EQ(compile_error(p),
            "host program 'f': the call of prim 'add_relu' uses buffer %9, which does not exist");
  p = matmul_program();
  p.buffers[4].index = 4;
  EXPECT_EQ(compile_error(p), "host program 'mm': buffer %4 (c_flat) aliases buffer %4, which "
                              "does not exist or aliases itself");
  p = matmul_program();
  p.steps[0].ints.pop_back();
  EXPECT_NE(compile_error(p).find("the call of library routine 'blas.sgemm' has 18 scalars; it takes 19"), std::string::npos);
}

TEST_F(HostCodegenTest, ManifestMismatches) {
  std::string error;
  runtime::Manifest manifest;
  manifest.functions.push_back(cpu::describe_host_program(add_relu_program()));
  manifest.functions[0].name = "g";
  EXPECT_FALSE(cpu::jit_compile(prims_, {add_relu_program()}, manifest, {}, &error));
  EXPECT_EQ(error, "the manifest lists function 'g', but no host program has that name");

  manifest.functions[0] = cpu::describe_host_program(add_relu_program());
  manifest.functions[0].params.clear();
  EXPECT_FALSE(cpu::jit_compile(prims_, {add_relu_program()}, manifest, {}, &error));
  EXPECT_EQ(error, "the manifest's function 'f' has 0 params and 1 outputs; its host program "
                   "has 1 and 1");

  EXPECT_FALSE(cpu::jit_compile(prims_, {add_relu_program(), add_relu_program()},
                                runtime::Manifest{}, {}, &error));
  EXPECT_EQ(error, "two host programs are named 'f'");
}

TEST_F(HostCodegenTest, BadTargetOptions) {
  std::string error;
  ir::Target options;
  options.cpu = "pentium-9000";
  EXPECT_FALSE(cpu::jit_compile(prims_, {add_relu_program()}, {}, options, &error));
  EXPECT_NE(error.find("unknown CPU 'pentium-9000'"), std::string::npos) << error;
  options = {};
  options.opt_level = 4;
  EXPECT_FALSE(cpu::jit_compile(prims_, {add_relu_program()}, {}, options, &error));
  EXPECT_EQ(error, "opt_level must be 0 to 3, not 4");
  options = {};
  options.features = "+not-a-feature";
  EXPECT_FALSE(cpu::jit_compile(prims_, {add_relu_program()}, {}, options, &error));
  EXPECT_NE(error.find("unknown CPU feature '+not-a-feature'"), std::string::npos) << error;
}

TEST_F(HostCodegenTest, DescribeHostProgram) {
  runtime::FunctionInfo info = cpu::describe_host_program(matmul_program());
  EXPECT_EQ(info.name, "mm");
  EXPECT_EQ(info.host_symbol, "dsc_host_mm");
  ASSERT_EQ(info.params.size(), 2u);
  EXPECT_EQ(info.params[1].type_string(), "f32[k, n]");
  ASSERT_EQ(info.outputs.size(), 1u);
  EXPECT_EQ(info.outputs[0].name, "output0");
  EXPECT_EQ(info.outputs[0].type_string(), "f32[m*n]");
  EXPECT_EQ(info.arena_bytes, "m*n*4");
  EXPECT_EQ(cpu::host_symbol("nn.softmax"), "dsc_host_nn_softmax");
  EXPECT_EQ(cpu::kernel_symbol("fused_add_relu_3"), "dsc_kernel_fused_add_relu_3");
}

} // namespace
} // namespace dsc::testing
