#include "runtime/Tensor.h"

#include <cstdlib>
#include <cstring>

#include "runtime/DTypeTable.h"
#include "runtime/Memory.h"
#include "runtime/cuda/Device.h"
#include "support/Assert.h"

namespace dsc::runtime {

bool same_dtype(DLDataType a, DLDataType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

size_t dtype_bytes(DLDataType d) {
  return (static_cast<size_t>(d.bits) * d.lanes + 7) / 8;
}

std::string dtype_name(DLDataType d) {
  for (const RuntimeDType& n : kRuntimeDTypes)
    if (same_dtype(n.type, d)) return n.name;
  return "?";
}

bool parse_dtype_name(const std::string& name, DLDataType* out) {
  for (const RuntimeDType& n : kRuntimeDTypes) {
    if (name == n.name) {
      *out = n.type;
      return true;
    }
  }
  return false;
}

void Tensor::Free::operator()(void* p) const {
  if (borrowed) return;
  if (!on_device) {
    std::free(p);
    return;
  }
  // The device exists: it made this memory.
  if (cuda::Device* d = cuda::device(nullptr)) d->release(p);
}

Tensor Tensor::borrow(const DLTensor& t) {
  Tensor out;
  out.dtype_ = t.dtype;
  out.shape_.assign(t.shape, t.shape + t.ndim);
  out.device_ = t.device;
  out.storage_ = std::unique_ptr<void, Free>(static_cast<char*>(t.data) + t.byte_offset,
                                             Free{t.device.device_type == kDLCUDA, true});
  return out;
}

std::optional<Tensor> Tensor::try_empty(DLDataType dtype, std::vector<int64_t> shape,
                                        std::string* error) {
  return try_empty(dtype, std::move(shape), "", error);
}

std::optional<Tensor> Tensor::try_empty(DLDataType dtype, std::vector<int64_t> shape,
                                        const std::string& what, std::string* error) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  uint64_t bytes = 0;
  if (!checked_nbytes(dtype, t.shape_, &bytes)) {
    if (error)
      *error = what.empty() ? "invalid or too large tensor shape " + t.type_string()
                            : "cannot allocate " + what + ": the size of " + t.type_string() +
                                  " overflows 64 bits";
    return std::nullopt;
  }
  // Even an empty tensor gets storage (aligned_allocate rounds up to 64 bytes).
  void* p =
      aligned_allocate(bytes, what.empty() ? "a " + t.type_string() + " tensor" : what, error);
  if (!p) return std::nullopt;
  t.storage_.reset(p);
  return t;
}

std::optional<Tensor> Tensor::try_empty(DLDevice device, DLDataType dtype,
                                        std::vector<int64_t> shape, const std::string& what,
                                        std::string* error) {
  if (device.device_type == kDLCPU) return try_empty(dtype, std::move(shape), what, error);
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  const std::string label = what.empty() ? "a " + t.type_string() + " tensor" : what;
  if (device.device_type != kDLCUDA || device.device_id != 0) {
    if (error)
      *error = "cannot allocate " + label + " on device type " +
               std::to_string(static_cast<int>(device.device_type)) + ", id " +
               std::to_string(device.device_id) + ": dsc runs on the CPU and CUDA device 0 only";
    return std::nullopt;
  }
  uint64_t bytes = 0;
  if (!checked_nbytes(dtype, t.shape_, &bytes)) {
    if (error)
      *error = "cannot allocate " + label + " on the GPU: the size of " + t.type_string() +
               " overflows 64 bits";
    return std::nullopt;
  }
  std::string reason;
  cuda::Device* d = cuda::device(&reason);
  if (!d) {
    if (error) *error = "cannot allocate " + label + " on the GPU: " + reason;
    return std::nullopt;
  }
  void* p = d->allocate(bytes, label, error);
  if (!p) return std::nullopt;
  t.storage_ = std::unique_ptr<void, Free>(p, Free{true, false});
  t.device_ = DLDevice{kDLCUDA, 0};
  return t;
}

Tensor Tensor::empty(DLDataType dtype, std::vector<int64_t> shape) {
  for (int64_t d : shape)
    internal_assert(d >= 0) << "negative dim in Tensor::empty";
  std::string error;
  std::optional<Tensor> t = try_empty(dtype, std::move(shape), &error);
  internal_assert(t) << error;
  return std::move(*t);
}

Tensor Tensor::zeros(DLDataType dtype, std::vector<int64_t> shape) {
  Tensor t = empty(dtype, std::move(shape));
  std::memset(t.data(), 0, t.nbytes());
  return t;
}

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape_)
    n *= d;
  return n;
}

DLTensor Tensor::dl_view() {
  DLTensor v{};
  v.data = data();
  v.device = device_;
  v.ndim = static_cast<int32_t>(shape_.size());
  v.dtype = dtype_;
  v.shape = shape_.data();
  v.strides = nullptr; // compact row-major
  v.byte_offset = 0;
  return v;
}

Tensor Tensor::clone() const {
  internal_assert(on_host()) << "Tensor::clone() of a device tensor; use cuda::to_device/to_host";
  Tensor t = zeros(dtype_, shape_);
  if (defined()) std::memcpy(t.data(), data(), nbytes());
  return t;
}

std::string Tensor::type_string() const {
  std::string s = dtype_name(dtype_) + "[";
  for (size_t i = 0; i < shape_.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape_[i]);
  return s + "]";
}

} // namespace dsc::runtime
