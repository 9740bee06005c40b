// dscc generate: tokens from a decoder model's prefill and decode entries (Generation.h).
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "runtime/dsc_runtime.h"
#include "tools/dscc/Command.h"
#include "tools/dscc/Generation.h"
#include "tools/run_support/RunInputs.h"

namespace dsc::dscc {

namespace {

constexpr const char* kGenerateUsage =
    R"(usage: dscc generate MODEL.so --weights W.safetensors (--prompt-ids 1,2,3 | --prompts FILE) [options]

Generates tokens with a decoder model built from importers/hf2dsc.py's model.dsc: its
`prefill` entry runs the prompts and fills the KV caches, then `decode` appends one token per
step, the caches updated in place. Prints the generated ids of each prompt, one line each.

  --weights=FILE               the model's weights (hf2dsc's model.safetensors)
  --prompt-ids=1,2,3           one prompt, as token ids
  --prompts=FILE               one prompt per line (ids separated by commas or spaces); prompts
                               of different lengths are left-padded, as transformers pads them
  --max-new-tokens=N           tokens to generate per prompt (default 32)
  --eos=ID                     stop a prompt once it generates ID (kept); repeatable
  --greedy                     the most likely token (the default)
  --temperature=T, --top-k=K, --top-p=P
                               sample instead, after transformers' warpers in that order
  --seed=N                     the sampler's seed (default 0): the same seed, the same tokens
  --context=C                  the caches' length (default: the longest prompt plus N)
  --pad-id=ID                  the id left padding holds (default 0; it is masked)
  --bench                      print prefill and decode tokens/s and the time to the first token,
                               after an untimed generation (weights packed for the GEMM)
  --threads=N                  the runtime's and OpenBLAS's thread count
)";

// "1,2,3" or "1 2 3" as ids; false on anything else.
bool parse_ids(const std::string& text, std::vector<int64_t>* out) {
  std::string spaced = text;
  for (char& c : spaced)
    if (c == ',' || c == '\t' || c == '\r') c = ' ';
  std::istringstream in(spaced);
  std::string word;
  while (in >> word) {
    size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(word, &used);
    } catch (...) {
      return false;
    }
    if (used != word.size() || v < 0) return false;
    out->push_back(v);
  }
  return true;
}

bool parse_number(const std::string& text, double* out) {
  try {
    size_t used = 0;
    *out = std::stod(text, &used);
    return used == text.size();
  } catch (...) {
    return false;
  }
}

} // namespace

