// inline_calls on .dsc text through the front end and the real stdlib: the stdlib composites
// and module fns become primitive-op bindings with the types they had, facts survive, and the
// result is a valid typed module.

#include <gtest/gtest.h>

#include <map>

#include "ir/OpRegistry.h"
#include "passes/InlineCalls.h"
#include "symbolic/Printer.h"
#include "tests/unit/passes/SourcePassTest.h"

namespace dsc::testing {
namespace {

class InlineCallsTest : public SourcePassTest {
protected:
  // Parses, infers and decides facts (typed_); false when that failed.
  bool typecheck(const std::string& text) { return run_passes(text, ""); }
  bool inline_text(const std::string& text) { return run_passes(text, "inline_calls"); }

  const ir::Block& body(const std::string& f) const {
    return *out_.function(f)->body.as<ir::Block>();
  }

  // "name = callee: type" per binding of f.
  std::string bindings(const std::string& f) const {
    std::string s;
    for (const ir::Binding& b : body(f).bindings) {
      std::string names;
      for (const ir::VarRef& v : b.vars)
        names += (names.empty() ? "" : ", ") + v->name;
      const ir::Call* c = b.value.as<ir::Call>();
      s += names + " = " + (c ? c->callee : ir::node_kind_name(b.value.kind())) + ": " +
           ir::to_string(b.value->type) + "\n";
    }
    return s;
  }

  // Every call of f is a primitive op (or a prim/extern of the module), with var or literal
  // operands; f is one flat Block (whose bindings may also alias a var).
  void expect_flat(const std::string& f) const {
    for (const ir::Binding& b : body(f).bindings) {
      if (b.value.is<ir::Var>()) continue;
      const ir::Call* c = b.value.as<ir::Call>();
      ASSERT_NE(c, nullptr) << ir::to_string(b.value);
      const ir::OpDef* op = ir::find_op(c->callee);
      EXPECT_TRUE(op || out_.prim(c->callee) || out_.ext(c->callee)) << c->callee;
      if (!op) continue;
      for (size_t i = 0; i < c->args.size(); ++i) {
        if (i < op->params.size() && op->params[i].kind != ir::ParamKind::Tensor) continue;
        EXPECT_TRUE(c->args[i].is<ir::Var>() || c->args[i].is<ir::Literal>())
            << c->callee << " operand " << ir::to_string(c->args[i]);
      }
    }
  }

