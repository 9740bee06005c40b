#pragma once
// The front end as the unit tests run it: the source tree (for the examples and the real
// stdlib), .dsc text parsed into a module, and diagnostics as compact "line:col: message"
// lines to compare whole.

#include <gtest/gtest.h>

#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "ir/Module.h"
#include "lang/Frontend.h"
#include "support/Diagnostics.h"
#include "tests/unit/SourceDir.h"

namespace dsc::testing {

// The text of a file of the source tree ("examples/mlp.dsc"); empty when it cannot be read.
inline std::string read_source(const std::string& relative) {
  std::ifstream in(source_dir() + "/" + relative);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Front-end options whose imports resolve against the source tree's stdlib.
inline lang::FrontendOptions stdlib_options() {
  lang::FrontendOptions options;
  options.stdlib_dirs = {source_dir() + "/stdlib"};
  return options;
}

// Every diagnostic as "line:col: message", one per line (notes left out).
inline std::string diagnostic_lines(const DiagnosticEngine& diags) {
  std::string s;
  for (const Diagnostic& d : diags.diagnostics())
    s += std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col) + ": " + d.message + "\n";
  return s;
}

// Parses .dsc text (prims, no imports) as the buffer `file_name`; the test fails on any
// diagnostic. Nullopt after an error.
inline std::optional<ir::Module> parse_clean(const std::string& text,
                                             const std::string& file_name = "test.dsc") {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  uint32_t file = sources.add(file_name, text);
  std::optional<ir::Module> m = lang::parse_module(sources, file, diags);
  EXPECT_EQ(diagnostic_lines(diags), "");
  if (diags.has_errors()) return std::nullopt;
  return m;
}

} // namespace dsc::testing
