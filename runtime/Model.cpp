#include "runtime/Model.h"

#include "runtime/RoutineFailure.h"

#include "runtime/HostCall.h"
#include "runtime/cuda/Device.h"

namespace dsc::runtime {

namespace {

std::string names(const std::vector<TensorInfo>& params) {
  std::string s;
  for (size_t i = 0; i < params.size(); ++i)
    s += (i ? ", " : "") + params[i].name;
  return s;
}

} // namespace

bool check_device(const FunctionInfo& info, std::string* error) {
  if (info.device != DeviceKind::Cuda) return true;
  std::string reason;
  if (cuda::device(&reason)) return true;
  const std::string prefix = "no CUDA device: ";
  if (reason.rfind(prefix, 0) == 0) reason = reason.substr(prefix.size());
  if (error) *error = "'" + info.name + "' runs on CUDA, but there is no CUDA device: " + reason;
  return false;
}

CallResult call_host_function(const FunctionInfo& info, dsc_host_function fn,
                              const std::vector<const DLTensor*>& inputs) {
  CallResult result;
  if (!fn) {
    result.error = "function '" + info.name + "' has no host function";
    return result;
  }
  if (inputs.size() != info.params.size()) {
    result.error = "function '" + info.name + "' takes " + std::to_string(info.params.size()) +
                   " input" + (info.params.size() == 1 ? "" : "s") +
                   (info.params.empty() ? "" : " (" + names(info.params) + ")") + "; got " +
                   std::to_string(inputs.size());
    result.error_kind = CallErrorKind::Input;
    return result;
  }
  if (!check_device(info, &result.error)) return result;
  dsc_call call(&info);
  call.inputs = inputs.data();
  take_routine_failure(); // none left over from a routine called outside a model call
  int32_t status = fn(&call, inputs.data());
  result.arena_bytes = call.arena_bytes;
  // A library routine that could not run (runtime/RoutineFailure.h) left its result unwritten.
  if (std::optional<std::string> failed = take_routine_failure())
    call.fail("the call of '" + info.name + "' failed: " + *failed);
  if (info.device == DeviceKind::Cuda) {
    // Also after a failure: the outputs and the arena may not be released while kernels
    // still use them. The host code's own error comes first.
    std::string error;
    if (!cuda::device(nullptr)->synchronize(&error))
      call.fail("the call of '" + info.name + "' failed on the GPU: " + error);
  }
  if (status != 0 || !call.error.empty()) {
    result.error = !call.error.empty() ? call.error
                                       : "function '" + info.name + "' failed (status " +
                                             std::to_string(status) + ") without an error message";
    result.error_kind = call.error.empty() ? CallErrorKind::Runtime : call.error_kind;
    return result;
  }
  // An input updated in place is returned as itself: the output is the caller's tensor.
  for (size_t i = 0; i < call.outputs.size() && i < info.outputs.size(); ++i) {
    const int param = info.outputs[i].updates_param;
    if (!call.outputs[i].defined() && param >= 0 && static_cast<size_t>(param) < inputs.size())
      call.outputs[i] = Tensor::borrow(*inputs[static_cast<size_t>(param)]);
  }
  for (size_t i = 0; i < call.outputs.size(); ++i) {
    if (!call.outputs[i].defined()) {
      result.error = "internal error: function '" + info.name + "' returned without output " +
                     std::to_string(i);
      return result;
    }
  }
  result.outputs = std::move(call.outputs);
  return result;
}

CallResult Model::run(const std::string& function,
                      const std::vector<const DLTensor*>& inputs) const {
  const FunctionInfo* info = manifest().find(function);
  if (!info) {
    CallResult result;
    result.error = "the model has no function '" + function + "'";
    std::string known;
    for (const FunctionInfo& f : manifest().functions)
      known += (known.empty() ? "" : ", ") + f.name;
    result.error += known.empty() ? " (it has none)" : " (it has: " + known + ")";
    return result;
  }
  return call_host_function(*info, host_function(function), inputs);
}

} // namespace dsc::runtime
