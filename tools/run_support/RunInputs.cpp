#include "tools/run_support/RunInputs.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <random>
#include <set>

#include "runtime/Model.h"
#include "runtime/Npy.h"
#include "support/HalfFloat.h"
#include "runtime/Safetensors.h"
#include "runtime/cuda/DeviceTensor.h"
#include "support/Suggest.h"
#include "symbolic/Eval.h"
#include "symbolic/Parser.h"

namespace dsc::run_support {

namespace {

// An f32 tensor's values rounded to bf16 (support/HalfFloat.h).
runtime::Tensor to_bf16(const runtime::Tensor& f) {
  runtime::Tensor out = runtime::Tensor::zeros(DLDataType{kDLBfloat, 16, 1}, f.shape());
  for (int64_t i = 0; i < f.numel(); ++i)
    out.data_as<uint16_t>()[i] = float_to_bf16(f.data_as<float>()[i]);
  return out;
}


bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

// Fills `t` with values from `rng`; `scale` multiplies floats.
void fill_random(runtime::Tensor& t, std::mt19937_64& rng, double scale) {
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  int64_t n = t.numel();
  DLDataType d = t.dtype();
  if (d.code == kDLFloat && d.bits == 32) {
    float* p = t.data_as<float>();
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<float>(uniform(rng) * scale);
  } else if (d.code == kDLFloat && d.bits == 64) {
    double* p = t.data_as<double>();
    for (int64_t i = 0; i < n; ++i) p[i] = uniform(rng) * scale;
  } else if (d.code == kDLFloat && d.bits == 16) {
    // Uniform halves in [-1, 1): sign, a random exponent in [-8, -1] and a random mantissa.
    uint16_t* p = t.data_as<uint16_t>();
    for (int64_t i = 0; i < n; ++i)
      p[i] = static_cast<uint16_t>(((rng() & 1) << 15) | ((7 + rng() % 8) << 10) | (rng() & 0x3ff));
  } else if (d.code == kDLBfloat) {
    uint16_t* p = t.data_as<uint16_t>();
    for (int64_t i = 0; i < n; ++i) {
      float f = static_cast<float>(uniform(rng) * scale);
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      p[i] = static_cast<uint16_t>(bits >> 16);
    }
  } else if (d.code == kDLInt && d.bits == 64) {
    int64_t* p = t.data_as<int64_t>();
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<int64_t>(rng() & 1);
  } else if (d.code == kDLInt && d.bits == 32) {
    int32_t* p = t.data_as<int32_t>();
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<int32_t>(rng() & 1);
  } else { // i8 and bool: one byte each
    uint8_t* p = static_cast<uint8_t*>(t.data());
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(rng() & 1);
  }
}

} // namespace

bool parse_shape_option(const std::string& text, std::map<std::string, int64_t>* out,
                        std::string* error) {
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    std::string item = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    size_t eq = item.find('=');
    std::string name = eq == std::string::npos ? item : item.substr(0, eq);
    std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (!is_identifier(name) || value.empty() || ec != std::errc() ||
        ptr != value.data() + value.size() || v < 0) {
      *error = "--shape expects SYM=VALUE[,SYM=VALUE...] with non-negative integers; got '" + item + "'";
      return false;
    }
    (*out)[name] = v;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return true;
}

bool parse_count(const std::string& text, int64_t* out) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || v < 0 ||
      v > 1000000000)
    return false;
  *out = v;
  return true;
}

const char* const kInputOptionsUsage =
    R"(  --input NAME=FILE.npy        a parameter's value (repeatable; also --input=NAME=FILE.npy)
  --weights=FILE.safetensors   parameters by name
  --random-weights             synthesize missing weights (deterministic, see --seed)
  --shape SYM=VAL,...          symbol values for synthesized inputs (also --shape=...)
  --seed=N                     the seed of synthesized values (default 0)
)";

std::optional<std::string> option_value(const std::vector<std::string>& args, size_t* i,
                                        const std::string& flag, std::string* missing) {
  const std::string& a = args[*i];
  if (a.rfind(flag + "=", 0) == 0) return a.substr(flag.size() + 1);
  if (a != flag) return std::nullopt;
  if (*i + 1 < args.size()) return args[++*i];
  if (!missing) return std::nullopt;
  *missing = flag + " expects a value";
  return std::string();
}

