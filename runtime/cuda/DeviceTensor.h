#pragma once
// Copies of tensors between the host and the CUDA device (Tensor.h's kDLCUDA tensors), for
// callers that prepare a CUDA function's inputs or read its outputs: dscc run, dsc-run and
// the C API's dsc_tensor_copy. Each returns once the copy is complete.

#include <optional>
#include <string>

#include "runtime/Tensor.h"

namespace dsc::runtime::cuda {

// A copy of `t` (host or device) on the device; nullopt with *error set ("no CUDA device:
// ...", "cannot allocate ... of device memory ...") when it cannot be made.
std::optional<Tensor> to_device(const Tensor& t, std::string* error);
// A copy of `t` (host or device) on the host.
std::optional<Tensor> to_host(const Tensor& t, std::string* error);

// A dense copy of any DLTensor on kDLCPU or kDLCUDA (device 0), on `device_type` (kDLCPU or
// kDLCUDA). `src` must be dense row-major (null strides, or compact ones; a dim of size 1
// may have any stride); its byte_offset is applied. Errors say what is wrong with `src`.
std::optional<Tensor> copy_to(const DLTensor& src, DLDeviceType device_type, std::string* error);

} // namespace dsc::runtime::cuda
