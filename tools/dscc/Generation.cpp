#include "tools/dscc/Generation.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>

#include "runtime/dsc_runtime.h"
#include "symbolic/Eval.h"
#include "symbolic/Parser.h"

namespace dsc::dscc {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// What each parameter of an entry is.
struct EntryLayout {
  const runtime::FunctionInfo* fn = nullptr;
  int ids = -1, mask = -1;
  std::vector<int> caches;  // parameters an output updates in place, in parameter order
  std::vector<int> weights; // the rest
};

std::optional<EntryLayout> layout_of(const runtime::Model& model, const std::string& name,
                                     std::string* error) {
  EntryLayout out;
  out.fn = model.manifest().find(name);
  if (!out.fn) {
    *error = "the model has no '" + name +
             "' entry: dscc generate runs decoder models with 'prefill' and 'decode' entries "
             "(importers/hf2dsc.py writes them; see docs/importers.md)";
    return std::nullopt;
  }
  const runtime::FunctionInfo& fn = *out.fn;
  std::vector<bool> updated(fn.params.size(), false);
  for (const runtime::TensorInfo& o : fn.outputs)
    if (o.updates_param >= 0 && static_cast<size_t>(o.updates_param) < updated.size())
      updated[static_cast<size_t>(o.updates_param)] = true;
  for (size_t i = 0; i < fn.params.size(); ++i) {
    const std::string& p = fn.params[i].name;
    if (p == "ids") out.ids = static_cast<int>(i);
    else if (p == "mask") out.mask = static_cast<int>(i);
    else if (updated[i]) out.caches.push_back(static_cast<int>(i));
    else out.weights.push_back(static_cast<int>(i));
  }
  for (const auto& [index, what] : {std::pair{out.ids, "ids"}, std::pair{out.mask, "mask"}}) {
    if (index >= 0 && fn.params[static_cast<size_t>(index)].dtype == "i64" &&
        fn.params[static_cast<size_t>(index)].dims.size() == 2)
      continue;
    *error = "'" + name + "' has no parameter '" + what + "' of type i64[B, ...]";
    return std::nullopt;
  }
  if (out.caches.empty()) {
    *error = "'" + name + "' updates no parameter in place: it has no KV cache to generate with";
    return std::nullopt;
  }
  if (fn.outputs.empty() || fn.outputs[0].dtype != "f32" || fn.outputs[0].dims.size() != 2 ||
      fn.outputs[0].updates_param >= 0) {
    *error = "'" + name + "' does not return the logits (f32[B, V]) first";
    return std::nullopt;
  }
  return out;
}

// A dim of a cache from its text ("B", "4", "C"), or nullopt when it names another symbol.
std::optional<int64_t> cache_dim(const std::string& text, int64_t batch, int64_t context) {
  symbolic::ParseResult parsed = symbolic::parse_expr(text);
  if (!parsed.ok()) return std::nullopt;
  symbolic::Bindings b{{"B", batch}, {"C", context}};
  return symbolic::eval(parsed.expr, b);
}

// The tensors the calls take, on the entries' device.
class Inputs {
public:
  explicit Inputs(bool on_cuda) : on_cuda_(on_cuda) {}
  ~Inputs() {
    for (const void* d : constants_) dsc_release_constant(d);
  }
  Inputs(const Inputs&) = delete;
  Inputs& operator=(const Inputs&) = delete;

  // A view of `t`, copied to the GPU first for a CUDA model; null with *error on failure.
  const DLTensor* place(runtime::Tensor& t, bool constant, std::string* error) {
    views_.push_back(std::make_unique<DLTensor>(t.dl_view()));
    if (!on_cuda_) {
      if (constant && t.nbytes() > 0 && dsc_declare_constant(t.data(), t.nbytes()) == 0)
        constants_.push_back(t.data());
      return views_.back().get();
    }
    DLManagedTensor* copy = dsc_tensor_copy(views_.back().get(), kDLCUDA);
    if (!copy) {
      *error = dsc_last_error();
      return nullptr;
    }
    device_.emplace_back(copy, [](DLManagedTensor* m) { m->deleter(m); });
    return &copy->dl_tensor;
  }

private:
  bool on_cuda_;
  std::vector<std::unique_ptr<DLTensor>> views_;
  std::vector<std::unique_ptr<DLManagedTensor, void (*)(DLManagedTensor*)>> device_;
  std::vector<const void*> constants_;
};

// The logits of a call's first output, on the host.
std::optional<runtime::Tensor> host_logits(runtime::CallResult& result, std::string* error) {
  runtime::Tensor& logits = result.outputs.at(0);
  if (logits.on_host()) return std::move(logits);
  DLTensor view = logits.dl_view();
  DLManagedTensor* copy = dsc_tensor_copy(&view, kDLCPU);
  if (!copy) {
    *error = dsc_last_error();
    return std::nullopt;
  }
  runtime::Tensor out = runtime::Tensor::empty(copy->dl_tensor.dtype,
                                               std::vector<int64_t>(copy->dl_tensor.shape,
                                                                    copy->dl_tensor.shape + copy->dl_tensor.ndim));
  std::copy_n(static_cast<const char*>(copy->dl_tensor.data), out.nbytes(), static_cast<char*>(out.data()));
  copy->deleter(copy);
  return out;
}

} // namespace

