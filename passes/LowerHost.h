#pragma once
// lower_host: turns an entry `fn` of a legalized, scheduled module into an ir::HostProgram
// (see ir/HostProgram.h): the straight-line program that binds symbols from the inputs'
// shapes, checks the `where` clauses and every run-time shape fact, allocates outputs, and
// calls kernels, library routines (ir/LibraryRoutines.def, those the target offers) and
// copies. Intermediates are arena buffers whose offsets plan_memory fills in next. The
// function's body must be in legalize's form: each binding a call to a prim, a library extern,
// `reshape` (an alias: no copy), a tuple field or a variable.
//
// Messages of failed checks name the clause and where it was written:
//   where S <= 512 violated: S = 600 (bert_layer.dsc:5:28)

#include <optional>
#include <string>

#include "ir/HostProgram.h"
#include "ir/Module.h"
#include "passes/PassContext.h"

namespace dsc::passes {

// Errors (an entry that cannot be lowered) are reported to ctx.diags; nullopt then.
std::optional<ir::HostProgram> lower_host(const ir::Module& scheduled, const std::string& entry,
                                          PassContext& ctx);

} // namespace dsc::passes