bool parse_input_option(const std::vector<std::string>& args, size_t* i, InputOptions* options,
                        std::string* error) {
  error->clear();
  const std::string& a = args[*i];
  auto value = [&](const std::string& flag) { return option_value(args, i, flag, error); };
  if (a == "--random-weights") {
    options->random_weights = true;
    return true;
  }
  if (auto v = value("--input")) {
    if (!error->empty()) return true;
    size_t eq = v->find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == v->size())
      *error = "--input expects NAME=FILE.npy (got '" + *v + "')";
    else
      options->files.emplace_back(v->substr(0, eq), v->substr(eq + 1));
    return true;
  }
  if (auto w = value("--weights")) {
    options->weights = *w;
    return true;
  }
  if (auto s = value("--shape")) {
    if (error->empty()) parse_shape_option(*s, &options->shape, error);
    return true;
  }
  if (auto seed = value("--seed")) {
    int64_t n = 0;
    if (!error->empty()) return true;
    if (!parse_count(*seed, &n))
      *error = "--seed expects a non-negative integer";
    else
      options->seed = static_cast<uint64_t>(n);
    return true;
  }
  return false;
}

namespace {

// Every --shape symbol must be one of the function's: a typo would otherwise be ignored and the
// input synthesized at some other size.
bool check_shape_symbols(const runtime::FunctionInfo& fn, const InputOptions& options,
                         std::string* error) {
  std::set<std::string> known;
  for (const runtime::TensorInfo& p : fn.params)
    for (const std::string& dim : p.dims) {
      symbolic::ParseResult d = symbolic::parse_expr(dim);
      if (d.ok())
        for (const std::string& s : symbolic::free_symbols(d.expr)) known.insert(s);
    }
  std::vector<std::string> candidates(known.begin(), known.end());
  for (const auto& [name, value] : options.shape) {
    if (known.count(name)) continue;
    *error = "--shape names '" + name + "', which is not a symbol of '" + fn.name + "'";
    std::string list;
    for (const std::string& s : candidates) list += (list.empty() ? "" : ", ") + s;
    *error += list.empty() ? " (it has none)" : " (its symbols: " + list + ")";
    std::string close = closest_name(name, candidates);
    if (!close.empty()) *error += "; did you mean '" + close + "'?";
    return false;
  }
  return true;
}

} // namespace

