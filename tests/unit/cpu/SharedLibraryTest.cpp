// `.so` files from build_shared_library: loaded with runtime::load_shared_library, opened with
// dlopen (exports: host functions and dsc_manifest, no kernels), run from a plain C program
// through dsc_runtime.h, and the IR text of emit_llvm_ir.

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "tests/unit/cpu/HostTestPrograms.h"

namespace dsc::testing {
namespace {

namespace fs = std::filesystem;

// Runs a shell command, returning its exit status and (in `output`) its stdout and stderr.
int shell(const std::string& command, std::string* output) {
  output->clear();
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return -1;
  char chunk[4096];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, pipe)) > 0)
    output->append(chunk, n);
  return pclose(pipe);
}

class SharedLibraryTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("dsc_so_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Builds `hosts` into dir_/name.so; the test fails on an error.
  std::string build(const std::vector<ir::HostProgram>& hosts, const std::string& name = "model",
                    const ir::Target& options = {}) {
    std::string path = (dir_ / (name + ".so")).string();
    std::string error;
    EXPECT_TRUE(
        cpu::build_shared_library(prims_, hosts, runtime::Manifest{}, options, path, &error))
        << error;
    return path;
  }

  fs::path dir_;
  ir::Module prims_ = parse_prims();
};

TEST_F(SharedLibraryTest, LoadsAndRuns) {
  std::string path = build({add_relu_program(), matmul_program(), two_outputs_program()});
  std::string error;
  std::unique_ptr<runtime::Model> model = runtime::load_shared_library(path, &error);
  ASSERT_TRUE(model) << error;
  ASSERT_EQ(model->manifest().functions.size(), 3u);
  EXPECT_EQ(model->manifest().functions[0].host_symbol, "dsc_host_f");
  EXPECT_EQ(model->manifest().functions[0].params[0].type_string(), "f32[n]");
  EXPECT_EQ(model->manifest().functions[0].arena_bytes, "(n*4 + 63)/64*64");

  for (int64_t n : {1, 7, 33, 100}) {
    std::vector<float> x = random_floats(size_t(n), uint64_t(n));
    runtime::CallResult r = run(*model, "f", tensors(f32_tensor({n}, x)));
    ASSERT_TRUE(r.ok()) << r.error;
    expect_near(values(r.outputs[0]), add_relu_expected(x), 0.0f);

    const int64_t k = n % 5 + 3, cols = n % 4 + 1;
    std::vector<float> a = random_floats(size_t(n * k), 1), b = random_floats(size_t(k * cols), 2);
    r = run(*model, "mm", tensors(f32_tensor({n, k}, a), f32_tensor({k, cols}, b)));
    ASSERT_TRUE(r.ok()) << r.error;
    expect_near(values(r.outputs[0]), matmul_expected(a, b, n, k, cols), 1e-4f);
  }

  EXPECT_EQ(run(*model, "f", tensors(f32_tensor({101}, random_floats(101, 3)))).error,
            "where n <= 100 violated: n = 101 (test.dsc:3:5)");
}

TEST_F(SharedLibraryTest, ExportsOnlyHostFunctionsAndManifest) {
  std::string path = build({add_relu_program()});
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_TRUE(handle) << dlerror();
  const char* manifest = static_cast<const char*>(dlsym(handle, "dsc_manifest"));
  ASSERT_TRUE(manifest);
  runtime::Manifest parsed;
  std::string error;
  ASSERT_TRUE(runtime::from_json(manifest, &parsed, &error)) << error;
  ASSERT_EQ(parsed.functions.size(), 1u);
  EXPECT_EQ(parsed.functions[0].name, "f");
  EXPECT_TRUE(dlsym(handle, "dsc_host_f"));
  EXPECT_FALSE(dlsym(handle, "dsc_kernel_add_relu"));
  dlclose(handle);

  std::string symbols;
  ASSERT_EQ(shell("nm -D --defined-only " + path, &symbols), 0) << symbols;
  EXPECT_NE(symbols.find("dsc_host_f"), std::string::npos);
  EXPECT_NE(symbols.find("dsc_manifest"), std::string::npos);
  EXPECT_EQ(symbols.find("dsc_kernel"), std::string::npos) << symbols;
}

// A C program that loads the model through the public C API, runs `f` on [-1, 2, 3] and on
// 101 elements (a violated where clause), and prints what it got.
constexpr const char* kCProgram = R"(#include <stdio.h>
#include <stdlib.h>
#include "runtime/dsc_runtime.h"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  dsc_model* m = dsc_model_load(argv[1]);
  if (!m) { printf("load failed: %s\n", dsc_last_error()); return 1; }
  printf("functions: %d, %s(%s: %s)\n", dsc_model_num_functions(m), dsc_model_function_name(m, 0),
         dsc_model_param_name(m, "f", 0), dsc_model_param_type(m, "f", 0));
  float x[3] = {-1.0f, 2.0f, 3.0f};
  int64_t shape[1] = {3};
  DLTensor t = {x, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, NULL, 0};
  const DLTensor* inputs[1] = {&t};
  DLManagedTensor* outputs[1];
  int n = 0;
  if (dsc_model_run(m, "f", inputs, 1, outputs, 1, &n) != 0) { printf("run failed: %s\n", dsc_last_error()); return 1; }
  const float* y = (const float*)outputs[0]->dl_tensor.data;
  printf("y = %g %g %g\n", y[0], y[1], y[2]);
  outputs[0]->deleter(outputs[0]);
  float* big = calloc(101, sizeof(float));
  shape[0] = 101;
  t.data = big;
  if (dsc_model_run(m, "f", inputs, 1, outputs, 1, &n) != 0) printf("error: %s\n", dsc_last_error());
  free(big);
  dsc_model_free(m);
  return 0;
}
)";

