// The GPU device (runtime/cuda/GpuDevice.h) on a real GPU: memory and copies, modules of
// hand-written PTX, launches with large dynamic shared memory, cuBLAS against the CPU's
// product, cuBLASLt's epilogues and cuDNN against the emulator's loops, and a CUDA function called
// through call_host_function as built models are. Every test is skipped where there is no device;
// on such a machine the first one checks that the reason is a clean "no CUDA device" message.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "runtime/HostCall.h"
#include "runtime/Matmul.h"
#include "runtime/Model.h"
#include "runtime/cuda/CublasLt.h"
#include "runtime/cuda/Cudnn.h"
#include "runtime/cuda/Device.h"
#include "runtime/cuda/DeviceTensor.h"
#include "runtime/dsc_runtime.h"

namespace dsc::runtime {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

const bool kRealDevice = [] {
  unsetenv("DSC_CUDA_EMULATE");
  unsetenv("DSC_CUDA_DRIVER");
  return true;
}();

// y[i] = 2 * x[i] for i < n; one thread per element.
// reverse: y[i] = x[n - 1 - i] through dynamic shared memory, one block of n threads.
const char kPtx[] = R"(
.version 7.0
.target sm_50
.address_size 64

.extern .shared .align 16 .b8 dsc_test_shared[];

.visible .entry scale2(.param .u64 x, .param .u64 y, .param .u64 n)
{
  .reg .pred %p;
  .reg .b32 %r<5>;
  .reg .b64 %rd<8>;
  .reg .f32 %f<3>;
  ld.param.u64 %rd1, [x];
  ld.param.u64 %rd2, [y];
  ld.param.u64 %rd3, [n];
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mad.lo.s32 %r4, %r1, %r2, %r3;
  cvt.s64.s32 %rd4, %r4;
  setp.ge.s64 %p, %rd4, %rd3;
  @%p bra DONE;
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;
  shl.b64 %rd5, %rd4, 2;
  add.s64 %rd6, %rd1, %rd5;
  add.s64 %rd7, %rd2, %rd5;
  ld.global.f32 %f1, [%rd6];
  add.f32 %f2, %f1, %f1;
  st.global.f32 [%rd7], %f2;
DONE:
  ret;
}

.visible .entry reverse(.param .u64 x, .param .u64 y, .param .u64 n)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  .reg .f32 %f<2>;
  ld.param.u64 %rd1, [x];
  ld.param.u64 %rd2, [y];
  ld.param.u64 %rd3, [n];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r1, %tid.x;
  cvt.u32.u64 %r2, %rd3;
  mul.wide.u32 %rd4, %r1, 4;
  add.s64 %rd5, %rd1, %rd4;
  ld.global.f32 %f1, [%rd5];
  mov.u32 %r3, dsc_test_shared;
  shl.b32 %r4, %r1, 2;
  add.u32 %r5, %r3, %r4;
  st.shared.f32 [%r5], %f1;
  bar.sync 0;
  sub.u32 %r6, %r2, %r1;
  sub.u32 %r6, %r6, 1;
  shl.b32 %r6, %r6, 2;
  add.u32 %r7, %r3, %r6;
  ld.shared.f32 %f1, [%r7];
  add.s64 %rd6, %rd2, %rd4;
  st.global.f32 [%rd6], %f1;
  ret;
}
)";

dsc_cuda_image g_images[] = {{50, 1, kPtx, sizeof kPtx}};
dsc_cuda_module g_module = {"test_kernels", 1, g_images, "", nullptr};

cuda::Device* gpu() {
  return cuda::device(nullptr);
}

#define SKIP_WITHOUT_GPU()                                                                         \
  if (!gpu()) GTEST_SKIP() << "no GPU here"

TEST(CudaGpu, DeviceOrACleanReason) {
  ASSERT_TRUE(kRealDevice);
  std::string error;
  cuda::Device* d = cuda::device(&error);
  if (!d) {
    EXPECT_THAT(error, StartsWith("no CUDA device: "));
    EXPECT_NE(dsc_cuda_available(), 0);
    EXPECT_EQ(std::string(dsc_last_error()), error);
    GTEST_SKIP() << error;
  }
  EXPECT_EQ(dsc_cuda_available(), 0);
  EXPECT_THAT(d->describe(), HasSubstr("(sm_"));
  // Every GPU dsc targets (sm_80 and later) keeps at least 1536 threads on each multiprocessor.
  EXPECT_GE(d->resident_threads(), 1536);
  std::printf("device: %s, %lld resident threads\n", d->describe().c_str(),
              static_cast<long long>(d->resident_threads()));
}

