#include "runtime/cuda/Cudnn.h"

#include <array>
#include <cstring>
#include <limits>
#include <map>
#include <utility>

#include "runtime/cuda/VendorLibrary.h"

namespace dsc::runtime::cuda {

namespace {

using cudnnHandle = struct cudnnContext*;
using cudnnTensorDescriptor = struct cudnnTensorStruct*;
using cudnnFilterDescriptor = struct cudnnFilterStruct*;
using cudnnConvolutionDescriptor = struct cudnnConvolutionStruct*;
using cudnnStatus = int;

// cudnn_graph.h's and cudnn_cnn.h's enum values.
constexpr cudnnStatus kCudnnSuccess = 0;
constexpr int kCudnnDataFloat = 0;
constexpr int kCudnnTensorNchw = 0;
constexpr int kCudnnCrossCorrelation = 1;
constexpr int kCudnnFmaMath = 3;
constexpr int kCudnnDefaultMath = 0;
constexpr int kForwardAlgorithms = 8; // CUDNN_CONVOLUTION_FWD_ALGO_COUNT

// cudnnConvolutionFwdAlgoPerf_t.
struct AlgorithmPerf {
  int algorithm;
  cudnnStatus status;
  float time;
  size_t memory;
  int determinism;
  int math_type;
  int reserved[3];
};

constexpr int64_t kIntMax = std::numeric_limits<int>::max();

bool fail(std::string* error, std::string message) {
  if (error) *error = std::move(message);
  return false;
}

} // namespace

bool plan_conv2d(const Conv2d& p, Conv2dPlan* plan, std::string* error) {
  *plan = Conv2dPlan{};
  const std::pair<const char*, int64_t> sizes[] = {
      {"the batch", p.n},         {"the input channels", p.c},   {"the input height", p.h},
      {"the input width", p.w},   {"the output channels", p.o},  {"the window height", p.kh},
      {"the window width", p.kw}, {"the result's height", p.oh}, {"the result's width", p.ow},
      {"the padding", p.pad_h},   {"the padding", p.pad_w}};
  for (const auto& [name, value] : sizes)
    if (value < 0)
      return fail(error, std::string(name) + " is negative (" + std::to_string(value) + ")");
  const std::pair<const char*, int64_t> positive[] = {
      {"groups", p.groups},           {"the stride", p.stride_h},     {"the stride", p.stride_w},
      {"the dilation", p.dilation_h}, {"the dilation", p.dilation_w}, {"the window height", p.kh},
      {"the window width", p.kw}};
  for (const auto& [name, value] : positive)
    if (value < 1)
      return fail(error, std::string(name) + " must be at least 1, not " + std::to_string(value));
  if (p.c % p.groups != 0 || p.o % p.groups != 0)
    return fail(error, std::to_string(p.c) + " input and " + std::to_string(p.o) +
                           " output channels do not split into " + std::to_string(p.groups) +
                           " groups");
  // The window's positions along a dim: (extent + 2 pad - dilation (window - 1) - 1) / stride + 1.
  auto fits = [&](const char* dim, int64_t extent, int64_t pad, int64_t dilation, int64_t window,
                  int64_t stride, int64_t result) {
    const int64_t span = extent + 2 * pad - dilation * (window - 1) - 1;
    if (span < 0)
      return fail(error, std::string("the window's ") + dim + " " +
                             std::to_string(dilation * (window - 1) + 1) +
                             " is more than the padded input's " +
                             std::to_string(extent + 2 * pad));
    if (span / stride + 1 != result)
      return fail(error, std::string("the result's ") + dim + " is " + std::to_string(result) +
                             ", but the window fits " + std::to_string(span / stride + 1) +
                             " times");
    return true;
  };
  if (!fits("height", p.h, p.pad_h, p.dilation_h, p.kh, p.stride_h, p.oh) ||
      !fits("width", p.w, p.pad_w, p.dilation_w, p.kw, p.stride_w, p.ow))
    return false;
  const int64_t values[] = {p.n,     p.c,     p.h,          p.w,         p.o,        p.kh,
                            p.kw,    p.oh,    p.ow,         p.groups,    p.stride_h, p.stride_w,
                            p.pad_h, p.pad_w, p.dilation_h, p.dilation_w};
  for (int64_t v : values)
    if (v > kIntMax) return fail(error, std::to_string(v) + " does not fit cuDNN's 32-bit int");
  // Each tensor's largest stride (an image, a filter's input channels, a result's image).
  const int64_t images[] = {p.c * p.h * p.w, (p.c / p.groups) * p.kh * p.kw, p.o * p.oh * p.ow};
  for (int64_t v : images)
    if (v > kIntMax)
      return fail(error, "an image of " + std::to_string(v) +
                             " elements does not fit cuDNN's 32-bit strides");
  Conv2dPlan& q = *plan;
  q.n = static_cast<int>(p.n), q.c = static_cast<int>(p.c), q.h = static_cast<int>(p.h);
  q.w = static_cast<int>(p.w), q.o = static_cast<int>(p.o), q.kh = static_cast<int>(p.kh);
  q.kw = static_cast<int>(p.kw), q.oh = static_cast<int>(p.oh), q.ow = static_cast<int>(p.ow);
  q.groups = static_cast<int>(p.groups);
  q.stride_h = static_cast<int>(p.stride_h), q.stride_w = static_cast<int>(p.stride_w);
  q.pad_h = static_cast<int>(p.pad_h), q.pad_w = static_cast<int>(p.pad_w);
  q.dilation_h = static_cast<int>(p.dilation_h), q.dilation_w = static_cast<int>(p.dilation_w);
  if (p.n == 0 || p.o == 0 || p.oh == 0 || p.ow == 0) {
    q.action = Conv2dPlan::Action::Nothing;
  } else if (p.c == 0) {
    q.action = Conv2dPlan::Action::Zero;
    q.zero_floats = p.n * p.o * p.oh * p.ow;
  } else {
    q.action = Conv2dPlan::Action::Convolve;
  }
  return true;
}

void conv2d_loops(const Conv2dPlan& p, const float* x, const float* w, float* y) {
  if (p.action == Conv2dPlan::Action::Nothing) return;
  const int64_t results = int64_t{p.n} * p.o * p.oh * p.ow;
  if (p.action == Conv2dPlan::Action::Zero) {
    std::memset(y, 0, static_cast<size_t>(results) * sizeof(float));
    return;
  }
  const int in_group = p.group_channels();
  const int out_group = p.o / p.groups;
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t oc = 0; oc < p.o; ++oc) {
      const int64_t first_channel = (oc / out_group) * in_group;
      for (int64_t oh = 0; oh < p.oh; ++oh)
        for (int64_t ow = 0; ow < p.ow; ++ow) {
          float sum = 0.0f;
          for (int64_t ic = 0; ic < in_group; ++ic)
            for (int64_t kh = 0; kh < p.kh; ++kh) {
              const int64_t ih = oh * p.stride_h - p.pad_h + kh * p.dilation_h;
              if (ih < 0 || ih >= p.h) continue;
              for (int64_t kw = 0; kw < p.kw; ++kw) {
                const int64_t iw = ow * p.stride_w - p.pad_w + kw * p.dilation_w;
                if (iw < 0 || iw >= p.w) continue;
                sum += x[((n * p.c + first_channel + ic) * p.h + ih) * p.w + iw] *
                       w[((oc * in_group + ic) * p.kh + kh) * p.kw + kw];
              }
            }
          y[((n * p.o + oc) * p.oh + oh) * p.ow + ow] = sum;
        }
    }
}

