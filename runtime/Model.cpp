#include "runtime/Model.h"

#include "runtime/HostCall.h"

namespace dsc::runtime {

namespace {

std::string names(const std::vector<TensorInfo>& params) {
  std::string s;
  for (size_t i = 0; i < params.size(); ++i)
    s += (i ? ", " : "") + params[i].name;
  return s;
}

} // namespace

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
    return result;
  }
  dsc_call call(&info);
  call.inputs = inputs.data();
  int32_t status = fn(&call, inputs.data());
  result.arena_bytes = call.arena_bytes;
  if (status != 0 || !call.error.empty()) {
    result.error = !call.error.empty() ? call.error
                                       : "function '" + info.name + "' failed (status " +
                                             std::to_string(status) + ") without an error message";
    return result;
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
