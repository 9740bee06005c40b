// The CUDA side of the runtime on a machine without a GPU: every entry point gives a clean
// error, never an abort. The driver is made missing (DSC_CUDA_DRIVER names a library that
// does not exist, before anything asks for the device), so these tests behave the same on a
// machine that has a GPU.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "runtime/HostCall.h"
#include "runtime/Model.h"
#include "runtime/cuda/Device.h"
#include "runtime/cuda/DeviceTensor.h"
#include "runtime/dsc_runtime.h"

namespace dsc::runtime {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

const bool kNoDriver = [] {
  setenv("DSC_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
  unsetenv("DSC_CUDA_EMULATE");
  return true;
}();

const char kReason[] = "no CUDA device: /nonexistent/libcuda.so.1 cannot be loaded (";

FunctionInfo cuda_function() {
  FunctionInfo f;
  f.name = "layer";
  f.host_symbol = "layer_host";
  f.device = DeviceKind::Cuda;
  f.params = {TensorInfo{"x", "f32", {"N"}}};
  f.outputs = {TensorInfo{"output0", "f32", {"N"}}};
  f.arena_bytes = "N*4";
  f.peak_bytes = "N*4";
  return f;
}

TEST(CudaNoDevice, DeviceIsAnErrorAndTheErrorIsKept) {
  ASSERT_TRUE(kNoDriver);
  std::string error;
  EXPECT_EQ(cuda::device(&error), nullptr);
  EXPECT_THAT(error, StartsWith(kReason));
  std::string again;
  EXPECT_EQ(cuda::device(&again), nullptr);
  EXPECT_EQ(again, error);
  EXPECT_EQ(cuda::device(nullptr), nullptr);
}

bool g_host_code_ran = false;

int32_t host_that_must_not_run(dsc_call*, const DLTensor* const*) {
  g_host_code_ran = true;
  return 0;
}

TEST(CudaNoDevice, CallingACudaFunctionFailsBeforeItsHostCode) {
  FunctionInfo info = cuda_function();
  float data[4] = {};
  int64_t shape[1] = {4};
  DLTensor x{};
  x.data = data;
  x.device = DLDevice{kDLCUDA, 0};
  x.ndim = 1;
  x.dtype = dl_float(32);
  x.shape = shape;
  CallResult r = call_host_function(info, host_that_must_not_run, {&x});
  EXPECT_FALSE(g_host_code_ran);
  EXPECT_THAT(r.error, StartsWith("'layer' runs on CUDA, but there is no CUDA device: "
                                  "/nonexistent/libcuda.so.1 cannot be loaded ("));
  std::string error;
  EXPECT_FALSE(check_device(info, &error));
  EXPECT_EQ(error, r.error);
  // A CPU function needs no device.
  info.device = DeviceKind::Cpu;
  EXPECT_TRUE(check_device(info, &error));
}

TEST(CudaNoDevice, HostAbiFunctionsRecordErrors) {
  FunctionInfo info = cuda_function();
  {
    dsc_call call(&info);
    EXPECT_EQ(dsc_rt_arena(&call, 64), nullptr);
    EXPECT_THAT(call.error, StartsWith("cannot allocate the arena of 'layer' on the GPU: " +
                                       std::string(kReason)));
  }
  {
    dsc_call call(&info);
    int64_t shape[1] = {4};
    EXPECT_EQ(dsc_rt_output(&call, 0, kDLFloat, 32, 1, shape), nullptr);
    EXPECT_THAT(call.error, StartsWith("output 0 of 'layer': cannot allocate a f32[4] tensor on "
                                       "the GPU: " +
                                       std::string(kReason)));
  }
  {
    dsc_call call(&info);
    dsc_cuda_module module{"layer", 0, nullptr, "", nullptr};
    EXPECT_EQ(dsc_rt_cuda_launch(&call, &module, "layer_add_0", 2, 1, 1, 128, 1, 1, 0, nullptr, 0,
                                 nullptr, 0),
              1);
    EXPECT_THAT(call.error, StartsWith("kernel 'layer_add_0' of 'layer': " + std::string(kReason)));
    // An empty grid launches nothing, so it needs no device.
    dsc_call empty(&info);
    EXPECT_EQ(dsc_rt_cuda_launch(&empty, &module, "layer_add_0", 0, 1, 1, 128, 1, 1, 0, nullptr, 0,
                                 nullptr, 0),
              0);
    EXPECT_EQ(empty.error, "");
  }
  {
    dsc_call call(&info);
    float a[1], b[1], c[1];
    const dsc_strided_product p{1, 1, 1, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 1};
    EXPECT_EQ(dsc_rt_cublas_sgemm_f32(&call, a, b, c, &p), 1);
    EXPECT_THAT(call.error, StartsWith("cublas.sgemm of 'layer': " + std::string(kReason)));
    // A null descriptor is refused before the device is asked for.
    dsc_call none(&info);
    EXPECT_EQ(dsc_rt_cublas_sgemm_f32(&none, a, b, c, nullptr), 1);
    EXPECT_EQ(none.error, "cublas.sgemm of 'layer': no product descriptor");
  }
  {
    dsc_call call(&info);
    float a[1], b[1], bias[1], c[1];
    const dsc_strided_product p{1, 1, 1, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 1};
    EXPECT_EQ(dsc_rt_cublaslt_sgemm_bias_gelu_tanh_f32(&call, a, b, bias, c, &p), 1);
    EXPECT_THAT(call.error,
                StartsWith("cublaslt.sgemm_bias_gelu_tanh of 'layer': " + std::string(kReason)));
  }
  {
    dsc_call call(&info);
    float x[1], w[1], y[1];
    EXPECT_EQ(
        dsc_rt_cudnn_conv2d_f32(&call, x, w, y, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1), 1);
    EXPECT_THAT(call.error, StartsWith("cudnn.conv2d of 'layer': " + std::string(kReason)));
  }
  {
    dsc_call call(&info);
    int64_t threads = -1;
    EXPECT_EQ(dsc_rt_cuda_resident_threads(&call, &threads), 1);
    EXPECT_EQ(threads, -1);
    EXPECT_THAT(call.error, StartsWith("the device's resident threads of 'layer': " + std::string(kReason)));
  }
  {
    dsc_call call(&info);
    float a[1], b[1];
    EXPECT_EQ(dsc_rt_cuda_copy(&call, a, b, -4), 1);
    EXPECT_EQ(call.error, "a device copy of -4 bytes of 'layer': a negative size");
    dsc_call zero(&info);
    EXPECT_EQ(dsc_rt_cuda_copy(&zero, a, b, 0), 0);
    dsc_call some(&info);
    EXPECT_EQ(dsc_rt_cuda_copy(&some, a, b, 4), 1);
    EXPECT_THAT(some.error,
                StartsWith("a device copy of 4 bytes of 'layer': " + std::string(kReason)));
  }
}

TEST(CudaNoDevice, DeviceTensorsAndCopies) {
  std::string error;
  EXPECT_FALSE(Tensor::try_empty(DLDevice{kDLCUDA, 0}, dl_float(32), {2, 3}, "x", &error));
  EXPECT_THAT(error, StartsWith("cannot allocate x on the GPU: " + std::string(kReason)));
  EXPECT_FALSE(Tensor::try_empty(DLDevice{kDLCUDA, 1}, dl_float(32), {2}, "", &error));
  EXPECT_EQ(error, "cannot allocate a f32[2] tensor on device type 2, id 1: dsc runs on the CPU "
                   "and CUDA device 0 only");

  Tensor host = Tensor::zeros(dl_float(32), {2, 3});
  host.data_as<float>()[4] = 7;
  EXPECT_FALSE(cuda::to_device(host, &error));
  EXPECT_THAT(error, HasSubstr(kReason));
  // Host to host needs no device.
  std::optional<Tensor> copy = cuda::to_host(host, &error);
  ASSERT_TRUE(copy) << error;
  EXPECT_TRUE(copy->on_host());
  EXPECT_EQ(copy->type_string(), "f32[2, 3]");
  EXPECT_EQ(copy->data_as<float>()[4], 7);
  EXPECT_NE(copy->data(), host.data());
}

TEST(CudaNoDevice, CopySourceChecks) {
  std::string error;
  float data[6] = {0, 1, 2, 3, 4, 5};
  int64_t shape[2] = {2, 3};
  int64_t strides[2] = {1, 2};
  DLTensor t{};
  t.data = data;
  t.device = DLDevice{kDLCPU, 0};
  t.ndim = 2;
  t.dtype = DLDataType{kDLFloat, 32, 1};
  t.shape = shape;
  t.byte_offset = 4;
  shape[0] = 1;
  std::optional<Tensor> c = cuda::copy_to(t, kDLCPU, &error);
  ASSERT_TRUE(c) << error;
  EXPECT_EQ(c->data_as<float>()[0], 1); // byte_offset applied
  shape[0] = 2;
  t.byte_offset = 0;
  t.strides = strides;
  EXPECT_FALSE(cuda::copy_to(t, kDLCPU, &error));
  EXPECT_EQ(error, "the tensor is not dense row-major (dim 1 has stride 2, expected 1)");
  t.strides = nullptr;
  t.device = DLDevice{kDLVulkan, 0};
  EXPECT_FALSE(cuda::copy_to(t, kDLCPU, &error));
  EXPECT_THAT(error, HasSubstr("dsc copies between the CPU and CUDA device 0 only"));
  t.device = DLDevice{kDLCPU, 0};
  t.data = nullptr;
  EXPECT_FALSE(cuda::copy_to(t, kDLCPU, &error));
  EXPECT_EQ(error, "the tensor has a null data pointer");
  t.data = data;
  EXPECT_FALSE(cuda::copy_to(t, kDLCUDA, &error));
  EXPECT_THAT(error, HasSubstr(kReason));
}

TEST(CudaNoDevice, CApi) {
  EXPECT_NE(dsc_cuda_available(), 0);
  EXPECT_THAT(dsc_last_error(), StartsWith(kReason));

  float data[3] = {1, 2, 3};
  int64_t shape[1] = {3};
  DLTensor t{};
  t.data = data;
  t.device = DLDevice{kDLCPU, 0};
  t.ndim = 1;
  t.dtype = DLDataType{kDLFloat, 32, 1};
  t.shape = shape;
  EXPECT_EQ(dsc_tensor_copy(&t, kDLCUDA), nullptr);
  EXPECT_THAT(dsc_last_error(), StartsWith("dsc_tensor_copy: "));
  EXPECT_THAT(dsc_last_error(), HasSubstr(kReason));
  EXPECT_EQ(dsc_tensor_copy(&t, 99), nullptr);
  EXPECT_STREQ(dsc_last_error(),
               "dsc_tensor_copy: cannot copy to device type 99: dsc copies to kDLCPU (1) or "
               "kDLCUDA (2)");
  EXPECT_EQ(dsc_tensor_copy(nullptr, kDLCPU), nullptr);
  EXPECT_STREQ(dsc_last_error(), "dsc_tensor_copy: the source tensor is null");

  DLManagedTensor* host = dsc_tensor_copy(&t, kDLCPU);
  ASSERT_NE(host, nullptr) << dsc_last_error();
  EXPECT_EQ(host->dl_tensor.device.device_type, kDLCPU);
  EXPECT_EQ(host->dl_tensor.ndim, 1);
  EXPECT_EQ(host->dl_tensor.shape[0], 3);
  EXPECT_EQ(static_cast<float*>(host->dl_tensor.data)[2], 3);
  host->deleter(host);
}

} // namespace
} // namespace dsc::runtime
