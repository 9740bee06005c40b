// The pass registry and the pipeline: every pass is registered once, the default order is
// valid for every target, subsets are checked against the invariants, and the instrumentation
// prints, verifies and times.
#include "passes/Pipeline.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "lang/Frontend.h"
#include "tests/unit/FrontendUtil.h"

namespace dsc::passes {
namespace {

TEST(PassRegistry, EveryPassOnceWithASummaryAndAnEffect) {
  std::set<std::string> names;
  for (const PassInfo& p : all_passes()) {
    EXPECT_TRUE(names.insert(p.name).second) << p.name << " is registered twice";
    EXPECT_GT(std::string(p.summary).size(), 10u) << p.name;
    EXPECT_FALSE(p.establishes.empty()) << p.name << " establishes nothing";
    EXPECT_EQ(find_pass(p.name), &p);
  }
  EXPECT_EQ(find_pass("fuse"), nullptr);
}

TEST(Pipeline, DefaultOrderIsValidForEveryTarget) {
  for (const ir::Target& t : {ir::cpu_target(), ir::cuda_target()}) {
    Pipeline whole = build_pipeline(t);
    EXPECT_EQ(whole.passes().size(), all_passes().size());
    EXPECT_EQ(whole.check_order({}), "");
    // Every pass needs something only earlier passes establish, so starting anywhere but the
    // beginning is refused, unless what was skipped is given as holding.
    for (size_t i = 1; i < all_passes().size(); ++i) {
      Pipeline rest = build_pipeline(t, all_passes()[i].name);
      EXPECT_NE(rest.check_order({}), "") << "starting at " << all_passes()[i].name;
      Invariants given;
      for (size_t j = 0; j < i; ++j) given |= all_passes()[j].establishes;
      EXPECT_EQ(rest.check_order(given), "") << "starting at " << all_passes()[i].name;
    }
  }
  Pipeline front = build_pipeline(ir::cpu_target(), "infer_shapes", "collect_facts");
  ASSERT_EQ(front.passes().size(), 2u);
  EXPECT_STREQ(front.passes()[1]->name, "collect_facts");
}

TEST(Pipeline, ParsesSubsetsAndRefusesInvalidOrders) {
  std::string error;
  std::optional<Pipeline> p = parse_pipeline("infer_shapes,collect_facts,inline_calls", &error);
  ASSERT_TRUE(p.has_value()) << error;
  EXPECT_EQ(p->passes().size(), 3u);
  EXPECT_FALSE(parse_pipeline("infer_shapes,schedule", &error).has_value());
  EXPECT_EQ(error, "pass 'schedule' needs the IR legalized, which no earlier pass establishes "
                   "(run legalize before it)");
  EXPECT_FALSE(parse_pipeline("infer_shapes,,collect_facts", &error).has_value());
  EXPECT_EQ(error.rfind("unknown pass ''", 0), 0u) << error;
}

class PipelineRunTest : public ::testing::Test {
protected:
  // With `partial`, the front end keeps going past errors, as dscc check and the fuzzer do.
  bool run(const std::string& text, const Pipeline& pipeline, const PipelineOptions& options,
           bool partial = false) {
    uint32_t file = sources_.add("test.dsc", text);
    lang::FrontendOptions frontend = testing::stdlib_options();
    std::vector<std::string> unresolved;
    if (partial) frontend.unresolved = &unresolved;
    std::optional<ir::Module> m = lang::parse_module(sources_, file, diags_, frontend);
    if (!m) return false;
    c_.module = std::move(*m);
    c_.entries = {"f"};
    return pipeline.run(c_, ctx_, options);
  }
  SourceManager sources_;
  DiagnosticEngine diags_{sources_};
  symbolic::Prover prover_;
  PassContext ctx_{diags_, prover_};
  Compilation c_;
};

constexpr const char* kModel = R"(import nn
fn helper(x: f32[N]) { return x }
fn f(x: f32[B, 8], w: f32[8, 4]) where B >= 1 { return nn.relu(matmul(x, w)) }
)";

TEST_F(PipelineRunTest, RunsPrintsAndTimesEveryPass) {
  std::ostringstream printed, timing;
  PipelineOptions o;
  o.verify_each = true;
  o.print_after = {"legalize", "plan_memory"};
  o.time_passes = true;
  o.print_to = &printed;
  o.report_to = &timing;
  ASSERT_TRUE(run(kModel, build_pipeline(ctx_.target), o)) << testing::diagnostic_lines(diags_);
  EXPECT_TRUE(c_.holds.has(Invariant::MemoryPlanned));
  ASSERT_EQ(c_.hosts.size(), 1u);
  EXPECT_TRUE(c_.hosts[0].memory_planned());
  // Only the entry is kept once calls are inlined.
  EXPECT_FALSE(c_.module.function("helper").defined());
  std::string text = printed.str();
  EXPECT_NE(text.find("// ----- after legalize\n"), std::string::npos);
  EXPECT_NE(text.find("= \"dsc.sgemm\""), std::string::npos);
  EXPECT_NE(text.find("// ----- after plan_memory\nhost f("), std::string::npos);
  EXPECT_EQ(text.find("// ----- after schedule"), std::string::npos);
  for (const PassInfo& p : all_passes())
    EXPECT_NE(timing.str().find(p.name), std::string::npos) << p.name;
}

TEST_F(PipelineRunTest, StopsAtTheFirstPassWithAnError) {
  PipelineOptions o;
  ASSERT_FALSE(run("fn f(x: f32[N]) { return matmul(x, x) + y }\n", build_pipeline(ctx_.target), o));
  EXPECT_FALSE(c_.holds.has(Invariant::Typed));
  EXPECT_TRUE(c_.hosts.empty());
}

// A module the front end kept despite errors (here with two definitions of g) is analysed for
// more errors but not verified: found by the parser fuzzer.
TEST_F(PipelineRunTest, PartialModulesAreNotVerified) {
  PipelineOptions o;
  o.verify_each = true;
  run("fn g(x: f32[N]) { return x }\nfn g(x: f32[N]) { return x }\n"
      "fn f(x: f32[N]) { return g(x) }\nfn h( {\n",
      build_pipeline(ctx_.target, "infer_shapes", "collect_facts"), o, true);
  EXPECT_TRUE(c_.holds.has(Invariant::Typed)); // the pipeline did run
  EXPECT_TRUE(diags_.has_errors());
  EXPECT_NE(testing::diagnostic_lines(diags_).find("redefinition of 'g'"), std::string::npos);
}

TEST_F(PipelineRunTest, TheTargetChoosesLibraryRoutines) {
  ctx_.target = ir::cuda_target();
  PipelineOptions o;
  o.verify_each = true;
  ASSERT_TRUE(run(kModel, build_pipeline(ctx_.target, "infer_shapes", "legalize"), o));
  // Every matmul is bound to the target's routine: cuBLAS on CUDA, never a CPU one.
  int externs = 0;
  for (const ir::Module::Decl& d : c_.module.decls) {
    if (!d.ext) continue;
    ++externs;
    EXPECT_EQ(d.ext->symbol, "cublas.sgemm") << d.name();
  }
  EXPECT_GT(externs, 0);
}

} // namespace
} // namespace dsc::passes