std::vector<float> iota(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<float>(i) * 0.5f - 3;
  return v;
}

// A device copy of `host`, freed by the caller through gpu()->release.
float* upload(const std::vector<float>& host) {
  std::string error;
  void* p = gpu()->allocate(host.size() * 4, "a test buffer", &error);
  EXPECT_NE(p, nullptr) << error;
  EXPECT_TRUE(gpu()->copy(p, host.data(), host.size() * 4, cuda::CopyKind::HostToDevice, &error))
      << error;
  return static_cast<float*>(p);
}

std::vector<float> download(const float* p, size_t n) {
  std::vector<float> host(n);
  std::string error;
  EXPECT_TRUE(gpu()->copy(host.data(), p, n * 4, cuda::CopyKind::DeviceToHost, &error)) << error;
  return host;
}

TEST(CudaGpu, MemoryAndCopies) {
  SKIP_WITHOUT_GPU();
  std::vector<float> x = iota(1000);
  float* a = upload(x);
  std::string error;
  auto* b = static_cast<float*>(gpu()->allocate(4000, "b", &error));
  ASSERT_NE(b, nullptr) << error;
  ASSERT_TRUE(gpu()->copy(b, a, 4000, cuda::CopyKind::DeviceToDevice, &error)) << error;
  EXPECT_EQ(download(b, 1000), x);
  void* empty = gpu()->allocate(0, "nothing", &error);
  EXPECT_NE(empty, nullptr) << error;
  gpu()->release(empty);
  gpu()->release(a);
  gpu()->release(b);
  EXPECT_TRUE(gpu()->synchronize(&error)) << error;
  // More than any GPU has.
  EXPECT_EQ(gpu()->allocate(uint64_t{1} << 50, "the huge buffer", &error), nullptr);
  EXPECT_THAT(error, StartsWith("cannot allocate 1125899906842624 bytes (1.0 PiB) of device "
                                "memory for the huge buffer: "));
}

TEST(CudaGpu, LaunchPtx) {
  SKIP_WITHOUT_GPU();
  const int64_t n = 1000;
  std::vector<float> x = iota(n);
  float* dx = upload(x);
  std::string error;
  const int64_t m = 1024; // the second kernel's block
  auto* dy = static_cast<float*>(gpu()->allocate(std::max(n, m) * 4, "y", &error));
  void* buffers[] = {dx, dy};
  cuda::LaunchShape shape;
  shape.grid[0] = (n + 127) / 128;
  shape.block[0] = 128;
  ASSERT_TRUE(gpu()->launch(&g_module, "scale2", shape, buffers, 2, &n, 1, &error)) << error;
  std::vector<float> y = download(dy, n);
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(y[i], 2 * x[i]) << i;

  // 64 KiB of dynamic shared memory needs the opt-in attribute.
  std::vector<float> r = iota(m);
  float* dr = upload(r);
  void* reverse_buffers[] = {dr, dy};
  cuda::LaunchShape one_block;
  one_block.block[0] = m;
  one_block.shared_bytes = 64 * 1024;
  ASSERT_TRUE(gpu()->launch(&g_module, "reverse", one_block, reverse_buffers, 2, &m, 1, &error))
      << error;
  std::vector<float> reversed = download(dy, m);
  for (int64_t i = 0; i < m; ++i)
    ASSERT_EQ(reversed[i], r[m - 1 - i]) << i;

  // Errors.
  EXPECT_FALSE(gpu()->launch(&g_module, "no_such_kernel", shape, buffers, 2, &n, 1, &error));
  EXPECT_THAT(error, HasSubstr("module 'test_kernels' (compute_50 (PTX)) has no such kernel: "
                               "cuModuleGetFunction failed: CUDA_ERROR_NOT_FOUND"));
  cuda::LaunchShape too_much = shape;
  too_much.shared_bytes = int64_t{1} << 30;
  EXPECT_FALSE(gpu()->launch(&g_module, "scale2", too_much, buffers, 2, &n, 1, &error));
  EXPECT_THAT(error, HasSubstr("bytes of dynamic shared memory; sm_"));
  cuda::LaunchShape too_many_threads = shape;
  too_many_threads.block[0] = 4096;
  EXPECT_FALSE(gpu()->launch(&g_module, "scale2", too_many_threads, buffers, 2, &n, 1, &error));
  EXPECT_THAT(error, StartsWith("cuLaunchKernel failed: CUDA_ERROR_INVALID_VALUE"));
  EXPECT_TRUE(gpu()->synchronize(&error)) << error;

  static const char kBadPtx[] = ".version 7.0\n.target sm_50\nthis is not ptx\n";
  dsc_cuda_image bad_images[] = {{50, 1, kBadPtx, sizeof kBadPtx}};
  dsc_cuda_module bad = {"bad", 1, bad_images, "", nullptr};
  EXPECT_FALSE(gpu()->launch(&bad, "scale2", shape, buffers, 2, &n, 1, &error));
  EXPECT_THAT(error, StartsWith("cannot load module 'bad' (compute_50 (PTX)) on sm_"));
  EXPECT_THAT(error, HasSubstr("cuModuleLoadData failed: CUDA_ERROR_INVALID_PTX"));
  dsc_cuda_image future_images[] = {{990, 0, kBadPtx, sizeof kBadPtx}};
  dsc_cuda_module future = {"future", 1, future_images, "", nullptr};
  EXPECT_FALSE(gpu()->launch(&future, "scale2", shape, buffers, 2, &n, 1, &error));
  EXPECT_THAT(error, HasSubstr("module 'future' has no image for sm_"));
  gpu()->release(dx);
  gpu()->release(dy);
  gpu()->release(dr);
}

