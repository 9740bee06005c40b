// The C API (dsc_runtime.h) on the hand-written models of tests/runtime_fixtures: results,
// and a clear dsc_last_error() (never a crash) for every kind of bad call.
#include "runtime/dsc_runtime.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/unit/runtime/Fixtures.h"

namespace {

using dsc::runtime::testing::fixture_path;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// A dense f32 tensor that the test owns.
struct Input {
  explicit Input(std::vector<int64_t> dims, float start = 0.0f) : shape(std::move(dims)) {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    values.resize(static_cast<size_t>(n) + 1);
    for (int64_t i = 0; i < n; ++i)
      values[static_cast<size_t>(i)] = start + static_cast<float>(i);
    t.data = values.data();
    t.device = DLDevice{kDLCPU, 0};
    t.ndim = static_cast<int32_t>(shape.size());
    t.dtype = DLDataType{kDLFloat, 32, 1};
    t.shape = shape.data();
  }
  std::vector<int64_t> shape;
  std::vector<float> values;
  DLTensor t{};
};

class CApi : public ::testing::Test {
protected:
  void SetUp() override {
    DSC_SKIP_WITHOUT_FIXTURES();
    model = dsc_model_load(fixture_path("dsc_fixture_tiny_model").c_str());
    ASSERT_NE(model, nullptr) << dsc_last_error();
  }
  void TearDown() override { dsc_model_free(model); }

  // Runs and expects failure; checks nothing was stored.
  std::string run_error(const char* function, std::vector<const DLTensor*> inputs,
                        int max_outputs = 4) {
    DLManagedTensor* outputs[4] = {nullptr, nullptr, nullptr, nullptr};
    int n = -7;
    int status = dsc_model_run(model, function, inputs.data(), static_cast<int>(inputs.size()),
                               outputs, max_outputs, &n);
    EXPECT_NE(status, 0);
    EXPECT_EQ(n, -7);
    for (DLManagedTensor* o : outputs)
      EXPECT_EQ(o, nullptr);
    return dsc_last_error();
  }

