// The access analysis over hand-written prims: which loops are independent, movable or
// reductions, and the stride of each loop variable in each access's flattened index.

#include <gtest/gtest.h>

#include "passes/AccessAnalysis.h"
#include "symbolic/Printer.h"
#include "tests/unit/passes/SourcePassTest.h"

namespace dsc::testing {
namespace {

class AccessAnalysisTest : public SourcePassTest {
protected:
  // Parses `text` (one prim) and analyzes its body.
  void analyze(const std::string& text) {
    std::optional<ir::Module> m = parse(text);
    ASSERT_TRUE(m.has_value()) << errors();
    ASSERT_EQ(m->decls.size(), 1u);
    ASSERT_TRUE(m->decls[0].prim);
    prim_ = m->decls[0].prim;
    analysis_.emplace(*prim_, prim_->body, prover_);
  }

  const passes::LoopInfo& loop(const std::string& var) const {
    for (const passes::LoopInfo& l : analysis_->loops())
      if (l.loop->var == var) return l;
    ADD_FAILURE() << "no loop " << var;
    return analysis_->loops().front();
  }

  // The stride of `var` in the n-th access of `buffer` (in visiting order), as printed; "?"
  // when not affine.
  std::string stride(const std::string& buffer, const std::string& var, int n = 0) const {
    for (const passes::Access& a : analysis_->accesses())
      if (a.buffer == buffer && n-- == 0) {
        symbolic::Expr s = analysis_->stride(a, var);
        return s.defined() ? symbolic::to_string(s) : "?";
      }
    ADD_FAILURE() << "no access " << buffer;
    return "";
  }

  bool contiguous(const std::string& buffer, const std::string& var) const {
    for (const passes::Access& a : analysis_->accesses())
      if (a.buffer == buffer) return analysis_->contiguous(a, var);
    ADD_FAILURE() << "no access " << buffer;
    return false;
  }

  Ref<ir::PrimFunc> prim_;
  std::optional<passes::AccessAnalysis> analysis_;
};

TEST_F(AccessAnalysisTest, IndependentLoops) {
  analyze(R"(
prim f(x: f32[n, m], w: f32[m]) -> (y: f32[n, m]) {
  for i in 0..n {
    for j in 0..m {
      y[i, j] = x[i, j] * w[j]
    }
  }
}
)");
  for (const char* v : {"i", "j"}) {
    EXPECT_TRUE(loop(v).independent) << v;
    EXPECT_TRUE(loop(v).movable) << v;
    EXPECT_FALSE(loop(v).reduction) << v;
  }
  EXPECT_FALSE(loop("i").innermost);
  EXPECT_TRUE(loop("j").innermost);
  EXPECT_EQ(stride("y", "j"), "1");
  EXPECT_EQ(stride("y", "i"), "m");
  EXPECT_EQ(stride("w", "i"), "0");
  EXPECT_TRUE(contiguous("x", "j"));
  EXPECT_FALSE(contiguous("x", "i"));
}

TEST_F(AccessAnalysisTest, ReductionIntoLocalAndIntoBuffer) {
  analyze(R"(
prim f(x: f32[n, m]) -> (y: f32[n], z: f32[m]) {
  for i in 0..n {
    var acc: f32 = 0.0
    for j in 0..m {
      acc = max(acc, x[i, j])
    }
    y[i] = acc
  }
  for r in 0..n {
    for c in 0..m {
      z[c] = z[c] + x[r, c]
    }
  }
}
)");
  // The local is declared inside i: each iteration has its own.
  EXPECT_TRUE(loop("i").independent);
  EXPECT_FALSE(loop("j").independent);
  ASSERT_TRUE(loop("j").reduction);
  ASSERT_EQ(loop("j").reductions.size(), 1u);
  EXPECT_EQ(loop("j").reductions[0].target, "acc");
  EXPECT_TRUE(loop("j").reductions[0].into_local);
  EXPECT_EQ(loop("j").reductions[0].op, ir::BinaryOp::Max);
  // Every iteration of r accumulates into all of z.
  ASSERT_TRUE(loop("r").reduction);
  EXPECT_EQ(loop("r").reductions[0].target, "z");
  EXPECT_FALSE(loop("r").reductions[0].into_local);
  EXPECT_TRUE(loop("c").independent);
  EXPECT_TRUE(loop("c").movable);
}

TEST_F(AccessAnalysisTest, PrefixSumIsADependence) {
  analyze(R"(
prim f(x: f32[n]) -> (y: f32[n], z: f32[n]) {
  for i in 1..n {
    y[i] = y[i - 1] + x[i]
  }
  var run: f32 = 0.0
  for k in 0..n {
    run = run + x[k]
    z[k] = run
  }
}
)");
  // y[i] reads what iteration i - 1 wrote: neither independent nor a reduction.
  EXPECT_FALSE(loop("i").independent);
  EXPECT_FALSE(loop("i").reduction);
  // The running local is read besides its update: every partial sum is observed.
  EXPECT_FALSE(loop("k").independent);
  EXPECT_FALSE(loop("k").reduction);
}

TEST_F(AccessAnalysisTest, TransposedAndSymbolicStrides) {
  analyze(R"(
prim f(x: f32[n, m], v: f32[n * s]) -> (y: f32[m, n], z: f32[n]) {
  for i in 0..n {
    for j in 0..m {
      y[j, i] = x[i, j]
    }
  }
  for k in 0..n {
    z[k] = v[s * k]
  }
}
)");
  EXPECT_EQ(stride("y", "i"), "1");
  EXPECT_EQ(stride("y", "j"), "n");
  EXPECT_EQ(stride("x", "j"), "1");
  EXPECT_EQ(stride("x", "i"), "m");
  EXPECT_TRUE(loop("i").independent);
  EXPECT_TRUE(loop("j").independent);
  EXPECT_EQ(stride("v", "k"), "s");
  EXPECT_FALSE(contiguous("v", "k"));
  EXPECT_TRUE(contiguous("z", "k"));
}

TEST_F(AccessAnalysisTest, SymbolicStrideProvedOne) {
  // s is 1 by the where clause: the prover, not the form, says the access is contiguous.
  analyze(R"(
prim f(v: f32[n * s]) -> (z: f32[n]) where s == 1 {
  for k in 0..n {
    z[k] = v[s * k]
  }
}
)");
  EXPECT_EQ(stride("v", "k"), "s");
  EXPECT_TRUE(contiguous("v", "k"));
}

TEST_F(AccessAnalysisTest, OverlapAndMovability) {
  analyze(R"(
prim f(x: f32[n, m], idx: i64[n]) -> (y: f32[n + m], t: f32[n, m], g: f32[n]) {
  for i in 0..n {
    for j in 0..m {
      y[i + j] = x[i, j]
    }
  }
  for a in 0..n {
    for b in 1..m {
      t[a, b] = t[a, b - 1] * 2.0
    }
  }
  for c in 0..n {
    g[idx[c]] = x[c, 0]
  }
}
)");
  // Within one i, j writes distinct elements; rows i and i + 1 overlap.
  EXPECT_FALSE(loop("i").independent);
  EXPECT_TRUE(loop("j").independent);
  EXPECT_FALSE(loop("j").movable);
  // a separates the rows whatever b does: it may move past the serial b loop.
  EXPECT_TRUE(loop("a").independent);
  EXPECT_TRUE(loop("a").movable);
  EXPECT_FALSE(loop("b").independent);
  // A scatter through loaded indices may write one element twice.
  EXPECT_FALSE(loop("c").independent);
  EXPECT_EQ(stride("g", "c"), "?");
}

} // namespace
} // namespace dsc::testing
