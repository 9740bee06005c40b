#include "passes/PassRegistry.h"

#include <algorithm>

#include "passes/BucketKernels.h"
#include "passes/CollectFacts.h"
#include "passes/InferShapes.h"
#include "passes/InlineCalls.h"
#include "passes/Legalize.h"
#include "passes/LowerHost.h"
#include "passes/PlanMemory.h"
#include "passes/Schedule.h"
#include "passes/ShareKernels.h"

namespace dsc::passes {

namespace {

void run_infer_shapes(Compilation& c, PassContext& ctx) { c.module = infer_shapes(c.module, ctx); }

void run_collect_facts(Compilation& c, PassContext& ctx) { c.module = collect_facts(c.module, ctx); }

// Once calls are inlined every fn stands alone, so only the entries are kept: a helper fn the
// entries no longer call cannot fail the build.
void run_inline_calls(Compilation& c, PassContext& ctx) {
  ir::Module inlined = inline_calls(c.module, ctx);
  if (!c.entries.empty()) {
    std::erase_if(inlined.decls, [&](const ir::Module::Decl& d) {
      return d.fn && std::find(c.entries.begin(), c.entries.end(), d.fn->name) == c.entries.end();
    });
  }
  c.module = std::move(inlined);
}

void run_legalize(Compilation& c, PassContext& ctx) { c.module = legalize(c.module, ctx); }

void run_schedule(Compilation& c, PassContext& ctx) { c.module = schedule(c.module, ctx); }

void run_share_kernels(Compilation& c, PassContext&) { share_kernels(c); }

void run_lower_host(Compilation& c, PassContext& ctx) {
  c.hosts.clear();
  for (const std::string& entry : c.entries) {
    std::optional<ir::HostProgram> host = lower_host(c.module, entry, ctx);
    if (!host) return;
    c.hosts.push_back(std::move(*host));
  }
}

void run_bucket_kernels(Compilation& c, PassContext& ctx) { bucket_kernels(c, ctx); }

void run_plan_memory(Compilation& c, PassContext& ctx) { plan_memory(c.hosts, ctx); }

} // namespace

const std::vector<PassInfo>& all_passes() {
  static const std::vector<PassInfo> passes = {
#define DSC_PASS(name, summary, run, needs, establishes)                                        \
  PassInfo{#name, summary, run, needs, establishes},
#include "passes/Passes.def"
  };
  return passes;
}

const PassInfo* find_pass(std::string_view name) {
  for (const PassInfo& p : all_passes())
    if (name == p.name) return &p;
  return nullptr;
}

} // namespace dsc::passes
