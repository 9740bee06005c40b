#pragma once
// The backend options `dscc build` and `dscc run` share: --target=cpu|cuda, --cpu=NAME and
// --vector-width=128|256|512.

#include <algorithm>
#include <string>

#include "backends/cpu/CpuBackend.h"
#include "tools/dscc/Compile.h"

namespace dsc::dscc {

enum class TargetOptionResult { NotMine, Parsed };

// Parses `arg` when it is one of those options; an invalid value sets `error`.
inline TargetOptionResult parse_target_option(const std::string& arg, cpu::TargetOptions* target,
                                              std::string* error) {
  error->clear();
  if (arg.rfind("--target=", 0) == 0) {
    std::string t = arg.substr(9);
    if (t == "cuda") *error = "--target=cuda: the CUDA backend is not available yet; use --target=cpu";
    else if (t != "cpu") *error = "--target must be cpu or cuda (got '" + t + "')";
    return TargetOptionResult::Parsed;
  }
  if (arg.rfind("--vector-width=", 0) == 0) {
    std::string w = arg.substr(15);
    if (w == "128" || w == "256" || w == "512") target->vector_width = std::stoi(w);
    else *error = "--vector-width must be 128, 256 or 512 (got '" + w + "')";
    return TargetOptionResult::Parsed;
  }
  if (arg.rfind("--cpu=", 0) == 0) {
    target->cpu = arg.substr(6);
    if (target->cpu.empty()) *error = "--cpu needs a value: native, generic or an LLVM CPU name";
    return TargetOptionResult::Parsed;
  }
  return TargetOptionResult::NotMine;
}

inline bool wants_llvm(const CompileOptions& o) {
  return std::any_of(o.print_after.begin(), o.print_after.end(),
                     [](const std::string& p) { return p == "llvm" || p == "all"; });
}

} // namespace dsc::dscc
