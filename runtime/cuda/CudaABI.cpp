// The CUDA functions of HostABI.h over cuda::device(). Errors are recorded in the call and
// name what failed and the function: "kernel 'layer_add_0' of 'layer': cuLaunchKernel failed:
// CUDA_ERROR_INVALID_VALUE: invalid argument".
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>

#include "runtime/HostCall.h"
#include "runtime/cuda/Device.h"

namespace {

using dsc::runtime::cuda::Conv2d;
using dsc::runtime::cuda::CopyKind;
using dsc::runtime::cuda::Device;
using dsc::runtime::cuda::GemmEpilogue;
using dsc::runtime::cuda::LaunchShape;

std::string of_function(const dsc_call* call) {
  return call->info ? " of '" + call->info->name + "'" : "";
}

// The device, or null with the error recorded against `what`.
Device* device_for(dsc_call* call, const std::string& what) {
  std::string error;
  Device* d = dsc::runtime::cuda::device(&error);
  if (!d) call->fail(what + of_function(call) + ": " + error);
  return d;
}

// "(batch 2, 5 x 7 @ 7 x 3)": a product's sizes, for errors.
std::string product_sizes(const dsc_strided_product& p) {
  return "(batch " + std::to_string(p.batch) + ", " + std::to_string(p.m) + " x " +
         std::to_string(p.k) + " @ " + std::to_string(p.k) + " x " + std::to_string(p.n) + ")";
}

int32_t cublaslt_sgemm(dsc_call* call, const std::string& what, GemmEpilogue epilogue,
                       const float* a, const float* b, const float* bias, float* c,
                       const dsc_strided_product* product) {
  if (!call) return 1;
  if (!product) return call->fail(what + of_function(call) + ": no product descriptor");
  Device* d = device_for(call, what);
  if (!d) return 1;
  std::string error;
  if (!d->sgemm_epilogue(a, b, bias, c, *product, epilogue, &error))
    return call->fail(what + " " + product_sizes(*product) + of_function(call) + ": " + error);
  return 0;
}

} // namespace

