#pragma once
// Internal to the front end: resolution of one `prim` declaration (loop-level code).

#include "ir/Module.h"
#include "lang/Ast.h"
#include "support/Diagnostics.h"

namespace dsc::lang {

// The prim, or null after diagnostics.
Ref<ir::PrimFunc> resolve_prim(const ast::Decl& decl, DiagnosticEngine& diags);

} // namespace dsc::lang
