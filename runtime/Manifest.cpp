#include "runtime/Manifest.h"

#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/Tensor.h"

namespace dsc::runtime {

namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// 2: functions name their device, and library routines take int64 scalars only.
// 3: GEMM epilogues take a first-row slot, blas.sgemm reads strided views, and dsc.sgemm_chain
// exists; a library compiled for version 2 calls the runtime with other arguments.
// 4: cublas.sgemm takes dsc.sgemm's strided scalars (19 instead of 7); a CUDA library compiled
// for version 3 would call it with other arguments.
// 5: the strided GEMM routines (dsc.sgemm, blas.sgemm, dsc.sgemm_chain, cublas.sgemm, the
// cublaslt.sgemm_* routines) take their scalars as one descriptor (HostABI.h's
// dsc_strided_product, dsc_strided_chain); a library compiled for version 4 passes them one by
// one.
// 6: an output may be a parameter updated in place (`updates_param`); the runtime returns the
// caller's tensor for it, which a library compiled for version 5 never asks of it.
constexpr int kVersion = 7;

ordered_json tensor_json(const TensorInfo& t, bool output) {
  ordered_json j;
  j["name"] = t.name;
  j["dtype"] = t.dtype;
  j["dims"] = t.dims;
  if (output) j["updates_param"] = t.updates_param;
  return j;
}

// The reader: each check names where in the document it failed ("functions[0].params[1]").
class Reader {
public:
  explicit Reader(std::string* error) : error_(error) {}

  bool manifest(const json& root, Manifest* out) {
    if (!object(root, "the manifest", {"version", "functions"})) return false;
    const json& version = root.at("version");
    if (!version.is_number_integer())
      return fail("the manifest: 'version' is " + kind(version) + ", not an integer");
    if (version.get<int64_t>() != kVersion)
      return fail("unsupported manifest version " + version.dump() + " (this runtime reads " +
                  std::to_string(kVersion) + ")");
    out->version = kVersion;
    const json& functions = root.at("functions");
    if (!functions.is_array())
      return fail("the manifest: 'functions' is " + kind(functions) + ", not an array");
    std::set<std::string> names;
    for (size_t i = 0; i < functions.size(); ++i) {
      FunctionInfo f;
      if (!function(functions[i], "functions[" + std::to_string(i) + "]", &f)) return false;
      if (!names.insert(f.name).second)
        return fail("functions[" + std::to_string(i) + "]: duplicate function name '" + f.name +
                    "'");
      out->functions.push_back(std::move(f));
    }
    return true;
  }

private:
  bool fail(const std::string& message) {
    if (error_) *error_ = message;
    return false;
  }

  static std::string kind(const json& v) {
    switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "an array";
    case json::value_t::string:
      return "a string";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      return "a number";
    default:
      return "not a value";
    }
  }

  // An object with exactly these keys.
  bool object(const json& v, const std::string& where, std::initializer_list<const char*> keys) {
    if (!v.is_object()) return fail(where + " is " + kind(v) + ", not an object");
    for (const auto& item : v.items()) {
      bool known = false;
      for (const char* k : keys)
        known = known || item.key() == k;
      if (!known) return fail(where + ": unexpected key '" + item.key() + "'");
    }
    for (const char* k : keys)
      if (!v.contains(k)) return fail(where + ": missing key '" + k + "'");
    return true;
  }

  bool string(const json& v, const std::string& where, std::string* out) {
    if (!v.is_string()) return fail(where + " is " + kind(v) + ", not a string");
    *out = v.get<std::string>();
    if (out->empty()) return fail(where + " is an empty string");
    return true;
  }

  static bool is_c_identifier(const std::string& s) {
    if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
    for (char c : s)
      if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
        return false;
    return true;
  }

  bool tensor(const json& v, const std::string& where, bool output, TensorInfo* out) {
    if (output ? !object(v, where, {"name", "dtype", "dims", "updates_param"})
               : !object(v, where, {"name", "dtype", "dims"}))
      return false;
    if (output) {
      const json& p = v.at("updates_param");
      if (!p.is_number_integer() || p.get<int64_t>() < -1 || p.get<int64_t>() > (1 << 20))
        return fail(where + ".updates_param is " + p.dump() + ", not -1 or a parameter's index");
      out->updates_param = static_cast<int>(p.get<int64_t>());
    }
    if (!string(v.at("name"), where + ".name", &out->name)) return false;
    if (!string(v.at("dtype"), where + ".dtype", &out->dtype)) return false;
    DLDataType unused;
    if (!parse_dtype_name(out->dtype, &unused))
      return fail(where + ".dtype: unknown dtype '" + out->dtype +
                  "' (known: bool i8 i32 i64 f16 bf16 f32 f64)");
    const json& dims = v.at("dims");
    if (!dims.is_array()) return fail(where + ".dims is " + kind(dims) + ", not an array");
    for (size_t i = 0; i < dims.size(); ++i) {
      std::string d;
      if (!string(dims[i], where + ".dims[" + std::to_string(i) + "]", &d)) return false;
      out->dims.push_back(std::move(d));
    }
    return true;
  }