TEST(CudaGpu, SgemmMatchesTheCpu) {
  SKIP_WITHOUT_GPU();
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> d(-1, 1);
  struct Case {
    int64_t batch, m, n, k;
    bool broadcast_b, trans_b;
  };
  for (Case c : {Case{1, 5, 7, 11, false, false}, Case{3, 17, 33, 65, false, true},
                 Case{4, 128, 96, 64, true, false}, Case{2, 1, 768, 768, true, true},
                 Case{2, 3, 4, 0, false, false}}) {
    SCOPED_TRACE(std::to_string(c.batch) + "x" + std::to_string(c.m) + "x" + std::to_string(c.n) +
                 "x" + std::to_string(c.k));
    const int64_t as = c.m * c.k, bs = c.broadcast_b ? 0 : c.k * c.n;
    std::vector<float> a(static_cast<size_t>(std::max<int64_t>(c.batch * as, 1)));
    std::vector<float> b(static_cast<size_t>(std::max<int64_t>(bs * (c.batch - 1) + c.k * c.n, 1)));
    for (float& v : a)
      v = d(rng);
    for (float& v : b)
      v = d(rng);
    std::vector<float> want(static_cast<size_t>(c.batch * c.m * c.n));
    for (int64_t i = 0; i < c.batch; ++i)
      sgemm_loops(a.data() + i * as, b.data() + i * bs, want.data() + i * c.m * c.n, c.m, c.n, c.k,
                  c.trans_b);
    float* da = upload(a);
    float* db = upload(b);
    std::vector<float> poison(want.size(), NAN);
    float* dc = upload(poison);
    std::string error;
    ASSERT_TRUE(
        gpu()->sgemm(da, db, dc, dense_product(c.batch, c.m, c.n, c.k, as, bs, c.trans_b), &error))
        << error;
    std::vector<float> got = download(dc, want.size());
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_NEAR(got[i], want[i], 1e-4) << i;
    gpu()->release(da);
    gpu()->release(db);
    gpu()->release(dc);
  }
}

