#include "runtime/cuda/DeviceTensor.h"

#include <cstring>

#include "runtime/Memory.h"
#include "runtime/cuda/Device.h"

namespace dsc::runtime::cuda {

namespace {

bool fail(std::string* error, std::string message) {
  if (error) *error = std::move(message);
  return false;
}

bool supported(DLDevice d) {
  return d.device_type == kDLCPU || (d.device_type == kDLCUDA && d.device_id == 0);
}

std::string device_text(DLDevice d) {
  if (d.device_type == kDLCPU) return "the CPU";
  if (d.device_type == kDLCUDA) return "CUDA device " + std::to_string(d.device_id);
  return "device type " + std::to_string(static_cast<int>(d.device_type));
}

// Checks what copy_to needs of `src`; its shape into *shape and byte size into *bytes.
bool check_source(const DLTensor& src, std::vector<int64_t>* shape, uint64_t* bytes,
                  std::string* error) {
  if (!supported(src.device))
    return fail(error, "the tensor is on " + device_text(src.device) +
                           "; dsc copies between the CPU and CUDA device 0 only");
  if (src.ndim < 0 || (src.ndim > 0 && !src.shape))
    return fail(error, "the tensor has an invalid shape (ndim " + std::to_string(src.ndim) + ")");
  if (src.dtype.lanes != 1 || src.dtype.bits == 0 || src.dtype.bits % 8 != 0)
    return fail(error, "the tensor's dtype (code " + std::to_string(src.dtype.code) + ", bits " +
                           std::to_string(src.dtype.bits) + ", lanes " +
                           std::to_string(src.dtype.lanes) + ") is not one dsc copies");
  shape->assign(src.shape, src.shape + src.ndim);
  if (!checked_nbytes(src.dtype, *shape, bytes))
    return fail(error, "the tensor's shape has a negative dim or is too large to address");
  if (*bytes == 0) return true;
  if (src.strides) {
    int64_t stride = 1;
    for (int32_t i = src.ndim - 1; i >= 0; --i) {
      if ((*shape)[static_cast<size_t>(i)] != 1 && src.strides[i] != stride)
        return fail(error, "the tensor is not dense row-major (dim " + std::to_string(i) +
                               " has stride " + std::to_string(src.strides[i]) + ", expected " +
                               std::to_string(stride) + ")");
      stride *= (*shape)[static_cast<size_t>(i)];
    }
  }
  if (!src.data) return fail(error, "the tensor has a null data pointer");
  return true;
}

CopyKind kind_of(DLDeviceType from, DLDeviceType to) {
  if (from == kDLCPU) return CopyKind::HostToDevice;
  return to == kDLCPU ? CopyKind::DeviceToHost : CopyKind::DeviceToDevice;
}

} // namespace

std::optional<Tensor> copy_to(const DLTensor& src, DLDeviceType device_type, std::string* error) {
  if (device_type != kDLCPU && device_type != kDLCUDA) {
    fail(error, "cannot copy to device type " + std::to_string(static_cast<int>(device_type)) +
                    ": dsc copies to kDLCPU (1) or kDLCUDA (2)");
    return std::nullopt;
  }
  std::vector<int64_t> shape;
  uint64_t bytes = 0;
  if (!check_source(src, &shape, &bytes, error)) return std::nullopt;
  std::optional<Tensor> out =
      Tensor::try_empty(DLDevice{device_type, 0}, src.dtype, shape, "", error);
  if (!out || bytes == 0) return out;
  const void* from = static_cast<const char*>(src.data) + src.byte_offset;
  const DLDeviceType source_type = src.device.device_type;
  if (source_type == kDLCPU && device_type == kDLCPU) {
    std::memcpy(out->data(), from, bytes);
    return out;
  }
  std::string reason;
  Device* d = device(&reason);
  if (!d) {
    fail(error, reason);
    return std::nullopt;
  }
  const CopyKind kind = kind_of(source_type, device_type);
  if (!d->copy(out->data(), from, bytes, kind, &reason) ||
      (kind == CopyKind::DeviceToDevice && !d->synchronize(&reason))) {
    fail(error, "cannot copy " + describe_bytes(bytes) + " " +
                    (kind == CopyKind::HostToDevice   ? "to the GPU"
                     : kind == CopyKind::DeviceToHost ? "from the GPU"
                                                      : "on the GPU") +
                    ": " + reason);
    return std::nullopt;
  }
  return out;
}

std::optional<Tensor> to_device(const Tensor& t, std::string* error) {
  DLTensor view = const_cast<Tensor&>(t).dl_view();
  return copy_to(view, kDLCUDA, error);
}

std::optional<Tensor> to_host(const Tensor& t, std::string* error) {
  DLTensor view = const_cast<Tensor&>(t).dl_view();
  return copy_to(view, kDLCPU, error);
}

} // namespace dsc::runtime::cuda
