#pragma once
// Checks the IR's invariants: every Var is bound once and before use, binding arity matches
// the tuple it destructures, prims reference only declared buffers and locals, `Assign` only
// targets `var` locals, loop variables do not shadow, loops are of kinds the target runs, and after infer_shapes every graph value
// has a type. A violation is a compiler bug, so the result is a list of messages for an
// internal error, not user diagnostics.

#include <string>
#include <vector>

#include "ir/HostProgram.h"
#include "ir/Module.h"
#include "ir/Target.h"

namespace dsc::ir {

struct VerifyOptions {
  bool require_types = false;     // after infer_shapes
  const Target* target = nullptr; // when set (after legalize): every loop kind is one it runs
};

std::vector<std::string> verify(const Module& m, const VerifyOptions& options = {});

// A host program of `m`: buffer and output ids in range, aliases of earlier buffers, kernel
// steps that call prims of `m` with their arity, library steps that call known routines, and,
// when `planned`, an offset for every arena buffer.
std::vector<std::string> verify(const HostProgram& p, const Module& m, bool planned);

} // namespace dsc::ir
