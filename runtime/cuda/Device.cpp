// cuda::device(): the process's device, made once.
#include "runtime/cuda/Device.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "runtime/cuda/GpuDevice.h"

namespace dsc::runtime::cuda {

namespace {

// Where libdsc_cuda_emulator.so is: $DSC_CUDA_EMULATOR, else beside this library.
std::string emulator_path() {
  if (const char* path = std::getenv("DSC_CUDA_EMULATOR"); path && *path) return path;
  Dl_info info{};
  if (!dladdr(reinterpret_cast<const void*>(&emulator_path), &info) || !info.dli_fname)
    return "libdsc_cuda_emulator.so";
  std::string self = info.dli_fname;
  const size_t slash = self.rfind('/');
  return (slash == std::string::npos ? "" : self.substr(0, slash + 1)) + "libdsc_cuda_emulator.so";
}

// The emulator (runtime/cuda/Emulator.h), loaded from its own library and never unloaded.
std::unique_ptr<Device> load_emulator(std::string* reason) {
  const std::string path = emulator_path();
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char* why = dlerror();
    *reason = "cannot load " + path + ": " + (why ? why : "unknown error") +
              " (DSC_CUDA_EMULATOR names the library)";
    return nullptr;
  }
  using Create = Device* (*)(std::string*);
  auto create = reinterpret_cast<Create>(dlsym(library, "dsc_cuda_emulator_create"));
  if (!create) {
    *reason = path + " has no dsc_cuda_emulator_create: not dsc's CUDA emulator";
    return nullptr;
  }
  return std::unique_ptr<Device>(create(reason));
}

struct Made {
  std::unique_ptr<Device> device;
  std::string error; // set when there is no device
};

Made make() {
  Made made;
  std::string reason;
  const char* emulate = std::getenv("DSC_CUDA_EMULATE");
  if (emulate && std::strcmp(emulate, "1") == 0) {
    made.device = load_emulator(&reason);
    if (!made.device)
      made.error = "no CUDA device: the CUDA emulator (DSC_CUDA_EMULATE=1) cannot start: " +
                   (reason.empty() ? std::string("unknown error") : reason);
    return made;
  }
  made.device = GpuDevice::open(&reason);
  if (!made.device) made.error = "no CUDA device: " + reason;
  return made;
}

} // namespace

Device* device(std::string* error) {
  // Never destroyed: device memory may be released by thread-locals and static destructors
  // that run after this one would.
  static const Made* made = new Made(make());
  if (!made->device && error) *error = made->error;
  return made->device.get();
}

} // namespace dsc::runtime::cuda
