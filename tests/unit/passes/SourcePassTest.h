#pragma once
// A fixture for the pass tests that start from .dsc text: the front end with the real stdlib,
// then the pipeline (passes/Pipeline.h, the verifier after every pass) through the pass under
// test, errors as "line:col: message" lines, and the checks that a pass's result (out_)
// verifies and prints as .dsc that parses back to an equal module.

#include <gtest/gtest.h>

#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "ir/Module.h"
#include "ir/Printer.h"
#include "ir/StructuralEqual.h"
#include "ir/Verifier.h"
#include "lang/Frontend.h"
#include "passes/PassContext.h"
#include "tests/unit/FrontendUtil.h"
#include "tests/unit/PipelineUtil.h"

namespace dsc::testing {

class SourcePassTest : public ::testing::Test {
protected:
  // Parses `text` as a new buffer (test1.dsc, test2.dsc, ...); nullopt when the front end
  // failed.
  std::optional<ir::Module> parse(const std::string& text) {
    uint32_t file = sources_.add("test" + std::to_string(++files_) + ".dsc", text);
    return lang::parse_module(sources_, file, diags_, stdlib_options());
  }

  // parse, then infer_shapes and collect_facts; nullopt when the front end failed (the
  // errors of the two passes are left in diags_).
  std::optional<ir::Module> infer(const std::string& text) {
    std::optional<ir::Module> m = parse(text);
    if (!m) return std::nullopt;
    return typecheck(std::move(*m), ctx_);
  }

  // Parses `text`, runs the pipeline through collect_facts (into typed_), then on through the
  // pass named `last` ("" for none), the result in out_. False when the front end failed or a
  // pass reported an error (the later passes do not run).
  bool run_passes(const std::string& text, const char* last) {
    std::optional<ir::Module> typed = infer(text);
    if (!typed) return false;
    typed_ = std::move(*typed);
    if (diags_.has_errors()) return false;
    out_ = typed_;
    if (!*last) return true;
    passes::Compilation c;
    c.module = typed_;
    c.holds = {passes::Invariant::Typed, passes::Invariant::FactsDecided};
    bool ok = run_pipeline(c, ctx_, "inline_calls", last);
    out_ = std::move(c.module);
    return ok;
  }

  // "line:col: message" per diagnostic.
  std::string errors() const { return diagnostic_lines(diags_); }

  // out_ verifies, every value typed.
  void expect_valid() const {
    ir::VerifyOptions options;
    options.require_types = true;
    EXPECT_EQ(ir::verify(out_, options), std::vector<std::string>{});
  }

  // out_ verifies, then prints and parses back to an equal module.
  void expect_valid_and_round_trips() {
    expect_valid();
    std::string text = ir::print_module(out_);
    DiagnosticEngine diags(sources_);
    uint32_t file = sources_.add("printed.dsc", text);
    std::optional<ir::Module> back = lang::parse_module(sources_, file, diags, stdlib_options());
    ASSERT_TRUE(back.has_value()) << text;
    EXPECT_TRUE(ir::structural_equal(out_, *back)) << text;
    // Name the declarations that differ.
    ASSERT_EQ(out_.decls.size(), back->decls.size());
    for (size_t i = 0; i < out_.decls.size(); ++i) {
      const ir::Module::Decl &a = out_.decls[i], &b = back->decls[i];
      bool same = a.prim  ? b.prim && ir::structural_equal(*a.prim, *b.prim)
                  : a.ext ? b.ext && ir::structural_equal(*a.ext, *b.ext)
                          : b.fn && ir::structural_equal(*a.fn, *b.fn);
      EXPECT_TRUE(same) << a.name() << " does not read back equal";
    }
  }

  SourceManager sources_;
  DiagnosticEngine diags_{sources_};
  symbolic::Prover prover_;
  passes::PassContext ctx_{diags_, prover_};
  ir::Module typed_; // after collect_facts
  ir::Module out_;   // the result of the pass under test
  int files_ = 0;
};

} // namespace dsc::testing