// cuBLASLt's bias and activations on a batch of products: the CPU's product, then the
// emulator's epilogue loops.
TEST(CudaGpu, SgemmEpilogueMatchesTheLoops) {
  SKIP_WITHOUT_GPU();
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> d(-1, 1);
  struct Case {
    int64_t batch, m, n, k;
    bool trans_b;
  };
  for (Case c : {Case{1, 7, 13, 5, false}, Case{3, 65, 129, 64, true}, Case{1, 1, 3072, 768, false},
                 Case{2, 128, 768, 768, false}}) {
    for (cuda::GemmEpilogue e : {cuda::GemmEpilogue::Bias, cuda::GemmEpilogue::BiasRelu,
                                 cuda::GemmEpilogue::BiasGeluTanh}) {
      SCOPED_TRACE(std::to_string(c.batch) + "x" + std::to_string(c.m) + "x" + std::to_string(c.n) +
                   "x" + std::to_string(c.k) + " epilogue " + std::to_string(static_cast<int>(e)));
      const dsc_strided_product p = dense_product(c.batch, c.m, c.n, c.k, c.m * c.k, 0, c.trans_b);
      std::vector<float> a(static_cast<size_t>(c.batch * c.m * c.k)),
          b(static_cast<size_t>(c.k * c.n)), bias(static_cast<size_t>(c.n));
      for (std::vector<float>* v : {&a, &b, &bias})
        for (float& x : *v)
          x = d(rng);
      std::vector<float> want(static_cast<size_t>(c.batch * c.m * c.n));
      for (int64_t i = 0; i < c.batch; ++i)
        sgemm_loops(a.data() + i * c.m * c.k, b.data(), want.data() + i * c.m * c.n, c.m, c.n, c.k,
                    c.trans_b);
      cuda::apply_epilogue_loops(p, e, bias.data(), want.data());
      float* da = upload(a);
      float* db = upload(b);
      float* dbias = upload(bias);
      float* dc = upload(std::vector<float>(want.size(), NAN));
      std::string error;
      ASSERT_TRUE(gpu()->sgemm_epilogue(da, db, dbias, dc, p, e, &error)) << error;
      std::vector<float> got = download(dc, want.size());
      for (size_t i = 0; i < want.size(); ++i)
        ASSERT_NEAR(got[i], want[i], 1e-4 * std::max(1.0f, std::fabs(want[i]))) << i;
      for (float* ptr : {da, db, dbias, dc})
        gpu()->release(ptr);
    }
  }
}

// What cuBLASLt's ReLU makes of NaN decides whether fuse may hand it nn.relu (dsc's maximum
// keeps NaN; VendorEpilogue.h assumes cuBLASLt's gives 0, so it does not): printed, and either
// is accepted, so that the first GPU run settles it.
TEST(CudaGpu, CublasLtReluOfNan) {
  SKIP_WITHOUT_GPU();
  const dsc_strided_product p = dense_product(1, 4, 8, 4, 0, 0, false);
  std::vector<float> a(16, 1.0f), b(32, 1.0f), bias(8, 0.0f);
  bias[3] = NAN;
  float* da = upload(a);
  float* db = upload(b);
  float* dbias = upload(bias);
  float* dc = upload(std::vector<float>(32, -1.0f));
  std::string error;
  ASSERT_TRUE(gpu()->sgemm_epilogue(da, db, dbias, dc, p, cuda::GemmEpilogue::BiasRelu, &error))
      << error;
  const std::vector<float> got = download(dc, 32);
  std::printf("cuBLASLt's ReLU of NaN gives %g\n", got[3]);
  EXPECT_TRUE(std::isnan(got[3]) || got[3] == 0.0f) << got[3];
  EXPECT_EQ(got[0], 4.0f);
  for (float* ptr : {da, db, dbias, dc})
    gpu()->release(ptr);
}

// cuDNN's convolution (its heuristics' algorithm, its workspace from the device's allocator)
// against the emulator's loops over the same plan.
TEST(CudaGpu, Conv2dMatchesTheLoops) {
  SKIP_WITHOUT_GPU();
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> d(-1, 1);
  auto out = [](int64_t extent, int64_t pad, int64_t dilation, int64_t window, int64_t stride) {
    return (extent + 2 * pad - dilation * (window - 1) - 1) / stride + 1;
  };
  // n, c, h, w, o, kh, kw, groups, then stride, padding and dilation, each the same along
  // both dims.
  struct Case {
    int64_t n, c, h, w, o, kh, kw, groups, stride, pad, dilation;
  };
  for (Case k :
       {Case{1, 3, 7, 5, 4, 3, 2, 1, 1, 1, 1}, Case{2, 16, 33, 17, 16, 3, 3, 16, 2, 1, 1},
        Case{3, 8, 13, 13, 12, 3, 3, 2, 1, 2, 2}, Case{4, 64, 56, 56, 64, 1, 1, 1, 1, 0, 1},
        Case{1, 3, 224, 224, 64, 7, 7, 1, 2, 3, 1}}) {
    const int64_t oh = out(k.h, k.pad, k.dilation, k.kh, k.stride);
    const int64_t ow = out(k.w, k.pad, k.dilation, k.kw, k.stride);
    const cuda::Conv2d conv{k.n,   k.c,   k.h,        k.w,       k.o,      k.kh,
                            k.kw,  oh,    ow,         k.groups,  k.stride, k.stride,
                            k.pad, k.pad, k.dilation, k.dilation};
    SCOPED_TRACE(std::to_string(k.n) + "x" + std::to_string(k.c) + "x" + std::to_string(k.h) + "x" +
                 std::to_string(k.w) + " * " + std::to_string(k.o) + "x" + std::to_string(k.kh) +
                 "x" + std::to_string(k.kw));
    cuda::Conv2dPlan plan;
    std::string error;
    ASSERT_TRUE(cuda::plan_conv2d(conv, &plan, &error)) << error;
    std::vector<float> x(static_cast<size_t>(k.n * k.c * k.h * k.w));
    std::vector<float> w(static_cast<size_t>(k.o * (k.c / k.groups) * k.kh * k.kw));
    for (float& v : x)
      v = d(rng);
    for (float& v : w)
      v = d(rng);
    std::vector<float> want(static_cast<size_t>(k.n * k.o * conv.oh * conv.ow));
    cuda::conv2d_loops(plan, x.data(), w.data(), want.data());
    float* dx = upload(x);
    float* dw = upload(w);
    float* dy = upload(std::vector<float>(want.size(), NAN));
    ASSERT_TRUE(gpu()->conv2d(dx, dw, dy, conv, &error)) << error;
    std::vector<float> got = download(dy, want.size());
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_NEAR(got[i], want[i], 1e-4 * std::max(1.0f, std::fabs(want[i]))) << i;
    gpu()->release(dx);
    gpu()->release(dw);
    gpu()->release(dy);
  }
}

