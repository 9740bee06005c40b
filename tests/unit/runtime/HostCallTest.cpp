// The per-call functions compiled code calls (HostABI.h), driven directly by hand-written
// host functions, and call_host_function (Model.h) around them.
#include "runtime/HostCall.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>

#include "runtime/Model.h"

namespace dsc::runtime {
namespace {

using ::testing::HasSubstr;

TensorInfo tensor_info(std::string name, std::string dtype, std::vector<std::string> dims) {
  return TensorInfo{std::move(name), std::move(dtype), std::move(dims)};
}

FunctionInfo layer_info() {
  FunctionInfo f;
  f.name = "layer";
  f.host_symbol = "layer_host";
  f.params = {tensor_info("x", "f32", {"B", "S", "768"}), tensor_info("mask", "f32", {"B", "S"}),
              tensor_info("ids", "i64", {"B"})};
  f.outputs = {tensor_info("output0", "f32", {"B", "S", "768"}),
               tensor_info("output1", "i64", {"B"})};
  f.arena_bytes = "B*S*3072";
  f.peak_bytes = "B*S*3072";
  return f;
}

// A DLTensor over caller-owned shape (and strides) arrays.
struct View {
  View(DLDataType dtype, std::vector<int64_t> dims, void* data = nullptr) : shape(std::move(dims)) {
    t.data = data ? data : storage;
    t.device = DLDevice{kDLCPU, 0};
    t.ndim = static_cast<int32_t>(shape.size());
    t.dtype = dtype;
    t.shape = shape.data();
  }
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  alignas(64) char storage[64] = {};
  DLTensor t{};
};

std::string check(const FunctionInfo& info, int32_t index, const DLTensor* t, DLDataType want,
                  int32_t ndim) {
  dsc_call call(&info);
  int32_t status = dsc_rt_check_input(&call, index, t, want.code, want.bits, ndim);
  EXPECT_EQ(status != 0, !call.error.empty());
  return call.error;
}

TEST(HostCall, CheckInputAcceptsGoodTensors) {
  FunctionInfo info = layer_info();
  View x(dl_float(32), {2, 7, 768}, reinterpret_cast<void*>(uintptr_t{64}));
  EXPECT_EQ(check(info, 0, &x.t, dl_float(32), 3), "");
  // Explicit compact strides, and any stride for a dim of size 1.
  View m(dl_float(32), {1, 7});
  m.strides = {12345, 1};
  m.t.strides = m.strides.data();
  EXPECT_EQ(check(info, 1, &m.t, dl_float(32), 2), "");
  // An empty tensor needs neither data nor compact strides.
  View e(dl_int(64), {0}, nullptr);
  e.t.data = nullptr;
  EXPECT_EQ(check(info, 2, &e.t, dl_int(64), 1), "");
}

TEST(HostCall, CheckInputMessages) {
  FunctionInfo info = layer_info();
  EXPECT_EQ(check(info, 0, nullptr, dl_float(32), 3), "input 'x' is null; expected f32[B, S, 768]");

  View wrong_dtype(dl_int(64), {2, 3});
  EXPECT_EQ(check(info, 1, &wrong_dtype.t, dl_float(32), 2),
            "input 'mask' is i64[2, 3]; expected f32[B, S]");

  View wrong_rank(dl_float(32), {2, 7, 3});
  EXPECT_EQ(check(info, 1, &wrong_rank.t, dl_float(32), 2),
            "input 'mask' is f32[2, 7, 3]; expected f32[B, S] (rank 2)");

  View odd_dtype(DLDataType{kDLUInt, 16, 1}, {4});
  EXPECT_EQ(check(info, 2, &odd_dtype.t, dl_int(64), 1),
            "input 'ids' is dtype(code 1, bits 16, lanes 1)[4]; expected i64[B]");

  View vector_lanes(DLDataType{kDLFloat, 32, 4}, {2, 7});
  EXPECT_THAT(check(info, 1, &vector_lanes.t, dl_float(32), 2), HasSubstr("expected f32[B, S]"));

  View gpu(dl_float(32), {2, 7});
  gpu.t.device = DLDevice{kDLCUDA, 1};
  EXPECT_EQ(check(info, 1, &gpu.t, dl_float(32), 2),
            "input 'mask' is on cuda:1; expected a CPU tensor (f32[B, S])");
  // The device is the function's (its manifest's), not an assumption of the runtime.
  FunctionInfo on_gpu = info;
  on_gpu.device = DeviceKind::Cuda;
  EXPECT_EQ(check(on_gpu, 1, &gpu.t, dl_float(32), 2),
            "input 'mask' is on cuda:1; dsc runs on CUDA device 0 (cuda:0) only");
  gpu.t.device = DLDevice{kDLCUDA, 0};
  EXPECT_EQ(check(on_gpu, 1, &gpu.t, dl_float(32), 2), "");
  View host(dl_float(32), {2, 7});
  EXPECT_EQ(check(on_gpu, 1, &host.t, dl_float(32), 2),
            "input 'mask' is on cpu:0; expected a CUDA tensor (f32[B, S])");

  View negative(dl_float(32), {2, -7});
  EXPECT_EQ(check(info, 1, &negative.t, dl_float(32), 2),
            "input 'mask' is f32[2, -7]: dim 1 is negative");

  View strided(dl_float(32), {2, 7});
  strided.strides = {1, 2};
  strided.t.strides = strided.strides.data();
  EXPECT_EQ(check(info, 1, &strided.t, dl_float(32), 2),
            "input 'mask' (f32[2, 7]) is not dense row-major: its strides are [1, 2], expected "
            "[7, 1] (or no strides)");

  View no_shape(dl_float(32), {2, 7});
  no_shape.t.shape = nullptr;
  EXPECT_THAT(check(info, 1, &no_shape.t, dl_float(32), 2), HasSubstr("invalid shape"));

  View bad_ndim(dl_float(32), {});
  bad_ndim.t.ndim = -1;
  EXPECT_THAT(check(info, 1, &bad_ndim.t, dl_float(32), 2), HasSubstr("invalid shape (ndim -1"));

  View no_data(dl_float(32), {2, 7});
  no_data.t.data = nullptr;
  EXPECT_EQ(check(info, 1, &no_data.t, dl_float(32), 2),
            "input 'mask' (f32[2, 7]) has a null data pointer");

  View misaligned(dl_float(32), {2, 7});
  misaligned.t.byte_offset = 2;
  EXPECT_EQ(check(info, 1, &misaligned.t, dl_float(32), 2),
            "input 'mask' (f32[2, 7]) is not aligned to its 4-byte elements");

  const int64_t big = int64_t{1} << 40;
  View huge(dl_float(32), {big, big});
  EXPECT_EQ(check(info, 1, &huge.t, dl_float(32), 2),
            "input 'mask' is f32[1099511627776, 1099511627776], which is too large to address");

  // An index the manifest does not know still gets a message.
  View extra(dl_int(64), {3});
  EXPECT_EQ(check(info, 9, &extra.t, dl_float(32), 2),
            "input 9 is i64[3]; expected f32 of rank 2 (rank 2)");
}

TEST(HostCall, FirstErrorWins) {
  FunctionInfo info = layer_info();
  dsc_call call(&info);
  EXPECT_EQ(dsc_rt_fail_dim(&call, 1, 1, 7, 9, "S"), 1);
  EXPECT_EQ(dsc_rt_check_input(&call, 0, nullptr, kDLFloat, 32, 3), 1);
  EXPECT_EQ(call.error, "input 'mask' dim 1 is 7, but it must equal S = 9");
}

TEST(HostCall, FailDimMessages) {
  FunctionInfo info = layer_info();
  {
    dsc_call call(&info);
    dsc_rt_fail_dim(&call, 0, 2, 512, 768, "768");
    EXPECT_EQ(call.error, "input 'x' dim 2 is 512, but it must equal 768");
  }
  {
    dsc_call call(&info);
    dsc_rt_fail_dim(&call, 2, 0, 3, 2, "B");
    EXPECT_EQ(call.error, "input 'ids' dim 0 is 3, but it must equal B = 2");
  }
  {
    dsc_call call(&info);
    dsc_rt_fail_dim(&call, 1, 1, 3, 8, nullptr);
    EXPECT_EQ(call.error, "input 'mask' dim 1 is 3, but it must equal 8");
  }
}

TEST(HostCall, FailCheckMessages) {
  FunctionInfo info = layer_info();
  const char* names[] = {"S", "B"};
  const int64_t values[] = {600, 1};
  {
    dsc_call call(&info);
    EXPECT_EQ(dsc_rt_fail_check(&call, "where S <= 512", "bert_layer.dsc:5:28", 2, names, values),
              1);
    EXPECT_EQ(call.error, "where S <= 512 violated: S = 600, B = 1 (bert_layer.dsc:5:28)");
  }
  {
    dsc_call call(&info);
    dsc_rt_fail_check(&call, "matmul inner dims: K == K2", "", 1, names, values);
    EXPECT_EQ(call.error, "matmul inner dims: K == K2 violated: S = 600");
  }
  {
    dsc_call call(&info);
    dsc_rt_fail_check(&call, "where 1 == 0", nullptr, 0, nullptr, nullptr);
    EXPECT_EQ(call.error, "where 1 == 0 violated");
  }
}

TEST(HostCall, InputDataAppliesByteOffset) {
  View v(dl_float(32), {4});
  v.t.byte_offset = 8;
  EXPECT_EQ(dsc_rt_input_data(&v.t), v.storage + 8);
  EXPECT_EQ(dsc_rt_input_data(nullptr), nullptr);
}

TEST(HostCall, Arena) {
  FunctionInfo info = layer_info();
  {
    dsc_call call(&info);
    void* p = dsc_rt_arena(&call, 1000);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
    std::memset(p, 1, 1000);
    EXPECT_EQ(call.arena_bytes, 1000);
    EXPECT_EQ(dsc_rt_arena(&call, 10), nullptr);
    EXPECT_EQ(call.error, "internal error: 'layer' asked for its arena twice");
  }
  {
    dsc_call call(&info);
    EXPECT_NE(dsc_rt_arena(&call, 0), nullptr);
    EXPECT_EQ(call.error, "");
  }
  {
    dsc_call call(&info);
    EXPECT_EQ(dsc_rt_arena(&call, -64), nullptr);
    EXPECT_EQ(call.error, "the arena of 'layer' would be -64 bytes, a negative size");
  }
  {
    dsc_call call(&info);
    EXPECT_EQ(dsc_rt_arena(&call, std::numeric_limits<int64_t>::max()), nullptr);
    EXPECT_THAT(call.error, HasSubstr("cannot allocate 9223372036854775807 bytes (8.0 EiB) for "
                                      "the arena of 'layer': the machine has "));
  }
}

// Errors about sizes name the symbols' values in the call's inputs, when it knows them.
TEST(HostCall, SizeErrorsNameTheSymbols) {
  FunctionInfo info = layer_info();
  View x(dl_float(32), {3, 5, 768}), mask(dl_float(32), {3, 5}), ids(dl_int(64), {3});
  const DLTensor* inputs[] = {&x.t, &mask.t, &ids.t};
  {
    dsc_call call(&info);
    call.inputs = inputs;
    EXPECT_EQ(call.at_symbols(), " at B=3, S=5");
    EXPECT_EQ(dsc_rt_arena(&call, std::numeric_limits<int64_t>::max()), nullptr);
    EXPECT_THAT(call.error, HasSubstr("for the arena of 'layer' at B=3, S=5: the machine has "));
  }
  {
    dsc_call call(&info);
    call.inputs = inputs;
    EXPECT_EQ(dsc_rt_fail_overflow(&call, "the arena"), 1);
    EXPECT_EQ(call.error, "cannot allocate the arena of 'layer' at B=3, S=5: its size overflows "
                          "64 bits");
  }
  {
    dsc_call call(&info);
    call.inputs = inputs;
    const int64_t big = int64_t{1} << 40;
    int64_t shape[] = {big, 1024, 768};
    EXPECT_EQ(dsc_rt_output(&call, 0, kDLFloat, 32, 3, shape), nullptr);
    EXPECT_THAT(call.error, HasSubstr("output 0 of 'layer' at B=3, S=5: cannot allocate "
                                      "3458764513820540928 bytes (3.0 EiB) for a "));
  }
  dsc_call call(&info); // no inputs known: no symbols
  EXPECT_EQ(call.at_symbols(), "");
  EXPECT_EQ(dsc_rt_fail_overflow(&call, "output 1"), 1);
  EXPECT_EQ(call.error, "cannot allocate output 1 of 'layer': its size overflows 64 bits");
}

TEST(HostCall, OutputsAnyOrder) {
  FunctionInfo info = layer_info();
  dsc_call call(&info);
  int64_t b = 3;
  void* ids = dsc_rt_output(&call, 1, kDLInt, 64, 1, &b);
  ASSERT_NE(ids, nullptr);
  int64_t shape[] = {3, 5, 768};
  void* x = dsc_rt_output(&call, 0, kDLFloat, 32, 3, shape);
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(x) % 64, 0u);
  EXPECT_EQ(call.error, "");
  EXPECT_EQ(call.outputs[0].type_string(), "f32[3, 5, 768]");
  EXPECT_EQ(call.outputs[1].type_string(), "i64[3]");
  EXPECT_EQ(call.outputs[0].data(), x);
}

std::string output_error(int32_t index, DLDataType dtype, std::vector<int64_t> shape,
                         bool twice = false) {
  FunctionInfo info = layer_info();
  dsc_call call(&info);
  auto ndim = static_cast<int32_t>(shape.size());
  void* p = dsc_rt_output(&call, index, dtype.code, dtype.bits, ndim, shape.data());
  if (twice) {
    EXPECT_NE(p, nullptr);
    p = dsc_rt_output(&call, index, dtype.code, dtype.bits, ndim, shape.data());
  }
  EXPECT_EQ(p, nullptr);
  return call.error;
}

TEST(HostCall, OutputErrors) {
  EXPECT_EQ(output_error(2, dl_int(64), {3}),
            "internal error: output 2 of 'layer' does not exist (it has 2 outputs)");
  EXPECT_EQ(output_error(-1, dl_int(64), {3}),
            "internal error: output -1 of 'layer' does not exist (it has 2 outputs)");
  EXPECT_EQ(output_error(1, dl_int(64), {3}, true),
            "internal error: output 1 of 'layer' allocated twice");
  EXPECT_EQ(output_error(1, dl_float(32), {3}),
            "internal error: output 1 of 'layer' allocated as f32[3], but the manifest declares "
            "i64[B]");
  EXPECT_EQ(output_error(1, dl_int(64), {3, 1}),
            "internal error: output 1 of 'layer' allocated as i64[3, 1], but the manifest "
            "declares i64[B]");
  EXPECT_EQ(output_error(0, dl_float(32), {2, -4, 768}),
            "output 0 of 'layer' would be f32[2, -4, 768] (declared f32[B, S, 768]): dim 1 is "
            "negative");
  const int64_t big = int64_t{1} << 40;
  EXPECT_EQ(output_error(0, dl_float(32), {big, big, 768}),
            "output 0 of 'layer': invalid or too large tensor shape f32[1099511627776, "
            "1099511627776, 768]");
  EXPECT_THAT(
      output_error(0, dl_float(32), {big, 1024, 768}),
      HasSubstr("output 0 of 'layer': cannot allocate 3458764513820540928 bytes (3.0 EiB) for a "
                "f32[1099511627776, 1024, 768] tensor: the machine has "));
  FunctionInfo info = layer_info();
  dsc_call call(&info);
  EXPECT_EQ(dsc_rt_output(&call, 0, kDLFloat, 32, 3, nullptr), nullptr);
  EXPECT_EQ(call.error, "internal error: output 0 of 'layer' allocated with an invalid rank 3");
}

TEST(HostCall, NullCallIsHarmless) {
  EXPECT_EQ(dsc_rt_check_input(nullptr, 0, nullptr, kDLFloat, 32, 1), 1);
  EXPECT_EQ(dsc_rt_fail_dim(nullptr, 0, 0, 1, 2, "n"), 1);
  EXPECT_EQ(dsc_rt_fail_check(nullptr, "where", "", 0, nullptr, nullptr), 1);
  EXPECT_EQ(dsc_rt_arena(nullptr, 8), nullptr);
  int64_t n = 1;
  EXPECT_EQ(dsc_rt_output(nullptr, 0, kDLFloat, 32, 1, &n), nullptr);
}

// call_host_function around hand-written host functions for `double(x: f32[n]) -> f32[n]`.
FunctionInfo double_info() {
  FunctionInfo f;
  f.name = "twice";
  f.host_symbol = "twice_host";
  f.params = {tensor_info("x", "f32", {"n"})};
  f.outputs = {tensor_info("output0", "f32", {"n"})};
  f.arena_bytes = "n*4";
  f.peak_bytes = "n*4";
  return f;
}

int32_t twice_host(dsc_call* call, const DLTensor* const* inputs) {
  if (dsc_rt_check_input(call, 0, inputs[0], kDLFloat, 32, 1)) return 1;
  int64_t n = inputs[0]->shape[0];
  auto* tmp = static_cast<float*>(dsc_rt_arena(call, n * 4));
  auto* y = static_cast<float*>(dsc_rt_output(call, 0, kDLFloat, 32, 1, &n));
  if (!tmp || !y) return 1;
  const auto* x = static_cast<const float*>(dsc_rt_input_data(inputs[0]));
  for (int64_t i = 0; i < n; ++i)
    tmp[i] = x[i] * 2;
  std::memcpy(y, tmp, static_cast<size_t>(n) * 4);
  return 0;
}

TEST(CallHostFunction, Success) {
  FunctionInfo info = double_info();
  Tensor x = Tensor::zeros(dl_float(32), {5});
  for (int i = 0; i < 5; ++i)
    x.data_as<float>()[i] = static_cast<float>(i);
  DLTensor v = x.dl_view();
  CallResult r = call_host_function(info, twice_host, {&v});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.arena_bytes, 20);
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_EQ(r.outputs[0].type_string(), "f32[5]");
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(r.outputs[0].data_as<float>()[i], 2.0f * static_cast<float>(i));
}

