#include "runtime/HostCall.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "runtime/Memory.h"
#include "runtime/cuda/Device.h"

using dsc::runtime::FunctionInfo;
using dsc::runtime::Tensor;

dsc_call::dsc_call(const FunctionInfo* function)
    : info(function), outputs(function ? function->outputs.size() : 0) {}

dsc_call::~dsc_call() = default; // the arena belongs to the thread's ArenaCache

namespace {

// The arena of the calls on this thread, kept from one call to the next and replaced only
// when a call needs more: a model run in a loop then does not map and fault in fresh pages
// on every call. It is freed when the thread ends. Calls on one thread never overlap.
struct ArenaCache {
  void* memory = nullptr;
  uint64_t capacity = 0;
  ~ArenaCache() { std::free(memory); }
};
thread_local ArenaCache arena_cache;

// The same for CUDA functions, in device memory. Calls synchronize before they return, so
// the next call on the thread never overlaps the previous one's kernels.
struct DeviceArenaCache {
  void* memory = nullptr;
  uint64_t capacity = 0;
  ~DeviceArenaCache() { release(); }
  void release() {
    if (memory)
      if (dsc::runtime::cuda::Device* d = dsc::runtime::cuda::device(nullptr)) d->release(memory);
    memory = nullptr;
    capacity = 0;
  }
};
thread_local DeviceArenaCache device_arena_cache;

} // namespace

int32_t dsc_call::fail(std::string message, dsc::runtime::CallErrorKind kind) {
  if (!error.empty()) return 1;
  error = std::move(message);
  error_kind = kind;
  return 1;
}

