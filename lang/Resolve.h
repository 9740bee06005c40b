#pragma once
// Name resolution: syntax tree to ir::Module. Every name is looked up, every dim and `where`
// clause becomes a symbolic::Expr, and every expression takes the IR form its position calls
// for (see docs/language.md). Mistakes are diagnostics; the module is returned only when there
// were none. Calls to unknown ops are left for the op registry to judge.

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "ir/Module.h"
#include "lang/Ast.h"
#include "support/Diagnostics.h"

namespace dsc::lang {

// The modules `import` names, as loaded by the front end. A null module failed to load (and
// that was reported); calls into it are not checked.
using ImportedModules = std::map<std::string, std::shared_ptr<const ir::Module>>;

// With `unresolved`, the declarations that resolve are returned even when others fail, and the
// names of those that failed (or were dropped for syntax errors) are appended to it.
std::optional<ir::Module> resolve_module(const ast::Module& module, const ImportedModules& imports,
                                         DiagnosticEngine& diags,
                                         std::vector<std::string>* unresolved = nullptr);

} // namespace dsc::lang
