#include "runtime/cuda/CudaDriver.h"

#include <dlfcn.h>

#include <cstdlib>

namespace dsc::runtime::cuda {

std::string Driver::describe(CUresult result) const {
  const char* name = nullptr;
  const char* text = nullptr;
  if (cuGetErrorName && cuGetErrorName(result, &name) != kCudaSuccess) name = nullptr;
  if (cuGetErrorString && cuGetErrorString(result, &text) != kCudaSuccess) text = nullptr;
  std::string s = name ? name : "CUresult " + std::to_string(result);
  if (text && *text) s += std::string(": ") + text;
  return s;
}

std::string Driver::failed(const char* call, CUresult result) const {
  return std::string(call) + " failed: " + describe(result);
}

namespace {

// Resolves `name` into `slot`; false when the library lacks it.
template <typename F> bool resolve(void* library, const char* name, F* slot) {
  void* symbol = dlsym(library, name);
  *slot = reinterpret_cast<F>(symbol);
  return symbol != nullptr;
}

struct Loaded {
  Driver driver{};
  std::string error; // empty when the driver is usable
};

Loaded load() {
  Loaded out;
  const char* env = std::getenv("DSC_CUDA_DRIVER");
  const std::string path = env && *env ? env : "libcuda.so.1";
  dlerror();
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char* reason = dlerror();
    out.error = path + " cannot be loaded (" + (reason ? reason : "unknown error") + ")";
    return out;
  }
  Driver& d = out.driver;
  const char* missing = nullptr;
  auto need = [&](const char* name, auto* slot) {
    if (!resolve(library, name, slot) && !missing) missing = name;
  };
  need("cuInit", &d.cuInit);
  need("cuDriverGetVersion", &d.cuDriverGetVersion);
  need("cuDeviceGetCount", &d.cuDeviceGetCount);
  need("cuDeviceGet", &d.cuDeviceGet);
  need("cuDeviceGetAttribute", &d.cuDeviceGetAttribute);
  need("cuDeviceGetName", &d.cuDeviceGetName);
  need("cuDevicePrimaryCtxRetain", &d.cuDevicePrimaryCtxRetain);
  need("cuCtxSetCurrent", &d.cuCtxSetCurrent);
  need("cuMemGetInfo_v2", &d.cuMemGetInfo);
  need("cuMemAlloc_v2", &d.cuMemAlloc);
  need("cuMemFree_v2", &d.cuMemFree);
  need("cuMemcpyHtoDAsync_v2", &d.cuMemcpyHtoDAsync);
  need("cuMemcpyDtoHAsync_v2", &d.cuMemcpyDtoHAsync);
  need("cuMemcpyDtoDAsync_v2", &d.cuMemcpyDtoDAsync);
  need("cuMemsetD32Async", &d.cuMemsetD32Async);
  need("cuStreamCreate", &d.cuStreamCreate);
  need("cuStreamDestroy_v2", &d.cuStreamDestroy);
  need("cuStreamSynchronize", &d.cuStreamSynchronize);
  need("cuModuleLoadDataEx", &d.cuModuleLoadDataEx);
  need("cuModuleGetFunction", &d.cuModuleGetFunction);
  need("cuFuncSetAttribute", &d.cuFuncSetAttribute);
  need("cuLaunchKernel", &d.cuLaunchKernel);
  need("cuGetErrorName", &d.cuGetErrorName);
  need("cuGetErrorString", &d.cuGetErrorString);
  if (missing) {
    out.error = path + " lacks " + missing + " (the driver is too old or not NVIDIA's)";
    return out;
  }
  // The stream-ordered allocator: all four or none.
  bool pools = resolve(library, "cuMemAllocAsync", &d.cuMemAllocAsync) &&
               resolve(library, "cuMemFreeAsync", &d.cuMemFreeAsync) &&
               resolve(library, "cuDeviceGetDefaultMemPool", &d.cuDeviceGetDefaultMemPool) &&
               resolve(library, "cuMemPoolSetAttribute", &d.cuMemPoolSetAttribute);
  if (!pools) {
    d.cuMemAllocAsync = nullptr;
    d.cuMemFreeAsync = nullptr;
    d.cuDeviceGetDefaultMemPool = nullptr;
    d.cuMemPoolSetAttribute = nullptr;
  }
  return out;
}

} // namespace

const Driver* load_driver(std::string* error) {
  static const Loaded* loaded = new Loaded(load()); // never freed: the driver outlives callers
  if (!loaded->error.empty()) {
    if (error) *error = loaded->error;
    return nullptr;
  }
  return &loaded->driver;
}

} // namespace dsc::runtime::cuda
