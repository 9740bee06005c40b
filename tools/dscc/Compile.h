#pragma once
// What `dscc build` and `dscc run FILE.dsc` share: the whole compiler from a .dsc file to the
// lowered module and its manifest, with progress on stderr.

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "backends/cpu/CpuBackend.h"
#include "passes/Pipeline.h"
#include "runtime/Manifest.h"

namespace dsc::dscc {

struct CompileOptions {
  std::string file;
  std::vector<std::string> entries; // empty: see choose_entries
  bool all_entries = false;         // with no --entry: every candidate (build) or one (run)
  std::vector<std::string> print_after;
  cpu::TargetOptions target;
  bool quiet = false; // no progress lines
};

struct Compiled {
  passes::Lowered lowered;
  runtime::Manifest manifest;
};

// Parses --print-after=NAME (a pass of Passes.def, `all`, or `llvm` for the optimized LLVM
// IR) into `options`; false with `error` set for an unknown pass name.
bool parse_print_after(const std::string& value, CompileOptions* options, std::string* error);

// Front end, passes and lowering; diagnostics are printed to `err`. Nullopt on any error.
std::optional<Compiled> compile_file(const CompileOptions& options, std::ostream& out,
                                     std::ostream& err);

} // namespace dsc::dscc