struct Generator::State {
  explicit State(const runtime::Model& m, bool on_cuda) : model(m), weights(on_cuda) {}
  const runtime::Model& model;
  EntryLayout prefill, decode;
  Inputs weights;                              // placed once, for every generation
  std::map<std::string, const DLTensor*> fixed; // weight name -> its placed tensor
};

Generator::Generator(std::unique_ptr<State> state) : state_(std::move(state)) {}
Generator::Generator(Generator&&) noexcept = default;
Generator::~Generator() = default;

std::optional<Generator> Generator::open(const runtime::Model& model, runtime::TensorMap& weights,
                                         std::string* error) {
  std::optional<EntryLayout> prefill = layout_of(model, "prefill", error);
  if (!prefill) return std::nullopt;
  std::optional<EntryLayout> decode = layout_of(model, "decode", error);
  if (!decode) return std::nullopt;
  auto names = [](const EntryLayout& e, const std::vector<int>& which) {
    std::vector<std::string> out;
    for (int i : which) out.push_back(e.fn->params[static_cast<size_t>(i)].name);
    return out;
  };
  if (names(*prefill, prefill->caches) != names(*decode, decode->caches)) {
    *error = "'prefill' and 'decode' do not update the same caches in place";
    return std::nullopt;
  }
  auto state = std::make_unique<State>(model, prefill->fn->device == runtime::DeviceKind::Cuda);
  state->prefill = *prefill;
  state->decode = *decode;
  for (int i : prefill->weights) {
    const runtime::TensorInfo& p = prefill->fn->params[static_cast<size_t>(i)];
    auto it = weights.find(p.name);
    if (it == weights.end()) {
      *error = "the weights have no tensor '" + p.name + "' (parameter " + p.type_string() + " of 'prefill')";
      return std::nullopt;
    }
    if (!(state->fixed[p.name] = state->weights.place(it->second, true, error))) return std::nullopt;
  }
  for (int i : decode->weights) {
    const std::string& name = decode->fn->params[static_cast<size_t>(i)].name;
    if (state->fixed.count(name)) continue;
    *error = "'decode' takes '" + name + "', which 'prefill' does not";
    return std::nullopt;
  }
  return Generator(std::move(state));
}

