#pragma once
// The inputs of `dscc run` and `dsc-run`: each parameter of the entry function comes from `--input
// NAME=FILE.npy`, else from the `--weights` file, else it is synthesized with deterministic
// pseudo-random values:
//   - a parameter whose dims are all constants is a weight: synthesized only with
//     --random-weights (uniform in [-1, 1) scaled by 1/sqrt(first dim) for rank >= 2, so
//     that products stay O(1));
//   - a parameter with symbolic dims is an input: synthesized (uniform in [-1, 1)) when every
//     symbol has a value, from --shape or from the shapes of the inputs that were given.
// Integer inputs are 0 or 1, bools 0/1. Anything missing is an error naming the parameter and
// the options that would supply it.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/Manifest.h"
#include "runtime/Tensor.h"

namespace dsc::run_support {

struct InputOptions {
  std::vector<std::pair<std::string, std::string>> files; // --input NAME=FILE.npy
  std::string weights;                                     // --weights FILE.safetensors
  bool random_weights = false;
  std::map<std::string, int64_t> shape; // --shape B=4,S=77
  uint64_t seed = 0;
};

// Parses "B=4,S=77" into `out`; false with `error` set on malformed text.
bool parse_shape_option(const std::string& text, std::map<std::string, int64_t>* out,
                        std::string* error);

// The value of option `flag` at args[*i]: "--flag=VALUE", or "--flag VALUE" (then *i moves past
// the value); nullopt when args[*i] is not `flag`. A bare `flag` with nothing after it is
// nullopt too, unless `missing` is given: then *missing = "--flag expects a value" and the
// value is "".
std::optional<std::string> option_value(const std::vector<std::string>& args, size_t* i,
                                        const std::string& flag, std::string* missing = nullptr);

// A count or seed: a decimal integer in [0, 1e9]; false for anything else.
bool parse_count(const std::string& text, int64_t* out);

// Parses the input option at args[*i], if it is one: --input NAME=FILE.npy, --weights=FILE,
// --random-weights, --shape SYM=VAL,..., --seed=N (each value after '=' or as the next
// argument, and then *i moves past it). False when args[*i] is no input option; true
// otherwise, with *error set when its value is malformed.
bool parse_input_option(const std::vector<std::string>& args, size_t* i, InputOptions* options,
                        std::string* error);

// The help lines of those options.
extern const char* const kInputOptionsUsage;

struct AssembledInputs {
  std::vector<runtime::Tensor> tensors;  // in parameter order
  std::vector<bool> weights;              // per parameter: its dims are all constants
  std::map<std::string, int64_t> symbols; // every symbol bound by a plain dim
};

std::optional<AssembledInputs> assemble_inputs(const runtime::FunctionInfo& fn,
                                               const InputOptions& options, std::string* error);

// For a function whose manifest device is "cuda": replaces each host tensor by its copy on
// the device (cuda/DeviceTensor.h). Nothing to do for a CPU function. False with *error set
// ("'layer' runs on CUDA, but there is no CUDA device: ...", or the copy's error).
bool place_inputs(const runtime::FunctionInfo& fn, AssembledInputs* inputs, std::string* error);

} // namespace dsc::run_support
