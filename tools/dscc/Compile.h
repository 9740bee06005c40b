#pragma once
// What `dscc build`, `dscc run FILE.dsc` and `dscc opt` share: the whole compiler from a .dsc
// file to the lowered module and its manifest, with progress on stderr, and the pipeline
// instrumentation options they all take.

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "ir/Target.h"
#include "passes/Compilation.h"
#include "passes/Pipeline.h"
#include "runtime/Manifest.h"

namespace dsc::dscc {

struct CompileOptions {
  std::string file;                 // the path, or the name `source` is reported under
  std::optional<std::string> source; // the text to compile, instead of reading `file`
  std::vector<std::string> entries; // empty: see choose_entries
  bool all_entries = false;         // with no --entry: every candidate (build) or one (run)
  ir::Target target = ir::cpu_target();
  passes::PipelineOptions instrument; // print_to and report_to are set by compile_file
  bool print_llvm = false;            // --print-after=llvm: the optimized LLVM IR
  bool fuse = true;                   // --no-fusion: one kernel per op
  std::string gemm;                   // --gemm=dsc|blas|cublas: the GEMM f32 matmuls call (empty: the target's)
  bool quiet = false;                 // no progress lines
};

enum class OptionResult { NotMine, Parsed };

// The arguments every compiling command (build, run FILE.dsc, opt) takes:
//   --print-after=PASS (a pass of passes/Passes.def, `llvm` for the optimized LLVM IR, or
//   `all`), --print-after-all, --verify-each, --time-passes;
//   --target=cpu|cuda, --cpu=NAME, --vector-width=128|256|512, --cuda-arch=80,90;
//   --no-fusion; --gemm=dsc|blas|cublas; -q, --quiet; and FILE (an argument that is not an
//   option).
// NotMine for anything else: the command's own options, or an unknown one. An invalid value
// or a second FILE sets `error`.
OptionResult parse_compile_option(const std::string& arg, CompileOptions* options,
                                  std::string* error);

// The usage lines of the instrumentation options, for --help.
extern const char* const kInstrumentationUsage;

// Front end and passes: the whole pipeline, or, with `pipeline`, those passes (which must
// start from a parsed module). Diagnostics are printed to `err`, --print-after output to
// `out`, --time-passes to `err`. Nullopt on any error.
std::optional<passes::Compilation> compile_file(const CompileOptions& options, std::ostream& out,
                                                std::ostream& err,
                                                const passes::Pipeline* pipeline = nullptr);

// The manifest of a fully lowered compilation (one function per host program).
runtime::Manifest manifest_of(const passes::Compilation& c);

} // namespace dsc::dscc
