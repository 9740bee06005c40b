#pragma once
// Source text to syntax tree (the Bison grammar in Parser.y). Syntax errors are diagnostics of
// the form `expected X, found Y` at the offending token, one per mistake: the parser recovers
// at the next statement or declaration.

#include <cstdint>
#include <optional>
#include <string>

#include "lang/Ast.h"
#include "support/Diagnostics.h"

namespace dsc::lang {

// Parses buffer `file` of `sources`. After errors the parser recovers, and the tree keeps the
// declarations that contain none (so that later phases report their own mistakes); nullopt
// only when the parser could not go on at all.
std::optional<ast::Module> parse_ast(const SourceManager& sources, uint32_t file,
                                     DiagnosticEngine& diags);

} // namespace dsc::lang
