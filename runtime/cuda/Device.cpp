// cuda::device(): the process's device, made once.
#include "runtime/cuda/Device.h"

#include <cstdlib>
#include <cstring>
#include <memory>

#include "runtime/cuda/Emulator.h"
#include "runtime/cuda/GpuDevice.h"

namespace dsc::runtime::cuda {

namespace {

struct Made {
  std::unique_ptr<Device> device;
  std::string error; // set when there is no device
};

Made make() {
  Made made;
  std::string reason;
  const char* emulate = std::getenv("DSC_CUDA_EMULATE");
  if (emulate && std::strcmp(emulate, "1") == 0) {
    made.device = make_emulator_device(&reason);
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
