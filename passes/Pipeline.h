#pragma once
// The pipeline: which passes run, in what order, with what instrumentation. build_pipeline is
// the one place that decides the order of a compilation (from passes/Passes.def); dscc, every
// test helper and the fuzzers call it. parse_pipeline builds the subsets `dscc opt --passes=`
// asks for, refusing an order in which a pass would run before what it requires holds.
//
// Instrumentation, in the style of MLIR's pass manager:
//   - print_after / print_after_all: the module (or, once lower_host has run, the host
//     programs) after the named passes, each under a `// ----- after NAME` line;
//   - verify_each: the IR verifier after every pass, under the invariants that then hold (a
//     violation is a compiler bug: internal_error), unless errors were reported before;
//   - time_passes: wall time per pass, as a table.
// A pass that runs other passes (inline_calls) runs them as pipelines of their own under the
// same instrumentation (PassContext::instrumentation, run_within), their printouts marked
// `(within inline_calls)`; their time counts in the outer pass's.

#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "passes/Compilation.h"
#include "passes/PassContext.h"
#include "passes/PassRegistry.h"

namespace dsc::passes {

struct PipelineOptions {
  std::vector<std::string> print_after; // pass names
  bool print_after_all = false;
#ifdef NDEBUG
  bool verify_each = false;
#else
  bool verify_each = true; // debug builds verify after every pass
#endif
  bool time_passes = false;
  std::ostream* print_to = nullptr;  // required when printing
  std::ostream* report_to = nullptr; // required with time_passes
  std::string within;                // the pass that runs this pipeline, if one does
};

class Pipeline {
public:
  explicit Pipeline(std::vector<const PassInfo*> passes) : passes_(std::move(passes)) {}

  const std::vector<const PassInfo*>& passes() const { return passes_; }

  // "" when every pass finds what it requires held, by `start` or by the passes before it;
  // otherwise the first pass that would not, and why.
  std::string check_order(Invariants start) const;

  // Runs the passes in order on `c` (ctx.target is the target). Stops after the first pass
  // that reports an error to ctx.diags, and returns false then.
  bool run(Compilation& c, PassContext& ctx, const PipelineOptions& options = {}) const;

private:
  std::vector<const PassInfo*> passes_;
};

// The default pipeline for `target`, from the pass named `first` through the one named `last`
// (the whole pipeline by default; through "collect_facts" for what `dscc check` needs, and from
// "inline_calls" to go on from there).
// Runs pass `name` on `c` as a pipeline of its own, from inside pass `within`, under the
// instrumentation of the pipeline running now (`ctx.instrumentation`; none outside one).
bool run_within(std::string_view within, std::string_view name, Compilation& c, PassContext& ctx);

Pipeline build_pipeline(const ir::Target& target, std::string_view first = "infer_shapes",
                        std::string_view last = "plan_memory");

// `--passes=a,b,c`, run on a freshly parsed module: nullopt with `*error` set for an unknown
// name or an order in which a pass runs before what it requires holds.
std::optional<Pipeline> parse_pipeline(std::string_view list, std::string* error);

// "infer_shapes, collect_facts, ..., plan_memory", for messages.
std::string pass_names_text();

// The fns of `m` (parsed or typed) that can be entry points: every parameter a tensor whose
// dims are known (generic stdlib-style fns are not).
std::vector<std::string> entry_candidates(const ir::Module& m);

} // namespace dsc::passes
