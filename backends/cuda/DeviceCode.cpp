#include "backends/cuda/DeviceCode.h"

namespace dsc::cuda {

std::optional<DeviceCode> compile_device_code(const ir::Module& m, const ir::Target& target,
                                              const std::string& name, std::string* error) {
  std::optional<CudaSource> source = emit_cuda_source(m, error);
  if (!source) return std::nullopt;
  DeviceCode code;
  code.source = std::move(source->text);
  code.launches = std::move(source->launches);
  std::optional<std::vector<DeviceImage>> images = nvrtc_compile(code.source, name, target.sm_archs, error);
  if (!images) return std::nullopt;
  code.images = std::move(*images);
  return code;
}

} // namespace dsc::cuda
