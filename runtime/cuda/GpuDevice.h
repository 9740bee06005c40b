#pragma once
// The Device of a real GPU: device 0 through the driver API (CudaDriver.h), in its primary
// context (the one the CUDA runtime, and so PyTorch or CuPy in the same process, use too).
//
// - Streams: each calling thread gets its own non-blocking stream on first use, destroyed
//   when the thread ends. Every method makes the primary context current on the calling
//   thread first.
// - Memory: the driver's stream-ordered allocator (cuMemAllocAsync on the thread's stream,
//   from the device's default pool, which is told to keep freed memory for reuse) where the
//   driver has it, else cuMemAlloc. Memory is released on the releasing thread's stream, or
//   the default stream when that thread has none: the runtime releases device memory only
//   once the work that used it is done (each call synchronizes before it returns).
// - Modules: loaded on their first launch, under a mutex, into dsc_cuda_module::loaded, from
//   the image choose_image (ChooseImage.h) picks; the functions are cached by kernel name.
//   A module stays loaded for the life of the process. Kernels that need more than 48 KiB of
//   dynamic shared memory get the opt-in attribute on first use.
// - DSC_CUDA_SYNC=1 waits for the stream after every launch, copy, sgemm and conv2d, so that an
//   asynchronous error is reported by the operation that raised it.
//
// There is one GpuDevice per process (cuda::device() makes it).

#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "runtime/cuda/CudaDriver.h"
#include "runtime/cuda/Device.h"

namespace dsc::runtime::cuda {

class GpuDevice : public Device {
public:
  // Initialises the driver and retains device 0's primary context. Null with *error set
  // ("libcuda.so.1 cannot be loaded (...)", "cuInit failed: CUDA_ERROR_NO_DEVICE: ...").
  static std::unique_ptr<GpuDevice> open(std::string* error);

  std::string describe() const override;
  void* allocate(uint64_t bytes, const std::string& what, std::string* error) override;
  void release(void* pointer) override;
  bool copy(void* dst, const void* src, uint64_t bytes, CopyKind kind, std::string* error) override;
  // Errors do not name the kernel (dsc_rt_cuda_launch does): "cuLaunchKernel failed: ...".
  bool launch(dsc_cuda_module* module, const char* kernel, const LaunchShape& shape,
              void* const* buffers, int num_buffers, const int64_t* symbols, int num_symbols,
              std::string* error) override;
  bool sgemm(const float* a, const float* b, float* c, const dsc_strided_product& product,
             std::string* error) override;
  // cuBLASLt's and cuDNN's workspaces come from allocate() and go back after the call,
  // stream-ordered.
  bool sgemm_epilogue(const float* a, const float* b, const float* bias, float* c,
                      const dsc_strided_product& product, GemmEpilogue epilogue,
                      std::string* error) override;
  bool conv2d(const float* x, const float* w, float* y, const Conv2d& conv,
              std::string* error) override;
  // *error is the asynchronous error itself: "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory
  // access was encountered".
  bool synchronize(std::string* error) override;
  int64_t resident_threads() const override;

  // major * 10 + minor: 90 for sm_90.
  int arch() const { return arch_; }

private:
  GpuDevice() = default;

  struct LoadedModule;
  // Makes the primary context current on this thread.
  bool bind(std::string* error);
  // The calling thread's stream, made on first use.
  CUstream stream(std::string* error);
  // `bytes` of device memory for a library's workspace (null for 0), then `run` on it, then the
  // memory released after the stream's work (waiting first without the stream-ordered
  // allocator, whose release frees at once).
  bool with_workspace(uint64_t bytes, CUstream s, const std::function<bool(void*)>& run,
                      std::string* error);
  // Zeroes `floats` floats at p on `s` (a library call with nothing to sum), then settles.
  bool zero(float* p, int64_t floats, CUstream s, std::string* error);
  // After an operation: with DSC_CUDA_SYNC=1, waits for it.
  bool settle(CUstream stream, std::string* error);
  LoadedModule* load(dsc_cuda_module* module, std::string* error);
  CUfunction function(LoadedModule* module, const char* kernel, int64_t shared_bytes,
                      std::string* error);

  const Driver* driver_ = nullptr;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  int arch_ = 0;
  int max_shared_optin_ = 0;
  int64_t resident_threads_ = 1;
  std::string name_;
  bool pools_ = false;
  bool sync_each_ = false;
  std::mutex load_mutex_;
};

} // namespace dsc::runtime::cuda
