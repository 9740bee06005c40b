#include "runtime/Safetensors.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/DTypeTable.h"
#include "support/File.h"

namespace dsc::runtime {

namespace {

using nlohmann::json;

constexpr const char* kMetadataKey = "__metadata__";

const char* name_of(DLDataType d) {
  for (const RuntimeDType& t : kRuntimeDTypes)
    if (same_dtype(t.type, d)) return t.safetensors;
  return nullptr;
}

template <typename T> std::optional<T> fail(std::string* error, std::string message) {
  if (error) *error = std::move(message);
  return std::nullopt;
}

struct Entry {
  std::string name;
  DLDataType dtype;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;
};

// A JSON value that must be a non-negative integer fitting int64.
bool as_index(const json& v, uint64_t* out) {
  if (!v.is_number_unsigned()) return false;
  uint64_t u = v.get<uint64_t>();
  if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return false;
  *out = u;
  return true;
}

std::optional<Entry> parse_entry(const std::string& name, const json& v, std::string* error) {
  std::string where = "tensor '" + name + "': ";
  if (!v.is_object()) return fail<Entry>(error, where + "entry is not a JSON object");
  for (const auto& [key, unused] : v.items()) {
    (void)unused;
    if (key != "dtype" && key != "shape" && key != "data_offsets")
      return fail<Entry>(error, where + "unexpected key '" + key + "'");
  }
  auto dtype = v.find("dtype");
  auto shape = v.find("shape");
  auto offsets = v.find("data_offsets");
  if (dtype == v.end() || shape == v.end() || offsets == v.end())
    return fail<Entry>(error, where + "entry needs 'dtype', 'shape' and 'data_offsets'");
  Entry e;
  e.name = name;
  if (!dtype->is_string()) return fail<Entry>(error, where + "'dtype' is not a string");
  const std::string& dname = dtype->get_ref<const std::string&>();
  const RuntimeDType* found = nullptr;
  for (const RuntimeDType& n : kRuntimeDTypes)
    if (dname == n.safetensors) found = &n;
  if (!found) {
    std::string supported;
    for (const RuntimeDType& n : kRuntimeDTypes)
      supported += (supported.empty() ? "" : " ") + std::string(n.safetensors);
    return fail<Entry>(error,
                       where + "unsupported dtype '" + dname + "' (supported: " + supported + ")");
  }
  e.dtype = found->type;
  if (!shape->is_array()) return fail<Entry>(error, where + "'shape' is not an array");
  // Bound the product of the nonzero dims so that neither this nor Tensor::numel overflows.
  size_t itemsize = dtype_bytes(e.dtype);
  uint64_t limit = static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / itemsize;
  uint64_t nonzero = 1;
  bool empty = false;
  for (const json& d : *shape) {
    uint64_t u = 0;
    if (!as_index(d, &u))
      return fail<Entry>(error, where +
                                    "shape dims must be non-negative integers that fit "
                                    "int64, got a " +
                                    std::string(d.type_name()));
    e.shape.push_back(static_cast<int64_t>(u));
    if (u == 0) {
      empty = true;
      continue;
    }
    if (nonzero > limit / u)
      return fail<Entry>(error, where + "shape overflows the addressable size");
    nonzero *= u;
  }
  uint64_t nbytes = empty ? 0 : nonzero * itemsize;
  if (!offsets->is_array() || offsets->size() != 2 || !as_index((*offsets)[0], &e.begin) ||
      !as_index((*offsets)[1], &e.end))
    return fail<Entry>(error, where + "'data_offsets' must be [begin, end] of non-negative ints");
  if (e.begin > e.end)
    return fail<Entry>(error, where + "data_offsets [" + std::to_string(e.begin) + ", " +
                                  std::to_string(e.end) + "] end before they begin");
  if (e.end - e.begin != nbytes)
    return fail<Entry>(error, where + "data_offsets [" + std::to_string(e.begin) + ", " +
                                  std::to_string(e.end) + "] span " +
                                  std::to_string(e.end - e.begin) + " bytes but " + dname +
                                  " shape needs " + std::to_string(nbytes));
  return e;
}

} // namespace

std::optional<TensorMap> read_safetensors_bytes(std::string_view bytes, std::string* error) {
  if (bytes.size() < 8)
    return fail<TensorMap>(error, "safetensors file truncated: " + std::to_string(bytes.size()) +
                                      " bytes, fewer than the 8-byte header length");
  uint64_t header_len = 0;
  for (size_t k = 0; k < 8; ++k)
    header_len |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[k])) << (8 * k);
  if (header_len > bytes.size() - 8)
    return fail<TensorMap>(error, "safetensors header length " + std::to_string(header_len) +
                                      " runs past the end of the file (" +
                                      std::to_string(bytes.size() - 8) + " bytes follow)");
  std::string_view header = bytes.substr(8, header_len);
  std::string_view data = bytes.substr(8 + header_len);

  // nlohmann keeps the last of duplicate keys silently; the callback sees every key.
  std::set<std::string> seen;
  std::string duplicate;
  auto on_event = [&](int depth, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::key && depth == 1 && duplicate.empty()) {
      const std::string& key = parsed.get_ref<const std::string&>();
      if (!seen.insert(key).second) duplicate = key;
    }
    return true;
  };
  json root;
  try {
    root = json::parse(header.begin(), header.end(), on_event);
  } catch (const json::exception& e) {
    return fail<TensorMap>(error, std::string("safetensors header is not valid JSON: ") + e.what());
  }
  if (!duplicate.empty())
    return fail<TensorMap>(error,
                           "safetensors header has duplicate tensor name '" + duplicate + "'");
  if (!root.is_object()) return fail<TensorMap>(error, "safetensors header is not a JSON object");

  std::vector<Entry> entries;
  for (const auto& [name, value] : root.items()) {
    if (name == kMetadataKey) continue;
    std::optional<Entry> e = parse_entry(name, value, error);
    if (!e) return std::nullopt;
    if (e->end > data.size())
      return fail<TensorMap>(error, "tensor '" + name + "': data_offsets end " +
                                        std::to_string(e->end) + " is past the " +
                                        std::to_string(data.size()) + "-byte data buffer");
    entries.push_back(std::move(*e));
  }

  std::vector<const Entry*> order;
  for (const Entry& e : entries)
    order.push_back(&e);
  std::stable_sort(order.begin(), order.end(), [](const Entry* a, const Entry* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  uint64_t covered = 0;
  const Entry* previous = nullptr;
  for (const Entry* e : order) {
    if (e->begin < covered)
      return fail<TensorMap>(error, "tensors '" + previous->name + "' and '" + e->name +
                                        "' overlap in the data buffer");
    if (e->begin > covered)
      return fail<TensorMap>(error, "safetensors data buffer has a hole at bytes [" +
                                        std::to_string(covered) + ", " + std::to_string(e->begin) +
                                        ")");
    covered = e->end;
    previous = e;
  }
  if (covered != data.size())
    return fail<TensorMap>(error, "safetensors data buffer has " +
                                      std::to_string(data.size() - covered) +
                                      " bytes not used by any tensor");

  TensorMap out;
  for (const Entry& e : entries) {
    const char* src = data.data() + e.begin;
    if (same_dtype(e.dtype, dl_bool())) {
      for (uint64_t k = 0; k < e.end - e.begin; ++k) {
        auto b = static_cast<unsigned char>(src[k]);
        if (b > 1)
          return fail<TensorMap>(error, "tensor '" + e.name + "': bool element " +
                                            std::to_string(k) + " is byte " + std::to_string(b) +
                                            ", not 0 or 1");
      }
    }
    Tensor t = Tensor::zeros(e.dtype, e.shape);
    if (e.end > e.begin) std::memcpy(t.data(), src, e.end - e.begin);
    out.emplace(e.name, std::move(t));
  }
  return out;
}

std::optional<TensorMap> read_safetensors(const std::string& path, std::string* error) {
  std::string reason;
  std::optional<std::string> bytes = read_file(path, &reason);
  if (!bytes) return fail<TensorMap>(error, path + ": cannot open for reading");
  std::string message;
  std::optional<TensorMap> tensors = read_safetensors_bytes(*bytes, &message);
  if (!tensors && error) *error = path + ": " + message;
  return tensors;
}

std::optional<std::string> safetensors_bytes(const TensorMap& tensors, std::string* error) {
  json header = json::object();
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    if (name == kMetadataKey)
      return fail<std::string>(error, "'__metadata__' is reserved and cannot name a tensor");
    if (!t.defined()) return fail<std::string>(error, "tensor '" + name + "' is undefined");
    const char* dname = name_of(t.dtype());
    if (!dname)
      return fail<std::string>(error, "tensor '" + name + "' has dtype " + dtype_name(t.dtype()) +
                                          ", which safetensors lacks");
    header[name] = {
        {"dtype", dname}, {"shape", t.shape()}, {"data_offsets", {offset, offset + t.nbytes()}}};
    offset += t.nbytes();
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const json::exception& e) {
    return fail<std::string>(error, std::string("cannot write safetensors header: ") + e.what());
  }
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string out;
  out.reserve(8 + text.size() + offset);
  for (size_t k = 0; k < 8; ++k)
    out += static_cast<char>((static_cast<uint64_t>(text.size()) >> (8 * k)) & 0xff);
  out += text;
  for (const auto& [name, t] : tensors)
    out.append(static_cast<const char*>(t.data()), t.nbytes());
  return out;
}

bool write_safetensors(const std::string& path, const TensorMap& tensors, std::string* error) {
  std::string message;
  std::optional<std::string> bytes = safetensors_bytes(tensors, &message);
  if (!bytes) {
    if (error) *error = path + ": " + message;
    return false;
  }
  std::string reason;
  if (!write_file(path, *bytes, &reason)) {
    if (error) *error = path + ": cannot open for writing";
    return false;
  }
  return true;
}

} // namespace dsc::runtime