TEST(CallHostFunction, Errors) {
  FunctionInfo info = double_info();
  Tensor x = Tensor::zeros(dl_float(32), {5});
  DLTensor v = x.dl_view();
  EXPECT_EQ(call_host_function(info, twice_host, {}).error,
            "function 'twice' takes 1 input (x); got 0");
  EXPECT_EQ(call_host_function(info, twice_host, {&v, &v}).error,
            "function 'twice' takes 1 input (x); got 2");
  EXPECT_EQ(call_host_function(info, nullptr, {&v}).error, "function 'twice' has no host function");
  Tensor wrong = Tensor::zeros(dl_int(32), {5});
  DLTensor w = wrong.dl_view();
  CallResult r = call_host_function(info, twice_host, {&w});
  EXPECT_EQ(r.error, "input 'x' is i32[5]; expected f32[n]");
  EXPECT_TRUE(r.outputs.empty());

  auto forgets = [](dsc_call*, const DLTensor* const*) -> int32_t { return 0; };
  EXPECT_EQ(call_host_function(info, forgets, {&v}).error,
            "internal error: function 'twice' returned without output 0");
  auto silent = [](dsc_call*, const DLTensor* const*) -> int32_t { return 3; };
  EXPECT_EQ(call_host_function(info, silent, {&v}).error,
            "function 'twice' failed (status 3) without an error message");
  auto ignores = [](dsc_call* call, const DLTensor* const*) -> int32_t {
    dsc_rt_fail_check(call, "where n > 0", "", 0, nullptr, nullptr);
    return 0;
  };
  EXPECT_EQ(call_host_function(info, ignores, {&v}).error, "where n > 0 violated");

  FunctionInfo none = double_info();
  none.params.clear();
  EXPECT_EQ(call_host_function(none, twice_host, {&v}).error,
            "function 'twice' takes 0 inputs; got 1");
}

} // namespace
} // namespace dsc::runtime
