#pragma once
// What the CUDA backend hands the host compiler (backends/cpu) for a module built for CUDA:
// the CUDA C of its prims, the images NVRTC made of it for each architecture of the target,
// and how the host launches each prim's kernel. The host compiler embeds the source and the
// images in the model (runtime/HostABI.h's dsc_cuda_module) and turns every kernel step of
// the host programs into a dsc_rt_cuda_launch.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "backends/cuda/CudaSource.h"
#include "backends/cuda/Nvrtc.h"
#include "ir/Module.h"
#include "ir/Target.h"

namespace dsc::cuda {

struct DeviceCode {
  std::string source;
  std::vector<DeviceImage> images;
  std::map<std::string, KernelLaunch> launches; // by prim name
};

// The module's prims through emit_cuda_source and nvrtc_compile for target.sm_archs.
// `name` names the module in errors. nullopt with *error set on failure.
std::optional<DeviceCode> compile_device_code(const ir::Module& m, const ir::Target& target,
                                              const std::string& name, std::string* error);

} // namespace dsc::cuda
