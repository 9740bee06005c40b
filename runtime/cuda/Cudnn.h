#pragma once
// Library routine "cudnn.conv2d" on the GPU: a 2-D convolution (NCHW input, OIHW weights, NCHW
// result, all dense) by cuDNN's legacy convolution API (libcudnn.so.9, loaded with dlopen on
// first use; deprecated in cuDNN 9 but complete, and far shorter than the graph API for one
// fixed operation).
//
// - Math: the convolution descriptor asks for CUDNN_FMA_MATH, so no TF32 tensor cores and
//   results agree with the CPU's to FP32 rounding.
// - Algorithm: the first of cuDNN's heuristics (cudnnGetConvolutionForwardAlgorithm_v7) that
//   runs in FMA math, remembered per thread and shape; its workspace comes from the device's
//   stream-ordered allocator for the call (GpuDevice::conv2d).
// - Sizes: cuDNN's are int, and so is each tensor's largest stride (c*h*w); a convolution whose
//   sizes do not fit is an error, not a silent truncation.
//
// The plan (plan_conv2d) checks what the host passed against the convolution's definition
// (the result's height and width those of the window) before cuDNN sees it; the block
// emulator runs the same plan by loops (conv2d_loops), so what cuDNN would refuse fails there
// too.

#include <cstdint>
#include <string>

#include "runtime/cuda/CudaDriver.h"
#include "runtime/cuda/Device.h"

// cuDNN's opaque descriptor types, so that a test may read the descriptors back with cuDNN's
// own functions (CudaVendorAbiTest).
struct cudnnTensorStruct;
struct cudnnFilterStruct;
struct cudnnConvolutionStruct;

namespace dsc::runtime::cuda {

struct Conv2dPlan {
  enum class Action : uint8_t {
    Nothing, // an empty result
    Zero,    // no input channels: the result is zeroed (zero_floats elements)
    Convolve,
  };
  Action action = Action::Nothing;
  int64_t zero_floats = 0;
  // cuDNN's ints: the input (n, c, h, w), the weights (o, c / groups, kh, kw), the result
  // (n, o, oh, ow).
  int n = 0, c = 0, h = 0, w = 0, o = 0, kh = 0, kw = 0, oh = 0, ow = 0;
  int groups = 1, stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dilation_h = 1, dilation_w = 1;

  // The input channels each output channel reads.
  int group_channels() const { return c / groups; }
};

// The plan for `conv`, HostABI.h's scalars of dsc_rt_cudnn_conv2d_f32. False with *error set
// when they do not describe a convolution ("the result's height is 5, but the window fits 6
// times") or do not fit cuDNN's ints. Errors do not name the routine; the caller does.
bool plan_conv2d(const Conv2d& conv, Conv2dPlan* plan, std::string* error);

// The plan's convolution, by loops on the host, as cuDNN defines it (CUDNN_CROSS_CORRELATION:
// the window is not flipped; padding reads zeros), accumulated in f32: the emulator's.
void conv2d_loops(const Conv2dPlan& plan, const float* x, const float* w, float* y);

class Cudnn {
public:
  // libcudnn.so.9 (on the library path, then in /usr/local/cuda/lib64), loaded once and never
  // unloaded. Null with *error set ("cuDNN cannot be loaded: tried ...").
  static const Cudnn* load(std::string* error);

  struct Api; // the entry points (Cudnn.cpp)

  // One convolution's descriptors, which cuDNN makes and sets on the host, with no device: the
  // f32 NCHW input and result, the f32 OIHW filter of one group's input channels, and the
  // convolution (padding, stride, dilation, cross-correlation in f32, groups, FMA math).
  // Destroyed with the object.
  struct Descriptors {
    Descriptors() = default;
    Descriptors(const Descriptors&) = delete;
    Descriptors& operator=(const Descriptors&) = delete;
    ~Descriptors();
    const Api* api = nullptr;
    cudnnTensorStruct *x = nullptr, *y = nullptr;
    cudnnFilterStruct* w = nullptr;
    cudnnConvolutionStruct* conv = nullptr;
  };
  // Sets `out`'s descriptors to a Convolve plan, making them on first use.
  bool describe(const Conv2dPlan& plan, Descriptors* out, std::string* error) const;

  struct Choice {
    int algorithm = 0;
    uint64_t workspace_bytes = 0;
  };
  // The algorithm for a Convolve plan and the workspace it needs, on the calling thread's
  // handle (made on first use, bound to `stream`, destroyed when the thread ends). The caller
  // has made the device's context current.
  bool choose(CUstream stream, const Conv2dPlan& plan, Choice* choice, std::string* error) const;
  // Runs the plan of the calling thread's last choose() (its handle and descriptors, set
  // there) with `choice`; `workspace` has choice.workspace_bytes of device memory (null when
  // 0). x, w and y are device pointers.
  bool forward(const Choice& choice, const float* x, const float* w, float* y, void* workspace,
               std::string* error) const;

private:
  explicit Cudnn(const Api* api) : api_(api) {}
  const Api* api_;
};

} // namespace dsc::runtime::cuda
