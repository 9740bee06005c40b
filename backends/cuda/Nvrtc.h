#pragma once
// CUDA C to device code with NVRTC. libnvrtc is loaded with dlopen on first use
// (libnvrtc.so.13, .12, then /usr/local/cuda/lib64), so dscc builds and runs CPU models
// without the CUDA toolkit; compiling for CUDA without it is an error saying so.

#include <optional>
#include <string>
#include <vector>

namespace dsc::cuda {

struct DeviceImage {
  int arch = 0;        // 80: a cubin for sm_80, or PTX for compute_80
  bool is_ptx = false;
  std::string data;    // the cubin's bytes, or the PTX text (no terminating NUL)
};

// A cubin per architecture of `archs`, then PTX for the highest, so that newer GPUs can run
// the kernels too. nullopt with *error set: NVRTC missing ("cannot compile for CUDA: NVRTC
// (libnvrtc.so.13) cannot be loaded: ..."), or the compiler's log when the source does not
// compile for an architecture.
std::optional<std::vector<DeviceImage>> nvrtc_compile(const std::string& source,
                                                      const std::string& name,
                                                      const std::vector<int>& archs,
                                                      std::string* error);

// "NVRTC 13.0", or "" when NVRTC cannot be loaded.
std::string nvrtc_version();

} // namespace dsc::cuda
