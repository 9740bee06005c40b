#include "passes/Pipeline.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ostream>

#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "support/Assert.h"

namespace dsc::passes {

namespace {

void verify(const PassInfo& pass, const Compilation& c, const PassContext& ctx) {
  ir::VerifyOptions options;
  options.require_types = c.holds.has(Invariant::Typed);
  if (c.holds.has(Invariant::Legalized)) options.target = &ctx.target;
  std::vector<std::string> problems = ir::verify(c.module, options);
  for (const ir::HostProgram& h : c.hosts) {
    std::vector<std::string> more = ir::verify(h, c.module, c.holds.has(Invariant::MemoryPlanned));
    problems.insert(problems.end(), more.begin(), more.end());
  }
  if (problems.empty()) return;
  std::string all;
  for (const std::string& p : problems) all += "\n  " + p;
  internal_error << "the IR after " << pass.name << " is invalid:" << all;
}

void print(const PassInfo& pass, const Compilation& c, const PipelineOptions& options,
           std::ostream& os) {
  os << "// ----- after " << pass.name;
  if (!options.within.empty()) os << " (within " << options.within << ")";
  os << "\n";
  if (!c.holds.has(Invariant::HostLowered)) {
    os << ir::print_module(c.module);
    return;
  }
  for (const ir::HostProgram& h : c.hosts) os << ir::to_string(h);
}

void report_times(const std::vector<std::pair<const PassInfo*, double>>& times, std::ostream& os) {
  double total = 0;
  for (const auto& [pass, ms] : times) total += ms;
  char line[128];
  os << "===- dsc pass timing -===\n";
  std::snprintf(line, sizeof line, "  %10.2f ms  100.0%%  total\n", total);
  os << line;
  for (const auto& [pass, ms] : times) {
    std::snprintf(line, sizeof line, "  %10.2f ms  %5.1f%%  %s\n", ms,
                  total > 0 ? 100.0 * ms / total : 0.0, pass->name);
    os << line;
  }
}

// What the prover did over the run (its stats are the compilation's), and how many Z3
// queries stopped at a limit: at the resource count (deterministic), or at the wall-clock
// backstop (which would make the build depend on the machine's load).
void report_prover(const symbolic::Prover& prover, std::ostream& os) {
  const symbolic::ProverStats& st = prover.stats();
  os << "===- dsc prover -===\n"
     << "  " << st.queries << " queries (" << st.cache_hits << " from the cache), " << st.z3_calls
     << " by Z3, " << st.unknown << " unknown\n"
     << "  " << st.z3_resource_limited << " Z3 queries stopped at the resource limit ("
     << prover.options().z3_resources << "), " << st.z3_timeouts
     << " at the time backstop (" << prover.options().z3_timeout_ms << " ms)\n";
}

} // namespace

std::string Pipeline::check_order(Invariants start) const {
  Invariants holds = start;
  for (const PassInfo* p : passes_) {
    Invariants missing = p->needs.missing_from(holds);
    if (!missing.empty()) {
      std::string providers;
      for (const PassInfo& q : all_passes())
        if (q.establishes.has_any(missing))
          providers += std::string(providers.empty() ? "" : ", ") + q.name;
      return std::string("pass '") + p->name + "' needs the IR " + missing.to_string() +
             ", which no earlier pass establishes (run " + providers + " before it)";
    }
    holds |= p->establishes;
  }
  return "";
}

bool Pipeline::run(Compilation& c, PassContext& ctx, const PipelineOptions& options) const {
  std::vector<std::pair<const PassInfo*, double>> times;
  bool ok = true;
  const PipelineOptions* outer = ctx.instrumentation;
  ctx.instrumentation = &options;
  for (const PassInfo* pass : passes_) {
    size_t errors = ctx.diags.error_count();
    auto start = std::chrono::steady_clock::now();
    pass->run(c, ctx);
    times.emplace_back(pass, std::chrono::duration<double, std::milli>(
                                 std::chrono::steady_clock::now() - start).count());
    if (ctx.diags.error_count() != errors) {
      ok = false;
      break;
    }
    c.holds |= pass->establishes;
    // A module with errors from before the pipeline (a partial one, which may hold two clashing
    // definitions) is only meaningful for reporting more errors, so it is not verified.
    if (options.verify_each && !ctx.diags.has_errors()) verify(*pass, c, ctx);
    bool wanted = options.print_after_all ||
                  std::find(options.print_after.begin(), options.print_after.end(), pass->name) !=
                      options.print_after.end();
    if (wanted && options.print_to) print(*pass, c, options, *options.print_to);
  }
  ctx.instrumentation = outer;
  if (options.time_passes && options.report_to) {
    report_times(times, *options.report_to);
    report_prover(ctx.prover, *options.report_to);
  }
  return ok;
}

bool run_within(std::string_view within, std::string_view name, Compilation& c,
                PassContext& ctx) {
  PipelineOptions options;
  if (ctx.instrumentation) options = *ctx.instrumentation;
  options.time_passes = false; // the outer pass's time includes this run
  options.within = within;
  return build_pipeline(ctx.target, name, name).run(c, ctx, options);
}

Pipeline build_pipeline(const ir::Target& target, std::string_view first, std::string_view last) {
  (void)target; // every pass of Passes.def serves every target today
  std::vector<const PassInfo*> passes;
  for (const PassInfo& p : all_passes()) {
    if (first == p.name || !passes.empty()) passes.push_back(&p);
    if (last == p.name) break;
  }
  internal_assert(!passes.empty() && last == passes.back()->name)
      << "build_pipeline: no passes from '" << first << "' through '" << last << "'";
  return Pipeline(std::move(passes));
}

std::optional<Pipeline> parse_pipeline(std::string_view list, std::string* error) {
  std::vector<const PassInfo*> passes;
  size_t begin = 0;
  while (begin <= list.size()) {
    size_t end = std::min(list.find(',', begin), list.size());
    std::string_view name = list.substr(begin, end - begin);
    const PassInfo* p = find_pass(name);
    if (!p) {
      *error = "unknown pass '" + std::string(name) + "'; the passes are " + pass_names_text();
      return std::nullopt;
    }
    passes.push_back(p);
    begin = end + 1;
  }
  Pipeline pipeline(std::move(passes));
  *error = pipeline.check_order({});
  if (!error->empty()) return std::nullopt;
  return pipeline;
}

std::string pass_names_text() {
  std::string s;
  for (const PassInfo& p : all_passes()) s += std::string(s.empty() ? "" : ", ") + p.name;
  return s;
}

std::vector<std::string> entry_candidates(const ir::Module& m) {
  std::vector<std::string> out;
  for (const ir::Module::Decl& d : m.decls) {
    if (!d.fn) continue;
    bool ok = std::all_of(d.fn->params.begin(), d.fn->params.end(),
                          [](const ir::VarRef& p) { return p->type.is_tensor(); });
    if (ok) out.push_back(d.fn->name);
  }
  return out;
}

} // namespace dsc::passes
