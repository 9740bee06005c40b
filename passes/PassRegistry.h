#pragma once
// The pass registry: one PassInfo per entry of passes/Passes.def, in pipeline order.

#include <string_view>
#include <vector>

#include "passes/Compilation.h"
#include "passes/PassContext.h"

namespace dsc::passes {

struct PassInfo {
  const char* name;
  const char* summary;
  // Applies the pass; errors go to ctx.diags (the Compilation is then only meaningful for
  // reporting more of them).
  void (*run)(Compilation& c, PassContext& ctx);
  Invariants needs;
  Invariants establishes;
};

// Every pass, in the order of the default pipeline.
const std::vector<PassInfo>& all_passes();
// The pass named `name`, or null.
const PassInfo* find_pass(std::string_view name);

} // namespace dsc::passes
