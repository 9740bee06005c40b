#include "tools/python/InProcessCompiler.h"

#include <sstream>

#include "backends/cpu/CpuBackend.h"
#include "symbolic/Facts.h"
#include "symbolic/Parser.h"
#include "symbolic/Prover.h"
#include "tools/dscc/Check.h"
#include "support/LargeStack.h"
#include "tools/dscc/Compile.h"

namespace dsc::python {

namespace {

// The message of a failure: the diagnostics, without the trailing newline.
[[noreturn]] void fail(std::string text) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  throw CompileFailure(text.empty() ? "compilation failed" : text);
}

dscc::CompileOptions parse_args(const Source& source, const BuildArgs& args) {
  dscc::CompileOptions options;
  options.all_entries = true;
  options.file = source.name;
  options.source = source.text;
  for (const std::string& a : args) {
    std::string error;
    if (a.rfind("--entry=", 0) == 0) {
      options.entries.push_back(a.substr(8));
      continue;
    }
    if (a.empty() || a[0] != '-') fail("unexpected argument '" + a + "'");
    if (dscc::parse_compile_option(a, &options, &error) != dscc::OptionResult::Parsed)
      fail("unknown option '" + a + "'");
    if (!error.empty()) fail(error);
  }
  return options;
}

// Parses the buffer and runs the pipeline through collect_facts; its diagnostics in `log`.
struct CheckedSource {
  SourceManager sources;
  DiagnosticEngine diags{sources};
  symbolic::Prover prover;
  std::optional<dscc::Checked> checked;
};

void check_into(const Source& source, CheckedSource* out) {
  std::optional<uint32_t> file =
      source.text ? std::optional<uint32_t>(out->sources.add(source.name, *source.text))
                  : dscc::load_source(source.name, out->sources, out->diags);
  if (file) out->checked = dscc::check_buffer(out->sources, *file, out->diags, out->prover);
  if (!out->checked) {
    std::ostringstream text;
    out->diags.print(text);
    fail(text.str());
  }
}

} // namespace

std::string build_library(const Source& source, const BuildArgs& args, const std::string& out_path) {
  // On the compiler's large stack, as dscc compiles (support/LargeStack.h).
  return on_large_stack([&]() -> std::string {
    dscc::CompileOptions options = parse_args(source, args);
    std::ostringstream out, err;
    std::optional<passes::Compilation> c = dscc::compile_file(options, out, err);
    if (!c) fail(err.str());
    std::string error;
    if (!cpu::build_shared_library(c->module, c->hosts, dscc::manifest_of(*c), options.target,
                                   out_path, &error))
      fail(error);
    return err.str();
  });
}

std::string print_ir(const Source& source, const BuildArgs& args, const std::string& after) {
  // On the compiler's large stack, as dscc compiles (support/LargeStack.h).
  return on_large_stack([&]() -> std::string {
    dscc::CompileOptions options = parse_args(source, args);
    options.quiet = true;
    std::string error;
    if (dscc::parse_compile_option("--print-after=" + after, &options, &error) !=
            dscc::OptionResult::Parsed ||
        !error.empty())
      fail(error.empty() ? "cannot print after '" + after + "'" : error);
    std::ostringstream out, err;
    std::optional<passes::Compilation> c = dscc::compile_file(options, out, err);
    if (!c) fail(err.str());
    if (options.print_llvm) {
      std::string text = cpu::emit_llvm_ir(c->module, c->hosts, dscc::manifest_of(*c), options.target,
                                           true, &error);
      if (text.empty()) fail(error);
      return text;
    }
    return out.str();
  });
}

CheckReport check(const Source& source) {
  // On the compiler's large stack, as dscc compiles (support/LargeStack.h).
  return on_large_stack([&]() -> CheckReport {
    CheckedSource c;
    check_into(source, &c);
    return {dscc::format_shapes(c.checked->module), dscc::format_facts(c.checked->module, c.sources)};
  });
}

std::string explain_fusion(const Source& source, const std::string& fn) {
  // On the compiler's large stack, as dscc compiles (support/LargeStack.h).
  return on_large_stack([&]() -> std::string {
    CheckedSource c;
    check_into(source, &c);
    std::optional<passes::FusionLog> log = dscc::explain_fusion(c.checked->module, c.diags, c.prover);
    if (!log) {
      std::ostringstream text;
      c.diags.print(text);
      fail(text.str());
    }
    std::ostringstream text;
    log->print(text, c.sources, fn);
    return text.str();
  });
}

ProofReport prove(const std::string& fact, const std::vector<std::string>& assumptions,
                  unsigned timeout_ms) {
  auto parse = [](const std::string& text, const std::string& what) {
    symbolic::ParseResult r = symbolic::parse_predicate(text);
    if (!r.ok()) fail(symbolic::format_parse_error(text, r.error) + "note: in " + what);
    return r.expr;
  };
  symbolic::Facts facts;
  for (const std::string& a : assumptions) facts.add(parse(a, "the assumption '" + a + "'"));
  symbolic::Expr goal = parse(fact, "the fact");
  symbolic::ProverOptions options;
  options.z3_timeout_ms = timeout_ms;
  symbolic::Prover prover(options);
  symbolic::ProofResult result = prover.prove(goal, facts);
  ProofReport report;
  report.verdict = symbolic::verdict_name(result.verdict);
  if (result.verdict == symbolic::Verdict::Disproved)
    report.counterexample.insert(result.counterexample.begin(), result.counterexample.end());
  report.reason = result.reason;
  return report;
}

} // namespace dsc::python
