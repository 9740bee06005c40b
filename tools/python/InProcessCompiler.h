#pragma once
// What the Python package asks of the compiler, in process: `dscc build`, `dscc check`,
// `dscc prove` and the IR printer, with their diagnostics returned as text instead of printed.
// Nothing here knows Python; tools/python/Extension.cpp turns a CompileFailure into
// dsc.CompileError.

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace dsc::python {

// The compiler refused the source (its diagnostics, as dscc prints them) or an option.
struct CompileFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The source to compile: its text, or a path to read it from. `name` is what diagnostics call
// it (the path, or "<string>").
struct Source {
  std::optional<std::string> text;
  std::string name;
};

// `dscc build`'s options as its command line writes them ("--target=cuda", "--no-fusion",
// "--entry=layer", "--cpu=generic"); an unknown one is a CompileFailure.
using BuildArgs = std::vector<std::string>;

// Compiles `source` into the shared library `out_path`, as `dscc build` does. Returns the
// progress lines dscc prints on stderr (empty with "-q"). Throws CompileFailure.
std::string build_library(const Source& source, const BuildArgs& args, const std::string& out_path);

// The IR after pass `after` (a pass of passes/Passes.def, or "llvm"), as
// `dscc build --print-after=PASS` prints it. Throws CompileFailure.
std::string print_ir(const Source& source, const BuildArgs& args, const std::string& after);

// `dscc check --emit=shapes` and `--emit=facts`. Throws CompileFailure.
struct CheckReport {
  std::string shapes;
  std::string facts;
};
CheckReport check(const Source& source);

// `dscc check --explain-fusion`, for one fn (all when empty). Throws CompileFailure.
std::string explain_fusion(const Source& source, const std::string& fn);

// `dscc prove`: whether `fact` holds wherever `assumptions` do. A fact that does not parse is a
// CompileFailure naming it.
struct ProofReport {
  std::string verdict;                       // "proved", "disproved" or "unknown"
  std::map<std::string, int64_t> counterexample; // disproved only
  std::string reason;                        // unknown only: why
};
ProofReport prove(const std::string& fact, const std::vector<std::string>& assumptions,
                  unsigned timeout_ms);

} // namespace dsc::python
