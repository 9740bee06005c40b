#pragma once
// The back half of the compiler, as straight-line code (passes/Passes.def lists the steps):
// a typed module (after infer_shapes and collect_facts) becomes a module of prims and
// externs plus one ir::HostProgram per entry function, ready for a backend.

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "ir/HostProgram.h"
#include "ir/Module.h"
#include "passes/PassContext.h"

namespace dsc::passes {

// The names in Passes.def, in order.
const std::vector<std::string>& pass_names();

struct PipelineOptions {
  std::vector<std::string> print_after; // pass names, or "all"
  std::ostream* print_to = nullptr;     // where --print-after goes (required when printing)
};

struct Lowered {
  ir::Module module; // the prims and externs the host programs call
  std::vector<ir::HostProgram> hosts;
};

// The fns of `typed` that can be entry points: every parameter a tensor whose dims are known
// (generic stdlib-style fns are not).
std::vector<std::string> entry_candidates(const ir::Module& typed);

// Lowers `entries` (names of fns of `typed`). Errors go to ctx.diags; nullopt then.
std::optional<Lowered> lower_module(const ir::Module& typed, const std::vector<std::string>& entries,
                                    PassContext& ctx, const PipelineOptions& options = {});

} // namespace dsc::passes
