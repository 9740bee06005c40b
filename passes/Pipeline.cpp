#include "passes/Pipeline.h"

#include <algorithm>
#include <ostream>

#include "ir/Printer.h"
#include "passes/InlineCalls.h"
#include "passes/Legalize.h"
#include "passes/LowerHost.h"
#include "passes/Schedule.h"
#include "passes/VerifyAfter.h"

namespace dsc::passes {

namespace {

class Printer {
public:
  explicit Printer(const PipelineOptions& o) : o_(o) {}
  bool wants(const std::string& pass) const {
    if (!o_.print_to) return false;
    return std::any_of(o_.print_after.begin(), o_.print_after.end(),
                       [&](const std::string& p) { return p == pass || p == "all"; });
  }
  void print(const std::string& pass, const std::string& text) const {
    if (wants(pass)) *o_.print_to << "// ----- after " << pass << "\n" << text;
  }

private:
  const PipelineOptions& o_;
};

// After inlining every fn stands alone: keep the entries (and every prim and extern), so that
// a helper fn the entries no longer call cannot fail the build.
ir::Module only_entries(const ir::Module& m, const std::vector<std::string>& entries) {
  ir::Module out;
  out.imports = m.imports;
  for (const ir::Module::Decl& d : m.decls)
    if (!d.fn || std::find(entries.begin(), entries.end(), d.fn->name) != entries.end())
      out.decls.push_back(d);
  return out;
}

} // namespace

const std::vector<std::string>& pass_names() {
  static const std::vector<std::string> names = {
#define DSC_PASS(name, summary) #name,
#include "passes/Passes.def"
  };
  return names;
}

std::vector<std::string> entry_candidates(const ir::Module& typed) {
  std::vector<std::string> out;
  for (const ir::Module::Decl& d : typed.decls) {
    if (!d.fn) continue;
    bool ok = std::all_of(d.fn->params.begin(), d.fn->params.end(),
                          [](const ir::VarRef& p) { return p->type.is_tensor(); });
    if (ok) out.push_back(d.fn->name);
  }
  return out;
}

std::optional<Lowered> lower_module(const ir::Module& typed, const std::vector<std::string>& entries,
                                    PassContext& ctx, const PipelineOptions& options) {
  Printer printer(options);
  size_t errors = ctx.diags.error_count();
  auto failed = [&] { return ctx.diags.error_count() != errors; };

  ir::Module m = only_entries(inline_calls(typed, ctx), entries);
  if (failed()) return std::nullopt;
  verify_after("inline_calls", m);
  printer.print("inline_calls", ir::print_module(m));

  m = legalize(m, ctx);
  if (failed()) return std::nullopt;
  verify_after("legalize", m);
  printer.print("legalize", ir::print_module(m));

  m = schedule(m, ctx);
  if (failed()) return std::nullopt;
  verify_after("schedule", m);
  printer.print("schedule", ir::print_module(m));

  Lowered out{m, {}};
  std::string plans, hosts;
  for (const std::string& entry : entries) {
    std::string plan;
    std::optional<ir::HostProgram> host = lower_host(m, entry, ctx, &plan);
    if (!host) return std::nullopt;
    plans += "// " + entry + "\n" + plan;
    hosts += ir::to_string(*host);
    out.hosts.push_back(std::move(*host));
  }
  printer.print("plan_memory", plans);
  printer.print("lower_host", hosts);
  return out;
}

} // namespace dsc::passes
