#pragma once
// The target options `dscc build`, `dscc run` and `dscc opt` share: --target=cpu|cuda,
// --cpu=NAME and --vector-width=128|256|512, parsed into an ir::Target.

#include <string>

#include "ir/Target.h"
#include "tools/dscc/Compile.h"

namespace dsc::dscc {

// Parses `arg` when it is one of those options; an invalid value sets `error`. `cuda_ok`: the
// command can go on with a CUDA target (dscc opt runs the passes; nothing generates CUDA code
// yet).
inline OptionResult parse_target_option(const std::string& arg, ir::Target* target,
                                        std::string* error, bool cuda_ok = false) {
  error->clear();
  if (arg.rfind("--target=", 0) == 0) {
    std::string t = arg.substr(9);
    if (t == "cpu") {
      *target = ir::cpu_target();
    } else if (t == "cuda") {
      if (cuda_ok) *target = ir::cuda_target();
      else *error = "--target=cuda: the CUDA backend is not available yet; use --target=cpu";
    } else {
      *error = "--target must be cpu or cuda (got '" + t + "')";
    }
    return OptionResult::Parsed;
  }
  if (arg.rfind("--vector-width=", 0) == 0) {
    std::string w = arg.substr(15);
    if (w == "128" || w == "256" || w == "512") target->vector_bits = std::stoi(w);
    else *error = "--vector-width must be 128, 256 or 512 (got '" + w + "')";
    return OptionResult::Parsed;
  }
  if (arg.rfind("--cpu=", 0) == 0) {
    target->cpu = arg.substr(6);
    if (target->cpu.empty()) *error = "--cpu needs a value: native, generic or an LLVM CPU name";
    return OptionResult::Parsed;
  }
  return OptionResult::NotMine;
}

} // namespace dsc::dscc
