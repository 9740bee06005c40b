#pragma once
// An owning tensor with a DLPack view. Tensors are dense, row-major (C order) and 64-byte
// aligned, and their element type is a DLPack DLDataType, so they can cross a C ABI as
// DLTensors without copies. Copies are explicit (clone(); cuda/DeviceTensor.h between host
// and GPU); moves are cheap.
//
// A tensor lives on the host (kDLCPU, the default) or on the CUDA device (kDLCUDA, device 0:
// cuda::device()'s memory, released through it). The data pointer of a device tensor is a
// device address: only kernels, copies and the C API's consumers may use it.

#include <dlpack/dlpack.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dsc::runtime {

// Shorthands for the element types dsc uses, as DLPack types; the dtype table (ir/DTypes.def)
// is the list of them, and says why bool is exchanged as uint8.
constexpr DLDataType dl_bool() {
  return DLDataType{kDLUInt, 8, 1};
}
constexpr DLDataType dl_int(int bits) {
  return DLDataType{kDLInt, static_cast<uint8_t>(bits), 1};
} // 8, 32, 64
constexpr DLDataType dl_float(int bits) {
  return DLDataType{kDLFloat, static_cast<uint8_t>(bits), 1};
} // 16, 32, 64
constexpr DLDataType dl_bfloat16() {
  return DLDataType{kDLBfloat, 16, 1};
}
bool same_dtype(DLDataType a, DLDataType b);
size_t dtype_bytes(DLDataType d);
// The table's name, "f32", "i64", "bool", "bf16"; "?" for types dsc does not use.
std::string dtype_name(DLDataType d);
// The inverse of dtype_name; false for an unknown name.
bool parse_dtype_name(const std::string& name, DLDataType* out);

class Tensor {
public:
  Tensor() = default;
  // A zero-filled tensor. Shapes are checked by the caller: every dim >= 0.
  static Tensor zeros(DLDataType dtype, std::vector<int64_t> shape);
  // An uninitialised tensor, for results that are overwritten anyway. Same precondition.
  static Tensor empty(DLDataType dtype, std::vector<int64_t> shape);
  // Like empty(), but for shapes that come from user input: nullopt with *error set when a
  // dim is negative, the byte size overflows, or the memory is not available.
  static std::optional<Tensor> try_empty(DLDataType dtype, std::vector<int64_t> shape,
                                         std::string* error);
  // The same, with `what` the tensor is in the message ("input 'x' (f32[B, 768]) at B=9"),
  // instead of "a f32[9, 768] tensor".
  static std::optional<Tensor> try_empty(DLDataType dtype, std::vector<int64_t> shape,
                                         const std::string& what, std::string* error);
  // The same on `device`: kDLCPU as above, or kDLCUDA device 0 (uninitialised device memory;
  // "no CUDA device: ..." when there is none).
  static std::optional<Tensor> try_empty(DLDevice device, DLDataType dtype,
                                         std::vector<int64_t> shape, const std::string& what,
                                         std::string* error);

  // A tensor over memory it does not own (an input the call updated in place, returned as an
  // output): never freed by it, valid while the caller's tensor is. `t` is dense row-major.
  static Tensor borrow(const DLTensor& t);

  bool defined() const { return storage_ != nullptr; }
  DLDevice device() const { return device_; }
  bool on_host() const { return device_.device_type == kDLCPU; }
  DLDataType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  size_t rank() const { return shape_.size(); }
  int64_t numel() const;
  size_t nbytes() const { return static_cast<size_t>(numel()) * dtype_bytes(dtype_); }

  // A host pointer, or a device address when !on_host().
  void* data() { return storage_.get(); }
  const void* data() const { return storage_.get(); }
  template <typename T> T* data_as() { return static_cast<T*>(data()); }
  template <typename T> const T* data_as() const { return static_cast<const T*>(data()); }

  // A DLPack view of this tensor (on its device); valid while the tensor lives and is not
  // moved.
  DLTensor dl_view();

  // A host copy of a host tensor (device tensors: cuda::to_device, cuda::to_host).
  Tensor clone() const;
  // `f32[2, 3]`
  std::string type_string() const;

private:
  struct Free {
    bool on_device; // released through cuda::device(); value-initialized to false
    bool borrowed;  // someone else's memory, not released; value-initialized to false
    void operator()(void* p) const;
  };
  DLDevice device_{kDLCPU, 0};
  DLDataType dtype_{};
  std::vector<int64_t> shape_;
  std::unique_ptr<void, Free> storage_;
};

} // namespace dsc::runtime