std::optional<GenerationResult> Generator::generate(const std::vector<std::vector<int64_t>>& prompts,
                                                    const GenerationOptions& options, std::string* error) {
  const EntryLayout& prefill = state_->prefill;
  const EntryLayout& decode = state_->decode;
  if (prompts.empty()) {
    *error = "no prompts";
    return std::nullopt;
  }
  GenerationResult result;
  result.batch = static_cast<int64_t>(prompts.size());
  for (const std::vector<int64_t>& p : prompts)
    result.prompt_length = std::max(result.prompt_length, static_cast<int64_t>(p.size()));
  result.context = options.context > 0 ? options.context : result.prompt_length + options.max_new_tokens;
  if (result.context < result.prompt_length + options.max_new_tokens) {
    *error = "--context " + std::to_string(result.context) + " is shorter than the longest prompt (" +
             std::to_string(result.prompt_length) + ") plus the new tokens (" +
             std::to_string(options.max_new_tokens) + ")";
    return std::nullopt;
  }
  const int64_t B = result.batch, S = result.prompt_length;
  Inputs inputs(prefill.fn->device == runtime::DeviceKind::Cuda);

  // The caches, zeroed: masked positions are still read.
  std::map<std::string, const DLTensor*> fixed = state_->fixed;
  std::vector<runtime::Tensor> caches;
  caches.reserve(prefill.caches.size());
  for (int i : prefill.caches) {
    const runtime::TensorInfo& p = prefill.fn->params[static_cast<size_t>(i)];
    std::vector<int64_t> shape;
    for (const std::string& d : p.dims) {
      std::optional<int64_t> v = cache_dim(d, B, result.context);
      if (!v || *v < 0) {
        *error = "cache '" + p.name + "' is " + p.type_string() +
                 ": dscc generate sizes caches by B (the prompts) and C (the context) only";
        return std::nullopt;
      }
      shape.push_back(*v);
    }
    DLDataType dtype{};
    if (!runtime::parse_dtype_name(p.dtype, &dtype)) {
      *error = "cache '" + p.name + "' has an unknown dtype " + p.dtype;
      return std::nullopt;
    }
    caches.push_back(runtime::Tensor::zeros(dtype, shape));
    if (!(fixed[p.name] = inputs.place(caches.back(), false, error))) return std::nullopt;
  }

  // One call of `e` on ids and mask.
  auto call = [&](const EntryLayout& e, runtime::Tensor& ids, runtime::Tensor& mask,
                  double* ms) -> std::optional<runtime::Tensor> {
    std::vector<const DLTensor*> args(e.fn->params.size(), nullptr);
    for (size_t i = 0; i < args.size(); ++i) {
      const std::string& name = e.fn->params[i].name;
      if (auto it = fixed.find(name); it != fixed.end()) args[i] = it->second;
    }
    args[static_cast<size_t>(e.ids)] = inputs.place(ids, false, error);
    args[static_cast<size_t>(e.mask)] = inputs.place(mask, false, error);
    if (!args[static_cast<size_t>(e.ids)] || !args[static_cast<size_t>(e.mask)]) return std::nullopt;
    const Clock::time_point start = Clock::now();
    runtime::CallResult r = state_->model.run(e.fn->name, args);
    if (ms) *ms += ms_since(start);
    if (!r.ok()) {
      *error = r.error;
      return std::nullopt;
    }
    return host_logits(r, error);
  };

  const DLDataType i64{kDLInt, 64, 1};
  runtime::Tensor ids = runtime::Tensor::zeros(i64, {B, S});
  runtime::Tensor mask = runtime::Tensor::zeros(i64, {B, S});
  for (int64_t b = 0; b < B; ++b) {
    const std::vector<int64_t>& p = prompts[static_cast<size_t>(b)];
    const int64_t pad = S - static_cast<int64_t>(p.size());
    for (int64_t s = 0; s < S; ++s) {
      ids.data_as<int64_t>()[b * S + s] = s < pad ? options.pad_id : p[static_cast<size_t>(s - pad)];
      mask.data_as<int64_t>()[b * S + s] = s < pad ? 0 : 1;
    }
  }
  const Clock::time_point start = Clock::now();
  std::optional<runtime::Tensor> logits = call(prefill, ids, mask, &result.prefill_ms);
  if (!logits) return std::nullopt;

  Sampler sampler(options.sampling);
  result.tokens.assign(static_cast<size_t>(B), {});
  std::vector<bool> done(static_cast<size_t>(B), false);
  runtime::Tensor last = runtime::Tensor::zeros(i64, {B, 1});
  for (int64_t step = 0; step < options.max_new_tokens; ++step) {
    if (logits->dtype().code != kDLFloat || logits->dtype().bits != 32 || logits->rank() != 2 ||
        logits->shape()[0] != B) {
      *error = "the logits are " + logits->type_string() + ", not f32[" + std::to_string(B) + ", V]";
      return std::nullopt;
    }
    const int64_t vocab = logits->shape()[1];
    for (int64_t b = 0; b < B; ++b) {
      const int64_t token = sampler.next(logits->data_as<float>() + b * vocab, vocab);
      last.data_as<int64_t>()[b] = token;
      if (done[static_cast<size_t>(b)]) continue;
      result.tokens[static_cast<size_t>(b)].push_back(token);
      if (std::find(options.eos.begin(), options.eos.end(), token) != options.eos.end())
        done[static_cast<size_t>(b)] = true;
    }
    if (step == 0) result.first_token_ms = ms_since(start);
    if (step + 1 == options.max_new_tokens || std::all_of(done.begin(), done.end(), [](bool d) { return d; }))
      break;
    // The mask grows by the new position of every row.
    const int64_t L = S + step + 1;
    runtime::Tensor grown = runtime::Tensor::zeros(i64, {B, L});
    for (int64_t b = 0; b < B; ++b) {
      std::copy_n(mask.data_as<int64_t>() + b * (L - 1), L - 1, grown.data_as<int64_t>() + b * L);
      grown.data_as<int64_t>()[b * L + L - 1] = 1;
    }
    mask = std::move(grown);
    logits = call(decode, last, mask, &result.decode_ms);
    if (!logits) return std::nullopt;
    ++result.decode_steps;
  }
  return result;
}

} // namespace dsc::dscc
