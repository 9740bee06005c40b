#pragma once
// The device that runs the CUDA side of models built with `--target=cuda`: a GPU through the
// driver API (GpuDevice.h; libcuda.so.1, cuBLAS, cuBLASLt and cuDNN loaded with dlopen), or the
// block emulator (Emulator.h: the same CUDA C compiled for the CPU, one fiber per GPU thread,
// with barriers and shared memory intact) when DSC_CUDA_EMULATE=1. The dsc_rt_cuda_* functions of
// HostABI.h, device arenas and outputs, and the C API's copies all go through it.
//
// Errors are messages, never aborts: a machine without a driver or a GPU gets "no CUDA
// device: ..." from cuda::device().

#include <cstdint>
#include <string>

#include "runtime/HostABI.h"
#include "runtime/Matmul.h"

namespace dsc::runtime::cuda {

enum class CopyKind : uint8_t { HostToDevice, DeviceToHost, DeviceToDevice };

// HostABI.h's convolution, as cudnn.conv2d takes it (ir/LibraryRoutine.h: Conv2dScalar): the
// input's N, C, H, W, the weights' O, KH, KW, the result's OH, OW, then groups, stride,
// padding and dilation.
struct Conv2d {
  int64_t n, c, h, w, o, kh, kw, oh, ow;
  int64_t groups, stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w;
};

// What cuBLASLt applies to a product before it stores it (C = act(A @ B + bias), the bias one
// value per column of C): the cublaslt.sgemm_* routines.
enum class GemmEpilogue : uint8_t { Bias, BiasRelu, BiasGeluTanh };

struct LaunchShape {
  int64_t grid[3] = {1, 1, 1};
  int64_t block[3] = {1, 1, 1};
  int64_t shared_bytes = 0;
};

// Every method is thread-safe; work is ordered per calling thread (a stream per thread) and
// synchronize() waits for the calling thread's work. Errors say what failed ("cuLaunchKernel
// failed: CUDA_ERROR_INVALID_VALUE: invalid argument"); they need not name the kernel or the
// function, which the dsc_rt_cuda_* functions (CudaABI.cpp) put before them.
class Device {
public:
  virtual ~Device() = default;
  // "NVIDIA H100 80GB HBM3 (sm_90)", "the CUDA block emulator".
  virtual std::string describe() const = 0;
  // Device memory; null with *error set ("cannot allocate 1.0 TiB of device memory for
  // <what>: out of memory").
  virtual void* allocate(uint64_t bytes, const std::string& what, std::string* error) = 0;
  virtual void release(void* pointer) = 0;
  // Ordered after the thread's earlier work; HostToDevice and DeviceToHost return once the
  // copy is done.
  virtual bool copy(void* dst, const void* src, uint64_t bytes, CopyKind kind,
                    std::string* error) = 0;
  // Loads `module` on first use (thread-safe) and launches `kernel` with buffers, then symbols,
  // as arguments.
  virtual bool launch(dsc_cuda_module* module, const char* kernel, const LaunchShape& shape,
                      void* const* buffers, int num_buffers, const int64_t* symbols,
                      int num_symbols, std::string* error) = 0;
  // C[i] = A[i] @ B[i] through strides (HostABI.h's dsc_strided_product), on device memory.
  virtual bool sgemm(const float* a, const float* b, float* c, const dsc_strided_product& product,
                     std::string* error) = 0;
  // C[i] = epilogue(A[i] @ B[i] + bias) through strides, bias holding one value per column;
  // the depth must be at least 1.
  virtual bool sgemm_epilogue(const float* a, const float* b, const float* bias, float* c,
                              const dsc_strided_product& product, GemmEpilogue epilogue,
                              std::string* error) = 0;
  // y = conv2d(x, w), NCHW and OIHW, dense, on device memory.
  virtual bool conv2d(const float* x, const float* w, float* y, const Conv2d& conv,
                      std::string* error) = 0;
  // How many threads the device keeps resident at once (its multiprocessors times the threads
  // each holds): the host's launch rules compare a grid's threads with it (CudaSource.h).
  virtual int64_t resident_threads() const = 0;
  // Waits for the calling thread's work (at once when the thread queued none); false with the
  // first asynchronous error, as the error itself ("CUDA_ERROR_ILLEGAL_ADDRESS: ...").
  virtual bool synchronize(std::string* error) = 0;
};

// The process's device, made on first use: the emulator when DSC_CUDA_EMULATE=1, else the
// GPU. Null with *error set when there is none ("no CUDA device: libcuda.so.1 cannot be
// loaded (...)", "no CUDA device: cuInit failed: CUDA_ERROR_NO_DEVICE ...").
Device* device(std::string* error);

} // namespace dsc::runtime::cuda
