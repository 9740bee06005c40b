#pragma once
// The front half of the compiler as dscc runs it: parse a file, then the pipeline through
// collect_facts (passes/Pipeline.h). Shared by `dscc check`, `dscc repl` and the compiling
// commands.

#include <optional>
#include <string>

#include "ir/Module.h"
#include "passes/Pipeline.h"
#include "support/Diagnostics.h"
#include "symbolic/Prover.h"

namespace dsc::dscc {

struct Checked {
  ir::Module module; // typed, with every fact decided; meaningful only without errors
};

// Reads `path` into `sources`; an unreadable file is a diagnostic and nullopt.
std::optional<uint32_t> load_source(const std::string& path, SourceManager& sources,
                                    DiagnosticEngine& diags);

// Parses buffer `file` of `sources`. When the file has errors, the declarations that resolved
// are still shape-checked, so that their own mistakes are reported too (minus the cascade of
// calls to those that did not). Diagnostics go to `diags`; nullopt when there was an error.
std::optional<ir::Module> parse_checked(SourceManager& sources, uint32_t file,
                                        DiagnosticEngine& diags, symbolic::Prover& prover);

// parse_checked, then the pipeline through collect_facts. Nullopt when there was an error.
std::optional<Checked> check_buffer(SourceManager& sources, uint32_t file, DiagnosticEngine& diags,
                                    symbolic::Prover& prover,
                                    const passes::PipelineOptions& options = {});

// The fusion decisions of legalize (passes/FusionLog.h) for every entry candidate of a checked
// module: `dscc check --explain-fusion` and the REPL's `:fusion`. Nullopt on an error (in
// `diags`).
std::optional<passes::FusionLog> explain_fusion(const ir::Module& checked, DiagnosticEngine& diags,
                                                symbolic::Prover& prover);

// `dscc check --emit=shapes`: every function's signature, then each binding as
// `name: dtype[dims]` in source order, then the return type.
std::string format_shapes(const ir::Module& m);
// `dscc check --emit=facts`: each fact with its location and whether it was proved.
std::string format_facts(const ir::Module& m, const SourceManager& sources);

} // namespace dsc::dscc
