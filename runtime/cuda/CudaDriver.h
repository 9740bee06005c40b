#pragma once
// The CUDA driver API (libcuda.so.1), loaded with dlopen on first use, so that the runtime
// builds and runs on machines without the CUDA toolkit or a GPU. The types and the few
// constants the runtime needs are declared here with the values of the driver's cuda.h; the
// entry points are resolved by their versioned names (cuMemAlloc_v2, ...), as cuda.h maps
// them.
//
// Errors are messages that name the call: "cuModuleLoadData failed: CUDA_ERROR_INVALID_PTX:
// a PTX JIT compilation failed".

#include <cstddef>
#include <cstdint>
#include <string>

namespace dsc::runtime::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUmemoryPool = struct CUmemPoolHandle_st*;

constexpr CUresult kCudaSuccess = 0;
constexpr CUresult kCudaErrorOutOfMemory = 2;
constexpr CUresult kCudaErrorNotFound = 500;
// CUdevice_attribute
constexpr int kAttrMaxSharedMemoryPerBlock = 8;
constexpr int kAttrMultiprocessorCount = 16;
constexpr int kAttrMaxThreadsPerMultiprocessor = 39;
constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kAttrComputeCapabilityMinor = 76;
constexpr int kAttrMaxSharedMemoryPerBlockOptin = 97;
constexpr int kAttrMemoryPoolsSupported = 115;
// CUfunction_attribute
constexpr int kFuncAttrMaxDynamicSharedSizeBytes = 8;
// CUmemPool_attribute
constexpr int kMemPoolAttrReleaseThreshold = 4;
// CUstream_flags
constexpr unsigned kStreamNonBlocking = 1;
// CUjit_option
constexpr int kJitInfoLogBuffer = 3;
constexpr int kJitInfoLogBufferSizeBytes = 4;
constexpr int kJitErrorLogBuffer = 5;
constexpr int kJitErrorLogBufferSizeBytes = 6;

// The entry points, resolved once. Optional ones (the stream-ordered allocator, CUDA 11.2)
// are null when the driver lacks them.
struct Driver {
  CUresult (*cuInit)(unsigned flags);
  CUresult (*cuDriverGetVersion)(int* version);
  CUresult (*cuDeviceGetCount)(int* count);
  CUresult (*cuDeviceGet)(CUdevice* device, int ordinal);
  CUresult (*cuDeviceGetAttribute)(int* value, int attribute, CUdevice device);
  CUresult (*cuDeviceGetName)(char* name, int length, CUdevice device);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext* context, CUdevice device);
  CUresult (*cuCtxSetCurrent)(CUcontext context);
  CUresult (*cuMemGetInfo)(size_t* free, size_t* total);
  CUresult (*cuMemAlloc)(CUdeviceptr* pointer, size_t bytes);
  CUresult (*cuMemFree)(CUdeviceptr pointer);
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr dst, const void* src, size_t bytes, CUstream stream);
  CUresult (*cuMemcpyDtoHAsync)(void* dst, CUdeviceptr src, size_t bytes, CUstream stream);
  CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream);
  CUresult (*cuMemsetD32Async)(CUdeviceptr dst, unsigned value, size_t count, CUstream stream);
  CUresult (*cuStreamCreate)(CUstream* stream, unsigned flags);
  CUresult (*cuStreamDestroy)(CUstream stream);
  CUresult (*cuStreamSynchronize)(CUstream stream);
  CUresult (*cuModuleLoadDataEx)(CUmodule* module, const void* image, unsigned num_options,
                                 int* options, void** option_values);
  CUresult (*cuModuleGetFunction)(CUfunction* function, CUmodule module, const char* name);
  CUresult (*cuFuncSetAttribute)(CUfunction function, int attribute, int value);
  CUresult (*cuLaunchKernel)(CUfunction function, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                             unsigned block_x, unsigned block_y, unsigned block_z,
                             unsigned shared_bytes, CUstream stream, void** params, void** extra);
  CUresult (*cuGetErrorName)(CUresult error, const char** name);
  CUresult (*cuGetErrorString)(CUresult error, const char** text);
  // Optional.
  CUresult (*cuMemAllocAsync)(CUdeviceptr* pointer, size_t bytes, CUstream stream);
  CUresult (*cuMemFreeAsync)(CUdeviceptr pointer, CUstream stream);
  CUresult (*cuDeviceGetDefaultMemPool)(CUmemoryPool* pool, CUdevice device);
  CUresult (*cuMemPoolSetAttribute)(CUmemoryPool pool, int attribute, void* value);

  // "CUDA_ERROR_INVALID_PTX: a PTX JIT compilation failed" ("CUresult 12345" when the driver
  // does not know the code).
  std::string describe(CUresult result) const;
  // "cuModuleLoadData failed: CUDA_ERROR_INVALID_PTX: a PTX JIT compilation failed".
  std::string failed(const char* call, CUresult result) const;
};

// libcuda.so.1 (or the library DSC_CUDA_DRIVER names, so that tests can make the driver
// missing on a machine that has one), loaded once for the process and never unloaded. Null
// with *error set ("libcuda.so.1 cannot be loaded (...)", "libcuda.so.1 lacks cuInit") when
// it cannot be loaded; the failure is remembered. Loading does not call cuInit.
const Driver* load_driver(std::string* error);

} // namespace dsc::runtime::cuda