namespace {

// A dim that is a symbol by itself ("B", not "S*2" or "768").
bool is_symbol(const std::string& dim) {
  if (dim.empty() || !(std::isalpha(static_cast<unsigned char>(dim[0])) || dim[0] == '_'))
    return false;
  for (char c : dim)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

} // namespace

std::string dsc_call::at_symbols() const {
  if (!info || !inputs) return "";
  std::vector<std::string> seen;
  std::string text;
  for (size_t i = 0; i < info->params.size(); ++i) {
    const DLTensor* t = inputs[i];
    const std::vector<std::string>& dims = info->params[i].dims;
    if (!t || !t->shape || t->ndim != static_cast<int32_t>(dims.size())) continue;
    for (size_t d = 0; d < dims.size(); ++d) {
      if (!is_symbol(dims[d]) || std::find(seen.begin(), seen.end(), dims[d]) != seen.end())
        continue;
      seen.push_back(dims[d]);
      text += (text.empty() ? " at " : ", ") + dims[d] + "=" + std::to_string(t->shape[d]);
    }
  }
  return text;
}

namespace dsc::runtime {

std::string describe_dtype(DLDataType d) {
  std::string name = dtype_name(d);
  if (name != "?") return name;
  return "dtype(code " + std::to_string(d.code) + ", bits " + std::to_string(d.bits) + ", lanes " +
         std::to_string(d.lanes) + ")";
}

std::string dl_type_string(const DLTensor& t) {
  std::string s = describe_dtype(t.dtype) + "[";
  for (int32_t i = 0; i < t.ndim && t.shape; ++i)
    s += (i ? ", " : "") + std::to_string(t.shape[i]);
  return s + "]";
}

} // namespace dsc::runtime

namespace {

using namespace dsc::runtime;

std::string list(const int64_t* values, int32_t n) {
  std::string s = "[";
  for (int32_t i = 0; i < n; ++i)
    s += (i ? ", " : "") + std::to_string(values[i]);
  return s + "]";
}

std::string device_name(DLDevice d) {
  const char* name = nullptr;
  switch (d.device_type) {
  case kDLCPU:
    name = "cpu";
    break;
  case kDLCUDA:
    name = "cuda";
    break;
  case kDLCUDAHost:
    name = "cuda_host";
    break;
  case kDLOpenCL:
    name = "opencl";
    break;
  case kDLVulkan:
    name = "vulkan";
    break;
  case kDLMetal:
    name = "metal";
    break;
  case kDLVPI:
    name = "vpi";
    break;
  case kDLROCM:
    name = "rocm";
    break;
  case kDLROCMHost:
    name = "rocm_host";
    break;
  case kDLExtDev:
    name = "ext_dev";
    break;
  case kDLCUDAManaged:
    name = "cuda_managed";
    break;
  default:
    break;
  }
  std::string s = name ? name : "device type " + std::to_string(static_cast<int>(d.device_type));
  return s + ":" + std::to_string(d.device_id);
}

const TensorInfo* param_info(const dsc_call* call, int32_t index) {
  if (!call->info || index < 0 || static_cast<size_t>(index) >= call->info->params.size())
    return nullptr;
  return &call->info->params[static_cast<size_t>(index)];
}

std::string input_label(const dsc_call* call, int32_t index) {
  const TensorInfo* p = param_info(call, index);
  return p ? "input '" + p->name + "'" : "input " + std::to_string(index);
}

std::string function_label(const dsc_call* call) {
  return call->info ? "'" + call->info->name + "'" : "the function";
}

// Whether the call's function runs on the CUDA device (its manifest says "cuda").
bool on_cuda(const dsc_call* call) {
  return call->info && call->info->device == DeviceKind::Cuda;
}

} // namespace

extern "C" {

int32_t dsc_rt_check_input(dsc_call* call, int32_t index, const DLTensor* tensor, int32_t code,
                           int32_t bits, int32_t ndim) {
  if (!call) return 1;
  // Every refusal here is about the input the caller passed.
  auto refuse = [call](std::string message) {
    return call->fail(std::move(message), CallErrorKind::Input);
  };
  const std::string label = input_label(call, index);
  const DLDataType want{static_cast<uint8_t>(code), static_cast<uint8_t>(bits), 1};
  const TensorInfo* p = param_info(call, index);
  const std::string expected =
      p ? p->type_string() : describe_dtype(want) + " of rank " + std::to_string(ndim);
  if (!tensor) return refuse(label + " is null; expected " + expected);
  if (tensor->ndim < 0 || (tensor->ndim > 0 && !tensor->shape))
    return refuse(label + " has an invalid shape (ndim " + std::to_string(tensor->ndim) +
                      (tensor->shape ? "" : ", no shape array") + "); expected " + expected);
  // The function's device (its manifest's), the CPU when the call has no manifest entry.
  const DeviceKind device = call->info ? call->info->device : DeviceKind::Cpu;
  if (tensor->device.device_type != dl_device_type(device)) {
    std::string upper = device_kind_name(device);
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return refuse(label + " is on " + device_name(tensor->device) + "; expected a " + upper +
                      " tensor (" + expected + ")");
  }
  if (tensor->device.device_type == kDLCUDA && tensor->device.device_id != 0)
    return refuse(label + " is on " + device_name(tensor->device) +
                      "; dsc runs on CUDA device 0 (cuda:0) only");
  const std::string actual = dl_type_string(*tensor);
  const bool rank_ok = tensor->ndim == ndim;
  if (!same_dtype(tensor->dtype, want) || !rank_ok)
    return refuse(label + " is " + actual + "; expected " + expected +
                      (rank_ok ? "" : " (rank " + std::to_string(ndim) + ")"));
  std::vector<int64_t> shape(tensor->shape, tensor->shape + tensor->ndim);
  for (int32_t i = 0; i < ndim; ++i)
    if (shape[static_cast<size_t>(i)] < 0)
      return refuse(label + " is " + actual + ": dim " + std::to_string(i) + " is negative");
  uint64_t bytes = 0;
  if (!checked_nbytes(want, shape, &bytes))
    return refuse(label + " is " + actual + ", which is too large to address");
  if (bytes == 0) return 0; // an empty tensor's strides and data are never read
  if (tensor->strides) {
    // Dense row-major; a dim of size 1 may have any stride (DLPack producers differ there).
    std::vector<int64_t> compact(shape.size());
    int64_t stride = 1;
    bool dense = true;
    for (int32_t i = ndim - 1; i >= 0; --i) {
      size_t u = static_cast<size_t>(i);
      compact[u] = stride;
      if (shape[u] != 1 && tensor->strides[u] != stride) dense = false;
      stride *= shape[u];
    }
    if (!dense)
      return refuse(label + " (" + actual + ") is not dense row-major: its strides are " +
                        list(tensor->strides, ndim) + ", expected " + list(compact.data(), ndim) +
                        " (or no strides)");
  }
  if (!tensor->data) return refuse(label + " (" + actual + ") has a null data pointer");
  auto address = reinterpret_cast<uintptr_t>(tensor->data) + tensor->byte_offset;
  const size_t element = dtype_bytes(want);
  if (element > 1 && address % element != 0)
    return refuse(label + " (" + actual + ") is not aligned to its " + std::to_string(element) +
                      "-byte elements");
  return 0;
}

int32_t dsc_rt_fail_dim(dsc_call* call, int32_t index, int32_t axis, int64_t actual,
                        int64_t expected, const char* expected_text) {
  if (!call) return 1;
  std::string message = input_label(call, index) + " dim " + std::to_string(axis) + " is " +
                        std::to_string(actual) + ", but it must equal ";
  std::string value = std::to_string(expected);
  if (expected_text && *expected_text && value != expected_text)
    message += std::string(expected_text) + " = ";
  return call->fail(message + value, CallErrorKind::Shape);
}

int32_t dsc_rt_fail_check(dsc_call* call, const char* what, const char* location,
                          int32_t num_symbols, const char* const* names, const int64_t* values) {
  if (!call) return 1;
  std::string message = std::string(what && *what ? what : "a run-time check") + " violated";
  for (int32_t i = 0; i < num_symbols && names && values; ++i)
    message += std::string(i ? ", " : ": ") + (names[i] ? names[i] : "?") + " = " +
               std::to_string(values[i]);
  if (location && *location) message += std::string(" (") + location + ")";
  return call->fail(std::move(message), CallErrorKind::Shape);
}

int32_t dsc_rt_fail_overflow(dsc_call* call, const char* what) {
  if (!call) return 1;
  return call->fail("cannot allocate " + std::string(what && *what ? what : "memory") + " of " +
                    function_label(call) + call->at_symbols() + ": its size overflows 64 bits");
}

void* dsc_rt_input_data(const DLTensor* tensor) {
  if (!tensor || !tensor->data) return nullptr;
  return static_cast<char*>(tensor->data) + tensor->byte_offset;
}

void* dsc_rt_arena(dsc_call* call, int64_t bytes) {
  if (!call) return nullptr;
  if (call->arena_requested) {
    call->fail("internal error: " + function_label(call) + " asked for its arena twice");
    return nullptr;
  }
  call->arena_requested = true;
  call->arena_bytes = bytes;
  if (bytes < 0) {
    call->fail("the arena of " + function_label(call) + " would be " + std::to_string(bytes) +
               " bytes, a negative size");
    return nullptr;
  }
  if (on_cuda(call)) {
    DeviceArenaCache& cache = device_arena_cache;
    if (static_cast<uint64_t>(bytes) <= cache.capacity && cache.memory) {
      call->arena = cache.memory;
      return call->arena;
    }
    cache.release();
    const std::string what = "the arena of " + function_label(call) + call->at_symbols();
    std::string error;
    dsc::runtime::cuda::Device* d = dsc::runtime::cuda::device(&error);
    call->arena = d ? d->allocate(static_cast<uint64_t>(bytes), what, &error) : nullptr;
    if (!call->arena) {
      call->fail(d ? error : "cannot allocate " + what + " on the GPU: " + error);
      return nullptr;
    }
    cache.memory = call->arena;
    cache.capacity = static_cast<uint64_t>(bytes);
    return call->arena;
  }
  if (static_cast<uint64_t>(bytes) <= arena_cache.capacity && arena_cache.memory) {
    call->arena = arena_cache.memory;
    return call->arena;
  }
  std::free(arena_cache.memory);
  arena_cache = {};
  std::string error;
  call->arena =
      aligned_allocate(static_cast<uint64_t>(bytes),
                       "the arena of " + function_label(call) + call->at_symbols(), &error);
  if (!call->arena) {
    call->fail(error);
    return nullptr;
  }
  arena_cache.memory = call->arena;
  arena_cache.capacity = static_cast<uint64_t>(bytes);
  return call->arena;
}

void* dsc_rt_output(dsc_call* call, int32_t index, int32_t code, int32_t bits, int32_t ndim,
                    const int64_t* shape) {
  if (!call) return nullptr;
  const std::string label = "output " + std::to_string(index) + " of " + function_label(call);
  if (index < 0 || static_cast<size_t>(index) >= call->outputs.size()) {
    call->fail("internal error: " + label + " does not exist (it has " +
               std::to_string(call->outputs.size()) + " outputs)");
    return nullptr;
  }
  const size_t u = static_cast<size_t>(index);
  if (call->outputs[u].defined()) {
    call->fail("internal error: " + label + " allocated twice");
    return nullptr;
  }
  const DLDataType dtype{static_cast<uint8_t>(code), static_cast<uint8_t>(bits), 1};
  if (ndim < 0 || (ndim > 0 && !shape)) {
    call->fail("internal error: " + label + " allocated with an invalid rank " +
               std::to_string(ndim));
    return nullptr;
  }
  std::vector<int64_t> dims(shape, shape + ndim);
  std::string actual = describe_dtype(dtype) + list(dims.data(), ndim);
  if (call->info) {
    const TensorInfo& declared = call->info->outputs[u];
    DLDataType declared_dtype{};
    if (!parse_dtype_name(declared.dtype, &declared_dtype) || !same_dtype(declared_dtype, dtype) ||
        declared.dims.size() != dims.size()) {
      call->fail("internal error: " + label + " allocated as " + actual +
                 ", but the manifest declares " + declared.type_string());
      return nullptr;
    }
    actual += " (declared " + declared.type_string() + ")";
  }
  for (int32_t i = 0; i < ndim; ++i) {
    if (dims[static_cast<size_t>(i)] < 0) {
      call->fail(label + " would be " + actual + ": dim " + std::to_string(i) + " is negative");
      return nullptr;
    }
  }
  std::string error;
  std::optional<Tensor> t =
      on_cuda(call) ? Tensor::try_empty(DLDevice{kDLCUDA, 0}, dtype, std::move(dims), "", &error)
                    : Tensor::try_empty(dtype, std::move(dims), &error);
  if (!t) {
    call->fail(label + call->at_symbols() + ": " + error);
    return nullptr;
  }
  call->outputs[u] = std::move(*t);
  return call->outputs[u].data();
}

} // extern "C"
