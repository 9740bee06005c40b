// infer_shapes and collect_facts on .dsc text through the front end: the examples with the
// real stdlib, and the diagnostics users see for common mistakes.

#include <gtest/gtest.h>

#include "symbolic/Printer.h"
#include "tests/unit/passes/SourcePassTest.h"

namespace dsc::testing {
namespace {

class ShapesFromSourceTest : public SourcePassTest {
protected:
  // Parses and runs infer_shapes then collect_facts; false when the front end failed.
  bool check(const std::string& text) {
    std::optional<ir::Module> typed = infer(text);
    if (!typed) return false;
    out_ = std::move(*typed);
    return true;
  }
  bool check_file(const std::string& relative) { return check(read_source(relative)); }

  // `name: type` of every binding of function `f`, in order, one per line.
  std::string shapes(const std::string& f) {
    std::string s;
    const ir::Block* body = out_.function(f)->body.as<ir::Block>();
    for (const ir::Binding& b : body->bindings)
      for (const ir::VarRef& v : b.vars)
        s += v->name + ": " + ir::to_string(v->type) + "\n";
    return s + "return: " + ir::to_string(out_.function(f)->ret_type) + "\n";
  }
  // "line:col: message" per error and "  note line:col: message" per note (where the
  // fixture's errors() leaves notes out).
  std::string errors() {
    std::string s;
    for (const Diagnostic& d : diags_.diagnostics()) {
      s += std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col) + ": " + d.message + "\n";
      for (const Diagnostic::Note& n : d.notes)
        s += "  note " + std::to_string(n.loc.line) + ":" + std::to_string(n.loc.col) + ": " +
             n.message + "\n";
    }
    return s;
  }
  // Non-where facts: "status predicate (what) [symbols of the counterexample]" (the values
  // are the prover's choice).
  std::string facts(const std::string& f) {
    std::string s;
    for (const ir::ShapeFact& fact : out_.function(f)->facts) {
      if (fact.origin == ir::ShapeFact::Origin::Where) continue;
      const char* status = fact.status == ir::ShapeFact::Status::Proved         ? "proved"
                           : fact.status == ir::ShapeFact::Status::RuntimeCheck ? "runtime"
                           : fact.status == ir::ShapeFact::Status::Assumed      ? "assumed"
                                                                                : "other";
      s += std::string(status) + " " + symbolic::to_string(fact.predicate) + " (" + fact.what +
           ")" + (fact.counterexample.empty() ? "" : " [" + names(fact.counterexample) + "]") +
           "\n";
    }
    return s;
  }

