// legalize's first half on .dsc text through inline_calls: the compute description of each op
// call (passes/legalize/ComputeDesc.h), its element expression or reduction parts checked as
// text, and the prim its materialization gives, which verifies.

#include <gtest/gtest.h>

#include <set>

#include "ir/Verifier.h"
#include "passes/legalize/Families.h"
#include "passes/legalize/Materialize.h"
#include "symbolic/Printer.h"
#include "tests/unit/passes/SourcePassTest.h"

namespace dsc::testing {
namespace {

using passes::lowering::ComputeDesc;

std::string vars_text(const std::vector<symbolic::Expr>& vars) {
  std::string s;
  for (const symbolic::Expr& v : vars)
    s += (s.empty() ? "" : ", ") + symbolic::to_string(v);
  return "[" + s + "]";
}

class ComputeDescTest : public SourcePassTest {
protected:
  // Describes every op call of `f` in `text`, in order, and materializes each into `prims_`.
  void describe(const std::string& text) {
    ASSERT_TRUE(run_passes(text, "inline_calls")) << errors();
    Ref<ir::Function> f = out_.function("f");
    ASSERT_TRUE(f.defined());
    for (const ir::Module::Decl& d : out_.decls)
      taken_.insert(d.name());
    passes::lowering::FnContext ctx(prims_, taken_, *f, ctx_);
    for (const ir::Binding& b : f->body.as<ir::Block>()->bindings) {
      const ir::Call* call = b.value.as<ir::Call>();
      if (!call) continue;
      std::optional<ComputeDesc> d = passes::lowering::describe(*call, ctx);
      ASSERT_TRUE(d) << errors();
      descs_.push_back(*d);
      passes::lowering::materialize(std::move(*d), ctx);
    }
    ASSERT_EQ(errors(), "");
  }

  const ComputeDesc& desc(size_t k) const { return descs_.at(k); }

  // "[i0, i1] = <element>" of the map's output `k`.
  std::string map_text(size_t n, size_t k = 0) const {
    const ComputeDesc& d = desc(n);
    EXPECT_EQ(d.kind, ComputeDesc::Kind::Map);
    const passes::lowering::MapOutput& m = d.maps.at(k);
    return vars_text(m.space.vars) + " = " + ir::to_string(m.element.value);
  }

  // Every materialized prim verifies on its own.
  void expect_prims_verify() const {
    ir::Module m;
    for (const ir::Module::Decl& d : prims_.decls)
      m.decls.push_back(d);
    EXPECT_EQ(ir::verify(m), std::vector<std::string>{});
  }

  std::vector<ComputeDesc> descs_;
  ir::Module prims_;
  std::set<std::string> taken_;
};

TEST_F(ComputeDescTest, MapsAndTheirElements) {
  describe(R"(
fn f(x: f32[B, S], y: f32[S], h: f16[B, S], i: i32[K]) {
  return (x + y, permute(x, [1, 0]), slice(x, axis=1, start=1, end=S, step=2),
          concat([x, x], axis=0), exp(h), take(x, i, axis=1), reshape(x, [S, B]))
}
)");
  // Broadcasting: y's index follows the output's last one; operands by number.
  EXPECT_EQ(map_text(0), "[i0, i1] = a[i0, i1] + b[i1]");
  EXPECT_EQ(desc(0).inputs.size(), 2u);
  EXPECT_EQ(desc(0).inputs[1].buffer.name, "b");
  EXPECT_EQ(
      *desc(0).input_number(*desc(0).maps[0].element.value.as<ir::PrimBinary>()->b.as<ir::Load>()),
      1u);
  EXPECT_EQ(map_text(1), "[i0, i1] = x[i1, i0]");
  EXPECT_EQ(map_text(2), "[i0, i1] = x[i0, 2*i1 + 1]");
  // Concat picks its piece with a guarding select on the index along the axis.
  EXPECT_EQ(map_text(3), "[i0, i1] = select(i0 < B, x[i0, i1], x[i0 - B, i1])");
  // f16 computes in f32; the store rounds.
  EXPECT_EQ(map_text(4), "[i0, i1] = exp(cast(x[i0, i1], \"f32\"))");
  // take reads at a loaded, wrapped and clamped index.
  EXPECT_EQ(desc(5).maps[0].element.lets.size(), 2u);
  EXPECT_EQ(map_text(5), "[i0, i1] = x[i0, j]");
  EXPECT_EQ(desc(6).kind, ComputeDesc::Kind::View);
  expect_prims_verify();
}

TEST_F(ComputeDescTest, Reductions) {
  describe(R"(
fn f(x: f32[B, S, T], a: i32[M, K], b: i32[K, N], m: f32[B, S]) {
  return (sum(x, axis=1), matmul(a, b), mean(m, axis=-1, keepdims=true))
}
)");
  const ComputeDesc& s = desc(0);
  ASSERT_EQ(s.kind, ComputeDesc::Kind::Reduce);
  EXPECT_EQ(vars_text(s.reduction.space.vars), "[i0, i1]");
  EXPECT_EQ(vars_text(s.reduction.reduced.vars), "[r0]");
  EXPECT_EQ(vars_text(s.reduction.reduced.extents), "[S]");
  EXPECT_EQ(s.reduction.combiner, ir::BinaryOp::Add);
  EXPECT_EQ(ir::to_string(s.reduction.identity), "0.0");
  // The middle axis is reduced: the kept ones are the output's.
  EXPECT_EQ(ir::to_string(s.reduction.body.value), "x[i0, r0, i1]");
  EXPECT_FALSE(s.reduction.finish.defined());

  // An i32 matmul is no library call: out[i, j] = sum_k a[i, k] * b[k, j].
  const ComputeDesc& mm = desc(1);
  ASSERT_EQ(mm.kind, ComputeDesc::Kind::Reduce);
  EXPECT_EQ(vars_text(mm.reduction.reduced.vars), "[k0]");
  EXPECT_EQ(vars_text(mm.reduction.reduced.extents), "[K]");
  EXPECT_EQ(ir::to_string(mm.reduction.body.value), "a[i0, k0] * b[k0, i1]");

  // mean: the output keeps the reduced axis as a 1 (index 0); the finish divides by the count.
  const ComputeDesc& mean = desc(2);
  EXPECT_EQ(vars_text(mean.reduction.space.vars), "[i0, 0]");
  EXPECT_EQ(ir::to_string(mean.reduction.finish), "acc / cast(S, \"f32\")");
  expect_prims_verify();
}

TEST_F(ComputeDescTest, LibraryCall) {
  describe(R"(
fn f(x: f32[B, S, K], w: f32[K, N]) {
  return matmul(x, w)
}
)");
  ASSERT_EQ(desc(0).kind, ComputeDesc::Kind::Library);
  EXPECT_EQ(desc(0).library.routine, &ir::library_routine(ir::RoutineId::DscSgemm));
  EXPECT_EQ(desc(0).library.args.size(), 2u);
  ASSERT_EQ(prims_.decls.size(), 1u);
  ASSERT_TRUE(prims_.decls[0].ext);
  EXPECT_EQ(prims_.decls[0].ext->symbol, "dsc.sgemm");
}

} // namespace
} // namespace dsc::testing