  dsc_model* model = nullptr;
};

TEST_F(CApi, Introspection) {
  ASSERT_EQ(dsc_model_num_functions(model), 4);
  EXPECT_STREQ(dsc_model_function_name(model, 0), "add_one");
  EXPECT_STREQ(dsc_model_function_name(model, 1), "scale_rows");
  EXPECT_EQ(dsc_model_function_name(model, 4), nullptr);
  EXPECT_STREQ(dsc_last_error(), "the model has no function 4 (it has 4)");
  EXPECT_EQ(dsc_model_function_name(model, -1), nullptr);
  EXPECT_EQ(dsc_model_num_params(model, "scale_rows"), 2);
  EXPECT_STREQ(dsc_model_param_name(model, "scale_rows", 1), "w");
  EXPECT_STREQ(dsc_model_param_type(model, "scale_rows", 0), "f32[B, D]");
  EXPECT_STREQ(dsc_model_param_type(model, "add_one", 0), "f32[n]");
  EXPECT_EQ(dsc_model_param_type(model, "scale_rows", 2), nullptr);
  EXPECT_STREQ(dsc_last_error(), "function 'scale_rows' has no parameter 2 (it has 2)");
  EXPECT_EQ(dsc_model_param_name(model, "nope", 0), nullptr);
  EXPECT_STREQ(dsc_last_error(), "the model has no function 'nope'");
  EXPECT_EQ(dsc_model_num_params(model, "nope"), -1);
  EXPECT_EQ(dsc_model_num_params(model, nullptr), -1);
  EXPECT_STREQ(dsc_last_error(), "the function name is null");
  EXPECT_EQ(dsc_model_num_functions(nullptr), -1);
  EXPECT_STREQ(dsc_last_error(), "the model is null");
  EXPECT_EQ(dsc_model_param_type(nullptr, "add_one", 0), nullptr);
}

TEST_F(CApi, RunScaleRows) {
  Input x({2, 3}), w({3}, 1.0f);
  const DLTensor* inputs[] = {&x.t, &w.t};
  DLManagedTensor* outputs[3] = {};
  int n = 0;
  ASSERT_EQ(dsc_model_run(model, "scale_rows", inputs, 2, outputs, 3, &n), 0) << dsc_last_error();
  ASSERT_EQ(n, 2);
  EXPECT_EQ(outputs[2], nullptr);
  const DLTensor& y = outputs[0]->dl_tensor;
  EXPECT_EQ(y.ndim, 2);
  EXPECT_EQ(y.shape[0], 2);
  EXPECT_EQ(y.shape[1], 3);
  EXPECT_EQ(y.device.device_type, kDLCPU);
  EXPECT_EQ(y.dtype.code, kDLFloat);
  EXPECT_EQ(y.strides, nullptr);
  const float* yv = static_cast<const float*>(y.data);
  const float want[] = {0 * 1, 1 * 2, 2 * 3, 3 * 1, 4 * 2, 5 * 3};
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(yv[i], want[i]);
  const float* s = static_cast<const float*>(outputs[1]->dl_tensor.data);
  EXPECT_EQ(s[0], 8.0f);
  EXPECT_EQ(s[1], 26.0f);
  for (int i = 0; i < n; ++i)
    outputs[i]->deleter(outputs[i]);
}

TEST_F(CApi, InputsWithStridesAndOffset) {
  Input x({1, 4});
  std::vector<int64_t> strides = {99, 1}; // any stride for a dim of size 1
  x.t.strides = strides.data();
  x.t.byte_offset = 0;
  Input w({4}, -1.0f);
  w.t.data = w.values.data() - 1; // byte_offset brings it back
  w.t.byte_offset = sizeof(float);
  const DLTensor* inputs[] = {&x.t, &w.t};
  DLManagedTensor* outputs[2] = {};
  int n = 0;
  ASSERT_EQ(dsc_model_run(model, "scale_rows", inputs, 2, outputs, 2, &n), 0) << dsc_last_error();
  EXPECT_EQ(static_cast<const float*>(outputs[0]->dl_tensor.data)[3], 3.0f * 2.0f);
  for (int i = 0; i < n; ++i)
    outputs[i]->deleter(outputs[i]);
}

TEST_F(CApi, OutputsOutliveTheModel) {
  Input x({5});
  const DLTensor* inputs[] = {&x.t};
  DLManagedTensor* out = nullptr;
  int n = 0;
  ASSERT_EQ(dsc_model_run(model, "add_one", inputs, 1, &out, 1, &n), 0) << dsc_last_error();
  dsc_model_free(model);
  model = nullptr;
  EXPECT_EQ(static_cast<const float*>(out->dl_tensor.data)[4], 5.0f);
  out->deleter(out);
}

TEST_F(CApi, RunErrors) {
  Input x({2, 3}), w({3}), w4({4}), v({5});
  EXPECT_EQ(run_error("scale_rows", {&x.t}), "function 'scale_rows' takes 2 inputs (x, w); got 1");
  EXPECT_EQ(run_error("scale_rows", {&x.t, &w4.t}),
            "input 'w' dim 0 is 4, but it must equal D = 3");
  EXPECT_EQ(run_error("scale_rows", {&x.t, &x.t}),
            "input 'w' is f32[2, 3]; expected f32[D] (rank 1)");
  Input ints({2, 3});
  ints.t.dtype = DLDataType{kDLInt, 64, 1};
  EXPECT_EQ(run_error("scale_rows", {&ints.t, &w.t}), "input 'x' is i64[2, 3]; expected f32[B, D]");
  Input gpu({2, 3});
  gpu.t.device = DLDevice{kDLCUDA, 0};
  EXPECT_EQ(run_error("scale_rows", {&gpu.t, &w.t}),
            "input 'x' is on cuda:0; expected a CPU tensor (f32[B, D])");
  Input transposed({2, 3});
  std::vector<int64_t> strides = {1, 2};
  transposed.t.strides = strides.data();
  EXPECT_THAT(run_error("scale_rows", {&transposed.t, &w.t}),
              HasSubstr("input 'x' (f32[2, 3]) is not dense row-major"));
  EXPECT_EQ(run_error("scale_rows", {nullptr, &w.t}), "input 'x' is null; expected f32[B, D]");
  EXPECT_EQ(run_error("scale_rows", {&x.t, &w.t}, 1),
            "function 'scale_rows' returns 2 outputs, but max_outputs is 1");
  EXPECT_EQ(run_error("nope", {}), "the model has no function 'nope'");
  EXPECT_EQ(run_error("forgets_output", {&v.t}),
            "internal error: function 'forgets_output' returned without output 0");
  EXPECT_EQ(run_error("fails_silently", {&v.t}),
            "function 'fails_silently' failed (status 1) without an error message");
  Input huge({2, 3});
  huge.shape = {int64_t{1} << 40, int64_t{1} << 40};
  huge.t.shape = huge.shape.data();
  EXPECT_THAT(run_error("scale_rows", {&huge.t, &w.t}), HasSubstr("too large"));
}

// An output larger than the machine's memory is a returned error naming the output, its size
// and the symbols, not an abort. The input claims 2^60 elements; only its shape is read.
TEST_F(CApi, OutOfMemoryIsAnError) {
  Input x({1});
  x.shape = {int64_t{1} << 60};
  EXPECT_THAT(run_error("add_one", {&x.t}),
              StartsWith("output 0 of 'add_one' at n=1152921504606846976: cannot allocate "
                         "4611686018427387904 bytes (4.0 EiB) for a f32[1152921504606846976] "
                         "tensor: the machine has "));
}

TEST_F(CApi, BadArguments) {
  Input v({5});
  const DLTensor* inputs[] = {&v.t};
  DLManagedTensor* out[1] = {};
  int n = 0;
  EXPECT_NE(dsc_model_run(nullptr, "add_one", inputs, 1, out, 1, &n), 0);
  EXPECT_STREQ(dsc_last_error(), "the model is null");
  EXPECT_NE(dsc_model_run(model, nullptr, inputs, 1, out, 1, &n), 0);
  EXPECT_STREQ(dsc_last_error(), "the function name is null");
  EXPECT_NE(dsc_model_run(model, "add_one", nullptr, 1, out, 1, &n), 0);
  EXPECT_STREQ(dsc_last_error(), "dsc_model_run: 1 inputs at a null array");
  EXPECT_NE(dsc_model_run(model, "add_one", inputs, -1, out, 1, &n), 0);
  EXPECT_NE(dsc_model_run(model, "add_one", inputs, 1, nullptr, 1, &n), 0);
  EXPECT_STREQ(dsc_last_error(), "dsc_model_run: the outputs array or num_outputs is null");
  EXPECT_NE(dsc_model_run(model, "add_one", inputs, 1, out, 1, nullptr), 0);
  EXPECT_NE(dsc_model_run(model, "add_one", inputs, 1, out, 0, &n), 0);
  EXPECT_STREQ(dsc_last_error(), "function 'add_one' returns 1 outputs, but max_outputs is 0");
  EXPECT_EQ(out[0], nullptr);
  dsc_model_free(nullptr);
}

TEST(CApiLoad, Errors) {
  DSC_SKIP_WITHOUT_FIXTURES();
  EXPECT_EQ(dsc_model_load(nullptr), nullptr);
  EXPECT_STREQ(dsc_last_error(), "the model path is null");
  EXPECT_EQ(dsc_model_load("/no/such/file.so"), nullptr);
  EXPECT_STREQ(dsc_last_error(), "cannot load model '/no/such/file.so': No such file or directory");

  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("dsc_capi_test_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::string corrupt = (dir / "model.so").string();
  std::ofstream(corrupt) << "\x7f"
                            "ELF but not really";
  EXPECT_EQ(dsc_model_load(corrupt.c_str()), nullptr);
  EXPECT_THAT(dsc_last_error(),
              StartsWith("cannot load model '" + corrupt + "' as a shared library: "));
  std::filesystem::remove_all(dir);

  std::string bad = fixture_path("dsc_fixture_bad_manifest");
  EXPECT_EQ(dsc_model_load(bad.c_str()), nullptr);
  EXPECT_THAT(dsc_last_error(), HasSubstr("has an invalid manifest"));
}

TEST(CApiLoad, LastErrorIsPerThread) {
  DSC_SKIP_WITHOUT_FIXTURES();
  EXPECT_EQ(dsc_model_load("/no/such/file.so"), nullptr);
  std::string other = "unset";
  std::thread([&] { other = dsc_last_error(); }).join();
  EXPECT_EQ(other, "");
  EXPECT_THAT(dsc_last_error(), HasSubstr("/no/such/file.so"));
}

TEST(CApiLoad, ConcurrentRuns) {
  DSC_SKIP_WITHOUT_FIXTURES();
  dsc_model* model = dsc_model_load(fixture_path("dsc_fixture_tiny_model").c_str());
  ASSERT_NE(model, nullptr) << dsc_last_error();
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int call = 0; call < 50; ++call) {
        Input x({1000 + t * 7 + call});
        const DLTensor* inputs[] = {&x.t};
        DLManagedTensor* out = nullptr;
        int n = 0;
        if (dsc_model_run(model, "add_one", inputs, 1, &out, 1, &n) != 0) {
          ++wrong;
          continue;
        }
        const float* y = static_cast<const float*>(out->dl_tensor.data);
        for (int64_t i = 0; i < x.shape[0]; ++i)
          if (y[i] != static_cast<float>(i) + 1.0f) {
            ++wrong;
            break;
          }
        out->deleter(out);
      }
    });
  }
  for (std::thread& t : threads)
    t.join();
  EXPECT_EQ(wrong.load(), 0);
  dsc_model_free(model);
}

TEST(CApiConstants, DeclareAndReleaseReportErrors) {
  std::vector<float> w(32);
  EXPECT_NE(dsc_declare_constant(nullptr, 16), 0);
  EXPECT_NE(std::string(dsc_last_error()).find("non-null pointer and a positive size"),
            std::string::npos);
  ASSERT_EQ(dsc_declare_constant(w.data(), w.size() * sizeof(float)), 0) << dsc_last_error();
  EXPECT_NE(dsc_declare_constant(w.data() + 4, 8), 0);
  EXPECT_NE(std::string(dsc_last_error()).find("overlaps"), std::string::npos);
  EXPECT_EQ(dsc_release_constant(w.data()), 0);
  EXPECT_NE(dsc_release_constant(w.data()), 0);
  EXPECT_NE(std::string(dsc_last_error()).find("no constant memory starts at this address"),
            std::string::npos);
}

} // namespace