extern "C" {

int32_t dsc_rt_cuda_launch(dsc_call* call, dsc_cuda_module* module, const char* kernel,
                           int64_t grid_x, int64_t grid_y, int64_t grid_z, int64_t block_x,
                           int64_t block_y, int64_t block_z, int64_t shared_bytes,
                           void* const* buffers, int32_t num_buffers, const int64_t* symbols,
                           int32_t num_symbols) {
  if (!call) return 1;
  const std::string what = "kernel '" + std::string(kernel ? kernel : "?") + "'";
  if (grid_x == 0 || grid_y == 0 || grid_z == 0) return 0; // an empty grid launches nothing
  Device* d = device_for(call, what);
  if (!d) return 1;
  LaunchShape shape;
  shape.grid[0] = grid_x, shape.grid[1] = grid_y, shape.grid[2] = grid_z;
  shape.block[0] = block_x, shape.block[1] = block_y, shape.block[2] = block_z;
  shape.shared_bytes = shared_bytes;
  std::string error;
  if (!d->launch(module, kernel, shape, buffers, num_buffers, symbols, num_symbols, &error))
    return call->fail(what + of_function(call) + ": " + error);
  return 0;
}

int32_t dsc_rt_cuda_resident_threads(dsc_call* call, int64_t* threads) {
  if (!call || !threads) return 1;
  Device* d = device_for(call, "the device's resident threads");
  if (!d) return 1;
  *threads = d->resident_threads();
  // DSC_CUDA_RESIDENT_THREADS=N: the host code picks its launches as if the device held N
  // threads (1: never the wider launch for few rows), so that both variants can be timed on
  // one device (docs/cuda.md).
  if (const char* env = std::getenv("DSC_CUDA_RESIDENT_THREADS")) {
    int64_t n = 0;
    const char* end = env + std::strlen(env);
    const auto [rest, ec] = std::from_chars(env, end, n);
    if (ec != std::errc() || rest != end || n < 1)
      return call->fail("DSC_CUDA_RESIDENT_THREADS" + of_function(call) +
                        ": a positive number of threads, not '" + env + "'");
    *threads = n;
  }
  return 0;
}

int32_t dsc_rt_cuda_copy(dsc_call* call, void* dst, const void* src, int64_t bytes) {
  if (!call) return 1;
  const std::string what = "a device copy of " + std::to_string(bytes) + " bytes";
  if (bytes < 0) return call->fail(what + of_function(call) + ": a negative size");
  if (bytes == 0) return 0;
  Device* d = device_for(call, what);
  if (!d) return 1;
  std::string error;
  if (!d->copy(dst, src, static_cast<uint64_t>(bytes), CopyKind::DeviceToDevice, &error))
    return call->fail(what + of_function(call) + ": " + error);
  return 0;
}

int32_t dsc_rt_cuda_read(dsc_call* call, void* dst, const void* src, int64_t bytes) {
  if (!call) return 1;
  const std::string what = "a read of " + std::to_string(bytes) + " bytes from the device";
  if (bytes < 0) return call->fail(what + of_function(call) + ": a negative size");
  if (bytes == 0) return 0;
  Device* d = device_for(call, what);
  if (!d) return 1;
  std::string error;
  if (!d->copy(dst, src, static_cast<uint64_t>(bytes), CopyKind::DeviceToHost, &error))
    return call->fail(what + of_function(call) + ": " + error);
  return 0;
}

int32_t dsc_rt_cublas_sgemm_f32(dsc_call* call, const float* a, const float* bm, float* c,
                                const dsc_strided_product* product) {
  if (!call) return 1;
  const std::string what = "cublas.sgemm";
  if (!product) return call->fail(what + of_function(call) + ": no product descriptor");
  Device* d = device_for(call, what);
  if (!d) return 1;
  std::string error;
  if (!d->sgemm(a, bm, c, *product, &error))
    return call->fail(what + " " + product_sizes(*product) + of_function(call) + ": " + error);
  return 0;
}

// The three cublaslt.sgemm_* entry points (HostABI.h's dsc_cublaslt_sgemm_fn), each the product
// and its epilogue.
#define DSC_DEFINE_CUBLASLT_SGEMM(name, routine, epilogue)                                         \
  int32_t name(dsc_call* call, const float* a, const float* bm, const float* bias, float* c,       \
               const dsc_strided_product* product) {                                               \
    return cublaslt_sgemm(call, routine, epilogue, a, bm, bias, c, product);                       \
  }
DSC_DEFINE_CUBLASLT_SGEMM(dsc_rt_cublaslt_sgemm_bias_f32, "cublaslt.sgemm_bias", GemmEpilogue::Bias)
DSC_DEFINE_CUBLASLT_SGEMM(dsc_rt_cublaslt_sgemm_bias_relu_f32, "cublaslt.sgemm_bias_relu",
                          GemmEpilogue::BiasRelu)
DSC_DEFINE_CUBLASLT_SGEMM(dsc_rt_cublaslt_sgemm_bias_gelu_tanh_f32,
                          "cublaslt.sgemm_bias_gelu_tanh", GemmEpilogue::BiasGeluTanh)
#undef DSC_DEFINE_CUBLASLT_SGEMM

int32_t dsc_rt_cudnn_conv2d_f32(dsc_call* call, const float* x, const float* w, float* y, int64_t n,
                                int64_t c, int64_t h, int64_t width, int64_t o, int64_t kh,
                                int64_t kw, int64_t oh, int64_t ow, int64_t groups,
                                int64_t stride_h, int64_t stride_w, int64_t pad_h, int64_t pad_w,
                                int64_t dilation_h, int64_t dilation_w) {
  if (!call) return 1;
  const std::string what = "cudnn.conv2d";
  Device* d = device_for(call, what);
  if (!d) return 1;
  const Conv2d conv{n,  c,      h,        width,    o,     kh,    kw,         oh,
                    ow, groups, stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w};
  std::string error;
  if (!d->conv2d(x, w, y, conv, &error)) {
    auto dims = [](std::initializer_list<int64_t> values) {
      std::string s;
      for (int64_t v : values)
        s += (s.empty() ? "" : "x") + std::to_string(v);
      return s;
    };
    return call->fail(what + " (" + dims({n, c, h, width}) + " * " +
                      dims({o, groups > 0 ? c / groups : c, kh, kw}) + " -> " +
                      dims({n, o, oh, ow}) + ", stride " + dims({stride_h, stride_w}) +
                      ", padding " + dims({pad_h, pad_w}) + ", dilation " +
                      dims({dilation_h, dilation_w}) + ", groups " + std::to_string(groups) + ")" +
                      of_function(call) + ": " + error);
  }
  return 0;
}

} // extern "C"