  // "S=1, T=0" -> "S, T".
  static std::string names(const std::string& counterexample) {
    std::string out;
    bool skip = false;
    for (char c : counterexample) {
      if (c == '=') skip = true;
      if (c == ',') skip = false;
      if (!skip) out += c;
    }
    return out;
  }
};

TEST_F(ShapesFromSourceTest, BertLayer) {
  ASSERT_TRUE(check_file("examples/bert_layer.dsc")) << errors();
  EXPECT_EQ(errors(), "");
  EXPECT_EQ(shapes("layer"), "q: f32[B, S, 768]\n"
                             "k: f32[B, S, 768]\n"
                             "v: f32[B, S, 768]\n"
                             "qh: f32[B, 12, S, 64]\n"
                             "kh: f32[B, 12, 64, S]\n"
                             "vh: f32[B, 12, S, 64]\n"
                             "p: f32[B, 12, S, S]\n"
                             "a: f32[B, S, 768]\n"
                             "h: f32[B, S, 768]\n"
                             "return: f32[B, S, 768]\n");
  EXPECT_EQ(facts("layer"), ""); // every shape question was proved
  // Every value has a type now.
  expect_valid();
}

TEST_F(ShapesFromSourceTest, Mlp) {
  ASSERT_TRUE(check_file("examples/mlp.dsc")) << errors();
  EXPECT_EQ(errors(), "");
  EXPECT_EQ(shapes("mlp"), "h: f32[B, 256]\nreturn: f32[B, 10]\n");
}

TEST_F(ShapesFromSourceTest, RunTimeFactsWithCounterexamples) {
  ASSERT_TRUE(check(R"(
fn f(x: f32[B, S], y: f32[T], m: bool[B, S]) where S >= 1 {
  let a = x + y
  let idx: i64[N, 2] = nonzero(m)
  let pairs = reshape(idx, [N, 2, 1])
  let halves = split(x, 2, axis=1)
  return a
}
)")) << errors();
  EXPECT_EQ(errors(), "");
  EXPECT_EQ(shapes("f"), "a: f32[B, S]\n"
                         "idx: i64[N, 2]\n"
                         "pairs: i64[N, 2, 1]\n"
                         "halves: (f32[B, S/2], f32[B, S/2])\n"
                         "return: f32[B, S]\n");
  EXPECT_EQ(facts("f"), "runtime S == T (broadcast of dim 1 of add) [S, T]\n"
                        "assumed nnz0 <= B*S (nonzero: the count is at most the element count)\n"
                        "proved N == nnz0 (N is bound by let idx: dims at axis 0)\n"
                        "runtime S%2 == 0 (split: dim S must be divisible by 2) [S]\n");
}

TEST_F(ShapesFromSourceTest, ErrorsPointAtTheirSource) {
  ASSERT_TRUE(check(R"(import nn
fn f(x: f32[B, 768], w: f32[512, 10]) -> f32[B, 10] {
  let y = matmul(x, w)
  let z = sum(y, axis=2)
  let s = nn.softmax(x, axis=2)
  let u = matmull(x, w)
  return y
}
)")) << errors();
  std::string e = errors();
  EXPECT_NE(e.find("3:11: matmul: contracted dims differ: 768 vs 512\n"), std::string::npos) << e;
  EXPECT_NE(e.find("6:11: unknown op 'matmull'\n  note 6:11: did you mean 'matmul'?\n"),
            std::string::npos)
      << e;
  // Inside the stdlib, with a note at the call.
  EXPECT_NE(
      e.find("max: axis 2 is out of range for rank 2\n  note 5:11: in nn.softmax, called here\n"),
      std::string::npos)
      << e;
  // z depends on the failed matmul: no second error for it.
  EXPECT_EQ(e.find("sum"), std::string::npos) << e;
  EXPECT_EQ(diags_.error_count(), 3u) << e;
}

TEST_F(ShapesFromSourceTest, CallsToModuleFunctionsAndSymbolicArguments) {
  ASSERT_TRUE(check(R"(
fn block(x: f32[N, D], w: f32[D, D]) -> f32[N, D] where D % 64 == 0 {
  return matmul(x, w)
}

fn model(x: f32[B, S, 128], w: f32[128, 128]) {
  let flat = reshape(x, [-1, 128])
  let y = block(flat, w)
  let tail = slice(y, axis=0, start=1, end=B*S)
  let r = arange(0, S - 1)
  return y
}
)")) << errors();
  EXPECT_EQ(errors(), "");
  EXPECT_EQ(shapes("model"), "flat: f32[B*S, 128]\n"
                             "y: f32[B*S, 128]\n"
                             "tail: f32[B*S - 1, 128]\n"
                             "r: i64[S - 1]\n"
                             "return: f32[B*S, 128]\n");
  // arange's 0 <= S - 1 follows from the slice's check, which runs first, so it is listed as
  // proved rather than checked again.
  EXPECT_EQ(facts("model"), "runtime 1 <= B*S (slice: start 1 must be <= end B*S) [B, S]\n"
                            "proved 1 <= S (arange: start 0 must be <= end S - 1)\n");
}

TEST_F(ShapesFromSourceTest, AnonymousDims) {
  ASSERT_TRUE(check(R"(
fn f(x: f32[?, 4], y: f32[?, 4], m: bool[?]) {
  let s = x + y
  let nz: i64[?, 1] = nonzero(m)
  let t = reshape(nz, [-1])
  return s
}
)")) << errors();
  EXPECT_EQ(errors(), "");
  // Each `?` is its own symbol; the front end names them _d0, _d1, ...
  EXPECT_EQ(shapes("f"), "s: f32[_d0, 4]\n"
                         "nz: i64[_d3, 1]\n"
                         "t: i64[_d3]\n"
                         "return: f32[_d0, 4]\n");
  EXPECT_EQ(facts("f"), "runtime _d0 == _d1 (broadcast of dim 0 of add) [_d0, _d1]\n"
                        "assumed nnz0 <= _d2 (nonzero: the count is at most the element count)\n"
                        "proved _d3 == nnz0 (_d3 is bound by let nz: dims at axis 0)\n");
}

TEST_F(ShapesFromSourceTest, ContradictoryWhereClauses) {
  ASSERT_TRUE(check("fn f(x: f32[S]) where S >= 10, S <= 5 {\n  return x\n}\n")) << errors();
  EXPECT_EQ(errors(), "1:34: where clause 'S <= 5' contradicts the clauses before it\n"
                      "  note 1:25: contradicted clause: '10 <= S'\n");
}

} // namespace
} // namespace dsc::testing