struct Cudnn::Api {
  cudnnStatus (*create)(cudnnHandle* handle);
  cudnnStatus (*destroy)(cudnnHandle handle);
  cudnnStatus (*set_stream)(cudnnHandle handle, CUstream stream);
  const char* (*error_string)(cudnnStatus status);
  cudnnStatus (*create_tensor)(cudnnTensorDescriptor* desc);
  cudnnStatus (*set_tensor)(cudnnTensorDescriptor desc, int format, int dtype, int n, int c, int h,
                            int w);
  cudnnStatus (*destroy_tensor)(cudnnTensorDescriptor desc);
  cudnnStatus (*create_filter)(cudnnFilterDescriptor* desc);
  cudnnStatus (*set_filter)(cudnnFilterDescriptor desc, int dtype, int format, int k, int c, int h,
                            int w);
  cudnnStatus (*destroy_filter)(cudnnFilterDescriptor desc);
  cudnnStatus (*create_convolution)(cudnnConvolutionDescriptor* desc);
  cudnnStatus (*set_convolution)(cudnnConvolutionDescriptor desc, int pad_h, int pad_w, int u,
                                 int v, int dilation_h, int dilation_w, int mode, int compute);
  cudnnStatus (*set_group_count)(cudnnConvolutionDescriptor desc, int groups);
  cudnnStatus (*set_math_type)(cudnnConvolutionDescriptor desc, int math);
  cudnnStatus (*destroy_convolution)(cudnnConvolutionDescriptor desc);
  cudnnStatus (*forward_algorithm)(cudnnHandle handle, cudnnTensorDescriptor x,
                                   cudnnFilterDescriptor w, cudnnConvolutionDescriptor conv,
                                   cudnnTensorDescriptor y, int requested, int* returned,
                                   AlgorithmPerf* results);
  cudnnStatus (*workspace_size)(cudnnHandle handle, cudnnTensorDescriptor x,
                                cudnnFilterDescriptor w, cudnnConvolutionDescriptor conv,
                                cudnnTensorDescriptor y, int algorithm, size_t* bytes);
  cudnnStatus (*forward)(cudnnHandle handle, const void* alpha, cudnnTensorDescriptor x_desc,
                         const void* x, cudnnFilterDescriptor w_desc, const void* w,
                         cudnnConvolutionDescriptor conv, int algorithm, void* workspace,
                         size_t workspace_bytes, const void* beta, cudnnTensorDescriptor y_desc,
                         void* y);
  std::string library;