int run_generate(const Args& args) {
  auto bad = [](const std::string& message) {
    std::cerr << "dscc generate: error: " << message << "\n";
    return 1;
  };
  std::string model_path, weights_path, prompts_path;
  std::vector<std::vector<int64_t>> prompts;
  GenerationOptions options;
  int64_t threads = 0;
  bool bench = false, sampled = false, greedy = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    std::string missing;
    auto value = [&](const std::string& flag) {
      return run_support::option_value(args, &i, flag, &missing);
    };
    auto count = [&](const std::string& text, int64_t* out, const std::string& flag) {
      if (run_support::parse_count(text, out)) return true;
      missing = flag + " expects a count, got '" + text + "'";
      return false;
    };
    int64_t n = 0;
    double x = 0;
    if (a == "--help" || a == "-h") {
      std::fputs(kGenerateUsage, stdout);
      return 0;
    } else if (auto w = value("--weights")) {
      weights_path = *w;
    } else if (auto p = value("--prompt-ids")) {
      std::vector<int64_t> ids;
      if (!parse_ids(*p, &ids) || ids.empty())
        return bad("--prompt-ids expects token ids such as 1,2,3, got '" + *p + "'");
      prompts.push_back(std::move(ids));
    } else if (auto f = value("--prompts")) {
      prompts_path = *f;
    } else if (auto m = value("--max-new-tokens")) {
      if (!count(*m, &options.max_new_tokens, "--max-new-tokens")) return bad(missing);
    } else if (auto e = value("--eos")) {
      if (!count(*e, &n, "--eos")) return bad(missing);
      options.eos.push_back(n);
    } else if (a == "--greedy") {
      greedy = true;
    } else if (auto t = value("--temperature")) {
      if (!parse_number(*t, &x) || !(x > 0)) return bad("--temperature expects a positive number");
      options.sampling.temperature = x;
      sampled = true;
    } else if (auto k = value("--top-k")) {
      if (!count(*k, &options.sampling.top_k, "--top-k")) return bad(missing);
      sampled = true;
    } else if (auto top_p = value("--top-p")) {
      if (!parse_number(*top_p, &x) || !(x > 0 && x <= 1)) return bad("--top-p expects a number in (0, 1]");
      options.sampling.top_p = x;
      sampled = true;
    } else if (auto s = value("--seed")) {
      if (!count(*s, &n, "--seed")) return bad(missing);
      options.sampling.seed = static_cast<uint64_t>(n);
    } else if (auto c = value("--context")) {
      if (!count(*c, &options.context, "--context")) return bad(missing);
    } else if (auto pad = value("--pad-id")) {
      if (!count(*pad, &options.pad_id, "--pad-id")) return bad(missing);
    } else if (a == "--bench") {
      bench = true;
    } else if (auto th = value("--threads")) {
      if (!count(*th, &threads, "--threads") || threads < 1 || threads > 1024)
        return bad("--threads expects a count from 1 to 1024");
    } else if (!missing.empty()) {
      return bad(missing);
    } else if (a.rfind("-", 0) != 0 && model_path.empty()) {
      model_path = a;
    } else {
      std::cerr << "dscc generate: error: unknown option '" << a << "'\n\n" << kGenerateUsage;
      return 1;
    }
    if (!missing.empty()) return bad(missing);
  }
  if (greedy && sampled) return bad("--greedy excludes --temperature, --top-k and --top-p");
  options.sampling.greedy = !sampled;
  if (model_path.empty()) return bad("missing MODEL.so (see --help)");
  if (weights_path.empty()) return bad("missing --weights W.safetensors");
  if (!prompts_path.empty()) {
    std::ifstream in(prompts_path);
    if (!in) return bad("cannot read " + prompts_path);
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
      std::vector<int64_t> ids;
      if (!parse_ids(line, &ids))
        return bad(prompts_path + ":" + std::to_string(number) + ": not a list of token ids");
      if (ids.empty())
        return bad(prompts_path + ":" + std::to_string(number) + ": an empty prompt");
      prompts.push_back(std::move(ids));
    }
  }
  if (prompts.empty()) return bad("no prompt: give --prompt-ids or --prompts");
  if (threads > 0) dsc_set_num_threads(static_cast<int>(threads));

  std::string error;
  std::unique_ptr<runtime::Model> model = runtime::load_shared_library(model_path, &error);
  if (!model) return bad(error);
  std::optional<runtime::TensorMap> weights = runtime::read_safetensors(weights_path, &error);
  if (!weights) return bad(error);
  std::optional<Generator> generator = Generator::open(*model, *weights, &error);
  if (!generator) return bad(error);
  if (bench) {
    // An untimed generation first, as the peers of a benchmark warm up: the GEMM packs each
    // weight on its first use.
    GenerationOptions warmup = options;
    warmup.max_new_tokens = std::min<int64_t>(options.max_new_tokens, 2);
    if (!generator->generate(prompts, warmup, &error)) return bad(error);
  }
  std::optional<GenerationResult> r = generator->generate(prompts, options, &error);
  if (!r) return bad(error);
  for (const std::vector<int64_t>& tokens : r->tokens) {
    std::string line;
    for (int64_t t : tokens) line += (line.empty() ? "" : " ") + std::to_string(t);
    std::puts(line.c_str());
  }
  if (bench) {
    const double prompt_tokens = static_cast<double>(r->batch * r->prompt_length);
    const double decoded = static_cast<double>(r->batch * r->decode_steps);
    std::fprintf(stderr,
                 "prefill: %lld x %lld tokens in %.2f ms (%.1f tokens/s); time to first token "
                 "%.2f ms\n",
                 static_cast<long long>(r->batch), static_cast<long long>(r->prompt_length),
                 r->prefill_ms, prompt_tokens / (r->prefill_ms / 1000.0), r->first_token_ms);
    if (r->decode_steps > 0)
      std::fprintf(stderr, "decode: %lld steps x %lld rows in %.2f ms (%.1f tokens/s, %.2f ms per step), context %lld\n",
                   static_cast<long long>(r->decode_steps), static_cast<long long>(r->batch),
                   r->decode_ms, decoded / (r->decode_ms / 1000.0),
                   r->decode_ms / static_cast<double>(r->decode_steps),
                   static_cast<long long>(r->context));
  }
  return 0;
}

} // namespace dsc::dscc