// A CUDA function as `dscc build --target=cuda` emits one: y = 2 * x through the arena.
int32_t host_scale2(dsc_call* call, const DLTensor* const* inputs) {
  if (dsc_rt_check_input(call, 0, inputs[0], kDLFloat, 32, 1)) return 1;
  const int64_t n = inputs[0]->shape[0];
  void* arena = dsc_rt_arena(call, n * 4);
  if (!arena) return 1;
  void* y = dsc_rt_output(call, 0, kDLFloat, 32, 1, &n);
  if (!y) return 1;
  if (dsc_rt_cuda_copy(call, arena, dsc_rt_input_data(inputs[0]), n * 4)) return 1;
  void* buffers[] = {arena, y};
  return dsc_rt_cuda_launch(call, &g_module, "scale2", (n + 255) / 256, 1, 1, 256, 1, 1, 0, buffers,
                            2, &n, 1);
}

int32_t host_missing_kernel(dsc_call* call, const DLTensor* const* inputs) {
  const int64_t n = inputs[0]->shape[0];
  void* y = dsc_rt_output(call, 0, kDLFloat, 32, 1, &n);
  if (!y) return 1;
  void* buffers[] = {y, y};
  return dsc_rt_cuda_launch(call, &g_module, "layer_add_0", 1, 1, 1, 32, 1, 1, 0, buffers, 2, &n,
                            1);
}

FunctionInfo scale_info() {
  FunctionInfo f;
  f.name = "layer";
  f.host_symbol = "host_scale2";
  f.device = DeviceKind::Cuda;
  f.params = {TensorInfo{"x", "f32", {"N"}}};
  f.outputs = {TensorInfo{"output0", "f32", {"N"}}};
  f.arena_bytes = "N*4";
  f.peak_bytes = "N*4";
  return f;
}

TEST(CudaGpu, CallHostFunction) {
  SKIP_WITHOUT_GPU();
  FunctionInfo info = scale_info();
  for (int64_t n : {1, 1000, 5000, 300}) {
    Tensor host = Tensor::zeros(dl_float(32), {n});
    for (int64_t i = 0; i < n; ++i)
      host.data_as<float>()[i] = static_cast<float>(i) - 7.5f;
    std::string error;
    std::optional<Tensor> x = cuda::to_device(host, &error);
    ASSERT_TRUE(x) << error;
    EXPECT_EQ(x->device().device_type, kDLCUDA);
    DLTensor view = x->dl_view();
    EXPECT_EQ(view.device.device_type, kDLCUDA);
    CallResult r = call_host_function(info, host_scale2, {&view});
    ASSERT_TRUE(r.ok()) << r.error;
    ASSERT_EQ(r.outputs.size(), 1u);
    EXPECT_EQ(r.outputs[0].device().device_type, kDLCUDA);
    std::optional<Tensor> y = cuda::to_host(r.outputs[0], &error);
    ASSERT_TRUE(y) << error;
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(y->data_as<float>()[i], 2 * host.data_as<float>()[i]) << i;
    // A host tensor given to a CUDA function.
    DLTensor host_view = host.dl_view();
    CallResult wrong = call_host_function(info, host_scale2, {&host_view});
    EXPECT_EQ(wrong.error, "input 'x' is on cpu:0; expected a CUDA tensor (f32[N])");
  }
  Tensor host = Tensor::zeros(dl_float(32), {10});
  std::string error;
  std::optional<Tensor> x = cuda::to_device(host, &error);
  ASSERT_TRUE(x) << error;
  DLTensor view = x->dl_view();
  CallResult r = call_host_function(info, host_missing_kernel, {&view});
  EXPECT_THAT(r.error, StartsWith("kernel 'layer_add_0' of 'layer': module 'test_kernels' "
                                  "(compute_50 (PTX)) has no such kernel"));
}

