#include "tools/dscc/Check.h"

#include <sstream>

#include "ir/Printer.h"
#include "lang/Frontend.h"
#include "passes/IRUtil.h"
#include "passes/InferShapes.h"
#include "support/File.h"
#include "symbolic/Printer.h"
#include "symbolic/Simplify.h"

namespace dsc::dscc {

std::optional<uint32_t> load_source(const std::string& path, SourceManager& sources,
                                    DiagnosticEngine& diags) {
  std::string error;
  std::optional<std::string> text = read_file(path, &error);
  if (!text) {
    diags.error(SourceLoc{}, "cannot read '" + path + "': " + error);
    return std::nullopt;
  }
  return sources.add(path, std::move(*text));
}

std::optional<ir::Module> parse_checked(SourceManager& sources, uint32_t file,
                                        DiagnosticEngine& diags, symbolic::Prover& prover) {
  lang::FrontendOptions frontend;
  std::vector<std::string> unresolved;
  frontend.unresolved = &unresolved;
  size_t errors_before = diags.error_count();
  std::optional<ir::Module> parsed = lang::parse_module(sources, file, diags, frontend);
  if (!parsed || diags.error_count() == errors_before) return parsed;
  DiagnosticEngine more(sources);
  passes::PassContext ctx{more, prover};
  passes::infer_shapes(*parsed, ctx);
  for (const Diagnostic& d : more.diagnostics()) {
    bool cascade = false;
    for (const std::string& name : unresolved)
      cascade |= d.code == DiagnosticCode::UnknownOp && d.subject == name;
    if (!cascade) diags.report(d);
  }
  return std::nullopt;
}

std::optional<Checked> check_buffer(SourceManager& sources, uint32_t file, DiagnosticEngine& diags,
                                    symbolic::Prover& prover,
                                    const passes::PipelineOptions& options) {
  std::optional<ir::Module> parsed = parse_checked(sources, file, diags, prover);
  if (!parsed) return std::nullopt;
  passes::PassContext ctx{diags, prover};
  passes::Compilation c;
  c.module = std::move(*parsed);
  if (!passes::build_pipeline(ctx.target, "infer_shapes", "collect_facts").run(c, ctx, options))
    return std::nullopt;
  return Checked{std::move(c.module)};
}

std::optional<passes::FusionLog> explain_fusion(const ir::Module& checked, DiagnosticEngine& diags,
                                                symbolic::Prover& prover) {
  passes::FusionLog log;
  passes::PassContext ctx{diags, prover};
  ctx.fusion_log = &log;
  passes::Compilation c;
  c.module = checked;
  c.entries = passes::entry_candidates(checked);
  c.holds = {passes::Invariant::Typed, passes::Invariant::FactsDecided};
  if (!passes::build_pipeline(ctx.target, "inline_calls", "legalize").run(c, ctx, {}))
    return std::nullopt;
  return log;
}

namespace {

std::string canonical_type(const ir::Type& t) {
  if (!t.is_tensor()) {
    if (!t.is_tuple()) return ir::to_string(t);
    std::string s = "(";
    for (size_t i = 0; i < t.fields.size(); ++i)
      s += (i ? ", " : "") + canonical_type(t.fields[i]);
    return s + (t.fields.size() == 1 ? ",)" : ")");
  }
  ir::Type c = t;
  for (symbolic::Expr& d : c.shape)
    d = symbolic::simplify(d);
  return ir::to_string(c);
}

void emit_bindings(const ir::Expr& block, std::ostringstream& os, int indent) {
  const ir::Block* b = block.as<ir::Block>();
  if (!b) return;
  std::string pad(indent, ' ');
  for (const ir::Binding& binding : b->bindings) {
    for (const ir::VarRef& v : binding.vars)
      os << pad << v->name << ": " << canonical_type(v->type) << "\n";
    // Values bound inside if-branches are listed under their branch, indented.
    if (const ir::If* i = binding.value.as<ir::If>()) {
      emit_bindings(i->then_branch, os, indent + 2);
      emit_bindings(i->else_branch, os, indent + 2);
    }
    // A loop's carries (at the start of iteration `var`), then its body's values.
    if (const ir::Loop* l = binding.value.as<ir::Loop>()) {
      for (const ir::VarRef& c : l->carries)
        os << pad << "  " << c->name << ": " << canonical_type(c->type) << "  (carried, at "
           << l->var << ")\n";
      if (l->cond.defined()) emit_bindings(l->cond, os, indent + 2);
      emit_bindings(l->body, os, indent + 2);
    }
  }
}

} // namespace

std::string format_shapes(const ir::Module& m) {
  std::ostringstream os;
  for (const ir::Module::Decl& d : m.decls) {
    if (!d.fn) continue;
    const ir::Function& f = *d.fn;
    os << "fn " << f.name << "(";
    for (size_t i = 0; i < f.params.size(); ++i)
      os << (i ? ", " : "") << f.params[i]->name << ": " << canonical_type(f.params[i]->type);
    os << ")";
    if (passes::is_generic(f)) {
      os << "  # generic: typed per call\n";
      continue;
    }
    os << " -> " << canonical_type(f.ret_type) << "\n";
    emit_bindings(f.body, os, 2);
    if (const ir::Block* b = f.body.as<ir::Block>())
      os << "  return: " << canonical_type(b->result->type) << "\n";
  }
  return os.str();
}

namespace {

const char* status_name(const ir::ShapeFact& fact) {
  switch (fact.status) {
  case ir::ShapeFact::Status::Unchecked:
    return "unchecked";
  case ir::ShapeFact::Status::Assumed:
    // A where clause, or the bound of a data-dependent dim (nonzero's count).
    return fact.origin == ir::ShapeFact::Origin::Where ? "assumed (checked on entry)"
                                                       : "assumed (true by construction)";
  case ir::ShapeFact::Status::Proved:
    return "proved";
  case ir::ShapeFact::Status::RuntimeCheck:
    return "run-time check";
  }
  return "?";
}

} // namespace

std::string format_facts(const ir::Module& m, const SourceManager& sources) {
  std::ostringstream os;
  for (const ir::Module::Decl& d : m.decls) {
    if (!d.fn || passes::is_generic(*d.fn)) continue;
    os << "fn " << d.fn->name << "\n";
    for (const ir::ShapeFact& fact : d.fn->facts) {
      os << "  ";
      if (fact.loc.valid())
        os << sources.name(fact.loc.file) << ":" << fact.loc.line << ":" << fact.loc.col << ": ";
      os << symbolic::to_string(fact.predicate) << "  [" << status_name(fact) << "]";
      if (!fact.what.empty()) os << "  " << fact.what;
      os << "\n";
      if (fact.status == ir::ShapeFact::Status::RuntimeCheck && !fact.counterexample.empty())
        os << "    not provable: " << fact.counterexample << " violates it; a `where` clause "
           << "implying it would let the compiler prove it\n";
    }
  }
  return os.str();
}

} // namespace dsc::dscc
