#pragma once
// The per-call state behind HostABI.h's `dsc_call`: which function is running (its manifest
// entry, for error messages), the first error recorded, the outputs allocated so far, and the
// arena. call_host_function (Model.h) makes one for each call; the dsc_rt_* functions that
// compiled code calls fill it in.

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/HostABI.h"
#include "runtime/Manifest.h"
#include "runtime/Tensor.h"

namespace dsc::runtime {

// What a failed call was refused for, so that callers can tell the user's mistake from the
// model's: Python raises dsc.ShapeError and dsc.InputError for the first two.
enum class CallErrorKind : uint8_t {
  Runtime, // anything else: memory, the device, an internal error
  Shape,   // a violated `where` clause or run-time shape fact, or dims that disagree
  Input,   // an input of the wrong dtype, rank, device or layout, or missing
};

} // namespace dsc::runtime

struct dsc_call {
  explicit dsc_call(const dsc::runtime::FunctionInfo* function);
  ~dsc_call();
  dsc_call(const dsc_call&) = delete;
  dsc_call& operator=(const dsc_call&) = delete;

  const dsc::runtime::FunctionInfo* info;
  // The call's inputs (set by call_host_function; null when a test calls dsc_rt_* directly),
  // for naming the symbol values in errors about sizes.
  const DLTensor* const* inputs = nullptr;
  // The first error recorded (later ones are usually its consequences); empty when none.
  std::string error;
  dsc::runtime::CallErrorKind error_kind = dsc::runtime::CallErrorKind::Runtime;
  // One slot per manifest output; undefined until dsc_rt_output allocates it.
  std::vector<dsc::runtime::Tensor> outputs;
  void* arena = nullptr; // the thread's cached arena (HostCall.cpp), valid during the call
  bool arena_requested = false;
  int64_t arena_bytes = 0;

  // Records `message` (and its kind) unless an error is already recorded; returns 1 (the
  // failure code).
  int32_t fail(std::string message,
               dsc::runtime::CallErrorKind kind = dsc::runtime::CallErrorKind::Runtime);

  // " at B=2, S=7": the symbols that input dims name by themselves, with their values in
  // this call's inputs, in parameter order; "" when there are none or no inputs are known.
  std::string at_symbols() const;
};

namespace dsc::runtime {

// "f32[2, 7, 3]" for any DLTensor (unknown dtypes as "dtype(code 1, bits 16, lanes 1)").
std::string dl_type_string(const DLTensor& t);
// "f32", or "dtype(code 1, bits 16, lanes 1)" for a type dsc does not name.
std::string describe_dtype(DLDataType d);

} // namespace dsc::runtime
