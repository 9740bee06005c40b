#pragma once
// Internal to the front end: resolution of one `prim` declaration (loop-level code).

#include <set>
#include <string>

#include "ir/Module.h"
#include "lang/Ast.h"
#include "support/Diagnostics.h"

namespace dsc::lang {

// The prim, or null after diagnostics. `bound_by_externs`: symbols an extern binds in it, which
// its where clause may name besides its buffers' (an epilogue's `first_row`).
Ref<ir::PrimFunc> resolve_prim(const ast::Decl& decl, DiagnosticEngine& diags,
                               const std::set<std::string>& bound_by_externs = {});

} // namespace dsc::lang
