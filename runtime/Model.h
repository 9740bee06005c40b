#pragma once
// Running compiled host functions from C++ (dscc, tests) and loading built `.so` files. The C
// API in dsc_runtime.h is a thin layer over this.

#include <memory>
#include <string>
#include <vector>

#include "runtime/HostABI.h"
#include "runtime/HostCall.h"
#include "runtime/Manifest.h"
#include "runtime/Tensor.h"

namespace dsc::runtime {

struct CallResult {
  std::vector<Tensor> outputs;
  std::string error;       // empty on success
  CallErrorKind error_kind = CallErrorKind::Runtime; // what `error` is about
  int64_t arena_bytes = 0; // what the call asked of dsc_rt_arena
  bool ok() const { return error.empty(); }
};

// Calls a host function with a fresh dsc_call for `info`; inputs in parameter order. A wrong
// number of inputs is an error result, as is anything the host function reports.
//
// A function whose manifest device is "cuda" fails before its host code runs when there is
// no device (check_device), and after its host function returns the call waits for the
// device: a kernel's asynchronous error becomes the call's error ("the call of 'layer' failed
// on the GPU: CUDA_ERROR_ILLEGAL_ADDRESS: ..."), and its outputs are complete when it returns.
CallResult call_host_function(const FunctionInfo& info, dsc_host_function fn,
                              const std::vector<const DLTensor*>& inputs);

// Whether the function's device is there: always for "cpu"; for "cuda", false with *error
// set ("'layer' runs on CUDA, but there is no CUDA device: libcuda.so.1 cannot be loaded
// (...)") when cuda::device() has none.
bool check_device(const FunctionInfo& info, std::string* error);

// A model: a manifest plus the address of each function's host function. Made by the CPU
// backend's JIT or by loading a `.so`.
class Model {
public:
  virtual ~Model() = default;
  virtual const Manifest& manifest() const = 0;
  // Null when the manifest names no such function.
  virtual dsc_host_function host_function(const std::string& name) const = 0;

  // Thread-safe: one model may run on several threads at once.
  CallResult run(const std::string& function, const std::vector<const DLTensor*>& inputs) const;
};

// dlopen()s a `.so` built by `dscc build` (RTLD_NOW | RTLD_LOCAL; the library stays loaded
// while the Model lives) and reads its manifest. Null with `error` set when the file is
// missing, not a shared library, has no valid manifest, or lacks a host function the manifest
// names.
std::unique_ptr<Model> load_shared_library(const std::string& path, std::string* error);

} // namespace dsc::runtime