  // "cudnnCreate failed: CUDNN_STATUS_NOT_INITIALIZED".
  std::string failed(const char* call, cudnnStatus status) const {
    const char* text = error_string ? error_string(status) : nullptr;
    return std::string(call) + " failed: " +
           (text && *text ? std::string(text) : "cudnnStatus " + std::to_string(status));
  }
};

namespace {

// The calling thread's handle, descriptors and choices; destroyed when the thread ends.
struct ThreadState {
  const Cudnn::Api* api = nullptr;
  cudnnHandle handle = nullptr;
  CUstream stream = nullptr;
  Cudnn::Descriptors descriptors;
  std::map<std::array<int, 16>, Cudnn::Choice> choices;
  ~ThreadState() {
    if (handle) api->destroy(handle);
  }
};
thread_local ThreadState t_state;

std::array<int, 16> key_of(const Conv2dPlan& p) {
  return {p.n,  p.c,      p.h,        p.w,        p.o,     p.kh,    p.kw,         p.oh,
          p.ow, p.groups, p.stride_h, p.stride_w, p.pad_h, p.pad_w, p.dilation_h, p.dilation_w};
}

// The thread's state with its handle bound to `stream`.
ThreadState* bind(const Cudnn::Api* api, CUstream stream, std::string* error) {
  ThreadState& t = t_state;
  if (!t.handle) {
    t.api = api;
    cudnnStatus s = api->create(&t.handle);
    if (s != kCudnnSuccess) {
      t.handle = nullptr;
      fail(error, api->failed("cudnnCreate", s));
      return nullptr;
    }
    t.stream = nullptr;
  }
  if (t.stream != stream || !t.stream) {
    cudnnStatus s = api->set_stream(t.handle, stream);
    if (s != kCudnnSuccess) {
      fail(error, api->failed("cudnnSetStream", s));
      return nullptr;
    }
    t.stream = stream;
  }
  return &t;
}

struct Loaded {
  Cudnn::Api api{};
  std::string error;
};

Loaded load_api() {
  Loaded out;
  VendorLibrary library({"libcudnn.so.9", "/usr/local/cuda/lib64/libcudnn.so.9", "libcudnn.so"},
                        "cuDNN", "put libcudnn.so.9 on the library path");
  Cudnn::Api& a = out.api;
  library.find("cudnnCreate", &a.create);
  library.find("cudnnDestroy", &a.destroy);
  library.find("cudnnSetStream", &a.set_stream);
  library.find("cudnnGetErrorString", &a.error_string);
  library.find("cudnnCreateTensorDescriptor", &a.create_tensor);
  library.find("cudnnSetTensor4dDescriptor", &a.set_tensor);
  library.find("cudnnDestroyTensorDescriptor", &a.destroy_tensor);
  library.find("cudnnCreateFilterDescriptor", &a.create_filter);
  library.find("cudnnSetFilter4dDescriptor", &a.set_filter);
  library.find("cudnnDestroyFilterDescriptor", &a.destroy_filter);
  library.find("cudnnCreateConvolutionDescriptor", &a.create_convolution);
  library.find("cudnnSetConvolution2dDescriptor", &a.set_convolution);
  library.find("cudnnSetConvolutionGroupCount", &a.set_group_count);
  library.find("cudnnSetConvolutionMathType", &a.set_math_type);
  library.find("cudnnDestroyConvolutionDescriptor", &a.destroy_convolution);
  library.find("cudnnGetConvolutionForwardAlgorithm_v7", &a.forward_algorithm);
  library.find("cudnnGetConvolutionForwardWorkspaceSize", &a.workspace_size);
  library.find("cudnnConvolutionForward", &a.forward);
  a.library = library.name();
  out.error = library.error();
  return out;
}

} // namespace

const Cudnn* Cudnn::load(std::string* error) {
  static const Loaded* loaded = new Loaded(load_api()); // never freed, as the library
  static const Cudnn* cudnn = loaded->error.empty() ? new Cudnn(&loaded->api) : nullptr;
  if (!cudnn && error) *error = loaded->error;
  return cudnn;
}