std::optional<AssembledInputs> assemble_inputs(const runtime::FunctionInfo& fn,
                                               const InputOptions& options, std::string* error) {
  if (!check_shape_symbols(fn, options, error)) return std::nullopt;
  std::map<std::string, runtime::Tensor> given;
  std::set<std::string> names;
  for (const runtime::TensorInfo& p : fn.params) names.insert(p.name);
  for (const auto& [name, path] : options.files) {
    if (!names.count(name)) {
      *error = "--input " + name + "=...: '" + fn.name + "' has no parameter '" + name + "'";
      return std::nullopt;
    }
    std::optional<runtime::Tensor> t = runtime::read_npy(path, error);
    if (!t) return std::nullopt;
    given[name] = std::move(*t);
  }
  if (!options.weights.empty()) {
    std::optional<runtime::TensorMap> w = runtime::read_safetensors(options.weights, error);
    if (!w) return std::nullopt;
    for (auto& [name, t] : *w)
      if (names.count(name) && !given.count(name)) given[name] = std::move(t);
  }

  // Symbols: --shape first, then plain dims of the given tensors (the compiled code checks
  // every dim again, with its own messages, so this only needs to be good enough to
  // synthesize the rest).
  AssembledInputs out;
  out.symbols = options.shape;
  for (const runtime::TensorInfo& p : fn.params) {
    auto it = given.find(p.name);
    if (it == given.end() || it->second.rank() != p.dims.size()) continue;
    for (size_t i = 0; i < p.dims.size(); ++i) {
      symbolic::ParseResult d = symbolic::parse_expr(p.dims[i]);
      if (const auto* s = d.ok() ? d.expr.as<symbolic::Sym>() : nullptr)
        out.symbols.emplace(s->name, it->second.shape()[i]);
    }
  }

  std::mt19937_64 rng(options.seed);
  for (size_t index = 0; index < fn.params.size(); ++index) {
    const runtime::TensorInfo& p = fn.params[index];
    // A weight: every dim a constant (an unreadable dim is an error below, if synthesized).
    bool all_constant = true;
    for (const std::string& dim : p.dims) {
      symbolic::ParseResult d = symbolic::parse_expr(dim);
      all_constant = all_constant && d.ok() && symbolic::free_symbols(d.expr).empty();
    }
    out.weights.push_back(all_constant);
    auto it = given.find(p.name);
    if (it != given.end()) {
      // NumPy has no bfloat16: a bf16 parameter takes an f32 .npy, rounded to nearest even.
      DLDataType want;
      if (runtime::parse_dtype_name(p.dtype, &want) && want.code == kDLBfloat &&
          it->second.dtype().code == kDLFloat && it->second.dtype().bits == 32)
        it->second = to_bf16(it->second);
      out.tensors.push_back(std::move(it->second));
      continue;
    }
    std::vector<int64_t> shape;
    std::vector<std::string> unbound;
    symbolic::Bindings bindings(out.symbols.begin(), out.symbols.end());
    for (const std::string& dim : p.dims) {
      symbolic::ParseResult d = symbolic::parse_expr(dim);
      if (!d.ok()) {
        *error = "parameter '" + p.name + "' has an unreadable dim '" + dim + "'";
        return std::nullopt;
      }
      std::set<std::string> free = symbolic::free_symbols(d.expr);
      for (const std::string& s : free)
        if (!out.symbols.count(s)) unbound.push_back(s);
      if (unbound.empty()) {
        std::optional<int64_t> v = symbolic::eval(d.expr, bindings);
        if (!v || *v < 0) {
          *error = "dim " + dim + " of '" + p.name + "' is negative or overflows at the given --shape";
          return std::nullopt;
        }
        shape.push_back(*v);
      }
    }
    std::string type = p.type_string();
    if (all_constant && !options.random_weights) {
      *error = "missing weight '" + p.name + "' (" + type + "): give --input " + p.name +
               "=FILE.npy, --weights FILE.safetensors or --random-weights";
      return std::nullopt;
    }
    if (!unbound.empty()) {
      std::string syms;
      for (const std::string& s : unbound) syms += (syms.empty() ? "" : ",") + s + "=N";
      *error = "missing input '" + p.name + "' (" + type + "): give --input " + p.name +
               "=FILE.npy, or --shape " + syms + " to synthesize it";
      return std::nullopt;
    }
    DLDataType dtype;
    if (!runtime::parse_dtype_name(p.dtype, &dtype)) {
      *error = "parameter '" + p.name + "' has unknown dtype '" + p.dtype + "'";
      return std::nullopt;
    }
    // Synthesized inputs may be as large as the user's --shape asks: running out of memory
    // is an error that names the input, its size and the shapes.
    std::string at;
    for (const auto& [sym, value] : out.symbols)
      at += (at.empty() ? " at " : ", ") + sym + "=" + std::to_string(value);
    std::optional<runtime::Tensor> allocated = runtime::Tensor::try_empty(
        dtype, shape, (all_constant ? "weight '" : "input '") + p.name + "' (" + type + ")" + at,
        error);
    if (!allocated) return std::nullopt;
    runtime::Tensor t = std::move(*allocated);
    double scale =
        all_constant && shape.size() >= 2 && shape[0] > 0 ? 1.0 / std::sqrt(double(shape[0])) : 1.0;
    fill_random(t, rng, scale);
    out.tensors.push_back(std::move(t));
  }
  return out;
}

bool place_inputs(const runtime::FunctionInfo& fn, AssembledInputs* inputs, std::string* error) {
  if (fn.device != runtime::DeviceKind::Cuda) return true;
  if (!runtime::check_device(fn, error)) return false;
  for (size_t i = 0; i < inputs->tensors.size(); ++i) {
    runtime::Tensor& t = inputs->tensors[i];
    std::optional<runtime::Tensor> copy = runtime::cuda::to_device(t, error);
    if (!copy) {
      if (i < fn.params.size()) *error = "parameter '" + fn.params[i].name + "': " + *error;
      return false;
    }
    t = std::move(*copy);
  }
  return true;
}

} // namespace dsc::run_support
