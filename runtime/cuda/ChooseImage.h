#pragma once
// Which image of a compiled CUDA module (HostABI.h's dsc_cuda_module) a device loads. A cubin
// runs only on its own major version, at its minor version or a later one; PTX is compiled by
// the driver for any device at least as new as its virtual architecture. In order of
// preference:
//   1. the cubin of the device's architecture (sm_90 on an sm_90 device);
//   2. the highest cubin of the device's major version below it (sm_80 on sm_86);
//   3. the highest PTX at or below the device's architecture (compute_80 on sm_90).
// Images with no data are ignored.

#include <string>

#include "runtime/HostABI.h"

namespace dsc::runtime::cuda {

// The index of the image to load on a device of architecture `device_arch` (major * 10 +
// minor: 90 for sm_90), or -1 with *error set when none fits: "module 'layer' has no image
// for sm_75: it has sm_80 (cubin), compute_80 (PTX)".
int choose_image(const dsc_cuda_module& module, int device_arch, std::string* error);

// "sm_90 (cubin)", "compute_80 (PTX)".
std::string describe_image(const dsc_cuda_image& image);

} // namespace dsc::runtime::cuda
