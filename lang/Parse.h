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

// Parses buffer `file` of `sources`. The tree is returned only when no error (lexical or
// syntactic) was reported.
std::optional<ast::Module> parse_ast(const SourceManager& sources, uint32_t file,
                                     DiagnosticEngine& diags);

} // namespace dsc::lang
