#pragma once
// Checks the IR's invariants: every Var is bound once and before use, binding arity matches
// the tuple it destructures, prims reference only declared buffers and locals, `Assign` only
// targets `var` locals, loop variables do not shadow, and after infer_shapes every graph value
// has a type. A violation is a compiler bug, so the result is a list of messages for an
// internal error, not user diagnostics.

#include <string>
#include <vector>

#include "ir/Module.h"

namespace dsc::ir {

struct VerifyOptions {
  bool require_types = false; // after infer_shapes
};

std::vector<std::string> verify(const Module& m, const VerifyOptions& options = {});

} // namespace dsc::ir
