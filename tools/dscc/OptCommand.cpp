// dscc opt FILE.dsc [--passes=a,b,...]
#include <iostream>
#include <string>

#include "ir/Printer.h"
#include "tools/dscc/Command.h"
#include "tools/dscc/Compile.h"

namespace dsc::dscc {

namespace {

constexpr const char* kOptUsage =
    R"(usage: dscc opt FILE.dsc [--passes=PASS,...] [options]

Runs passes of the pipeline on FILE, starting from the parsed module, and prints the IR after
the last one: the module, or the host programs once lower_host has run. Without --passes it
runs the whole pipeline. Each pass must find what it needs established by the passes before it
(legalize needs inline_calls, which needs infer_shapes and collect_facts); an order that breaks
this is refused with the pass that is missing.

  --passes=PASS,...            the passes to run, in order
  --entry=NAME                 the entry function lower_host compiles (repeatable; default:
                               every fn whose parameters are tensors with known dims)
  --cpu=NAME, --vector-width=N as for dscc build
)";

void print_passes(std::ostream& os) {
  os << "\npasses, in pipeline order:\n";
  for (const passes::PassInfo& p : passes::all_passes()) {
    std::string name = p.name;
    os << "  " << name << std::string(name.size() < 15 ? 15 - name.size() : 1, ' ') << p.summary
       << "\n";
  }
}

} // namespace

int run_opt(const Args& args) {
  CompileOptions options;
  options.all_entries = true;
  options.quiet = true;
  std::string error, list;
  auto bad = [&](const std::string& message) {
    std::cerr << "dscc opt: error: " << message << "\n";
    return 1;
  };
  for (const std::string& a : args) {
    if (a == "--help" || a == "-h") {
      std::cout << kOptUsage << kInstrumentationUsage;
      print_passes(std::cout);
      return 0;
    }
    if (a.rfind("--passes=", 0) == 0) {
      list = a.substr(9);
      if (list.empty()) return bad("--passes needs a comma-separated list of passes");
    } else if (a.rfind("--entry=", 0) == 0) {
      options.entries.push_back(a.substr(8));
    } else if (parse_compile_option(a, &options, &error) == OptionResult::Parsed) {
      if (!error.empty()) return bad(error);
      if (options.print_llvm) return bad("dscc opt prints dsc IR; use dscc build --print-after=llvm");
    } else {
      std::cerr << "dscc opt: error: unknown option '" << a << "'\n\n" << kOptUsage;
      return 1;
    }
  }
  if (options.file.empty()) {
    std::cerr << "dscc opt: error: missing FILE\n\n" << kOptUsage;
    return 1;
  }
  std::optional<passes::Pipeline> pipeline =
      list.empty() ? passes::build_pipeline(options.target) : passes::parse_pipeline(list, &error);
  if (!pipeline) return bad(error);

  std::optional<passes::Compilation> c = compile_file(options, std::cout, std::cerr, &*pipeline);
  if (!c) return 1;
  if (c->holds.has(passes::Invariant::HostLowered)) {
    for (const ir::HostProgram& h : c->hosts) std::cout << ir::to_string(h);
  } else {
    std::cout << ir::print_module(c->module);
  }
  return 0;
}

} // namespace dsc::dscc
