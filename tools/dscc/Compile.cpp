#include "tools/dscc/Compile.h"

#include <algorithm>
#include <chrono>
#include <ostream>

#include "passes/PassContext.h"
#include "tools/dscc/Pipeline.h"

namespace dsc::dscc {

bool parse_print_after(const std::string& value, CompileOptions* options, std::string* error) {
  const std::vector<std::string>& names = passes::pass_names();
  if (value != "all" && value != "llvm" &&
      std::find(names.begin(), names.end(), value) == names.end()) {
    std::string known;
    for (const std::string& n : names) known += n + ", ";
    *error = "unknown pass '" + value + "' in --print-after; the passes are " + known +
             "and llvm (the optimized LLVM IR), or all";
    return false;
  }
  options->print_after.push_back(value);
  return true;
}

std::optional<Compiled> compile_file(const CompileOptions& options, std::ostream& out,
                                     std::ostream& err) {
  auto start = std::chrono::steady_clock::now();
  SourceManager sources;
  DiagnosticEngine diags(sources);
  symbolic::Prover prover;
  std::optional<uint32_t> file = load_source(options.file, sources, diags);
  std::optional<Checked> checked;
  if (file) checked = check_buffer(sources, *file, diags, prover);
  if (!checked) {
    diags.print(err);
    return std::nullopt;
  }

  std::vector<std::string> candidates = passes::entry_candidates(checked->module);
  std::vector<std::string> entries = options.entries;
  for (const std::string& e : entries) {
    if (std::find(candidates.begin(), candidates.end(), e) != candidates.end()) continue;
    err << "dscc: error: " << options.file << " has no entry function '" << e << "'";
    if (!candidates.empty()) {
      err << " (entry functions:";
      for (const std::string& c : candidates) err << " " << c;
      err << ")";
    }
    err << "\n";
    return std::nullopt;
  }
  if (entries.empty()) {
    if (candidates.empty()) {
      err << "dscc: error: " << options.file
          << " has no entry function (a fn whose parameters are all tensors with known dims)\n";
      return std::nullopt;
    }
    if (options.all_entries || candidates.size() == 1) {
      entries = candidates;
    } else if (std::find(candidates.begin(), candidates.end(), "main") != candidates.end()) {
      entries = {"main"};
    } else {
      err << "dscc: error: " << options.file << " has several entry functions (";
      for (size_t i = 0; i < candidates.size(); ++i) err << (i ? ", " : "") << candidates[i];
      err << "); choose one with --entry=NAME\n";
      return std::nullopt;
    }
  }

  passes::PassContext ctx{diags, prover};
  passes::PipelineOptions pipeline;
  pipeline.print_after = options.print_after;
  pipeline.print_to = &out;
  std::optional<passes::Lowered> lowered = passes::lower_module(checked->module, entries, ctx, pipeline);
  diags.print(err);
  if (!lowered) return std::nullopt;

  Compiled c{std::move(*lowered), {}};
  for (const ir::HostProgram& h : c.lowered.hosts)
    c.manifest.functions.push_back(cpu::describe_host_program(h));
  if (!options.quiet) {
    size_t kernels = 0;
    for (const ir::Module::Decl& d : c.lowered.module.decls) kernels += d.prim ? 1 : 0;
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    err << "dscc: " << options.file << ": lowered " << entries.size() << " function"
        << (entries.size() == 1 ? "" : "s") << " to " << kernels << " kernels in "
        << static_cast<int>(ms) << " ms\n";
  }
  return c;
}

} // namespace dsc::dscc
