// dscc check FILE [--emit=shapes|ir|facts] [--explain-fusion]
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "ir/Printer.h"
#include "tools/dscc/Command.h"
#include "tools/dscc/Check.h"
#include "tools/dscc/VerifyDiagnostics.h"

namespace dsc::dscc {

namespace {

constexpr const char* kCheckUsage =
    R"(usage: dscc check FILE.dsc [--emit=shapes|ir|facts] [--explain-fusion]

Parses FILE, infers every value's shape and decides every shape fact, printing errors as
`file:line:col: error: message` with the source line. Exits 1 on any error.

  --emit=shapes   each function's signature, then every binding as `name: dtype[dims]`
                  in source order (the default)
  --emit=ir       the typed module as .dsc text (it parses back)
  --emit=facts    every shape fact with its location: proved at compile time, assumed from
                  a `where` clause, or checked at run time (with a counterexample)
  --explain-fusion
                  instead, how each entry function's ops become kernels: per kernel of
                  more than one op, its ops with their locations and the shape facts its
                  fusion rests on (proved, guarded at run time, or a counterexample); and
                  each fusion refused, why. A fact the where clauses leave open makes two
                  variants, fused and not, marked [FACT] and [not FACT]: the compiled code
                  tests the fact and runs one
  --split-input-file
                  check each part of FILE between `# -----` lines on its own (line numbers
                  stay those of FILE)
  --verify-diagnostics
                  compare the errors with the file's `# expected-error {{text}}` comments
                  (`expected-error@+1`, `@-2` for other lines); exit 0 when they agree
)";

// The parts of a file between `# -----` lines, each padded with blank lines so that line
// numbers stay those of the whole file.
std::vector<std::string> split_input(const std::string& text) {
  std::vector<std::string> parts(1);
  size_t lines_before = 0;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    std::string line = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (line.rfind("# -----", 0) == 0) {
      parts.push_back(std::string(lines_before + 1, '\n'));
    } else {
      parts.back() += line + "\n";
    }
    ++lines_before;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return parts;
}

} // namespace

int run_check(const Args& args) {
  std::string file, emit = "shapes";
  bool split = false, verify = false, explain = false;
  for (const std::string& a : args) {
    if (a == "--explain-fusion") {
      explain = true;
      continue;
    }
    if (a == "--split-input-file") {
      split = true;
      continue;
    }
    if (a == "--verify-diagnostics") {
      verify = true;
      continue;
    }
    if (a == "--help" || a == "-h") {
      std::fputs(kCheckUsage, stdout);
      return 0;
    }
    if (a.rfind("--emit=", 0) == 0) {
      emit = a.substr(7);
      if (emit != "shapes" && emit != "ir" && emit != "facts") {
        std::cerr << "dscc check: error: --emit must be shapes, ir or facts (got '" << emit << "')\n";
        return 1;
      }
      continue;
    }
    if (a.size() > 1 && a[0] == '-') {
      std::cerr << "dscc check: error: unknown option '" << a << "'\n\n" << kCheckUsage;
      return 1;
    }
    if (!file.empty()) {
      std::cerr << "dscc check: error: one FILE at a time ('" << file << "' and '" << a << "')\n";
      return 1;
    }
    file = a;
  }
  if (file.empty()) {
    std::cerr << "dscc check: error: missing FILE\n\n" << kCheckUsage;
    return 1;
  }

  SourceManager sources;
  DiagnosticEngine diags(sources);
  symbolic::Prover prover;
  std::optional<uint32_t> whole = load_source(file, sources, diags);
  if (!whole) {
    diags.print(std::cerr);
    return 1;
  }
  std::vector<std::string> parts{sources.text(*whole)};
  if (split) parts = split_input(sources.text(*whole));

  int status = 0;
  for (std::string& part : parts) {
    DiagnosticEngine part_diags(sources);
    uint32_t id = sources.add(file, std::move(part));
    std::optional<Checked> checked = check_buffer(sources, id, part_diags, prover);
    if (verify) {
      std::string report;
      if (!verify_diagnostics(sources, id, part_diags, &report)) {
        std::cerr << report;
        status = 1;
      }
      continue;
    }
    part_diags.print(std::cerr);
    if (!checked) {
      status = 1;
      continue;
    }
    if (explain) {
      std::optional<passes::FusionLog> log = explain_fusion(checked->module, part_diags, prover);
      part_diags.print(std::cerr);
      if (log) log->print(std::cout, sources);
      else status = 1;
      continue;
    }
    if (emit == "shapes") std::cout << format_shapes(checked->module);
    if (emit == "ir") std::cout << ir::print_module(checked->module);
    if (emit == "facts") std::cout << format_facts(checked->module, sources);
  }
  return status;
}

} // namespace dsc::dscc
