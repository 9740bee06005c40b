#pragma once
// Token generation with a decoder model as importers/hf2dsc.py writes it: two entries that
// share KV caches,
//   prefill(ids: i64[B, S], mask: i64[B, S], caches..., weights...) -> (logits f32[B, V], caches...)
//   decode(ids: i64[B, 1], mask: i64[B, L], caches..., weights...)  -> (logits f32[B, V], caches...)
// where each cache is a parameter the entry updates in place (its output's updates_param) and
// every other parameter but `ids` and `mask` is a weight, read from the weights file by name.
// The caches are allocated once, zeroed, at the context C (the longest prompt plus the new
// tokens, or `context`): their dims may name B (the prompts) and C, nothing else. Prompts
// of different lengths are left-padded (mask 0), as transformers pads them for generation;
// `mask` then grows by one position per step.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/Model.h"
#include "runtime/Safetensors.h"
#include "tools/dscc/Sampler.h"

namespace dsc::dscc {

struct GenerationOptions {
  int64_t max_new_tokens = 32;
  std::vector<int64_t> eos; // a row stops after generating one of these (which it keeps)
  int64_t context = 0;      // C; 0: the longest prompt plus max_new_tokens
  int64_t pad_id = 0;       // the id left padding holds (masked: it changes nothing)
  SamplingOptions sampling;
};

struct GenerationResult {
  std::vector<std::vector<int64_t>> tokens; // per prompt, the generated ids
  int64_t batch = 0, prompt_length = 0, context = 0;
  double prefill_ms = 0;      // the prefill call
  double first_token_ms = 0;  // the prefill call and the first token's sampling
  double decode_ms = 0;       // every decode call
  int64_t decode_steps = 0;   // decode calls (each one new token per row)
};

// A decoder model with its weights in place (on its device, declared constant so that the
// GEMM packs each once): generations after the first pay neither.
class Generator {
public:
  // nullopt with *error set on a model without the two entries, or a missing weight.
  static std::optional<Generator> open(const runtime::Model& model, runtime::TensorMap& weights,
                                       std::string* error);
  Generator(Generator&&) noexcept;
  ~Generator();

  // Generates from each prompt (non-empty lists of ids); nullopt with *error set on a cache
  // dim that is not B or C, or a failed call.
  std::optional<GenerationResult> generate(const std::vector<std::vector<int64_t>>& prompts,
                                           const GenerationOptions& options, std::string* error);

private:
  struct State;
  explicit Generator(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

} // namespace dsc::dscc
