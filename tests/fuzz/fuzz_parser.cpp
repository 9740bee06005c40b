// libFuzzer entry point for the front end and the passes behind `dscc check`: any bytes, as a
// .dsc file, must end in diagnostics or in a typed module, never in a crash, a hang, a leak or a
// sanitizer report. A module that parses must also print as text that parses again.
//
// Built by tools/scripts/fuzz.sh (clang, -DDSC_FUZZ=ON, ASan+UBSan), which runs it for a bounded
// time over a seed corpus of the repository's .dsc files.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/Printer.h"
#include "lang/Frontend.h"
#include "passes/Pipeline.h"
#include "support/LargeStack.h"

namespace {

int parse_one(const uint8_t* data, size_t size) {
  dsc::SourceManager sources;
  dsc::DiagnosticEngine diags(sources);
  uint32_t file = sources.add("fuzz.dsc", std::string(reinterpret_cast<const char*>(data), size));
  // No stdlib: an import must fail cleanly rather than read the machine's files.
  dsc::lang::FrontendOptions options;
  options.stdlib_dirs = {"/nonexistent-dsc-fuzz-stdlib"};
  // Keep going past errors, as dscc check does, so that partial modules are analysed too.
  std::vector<std::string> unresolved;
  options.unresolved = &unresolved;
  std::optional<dsc::ir::Module> m = dsc::lang::parse_module(sources, file, diags, options);
  if (!m) {
    if (!diags.has_errors()) __builtin_trap(); // failure must always be explained
    return 0;
  }
  // A module that parsed without errors must print as text that parses again. (A partial
  // module need not: it may hold both of two clashing definitions.)
  std::string printed = dsc::ir::print_module(*m);
  if (!diags.has_errors()) {
    dsc::DiagnosticEngine reparse_diags(sources);
    uint32_t again = sources.add("printed.dsc", printed);
    dsc::lang::FrontendOptions strict;
    strict.stdlib_dirs = options.stdlib_dirs;
    if (!dsc::lang::parse_module(sources, again, reparse_diags, strict)) __builtin_trap();
  }

  // The pipeline through shape inference and fact collection, with the verifier after each
  // pass, and without Z3 so that each input stays fast.
  dsc::symbolic::ProverOptions prover_options;
  prover_options.use_z3 = false;
  dsc::symbolic::Prover prover(prover_options);
  dsc::passes::PassContext ctx{diags, prover};
  dsc::passes::Compilation c;
  c.module = std::move(*m);
  dsc::passes::PipelineOptions verifying;
  verifying.verify_each = true;
  dsc::passes::build_pipeline(ctx.target, "infer_shapes", "collect_facts").run(c, ctx, verifying);
  return 0;
}

} // namespace

// On the compiler's large stack, as dscc compiles (a long chain of operators nests deep).
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return dsc::on_large_stack([&] { return parse_one(data, size); });
}
