#include "backends/cuda/Nvrtc.h"

#include <dlfcn.h>

#include <algorithm>
#include <mutex>

namespace dsc::cuda {

namespace {

// The parts of nvrtc.h used here (its C ABI; the header itself is not needed to build).
using nvrtcResult = int;
using nvrtcProgram = struct _nvrtcProgram*;

struct Nvrtc {
  const char* (*GetErrorString)(nvrtcResult) = nullptr;
  nvrtcResult (*Version)(int*, int*) = nullptr;
  nvrtcResult (*CreateProgram)(nvrtcProgram*, const char*, const char*, int, const char* const*,
                               const char* const*) = nullptr;
  nvrtcResult (*DestroyProgram)(nvrtcProgram*) = nullptr;
  nvrtcResult (*CompileProgram)(nvrtcProgram, int, const char* const*) = nullptr;
  nvrtcResult (*GetProgramLogSize)(nvrtcProgram, size_t*) = nullptr;
  nvrtcResult (*GetProgramLog)(nvrtcProgram, char*) = nullptr;
  nvrtcResult (*GetCUBINSize)(nvrtcProgram, size_t*) = nullptr;
  nvrtcResult (*GetCUBIN)(nvrtcProgram, char*) = nullptr;
  nvrtcResult (*GetPTXSize)(nvrtcProgram, size_t*) = nullptr;
  nvrtcResult (*GetPTX)(nvrtcProgram, char*) = nullptr;
  std::string error; // why it could not be loaded
};

template <typename F> bool bind(void* lib, const char* name, F* fn, std::string* error) {
  *fn = reinterpret_cast<F>(dlsym(lib, name));
  if (!*fn && error->empty()) *error = std::string("it has no ") + name;
  return *fn != nullptr;
}

const Nvrtc& nvrtc() {
  static Nvrtc n;
  static std::once_flag once;
  std::call_once(once, [] {
    void* lib = nullptr;
    std::string tried;
    for (const char* path : {"libnvrtc.so.13", "libnvrtc.so.12", "/usr/local/cuda/lib64/libnvrtc.so.13",
                             "/usr/local/cuda/lib64/libnvrtc.so.12", "/usr/local/cuda/lib64/libnvrtc.so"}) {
      lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
      if (lib) break;
      const char* e = dlerror();
      if (tried.empty()) tried = e ? e : path;
    }
    if (!lib) {
      n.error = "NVRTC (libnvrtc.so.13) cannot be loaded: " + tried +
                " (install the CUDA toolkit in /usr/local/cuda, or put it on LD_LIBRARY_PATH)";
      return;
    }
    std::string e;
    bool ok = bind(lib, "nvrtcGetErrorString", &n.GetErrorString, &e) &&
              bind(lib, "nvrtcVersion", &n.Version, &e) &&
              bind(lib, "nvrtcCreateProgram", &n.CreateProgram, &e) &&
              bind(lib, "nvrtcDestroyProgram", &n.DestroyProgram, &e) &&
              bind(lib, "nvrtcCompileProgram", &n.CompileProgram, &e) &&
              bind(lib, "nvrtcGetProgramLogSize", &n.GetProgramLogSize, &e) &&
              bind(lib, "nvrtcGetProgramLog", &n.GetProgramLog, &e) &&
              bind(lib, "nvrtcGetCUBINSize", &n.GetCUBINSize, &e) &&
              bind(lib, "nvrtcGetCUBIN", &n.GetCUBIN, &e) &&
              bind(lib, "nvrtcGetPTXSize", &n.GetPTXSize, &e) && bind(lib, "nvrtcGetPTX", &n.GetPTX, &e);
    if (!ok) n.error = "the NVRTC library found is not usable: " + e;
  });
  return n;
}

std::string describe(const Nvrtc& n, nvrtcResult r) {
  const char* s = n.GetErrorString ? n.GetErrorString(r) : nullptr;
  return s ? s : "NVRTC error " + std::to_string(r);
}

// One compilation: the cubin for sm_<arch>, or PTX for compute_<arch>.
bool compile_once(const Nvrtc& n, const std::string& source, const std::string& name, int arch,
                  bool ptx, DeviceImage* out, std::string* error) {
  nvrtcProgram prog = nullptr;
  nvrtcResult r = n.CreateProgram(&prog, source.c_str(), (name + ".cu").c_str(), 0, nullptr, nullptr);
  if (r != 0) {
    *error = "nvrtcCreateProgram failed: " + describe(n, r);
    return false;
  }
  const std::string gpu = std::string("--gpu-architecture=") + (ptx ? "compute_" : "sm_") + std::to_string(arch);
  const char* options[] = {gpu.c_str(), "-std=c++17", "-lineinfo"};
  r = n.CompileProgram(prog, 3, options);
  size_t log_size = 0;
  std::string log;
  if (n.GetProgramLogSize(prog, &log_size) == 0 && log_size > 1) {
    log.resize(log_size);
    n.GetProgramLog(prog, log.data());
    log.resize(log_size - 1);
  }
  bool ok = r == 0;
  if (!ok) {
    *error = "NVRTC could not compile the kernels of '" + name + "' for " + gpu.substr(19) + ": " +
             describe(n, r) + (log.empty() ? "" : "\n" + log);
  } else {
    size_t size = 0;
    out->arch = arch;
    out->is_ptx = ptx;
    if (ptx) {
      n.GetPTXSize(prog, &size);
      out->data.resize(size);
      n.GetPTX(prog, out->data.data());
      while (!out->data.empty() && out->data.back() == '\0') out->data.pop_back();
    } else {
      n.GetCUBINSize(prog, &size);
      out->data.resize(size);
      n.GetCUBIN(prog, out->data.data());
    }
  }
  n.DestroyProgram(&prog);
  return ok;
}

} // namespace

std::optional<std::vector<DeviceImage>> nvrtc_compile(const std::string& source,
                                                      const std::string& name,
                                                      const std::vector<int>& archs,
                                                      std::string* error) {
  const Nvrtc& n = nvrtc();
  if (!n.error.empty()) {
    if (error) *error = "cannot compile for CUDA: " + n.error;
    return std::nullopt;
  }
  if (archs.empty()) {
    if (error) *error = "cannot compile for CUDA: no GPU architecture was given";
    return std::nullopt;
  }
  std::vector<DeviceImage> images;
  std::string e;
  for (int arch : archs) {
    DeviceImage image;
    if (!compile_once(n, source, name, arch, false, &image, &e)) {
      if (error) *error = e;
      return std::nullopt;
    }
    images.push_back(std::move(image));
  }
  DeviceImage ptx;
  if (!compile_once(n, source, name, *std::max_element(archs.begin(), archs.end()), true, &ptx, &e)) {
    if (error) *error = e;
    return std::nullopt;
  }
  images.push_back(std::move(ptx));
  return images;
}

std::string nvrtc_version() {
  const Nvrtc& n = nvrtc();
  if (!n.error.empty()) return "";
  int major = 0, minor = 0;
  if (n.Version(&major, &minor) != 0) return "";
  return "NVRTC " + std::to_string(major) + "." + std::to_string(minor);
}

} // namespace dsc::cuda
