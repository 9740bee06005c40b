#pragma once
// The IR verifier between compiler steps, in debug builds only.

#include "ir/Module.h"

namespace dsc::passes {

// In debug builds, verifies `m` after `step` (with `typed`, every value must have a type); a
// violation is a compiler bug (internal_error). Nothing in release builds.
void verify_after(const char* step, const ir::Module& m, bool typed = true);

} // namespace dsc::passes
