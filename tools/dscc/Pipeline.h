#pragma once
// The front half of the compiler as dscc runs it: parse a file, then infer_shapes and
// collect_facts. Shared by `dscc check` and `dscc repl`.

#include <optional>
#include <string>

#include "ir/Module.h"
#include "support/Diagnostics.h"
#include "symbolic/Prover.h"

namespace dsc::dscc {

struct Checked {
  ir::Module module; // typed, with every fact decided; meaningful only without errors
};

// Reads `path` into `sources`; an unreadable file is a diagnostic and nullopt.
std::optional<uint32_t> load_source(const std::string& path, SourceManager& sources,
                                    DiagnosticEngine& diags);

// Runs the front end and the two analysis passes on buffer `file` of `sources`. Diagnostics go
// to `diags`; nullopt when there was an error.
std::optional<Checked> check_buffer(SourceManager& sources, uint32_t file, DiagnosticEngine& diags,
                                    symbolic::Prover& prover);

// `dscc check --emit=shapes`: every function's signature, then each binding as
// `name: dtype[dims]` in source order, then the return type.
std::string format_shapes(const ir::Module& m);
// `dscc check --emit=facts`: each fact with its location and whether it was proved.
std::string format_facts(const ir::Module& m, const SourceManager& sources);

} // namespace dsc::dscc
