#pragma once
// The front end: .dsc text in, a resolved ir::Module out (types as written; infer_shapes
// fills in the rest). Lexing is re2c (Lexer.re), parsing Bison (Parser.y), and name
// resolution turns the syntax tree into IR (Resolve.cpp). Every user error becomes a
// diagnostic; the result is nullopt when there was any.

#include <optional>
#include <string>
#include <vector>

#include "ir/Module.h"
#include "support/Diagnostics.h"

namespace dsc::lang {

struct FrontendOptions {
  // Where `import nn` looks for nn.dsc, first match wins. Empty: default_stdlib_dirs().
  std::vector<std::string> stdlib_dirs;
  // Keep going past errors in the file's own declarations: parse_module then returns the
  // declarations that resolved, even though errors were reported, and lists the names of those
  // that did not here. (Errors in imports still fail the whole parse.)
  std::vector<std::string>* unresolved = nullptr;
};

// Parses and resolves the buffer `file` of `sources`. Imports are loaded from the stdlib
// directories (into `sources`, so diagnostics can point into them).
std::optional<ir::Module> parse_module(SourceManager& sources, uint32_t file,
                                       DiagnosticEngine& diags,
                                       const FrontendOptions& options = {});

// Reads `path` into `sources` and parses it; a missing or unreadable file is a diagnostic.
std::optional<ir::Module> parse_file(const std::string& path, SourceManager& sources,
                                     DiagnosticEngine& diags, const FrontendOptions& options = {});

// $DSC_STDLIB_PATH (colon-separated), then `share/dsc/stdlib` and `stdlib` beside the running
// binary's prefix, then the source tree's stdlib/.
std::vector<std::string> default_stdlib_dirs();

} // namespace dsc::lang
