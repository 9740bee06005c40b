#pragma once
// What a compiled module exposes: its entry functions, each with its host-function symbol,
// the device its tensors live on, its parameters and outputs (dtype and dims as text, e.g. "f32", ["B", "S", "768"]), the
// symbols its parameters bind, and the memory plan's sizes as symbolic expressions (text).
// A built `.so` embeds it as JSON in `dsc_manifest`; the JIT keeps it as this struct.

#include <string>
#include <vector>

#include "runtime/DeviceKind.h"

namespace dsc::runtime {

struct TensorInfo {
  std::string name;               // parameter name; "output0", ... for outputs
  std::string dtype;              // "f32", "i64", "bool", ...
  std::vector<std::string> dims;  // each a symbolic::Expr in text: "B", "S*12", "768"
  // An output only: the parameter it is, updated in place (an update_slice written into the
  // caller's buffer: the call returns that tensor), or -1 for a tensor of its own.
  int updates_param = -1;
  std::string type_string() const; // "f32[B, S, 768]"
};

struct FunctionInfo {
  std::string name;         // "layer"
  std::string host_symbol;  // the dsc_host_function to call
  DeviceKind device = DeviceKind::Cpu; // where its inputs and outputs live
  std::vector<TensorInfo> params;
  std::vector<TensorInfo> outputs;
  std::vector<std::string> where_clauses; // its `where` clauses: "1 <= S", "S <= 512"
  std::string arena_bytes;  // symbolic expression (text) over the symbols
  std::string peak_bytes;   // the largest sum of live intermediates, same form
};

struct Manifest {
  int version = 7;
  std::vector<FunctionInfo> functions;
  const FunctionInfo* find(const std::string& name) const; // null when absent
};

// The JSON form, keys in this order, compact:
//   {"version":7,"functions":[{"name":"layer","host_symbol":"dsc_host_layer","device":"cpu",
//     "params":[{"name":"x","dtype":"f32","dims":["B","S","768"]}, ...],
//     "outputs":[{"name":"output0","dtype":"f32","dims":["B","S","768"],"updates_param":-1}],
//     "where_clauses":["S <= 512"],
//     "arena_bytes":"B*S*3072","peak_bytes":"B*S*3072"}, ...]}
std::string to_json(const Manifest& m);
// False (with `error` set, naming the place: "functions[0].params[1].dtype: unknown dtype
// 'f33' ...") when the text is not a valid manifest; `out` is then left alone. Reading is
// strict: every key above is required and no other is allowed (nor a key twice), version must
// be 7, the device is a target kind of ir/TargetKinds.def ("cpu" or "cuda"), names, dims and sizes
// are non-empty strings, dtypes are dsc's (dtype_name), host_symbol is a C identifier, and function
// names and each function's parameter and output names are unique.
bool from_json(const std::string& text, Manifest* out, std::string* error);

} // namespace dsc::runtime