Cudnn::Descriptors::~Descriptors() {
  if (conv) api->destroy_convolution(conv);
  if (w) api->destroy_filter(w);
  if (y) api->destroy_tensor(y);
  if (x) api->destroy_tensor(x);
}

bool Cudnn::describe(const Conv2dPlan& p, Descriptors* out, std::string* error) const {
  if (!out->api) {
    out->api = api_;
    const std::pair<const char*, cudnnStatus> made[] = {
        {"cudnnCreateTensorDescriptor", api_->create_tensor(&out->x)},
        {"cudnnCreateTensorDescriptor", api_->create_tensor(&out->y)},
        {"cudnnCreateFilterDescriptor", api_->create_filter(&out->w)},
        {"cudnnCreateConvolutionDescriptor", api_->create_convolution(&out->conv)}};
    for (const auto& [call, status] : made)
      if (status != kCudnnSuccess) return fail(error, api_->failed(call, status));
  }
  const std::pair<const char*, cudnnStatus> set[] = {
      {"cudnnSetTensor4dDescriptor",
       api_->set_tensor(out->x, kCudnnTensorNchw, kCudnnDataFloat, p.n, p.c, p.h, p.w)},
      {"cudnnSetFilter4dDescriptor", api_->set_filter(out->w, kCudnnDataFloat, kCudnnTensorNchw,
                                                      p.o, p.group_channels(), p.kh, p.kw)},
      {"cudnnSetTensor4dDescriptor",
       api_->set_tensor(out->y, kCudnnTensorNchw, kCudnnDataFloat, p.n, p.o, p.oh, p.ow)},
      {"cudnnSetConvolution2dDescriptor",
       api_->set_convolution(out->conv, p.pad_h, p.pad_w, p.stride_h, p.stride_w, p.dilation_h,
                             p.dilation_w, kCudnnCrossCorrelation, kCudnnDataFloat)},
      {"cudnnSetConvolutionGroupCount", api_->set_group_count(out->conv, p.groups)},
      {"cudnnSetConvolutionMathType", api_->set_math_type(out->conv, kCudnnFmaMath)}};
  for (const auto& [call, status] : set)
    if (status != kCudnnSuccess) return fail(error, api_->failed(call, status));
  return true;
}

bool Cudnn::choose(CUstream stream, const Conv2dPlan& plan, Choice* choice,
                   std::string* error) const {
  ThreadState* t = bind(api_, stream, error);
  if (!t || !describe(plan, &t->descriptors, error)) return false;
  const Descriptors& d = t->descriptors;
  const std::array<int, 16> key = key_of(plan);
  if (auto it = t->choices.find(key); it != t->choices.end()) {
    *choice = it->second;
    return true;
  }
  AlgorithmPerf results[kForwardAlgorithms] = {};
  int returned = 0;
  cudnnStatus s = api_->forward_algorithm(t->handle, d.x, d.w, d.conv, d.y, kForwardAlgorithms,
                                          &returned, results);
  if (s != kCudnnSuccess)
    return fail(error, api_->failed("cudnnGetConvolutionForwardAlgorithm_v7", s));
  const AlgorithmPerf* best = nullptr;
  for (int i = 0; i < returned && !best; ++i)
    if (results[i].status == kCudnnSuccess &&
        (results[i].math_type == kCudnnFmaMath || results[i].math_type == kCudnnDefaultMath))
      best = &results[i];
  if (!best)
    return fail(error, "cuDNN offers no algorithm for this convolution in FP32 (FMA) math");
  size_t bytes = 0;
  s = api_->workspace_size(t->handle, d.x, d.w, d.conv, d.y, best->algorithm, &bytes);
  if (s != kCudnnSuccess)
    return fail(error, api_->failed("cudnnGetConvolutionForwardWorkspaceSize", s));
  *choice = Choice{best->algorithm, bytes};
  t->choices.emplace(key, *choice);
  return true;
}

bool Cudnn::forward(const Choice& choice, const float* x, const float* w, float* y,
                    void* workspace, std::string* error) const {
  const ThreadState& t = t_state; // as choose() left it
  const Descriptors& d = t.descriptors;
  const float alpha = 1.0f, beta = 0.0f;
  cudnnStatus s = api_->forward(t.handle, &alpha, d.x, x, d.w, w, d.conv, choice.algorithm,
                                workspace, choice.workspace_bytes, &beta, d.y, y);
  if (s != kCudnnSuccess) return fail(error, api_->failed("cudnnConvolutionForward", s));
  return true;
}

} // namespace dsc::runtime::cuda
