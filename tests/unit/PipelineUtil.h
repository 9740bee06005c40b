#pragma once
// The pipeline as the tests run it: always through passes/Pipeline.h (so no test copies the
// pass order), with the IR verifier after every pass in every build type.

#include <optional>
#include <string>

#include "passes/Pipeline.h"

namespace dsc::testing {

inline passes::PipelineOptions verifying() {
  passes::PipelineOptions o;
  o.verify_each = true;
  return o;
}

// The default pipeline from the pass `first` through `last` on `c`; false after an error.
inline bool run_pipeline(passes::Compilation& c, passes::PassContext& ctx, const char* first,
                         const char* last) {
  return passes::build_pipeline(ctx.target, first, last).run(c, ctx, verifying());
}

// infer_shapes and collect_facts on `m`: the typed module, meaningful only when ctx.diags has
// no errors.
inline ir::Module typecheck(ir::Module m, passes::PassContext& ctx) {
  passes::Compilation c;
  c.module = std::move(m);
  run_pipeline(c, ctx, "infer_shapes", "collect_facts");
  return std::move(c.module);
}

} // namespace dsc::testing