  // The facts of f that are run-time checks, one predicate per line.
  std::string runtime_checks(const ir::Module& m, const std::string& f) const {
    std::string s;
    for (const ir::ShapeFact& fact : m.function(f)->facts)
      if (fact.status == ir::ShapeFact::Status::RuntimeCheck)
        s += symbolic::to_string(fact.predicate) + "\n";
    return s;
  }
};

TEST_F(InlineCallsTest, Softmax) {
  ASSERT_TRUE(inline_text(R"(import nn
fn f(x: f32[B, S]) -> f32[B, S] {
  return nn.softmax(x, axis=-1)
}
)")) << errors();
  EXPECT_EQ(bindings("f"), "max_1 = max: f32[B, 1]\n"
                           "shifted = sub: f32[B, S]\n"
                           "e = exp: f32[B, S]\n"
                           "sum_1 = sum: f32[B, 1]\n"
                           "result = div: f32[B, S]\n");
  expect_flat("f");
  expect_valid();
  // The axis attribute is a literal now.
  const ir::Call* max = body("f").bindings[0].value.as<ir::Call>();
  ASSERT_NE(max->kwarg("axis"), nullptr);
  EXPECT_EQ(ir::to_string(*max->kwarg("axis")), "-1");
  // The result is asserted to have the call's type.
  EXPECT_TRUE(body("f").bindings.back().has_asserted_type);
}

TEST_F(InlineCallsTest, BertLayerKeepsItsTypes) {
  ASSERT_TRUE(typecheck(read_source("examples/bert_layer.dsc"))) << errors();
  out_ = passes::inline_calls(typed_, ctx_);
  ASSERT_EQ(errors(), "");
  expect_flat("layer");
  expect_valid();
  // The layer's own bindings keep their names and types.
  std::map<std::string, std::string> before;
  for (const ir::Binding& b : typed_.function("layer")->body.as<ir::Block>()->bindings)
    for (const ir::VarRef& v : b.vars)
      before[v->name] = ir::to_string(v->type);
  std::map<std::string, std::string> after;
  for (const ir::Binding& b : body("layer").bindings)
    for (const ir::VarRef& v : b.vars)
      after[v->name] = ir::to_string(v->type);
  for (const auto& [name, type] : before) {
    ASSERT_TRUE(after.count(name)) << name;
    EXPECT_EQ(after[name], type) << name;
  }
  EXPECT_EQ(ir::to_string(out_.function("layer")->ret_type), "f32[B, S, 768]");
  EXPECT_EQ(runtime_checks(out_, "layer"), "");
  // The where clauses are still the first facts, assumed.
  const std::vector<ir::ShapeFact>& facts = out_.function("layer")->facts;
  ASSERT_GE(facts.size(), 2u);
  EXPECT_EQ(facts[0].status, ir::ShapeFact::Status::Assumed);
}

TEST_F(InlineCallsTest, LayerNormBindsEps) {
  ASSERT_TRUE(inline_text(R"(import nn
fn f(x: f32[B, D], g: f32[D], b: f32[D]) {
  return (nn.layer_norm(x, g, b, eps=1e-12), nn.rms_norm(x, g))
}
)")) << errors();
  expect_flat("f");
  expect_valid();
  EXPECT_EQ(bindings("f"), "mu = mean: f32[B, 1]\n"
                           "centered = sub: f32[B, D]\n"
                           "mul_1 = mul: f32[B, D]\n"
                           "variance = mean: f32[B, 1]\n"
                           "add_1 = add: f32[B, 1]\n"
                           "rsqrt_1 = rsqrt: f32[B, 1]\n"
                           "mul_2 = mul: f32[B, D]\n"
                           "mul_3 = mul: f32[B, D]\n"
                           "add_2 = add: f32[B, D]\n"
                           "mul_4 = mul: f32[B, D]\n"
                           "ms = mean: f32[B, 1]\n"
                           "add_3 = add: f32[B, 1]\n"
                           "rsqrt_2 = rsqrt: f32[B, 1]\n"
                           "mul_5 = mul: f32[B, D]\n"
                           "mul_6 = mul: f32[B, D]\n");
  // eps given, then rms_norm's default, as literals.
  EXPECT_EQ(ir::to_string(body("f").bindings[4].value), "variance + 1e-12");
  EXPECT_EQ(ir::to_string(body("f").bindings[11].value), "ms + 1e-06");
}

TEST_F(InlineCallsTest, AttentionAndGelu) {
  ASSERT_TRUE(inline_text(R"(import nn
fn f(q: f32[B, H, S, D], k: f32[B, H, S, D], v: f32[B, H, S, D]) -> f32[B, H, S, D] {
  return nn.gelu(nn.attention(q, k, v, scale=0.125))
}
)")) << errors();
  expect_flat("f");
  expect_valid();
  // attention's own call of softmax is inlined too; the default mask 0.0 is a literal.
  EXPECT_EQ(bindings("f"), "permute_1 = permute: f32[B, H, D, S]\n"
                           "matmul_1 = matmul: f32[B, H, S, S]\n"
                           "mul_1 = mul: f32[B, H, S, S]\n"
                           "scores = add: f32[B, H, S, S]\n"
                           "max_1 = max: f32[B, H, S, 1]\n"
                           "shifted = sub: f32[B, H, S, S]\n"
                           "e = exp: f32[B, H, S, S]\n"
                           "sum_1 = sum: f32[B, H, S, 1]\n"
                           "softmax = div: f32[B, H, S, S]\n"
                           "matmul_2 = matmul: f32[B, H, S, D]\n"
                           "mul_2 = mul: f32[B, H, S, D]\n"
                           "mul_3 = mul: f32[B, H, S, D]\n"
                           "erf_1 = erf: f32[B, H, S, D]\n"
                           "add_1 = add: f32[B, H, S, D]\n"
                           "result = mul: f32[B, H, S, D]\n");
  EXPECT_EQ(ir::to_string(body("f").bindings[3].value), "mul_1 + 0.0");
  EXPECT_EQ(ir::to_string(body("f").bindings[2].value), "matmul_1 * 0.125");
  // Generic fns are gone from the module; nothing else is.
  EXPECT_EQ(out_.decls.size(), 1u);
}

// A module fn with its own symbols: they are bound from the arguments (2*N solved for N), its
// where clause stays checked, and a symbol its body binds is renamed apart from the caller's.
TEST_F(InlineCallsTest, ModuleFunctionsWithSymbols) {
  ASSERT_TRUE(inline_text(R"(
fn halves(x: f32[R, 2*N]) -> (f32[R, N], f32[R, N]) where N % 4 == 0 {
  let y: f32[R, M] = x * 2.0
  let a, b = split(y, 2, axis=1)
  return (a, b)
}

fn model(x: f32[B, T], w: f32[T]) {
  let M = x + w
  let lo, hi = halves(M)
  let t = halves(hi)
  return (lo, t[1])
}
)")) << errors();
  expect_flat("model");
  expect_valid();
  EXPECT_EQ(bindings("model"), "M = add: f32[B, T]\n"
                               "y = mul: f32[B, T]\n"
                               "lo, hi = split: (f32[B, T/2], f32[B, T/2])\n"
                               "y_1 = mul: f32[B, T/2]\n"
                               "a_1, b_1 = split: (f32[B, T/4], f32[B, T/4])\n");
  // The symbol M that halves' body binds by its assertion (renamed apart from the caller's
  // value M) is replaced by the dim it was bound to.
  EXPECT_EQ(ir::to_string(body("model").bindings[1].vars[0]->type), "f32[B, T]");
  EXPECT_TRUE(body("model").bindings[1].has_asserted_type);
  EXPECT_EQ(ir::to_string(body("model").result), "(lo, b_1)");
  // halves' where clause at both calls, checked at run time, as before inlining.
  EXPECT_EQ(runtime_checks(typed_, "model"), "T%2 == 0\nT/2%4 == 0\nT/4%4 == 0\n");
  EXPECT_EQ(runtime_checks(out_, "model"), runtime_checks(typed_, "model"));
  // halves itself is inlined into nothing else and stays a function of the module.
  ASSERT_TRUE(out_.function("halves"));
  expect_flat("halves");
}

// Facts recorded while a stdlib body was instantiated for a call stay on the caller.
TEST_F(InlineCallsTest, RuntimeChecksFromCalleesSurvive) {
  ASSERT_TRUE(inline_text(R"(import nn
fn f(x: f32[B, S], g: f32[T], b: f32[T]) {
  return nn.layer_norm(x, g, b)
}
)")) << errors();
  expect_valid();
  EXPECT_EQ(runtime_checks(typed_, "f"), "S == T\n");
  EXPECT_EQ(runtime_checks(out_, "f"), "S == T\n");
  bool found = false;
  for (const ir::ShapeFact& fact : out_.function("f")->facts)
    found |= fact.what.find("in nn.layer_norm") != std::string::npos;
  EXPECT_TRUE(found);
}

TEST_F(InlineCallsTest, IfBranchesAreInlinedToo) {
  ASSERT_TRUE(inline_text(R"(import nn
fn f(x: f32[N], c: bool[]) {
  let y = if c { nn.relu(x) } else { nn.silu(x) }
  return y
}
)")) << errors();
  expect_valid();
  const ir::If* i = body("f").bindings[0].value.as<ir::If>();
  ASSERT_NE(i, nullptr);
  EXPECT_EQ(ir::to_string(i->then_branch), "{\n  let y_1: f32[N] = maximum(x, 0.0)\n  y_1\n}");
}

// Values of a callee that its result also names keep working when the caller renames them.
TEST_F(InlineCallsTest, ResultsUsedInsideTheCallee) {
  ASSERT_TRUE(inline_text(R"(
fn g(x: f32[N]) -> (f32[N], f32[N]) {
  let a, b = split(concat([x, x]), 2)
  let c = a + b
  return (a, c)
}
fn id(x: f32[N]) -> f32[N] {
  return x
}
fn f(x: f32[N]) {
  let p, q = g(x * 2.0)
  let r = id(p)
  let s = id(x)
  return (p, q, r, s)
}
)")) << errors();
  expect_flat("f");
  expect_valid();
  EXPECT_EQ(bindings("f"), "mul_1 = mul: f32[N]\n"
                           "concat_1 = concat: f32[2*N]\n"
                           "a, b = split: (f32[N], f32[N])\n"
                           "c = add: f32[N]\n"
                           "r = Var: f32[N]\n"
                           "s = Var: f32[N]\n");
  // p and q keep the callee's names (c uses a), and id's results alias their arguments.
  EXPECT_EQ(ir::to_string(body("f").result), "(a, c, r, s)");
  EXPECT_EQ(ir::to_string(body("f").bindings[4].value), "a");
  EXPECT_EQ(ir::to_string(body("f").bindings[5].value), "x");
}

TEST_F(InlineCallsTest, RecursionIsAnError) {
  EXPECT_FALSE(inline_text(R"(
fn f(x: f32[N]) -> f32[N] {
  return f(x) + 1.0
}
)"));
  EXPECT_NE(errors().find("inline_calls: calls nest more than 40 deep in 'f' (is a fn recursive?)"),
            std::string::npos)
      << errors();
}

TEST_F(InlineCallsTest, PrimsAndExternsStay) {
  ASSERT_TRUE(inline_text(R"(
prim twice(a: f32[n]) -> (y: f32[n]) {
  for i in 0..n {
    y[i] = a[i] * 2.0
  }
}
extern fn sgemm(a: f32[m, k], b: f32[k, n]) -> f32[m, n] = "blas.sgemm"
fn g(x: f32[N, K], w: f32[K, M]) -> f32[N, M] {
  return sgemm(x, w)
}
fn f(x: f32[N, K], w: f32[K, M], v: f32[N]) {
  return (g(x, w) * 2.0, twice(v))
}
)")) << errors();
  expect_flat("f");
  expect_valid();
  EXPECT_EQ(bindings("f"), "sgemm_1 = sgemm: f32[N, M]\n"
                           "mul_1 = mul: f32[N, M]\n"
                           "twice_1 = twice: f32[N]\n");
  EXPECT_TRUE(out_.prim("twice"));
  EXPECT_TRUE(out_.ext("sgemm"));
}

} // namespace
} // namespace dsc::testing
