// collect_facts: where clauses are Assumed (and checked for contradictions), other facts are
// Proved or become run-time checks with a counterexample.

#include "passes/CollectFacts.h"

#include "passes/InferShapes.h"
#include "tests/unit/passes/PassTestUtil.h"

namespace dsc::testing {
namespace {

using ir::ShapeFact;
using ir::VarRef;
using Status = ShapeFact::Status;

class CollectFactsTest : public IRBuilderTest {
protected:
  // A function `f(x: <param>) where ... { return x }` carrying the given facts.
  ir::Module module_with(const std::string& param, std::vector<std::string> where,
                         std::vector<ShapeFact> facts) {
    VarRef x = var("x", param);
    Ref<ir::Function> f = fn("f", {x}, {}, ref(x), "?", std::move(where), {}, std::move(facts));
    ir::Module m;
    m.add(f);
    return m;
  }
  ShapeFact op_fact(const std::string& p, const std::string& what = "op fact") {
    return ShapeFact{pred(p), loc(), ShapeFact::Origin::Op, Status::Unchecked, what, ""};
  }
  const std::vector<ShapeFact>& facts_of(const ir::Module& m) { return m.function("f")->facts; }
};

TEST_F(CollectFactsTest, WhereClausesAreAssumedAndProveOtherFacts) {
  ir::Module m = module_with("f32[S]", {"1 <= S", "S <= 512", "S % 8 == 0"},
                             {op_fact("S <= 1024"), op_fact("S % 4 == 0"), op_fact("S != 0")});
  ir::Module out = passes::collect_facts(m, ctx_);
  EXPECT_EQ(messages(), "");
  const std::vector<ShapeFact>& facts = facts_of(out);
  ASSERT_EQ(facts.size(), 6u); // the where clauses are added when infer_shapes did not run
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(facts[i].origin, ShapeFact::Origin::Where);
    EXPECT_EQ(facts[i].status, Status::Assumed);
  }
  for (size_t i = 3; i < 6; ++i)
    EXPECT_EQ(facts[i].status, Status::Proved) << i;
}

TEST_F(CollectFactsTest, UnprovableFactsAreRunTimeChecksWithACounterexample) {
  ir::Module m = module_with("f32[S]", {"S >= 1"}, {op_fact("S == T"), op_fact("S % 8 == 0")});
  ir::Module out = passes::collect_facts(m, ctx_);
  EXPECT_EQ(messages(), "");
  const std::vector<ShapeFact>& facts = facts_of(out);
  ASSERT_EQ(facts.size(), 3u);
  EXPECT_EQ(facts[1].status, Status::RuntimeCheck);
  // Values of the fact's symbols that satisfy the where clauses and break the fact.
  ASSERT_FALSE(facts[1].counterexample.empty());
  std::string ce = facts[1].counterexample;
  EXPECT_EQ(ce.find("S="), 0u) << ce;
  EXPECT_NE(ce.find(", T="), std::string::npos) << ce;
  EXPECT_EQ(facts[2].status, Status::RuntimeCheck);
  EXPECT_EQ(facts[2].counterexample.rfind("S=", 0), 0u);
  EXPECT_EQ(facts[2].counterexample.find(','), std::string::npos);
}

TEST_F(CollectFactsTest, ParameterTypesImplyFacts) {
  ir::Module m = module_with("f32[S - 4]", {}, {op_fact("S >= 3")});
  ir::Module out = passes::collect_facts(m, ctx_);
  EXPECT_EQ(messages(), "");
  EXPECT_EQ(facts_of(out)[0].status, Status::Proved);
}

TEST_F(CollectFactsTest, ContradictoryWhereClauses) {
  ir::Module m = module_with("f32[S, T]", {"S >= 10", "T >= 1", "S <= 5"}, {op_fact("S == T")});
  ir::Module out = passes::collect_facts(m, ctx_);
  EXPECT_EQ(messages(), "error: where clause 'S <= 5' contradicts the clauses before it\n"
                        "  note: contradicted clause: '10 <= S'\n");
  // Nothing is proved from a contradiction.
  EXPECT_EQ(facts_of(out).back().status, Status::Unchecked);
}

TEST_F(CollectFactsTest, ClausesThatCanNeverHold) {
  ir::Module m = module_with("f32[S]", {"S < 0"}, {});
  passes::collect_facts(m, ctx_);
  EXPECT_EQ(messages(), "error: where clause 'S < 0' can never hold (symbols are dims, so >= 0)\n");
  diags_.clear();
  ir::Module m2 = module_with("f32[S - 4]", {"S <= 2"}, {});
  passes::collect_facts(m2, ctx_);
  EXPECT_EQ(messages(), "error: where clause 'S <= 2' can never hold for the parameter types\n");
}

TEST_F(CollectFactsTest, AFactThatCanNeverHoldIsAnError) {
  ir::Module m = module_with("f32[S]", {"S >= 4"}, {op_fact("S == 2", "matmul: contracted dims")});
  passes::collect_facts(m, ctx_);
  EXPECT_EQ(messages(), "error: matmul: contracted dims: 'S == 2' can never hold\n");
}

TEST_F(CollectFactsTest, AfterInferShapes) {
  // f(x: f32[S], y: f32[T], m: bool[S]) where S >= 1 { let a = x + y; let i: i64[N, 1] =
  // nonzero(m); a }
  VarRef x = var("x", "f32[S]"), y = var("y", "f32[T]"), mk = var("m", "bool[S]"), a = var("a"),
         i = var("i", "i64[N, 1]");
  ir::Module m;
  m.add(fn("f", {x, y, mk},
           {let(a, call("add", {ref(x), ref(y)})), let_typed(i, call("nonzero", {ref(mk)}))},
           ref(a), "?", {"S >= 1"}));
  ir::Module inferred = passes::infer_shapes(m, ctx_);
  ir::Module out = passes::collect_facts(inferred, ctx_);
  EXPECT_EQ(messages(), "");
  const std::vector<ShapeFact>& facts = facts_of(out);
  ASSERT_EQ(facts.size(), 4u);
  EXPECT_EQ(facts[0].status, Status::Assumed);
  EXPECT_EQ(symbolic::to_string(facts[1].predicate), "S == T");
  EXPECT_EQ(facts[1].status, Status::RuntimeCheck);
  EXPECT_FALSE(facts[1].counterexample.empty());
  // nonzero's bound: true by construction, assumed.
  EXPECT_EQ(symbolic::to_string(facts[2].predicate), "nnz0 <= S");
  EXPECT_EQ(facts[2].origin, ShapeFact::Origin::Op);
  EXPECT_EQ(facts[2].status, Status::Assumed);
  EXPECT_EQ(facts[3].origin, ShapeFact::Origin::Assertion);
  EXPECT_EQ(facts[3].status, Status::Proved);
}

TEST_F(CollectFactsTest, GenericFunctionsAreLeftAlone) {
  VarRef x = var("x", "tensor");
  ir::Module m;
  m.add(fn("g", {x}, {}, ref(x)));
  ir::Module out = passes::collect_facts(m, ctx_);
  EXPECT_TRUE(out.function("g").same_as(m.function("g")));
}

} // namespace
} // namespace dsc::testing
