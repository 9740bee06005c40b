#pragma once
// What every pass gets besides the module: where to report, and the shared prover (whose
// cache then serves the whole pipeline).

#include "support/Diagnostics.h"
#include "symbolic/Prover.h"

namespace dsc::passes {

struct PassContext {
  DiagnosticEngine& diags;
  symbolic::Prover& prover;
};

} // namespace dsc::passes
