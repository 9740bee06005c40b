#pragma once
// Shared helpers for the front-end tests: parse a string, look at the diagnostics.

#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include "ir/Module.h"
#include "lang/Frontend.h"
#include "support/Diagnostics.h"

namespace dsc::lang::testing {

struct Parsed {
  SourceManager sources;
  DiagnosticEngine diags{sources};
  std::optional<ir::Module> module;

  // Every diagnostic as `dscc` prints it.
  std::string printed() const {
    std::ostringstream os;
    diags.print(os);
    return os.str();
  }
  // `line:col: message` of each error, one per line: compact enough to compare whole.
  std::string errors() const {
    std::string out;
    for (const Diagnostic& d : diags.diagnostics()) {
      if (d.severity != Severity::Error) continue;
      out += std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col) + ": " + d.message + "\n";
    }
    return out;
  }
  std::string first_error() const {
    for (const Diagnostic& d : diags.diagnostics())
      if (d.severity == Severity::Error) return d.message;
    return "";
  }
  const Diagnostic* first() const {
    return diags.diagnostics().empty() ? nullptr : &diags.diagnostics().front();
  }
  // All notes of all diagnostics, one per line.
  std::string notes() const {
    std::string out;
    for (const Diagnostic& d : diags.diagnostics())
      for (const Diagnostic::Note& n : d.notes)
        out += n.message + "\n";
    return out;
  }
};

// Parses `text` as the file "test.dsc". Imports search `stdlib_dirs` (none by default, so a
// test never depends on the machine's stdlib).
inline std::unique_ptr<Parsed> parse(const std::string& text,
                                     std::vector<std::string> stdlib_dirs = {"/nonexistent-dsc"}) {
  auto p = std::make_unique<Parsed>();
  uint32_t file = p->sources.add("test.dsc", text);
  FrontendOptions options;
  options.stdlib_dirs = std::move(stdlib_dirs);
  p->module = parse_module(p->sources, file, p->diags, options);
  return p;
}

} // namespace dsc::lang::testing