// Calls from several threads at once: each has its own stream, cuBLAS handle and arena, and
// the module is loaded once.
TEST(CudaGpu, ConcurrentCalls) {
  SKIP_WITHOUT_GPU();
  FunctionInfo info = scale_info();
  std::vector<std::string> failures(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < 25 && failures[t].empty(); ++round) {
        const int64_t n = 100 + 37 * t + round;
        Tensor host = Tensor::zeros(dl_float(32), {n});
        for (int64_t i = 0; i < n; ++i)
          host.data_as<float>()[i] = static_cast<float>(i + t);
        std::string error;
        std::optional<Tensor> x = cuda::to_device(host, &error);
        if (!x) {
          failures[t] = error;
          break;
        }
        DLTensor view = x->dl_view();
        CallResult r = call_host_function(info, host_scale2, {&view});
        std::optional<Tensor> y = r.ok() ? cuda::to_host(r.outputs[0], &error) : std::nullopt;
        if (!y) {
          failures[t] = r.ok() ? error : r.error;
          break;
        }
        for (int64_t i = 0; i < n; ++i)
          if (y->data_as<float>()[i] != 2 * host.data_as<float>()[i]) {
            failures[t] = "wrong value at " + std::to_string(i);
            break;
          }
        // A product on the same thread's stream and handle.
        std::vector<float> a = iota(static_cast<size_t>(4 * n)),
                           b = iota(static_cast<size_t>(n * 3));
        float* da = upload(a);
        float* db = upload(b);
        auto* dc = static_cast<float*>(gpu()->allocate(4 * 3 * 4, "c", &error));
        if (!gpu()->sgemm(da, db, dc, dense_product(1, 4, 3, n, 0, 0, false), &error))
          failures[t] = error;
        std::vector<float> got = download(dc, 12), want(12);
        sgemm_loops(a.data(), b.data(), want.data(), 4, 3, n, false);
        for (size_t i = 0; i < 12 && failures[t].empty(); ++i)
          if (std::fabs(got[i] - want[i]) > 1e-3f * std::max(1.0f, std::fabs(want[i])))
            failures[t] = "wrong product at " + std::to_string(i);
        gpu()->release(da);
        gpu()->release(db);
        gpu()->release(dc);
      }
    });
  for (std::thread& th : threads)
    th.join();
  for (const std::string& f : failures)
    EXPECT_EQ(f, "");
}

TEST(CudaGpu, CApiCopies) {
  SKIP_WITHOUT_GPU();
  float data[5] = {1, 2, 3, 4, 5};
  int64_t shape[1] = {4};
  DLTensor t{};
  t.data = data;
  t.byte_offset = 4;
  t.device = DLDevice{kDLCPU, 0};
  t.ndim = 1;
  t.dtype = DLDataType{kDLFloat, 32, 1};
  t.shape = shape;
  DLManagedTensor* on_gpu = dsc_tensor_copy(&t, kDLCUDA);
  ASSERT_NE(on_gpu, nullptr) << dsc_last_error();
  EXPECT_EQ(on_gpu->dl_tensor.device.device_type, kDLCUDA);
  DLManagedTensor* again = dsc_tensor_copy(&on_gpu->dl_tensor, kDLCUDA);
  ASSERT_NE(again, nullptr) << dsc_last_error();
  DLManagedTensor* back = dsc_tensor_copy(&again->dl_tensor, kDLCPU);
  ASSERT_NE(back, nullptr) << dsc_last_error();
  EXPECT_EQ(back->dl_tensor.device.device_type, kDLCPU);
  const float* b = static_cast<const float*>(back->dl_tensor.data);
  EXPECT_EQ(std::vector<float>(b, b + 4), (std::vector<float>{2, 3, 4, 5}));
  on_gpu->deleter(on_gpu);
  again->deleter(again);
  back->deleter(back);
}

} // namespace
} // namespace dsc::runtime