  bool tensors(const json& v, const std::string& where, bool output, std::vector<TensorInfo>* out) {
    if (!v.is_array()) return fail(where + " is " + kind(v) + ", not an array");
    std::set<std::string> names;
    for (size_t i = 0; i < v.size(); ++i) {
      std::string at = where + "[" + std::to_string(i) + "]";
      TensorInfo t;
      if (!tensor(v[i], at, output, &t)) return false;
      if (!names.insert(t.name).second) return fail(at + ": duplicate name '" + t.name + "'");
      out->push_back(std::move(t));
    }
    return true;
  }

  bool function(const json& v, const std::string& where, FunctionInfo* out) {
    if (!object(v, where,
                {"name", "host_symbol", "device", "params", "outputs", "where_clauses", "arena_bytes",
                 "peak_bytes"}))
      return false;
    if (!string(v.at("name"), where + ".name", &out->name)) return false;
    if (!string(v.at("host_symbol"), where + ".host_symbol", &out->host_symbol)) return false;
    if (!is_c_identifier(out->host_symbol))
      return fail(where + ".host_symbol: '" + out->host_symbol + "' is not a C identifier");
    std::string device;
    if (!string(v.at("device"), where + ".device", &device)) return false;
    std::optional<DeviceKind> device_kind = device_kind_named(device);
    if (!device_kind)
      return fail(where + ".device: '" + device + "' is not a device (" + device_kind_names() +
                  ")");
    out->device = *device_kind;
    if (!tensors(v.at("params"), where + ".params", false, &out->params)) return false;
    if (!tensors(v.at("outputs"), where + ".outputs", true, &out->outputs)) return false;
    for (size_t k = 0; k < out->outputs.size(); ++k) {
      const int p = out->outputs[k].updates_param;
      if (p < 0) continue;
      const std::string at = where + ".outputs[" + std::to_string(k) + "]";
      if (static_cast<size_t>(p) >= out->params.size())
        return fail(at + " updates parameter " + std::to_string(p) + ", which does not exist");
      const TensorInfo& param = out->params[static_cast<size_t>(p)];
      if (param.dtype != out->outputs[k].dtype || param.dims.size() != out->outputs[k].dims.size())
        return fail(at + " updates parameter " + std::to_string(p) + " (" + param.type_string() +
                    ") but is " + out->outputs[k].type_string());
    }
    const json& clauses = v.at("where_clauses");
    if (!clauses.is_array()) return fail(where + ".where_clauses is " + kind(clauses) + ", not an array");
    for (size_t i = 0; i < clauses.size(); ++i) {
      std::string clause;
      if (!string(clauses[i], where + ".where_clauses[" + std::to_string(i) + "]", &clause)) return false;
      out->where_clauses.push_back(std::move(clause));
    }
    if (!string(v.at("arena_bytes"), where + ".arena_bytes", &out->arena_bytes)) return false;
    return string(v.at("peak_bytes"), where + ".peak_bytes", &out->peak_bytes);
  }

  std::string* error_;
};

} // namespace

std::string TensorInfo::type_string() const {
  std::string s = dtype + "[";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? ", " : "") + dims[i];
  return s + "]";
}

const FunctionInfo* Manifest::find(const std::string& name) const {
  for (const FunctionInfo& f : functions)
    if (f.name == name) return &f;
  return nullptr;
}

std::string to_json(const Manifest& m) {
  ordered_json root;
  root["version"] = m.version;
  ordered_json functions = ordered_json::array();
  for (const FunctionInfo& f : m.functions) {
    ordered_json j;
    j["name"] = f.name;
    j["host_symbol"] = f.host_symbol;
    j["device"] = device_kind_name(f.device);
    j["params"] = ordered_json::array();
    for (const TensorInfo& t : f.params)
      j["params"].push_back(tensor_json(t, false));
    j["outputs"] = ordered_json::array();
    for (const TensorInfo& t : f.outputs)
      j["outputs"].push_back(tensor_json(t, true));
    j["where_clauses"] = f.where_clauses;
    j["arena_bytes"] = f.arena_bytes;
    j["peak_bytes"] = f.peak_bytes;
    functions.push_back(std::move(j));
  }
  root["functions"] = std::move(functions);
  // Invalid UTF-8 in a name is replaced rather than thrown.
  return root.dump(-1, ' ', false, ordered_json::error_handler_t::replace);
}

bool from_json(const std::string& text, Manifest* out, std::string* error) {
  // nlohmann keeps the last of duplicate keys silently; the parse callback catches them.
  std::vector<std::set<std::string>> open_objects;
  std::string duplicate;
  auto callback = [&](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) {
      open_objects.emplace_back();
    } else if (event == json::parse_event_t::object_end) {
      if (!open_objects.empty()) open_objects.pop_back();
    } else if (event == json::parse_event_t::key && !open_objects.empty()) {
      const std::string& key = parsed.get_ref<const std::string&>();
      if (!open_objects.back().insert(key).second && duplicate.empty()) duplicate = key;
    }
    return true;
  };
  json root;
  try {
    root = json::parse(text, callback);
  } catch (const json::exception& e) {
    if (error) *error = std::string("the manifest is not valid JSON: ") + e.what();
    return false;
  }
  if (!duplicate.empty()) {
    if (error) *error = "the manifest has a duplicate key '" + duplicate + "'";
    return false;
  }
  Manifest m;
  if (!Reader(error).manifest(root, &m)) return false;
  *out = std::move(m);
  return true;
}

} // namespace dsc::runtime