TEST_F(SharedLibraryTest, RunsFromAPlainCProgram) {
  std::string path = build({add_relu_program()});
  fs::path source = dir_ / "main.c", program = dir_ / "main";
  std::ofstream(source) << kCProgram;
  std::string output;
  // A sanitized libdsc_runtime.so loads only into a sanitized program.
#ifdef __SANITIZE_ADDRESS__
  const std::string sanitize = " -fsanitize=address,undefined";
#else
  const std::string sanitize;
#endif
  std::string compile = "cc -std=c11 -Wall -Werror" + sanitize + " -o " + program.string() + " " +
                        source.string() + " -I" + cpu::runtime_include_dir() + " -L" +
                        cpu::runtime_library_dir() + " -ldsc_runtime -Wl,-rpath," +
                        cpu::runtime_library_dir();
  ASSERT_EQ(shell(compile, &output), 0) << compile << "\n" << output;
  ASSERT_EQ(shell(program.string() + " " + path, &output), 0) << output;
  EXPECT_EQ(output, "functions: 1, f(x: f32[n])\n"
                    "y = 0 6 9\n"
                    "error: where n <= 100 violated: n = 101 (test.dsc:3:5)\n");
}

TEST_F(SharedLibraryTest, GenericCpuAndUnoptimized) {
  ir::Target options;
  options.cpu = "generic";
  options.opt_level = 0;
  std::string path = build({two_outputs_program()}, "generic", options);
  std::string error;
  std::unique_ptr<runtime::Model> model = runtime::load_shared_library(path, &error);
  ASSERT_TRUE(model) << error;
  std::vector<float> x = random_floats(49, 4);
  runtime::CallResult r =
      run(*model, "two", tensors(f32_tensor({7, 7}, x), f32_tensor({7, 4}, random_floats(28, 5))));
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(values(r.outputs[0]), x);
}

TEST_F(SharedLibraryTest, LinkerFailureIsAnError) {
  std::string error;
  std::string path = (dir_ / "no_such_dir" / "model.so").string();
  EXPECT_FALSE(cpu::build_shared_library(prims_, {add_relu_program()}, runtime::Manifest{}, {},
                                         path, &error));
  EXPECT_NE(error.find("linking " + path + " failed"), std::string::npos) << error;
  EXPECT_FALSE(fs::exists(path));
  // No object files are left behind in the temporary directory.
  for (const fs::directory_entry& e : fs::directory_iterator(dir_))
    EXPECT_NE(e.path().extension(), ".o");
}

TEST_F(SharedLibraryTest, CompileErrorsBuildNothing) {
  ir::HostProgram p = add_relu_program();
  p.steps[0].callee = "nope";
  std::string error;
  std::string path = (dir_ / "bad.so").string();
  EXPECT_FALSE(cpu::build_shared_library(prims_, {p}, runtime::Manifest{}, {}, path, &error));
  EXPECT_EQ(error, "host program 'f': the call of prim 'nope': the module has no such prim");
  EXPECT_FALSE(fs::exists(path));
}

TEST_F(SharedLibraryTest, LlvmIrText) {
  std::string error;
  std::string raw =
      cpu::emit_llvm_ir(prims_, {add_relu_program()}, runtime::Manifest{}, {}, false, &error);
  ASSERT_FALSE(raw.empty()) << error;
  EXPECT_NE(raw.find("define i32 @dsc_host_f(ptr %call, ptr %inputs)"), std::string::npos) << raw;
  EXPECT_NE(raw.find("define internal void @dsc_kernel_add_relu("), std::string::npos) << raw;
  EXPECT_NE(raw.find("@dsc_manifest = constant"), std::string::npos) << raw;
  EXPECT_NE(raw.find("call i32 @dsc_rt_fail_check("), std::string::npos) << raw;
  EXPECT_NE(raw.find("\"target-cpu\""), std::string::npos) << raw;

  std::string optimized =
      cpu::emit_llvm_ir(prims_, {add_relu_program()}, runtime::Manifest{}, {}, true, &error);
  ASSERT_FALSE(optimized.empty()) << error;
  EXPECT_NE(optimized.find("define i32 @dsc_host_f("), std::string::npos);
}

TEST_F(SharedLibraryTest, VectorWidth) {
  // IR only, so any x86-64 machine can check AVX-512 code.
  ir::Target options;
  options.cpu = "skylake-avx512";
  options.vector_bits = 512;
  std::string error;
  std::string ir =
      cpu::emit_llvm_ir(prims_, {add_relu_program()}, runtime::Manifest{}, options, true, &error);
  ASSERT_FALSE(ir.empty()) << error;
  EXPECT_NE(ir.find("\"prefer-vector-width\"=\"512\""), std::string::npos);
  EXPECT_NE(ir.find("<16 x float>"), std::string::npos) << ir;

  options.vector_bits = 100;
  EXPECT_EQ(
      cpu::emit_llvm_ir(prims_, {add_relu_program()}, runtime::Manifest{}, options, true, &error),
      "");
  EXPECT_EQ(error, "vector_width must be 0, 128, 256 or 512, not 100");
}

} // namespace
} // namespace dsc::testing
