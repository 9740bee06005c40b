// schedule on prims that legalize made from .dsc text (and on hand-written ones): outer loops
// parallel, contiguous inner loops vectorized, reductions over non-last axes interchanged, and
// nothing parallel that writes the same element twice.

#include <gtest/gtest.h>

#include "ir/Functor.h"
#include "passes/InlineCalls.h"
#include "passes/Legalize.h"
#include "passes/Schedule.h"
#include "tests/unit/passes/SourcePassTest.h"

namespace dsc::testing {
namespace {

class ScheduleTest : public SourcePassTest {
protected:
  // The pipeline up to schedule; false after any error.
  bool schedule(const std::string& text) {
    return run_passes(text, "schedule");
  }

  // The body of the only prim whose name contains `part`, as printed.
  std::string prim_body(const std::string& part) const {
    std::string found;
    for (const ir::Module::Decl& d : out_.decls) {
      if (!d.prim || d.prim->name.find(part) == std::string::npos) continue;
      EXPECT_TRUE(found.empty()) << "two prims match " << part;
      std::string text = ir::print_prim(*d.prim);
      found = text.substr(text.find('\n') + 1);
    }
    return found;
  }
};

// Hand-written prims, scheduled alone.
#define SCHEDULE_PRIMS(text)                                                                       \
  do {                                                                                             \
    std::optional<ir::Module> m = parse(text);                                                     \
    ASSERT_TRUE(m.has_value()) << errors();                                                        \
    out_ = passes::schedule(*m, ctx_);                                                             \
  } while (0)

TEST_F(ScheduleTest, ElementwiseAndSoftmax) {
  ctx_.fuse = false; // each op's own prim
  ASSERT_TRUE(schedule(R"(import nn
fn f(x: f32[B, S, D], w: f32[D]) {
  return nn.softmax(x + w, axis=-1)
}
)")) << errors();
  expect_valid_and_round_trips();
  // Outer loops parallel (a perfect nest, collapsed by the code generator), the contiguous
  // inner loop vectorized.
  EXPECT_EQ(prim_body("add"), R"(  parallel for i0 in 0..B {
    parallel for i1 in 0..S {
      vectorize for i2 in 0..D {
        out[i0, i1, i2] = a[i0, i1, i2] + b[i2]
      }
    }
  }
}
)");
  // A reduction over the last axis: the kept loops parallel, the reduction into a local
  // vectorized.
  EXPECT_EQ(prim_body("sum"), R"(  parallel for i0 in 0..B {
    parallel for i1 in 0..S {
      var acc: f32 = 0.0
      vectorize for r0 in 0..D {
        acc = acc + x[i0, i1, r0]
      }
      out[i0, i1, 0] = acc
    }
  }
}
)");
  // So is the max (the prim's max, which keeps NaN, vectorizes as a reduction).
  EXPECT_EQ(prim_body("max"), R"(  parallel for i0 in 0..B {
    parallel for i1 in 0..S {
      var acc: f32 = -1.0 / 0.0
      vectorize for r0 in 0..D {
        acc = max(acc, x[i0, i1, r0])
      }
      out[i0, i1, 0] = acc
    }
  }
}
)");
}

// The stitched softmax (passes/legalize/Fuse.h): rows in parallel, and each stage's loop over
// the row (the max, the exponentials, the sum, the quotients) vectorized; the exponentials
// are written into the output and divided there.
TEST_F(ScheduleTest, StitchedSoftmax) {
  ASSERT_TRUE(schedule(R"(import nn
fn f(x: f32[B, S, D], w: f32[D]) {
  return nn.softmax(x + w, axis=-1)
}
)")) << errors();
  expect_valid_and_round_trips();
  EXPECT_EQ(prim_body("div"), R"(  parallel for i0 in 0..B {
    parallel for i1 in 0..S {
      var acc: f32 = -1.0 / 0.0
      vectorize for r0 in 0..D {
        acc = max(acc, x0[i0, i1, r0] + w[r0])
      }
      let max0: f32 = acc
      vectorize for i2 in 0..D {
        out2[i0, i1, i2] = exp(x0[i0, i1, i2] + w[i2] - max0)
      }
      var acc0: f32 = 0.0
      vectorize for r0_0 in 0..D {
        acc0 = acc0 + out2[i0, i1, r0_0]
      }
      let sum: f32 = acc0
      vectorize for i2_0 in 0..D {
        out2[i0, i1, i2_0] = out2[i0, i1, i2_0] / sum
      }
    }
  }
}
)");
}

// Reductions over a non-last axis: the kept last axis becomes the inner, vectorized loop,
// accumulating into the output in place.
TEST_F(ScheduleTest, ReductionsOverOuterAxes) {
  ASSERT_TRUE(schedule(R"(
fn f(x: f32[B, S, D], h: f16[B, S], i: i32[N, C]) {
  return (sum(x, axis=1), mean(x, axis=[0, 1], keepdims=true), max(x, axis=0), sum(h, axis=0),
          min(i, axis=0))
}
)")) << errors();
  expect_valid_and_round_trips();
  EXPECT_EQ(prim_body("sum_0"), R"(  parallel for i0 in 0..B {
    vectorize for i1 in 0..D {
      out[i0, i1] = 0.0
    }
    for r0 in 0..S {
      vectorize for i1 in 0..D {
        out[i0, i1] = out[i0, i1] + x[i0, r0, i1]
      }
    }
  }
}
)");
  // No kept loop outside: the init and finish loops are split into parallel chunks.
  EXPECT_EQ(prim_body("mean"), R"(  parallel for chunk0 in 0..(D + 4095)/4096 {
    vectorize for i0 in 4096*chunk0..4096*chunk0 + min(D - 4096*chunk0, 4096) {
      out[0, 0, i0] = 0.0
    }
  }
  for r0 in 0..B {
    for r1 in 0..S {
      vectorize for i0 in 0..D {
        out[0, 0, i0] = out[0, 0, i0] + x[r0, r1, i0]
      }
    }
  }
  parallel for chunk1 in 0..(D + 4095)/4096 {
    vectorize for i0 in 4096*chunk1..4096*chunk1 + min(D - 4096*chunk1, 4096) {
      out[0, 0, i0] = out[0, 0, i0] / cast(B*S, "f32")
    }
  }
}
)");
  EXPECT_EQ(prim_body("max"), R"(  parallel for i0 in 0..S {
    vectorize for i1 in 0..D {
      out[i0, i1] = -1.0 / 0.0
    }
    for r0 in 0..B {
      vectorize for i1 in 0..D {
        out[i0, i1] = max(out[i0, i1], x[r0, i0, i1])
      }
    }
  }
}
)");
  // f16 accumulates in f32, not in the f16 output: left as it is, kept loops parallel.
  EXPECT_EQ(prim_body("sum_1"), R"(  parallel for i0 in 0..S {
    var acc: f32 = 0.0
    for r0 in 0..B {
      acc = acc + cast(x[r0, i0], "f32")
    }
    out[i0] = cast(acc, "f16")
  }
}
)");
  EXPECT_EQ(prim_body("min"), R"(  parallel for chunk0 in 0..(C + 4095)/4096 {
    vectorize for i0 in 4096*chunk0..4096*chunk0 + min(C - 4096*chunk0, 4096) {
      out[i0] = 2147483647
    }
  }
  for r0 in 0..N {
    vectorize for i0 in 0..C {
      out[i0] = min(out[i0], x[r0, i0])
    }
  }
}
)");
}

TEST_F(ScheduleTest, MatmulAndConvLoopNests) {
  ASSERT_TRUE(schedule(R"(
fn f(a: i32[M, K], b: i32[K, N], m: f32[M, K], v: f32[K], c: f64[B, 3, H, W],
     w: f64[8, 3, 3, 3]) {
  return (matmul(a, b), matmul(m, v), conv2d(c, w, padding=1))
}
)")) << errors();
  expect_valid_and_round_trips();
  EXPECT_EQ(prim_body("matmul_0"), R"(  parallel for i0 in 0..M {
    vectorize for i1 in 0..N {
      out[i0, i1] = 0
    }
    for k0 in 0..K {
      vectorize for i1 in 0..N {
        out[i0, i1] = out[i0, i1] + a[i0, k0] * b[k0, i1]
      }
    }
  }
}
)");
  // Matrix times vector: the reduction is already over contiguous elements.
  EXPECT_EQ(prim_body("matmul_1"), R"(  parallel for i0 in 0..M {
    var acc: f32 = 0.0
    vectorize for k0 in 0..K {
      acc = acc + a[i0, k0] * b[k0]
    }
    out[i0] = acc
  }
}
)");
  EXPECT_EQ(prim_body("conv2d"), R"(  parallel for i0 in 0..B {
    parallel for i1 in 0..8 {
      parallel for i2 in 0..H {
        vectorize for i3 in 0..W {
          out[i0, i1, i2, i3] = 0.0
        }
        for r0 in 0..3 {
          for r1 in 0..3 {
            for r2 in 0..3 {
              vectorize for i3 in 0..W {
                if 0 <= i2 + r1 - 1 && i2 + r1 - 1 < H && 0 <= i3 + r2 - 1 && i3 + r2 - 1 < W {
                  out[i0, i1, i2, i3] = out[i0, i1, i2, i3] + x[i0, r0, i2 + r1 - 1, i3 + r2 - 1] * w[i1, r0, r1, r2]
                }
              }
            }
          }
        }
      }
    }
  }
}
)");
}

TEST_F(ScheduleTest, LayoutAndCreation) {
  ASSERT_TRUE(schedule(R"(
fn f(x: f32[B, S], v: f32[N], idx: i64[K], u: f32[N, 2]) {
  let a, b = split(u, 2, axis=1)
  return (permute(x, [1, 0]), take(v, idx), v * 2.0, shape_of(x), a, b, concat([x, x], axis=0),
          sum(v))
}
)")) << errors();
  expect_valid_and_round_trips();
  // A transpose: the stores are contiguous.
  EXPECT_EQ(prim_body("permute"), R"(  parallel for i0 in 0..S {
    vectorize for i1 in 0..B {
      out[i0, i1] = x[i1, i0]
    }
  }
}
)");
  // A single loop: parallel chunks around the vectorized loop.
  EXPECT_EQ(prim_body("mul"), R"(  parallel for chunk0 in 0..(N + 4095)/4096 {
    vectorize for i0 in 4096*chunk0..4096*chunk0 + min(N - 4096*chunk0, 4096) {
      out[i0] = a[i0] * 2.0
    }
  }
}
)");
  EXPECT_EQ(prim_body("shape_of"), "  out[0] = B\n  out[1] = S\n}\n");
  // Each nest of a multi-nest prim is scheduled on its own.
  EXPECT_EQ(prim_body("concat"), R"(  parallel for i0 in 0..B {
    vectorize for i1 in 0..S {
      out[i0, i1] = x[i0, i1]
    }
  }
  parallel for i2 in 0..B {
    vectorize for i3 in 0..S {
      out[B + i2, i3] = x[i2, i3]
    }
  }
}
)");
  // A reduction to a scalar stays on one thread.
  EXPECT_EQ(prim_body("sum"), R"(  var acc: f32 = 0.0
  vectorize for r0 in 0..N {
    acc = acc + x[r0]
  }
  out[] = acc
}
)");
}

TEST_F(ScheduleTest, HandWrittenPrims) {
  SCHEDULE_PRIMS(R"(
prim chosen(a: f32[n]) -> (y: f32[n]) {
  for i in 0..n {
    unroll for j in 0..4 {
      y[i] = a[i]
    }
  }
}

prim overlapping(x: f32[n, m]) -> (y: f32[n + m]) {
  for i in 0..n {
    for j in 0..m {
      y[i + j] = x[i, j]
    }
  }
}

prim accumulate(x: f32[n]) -> (y: f32[1]) {
  for i in 0..n {
    y[0] = y[0] + x[i]
  }
}

prim shifted(x: f32[n]) -> (y: f32[n]) {
  for i in 1..n {
    y[i] = y[i - 1] + x[i]
  }
}

prim rows(x: f32[n, m]) -> (y: f32[n, m]) {
  for i in 0..n {
    for j in 0..m {
      y[i, j] = x[i, j] * 2.0
    }
  }
}
)");
  expect_valid_and_round_trips();
  // A prim whose author chose loop kinds is left alone.
  EXPECT_EQ(prim_body("chosen"), R"(  for i in 0..n {
    unroll for j in 0..4 {
      y[i] = a[i]
    }
  }
}
)");
  // Rows i and i + 1 write the same elements: i stays serial; within a row j is contiguous.
  EXPECT_EQ(prim_body("overlapping"), R"(  for i in 0..n {
    vectorize for j in 0..m {
      y[i + j] = x[i, j]
    }
  }
}
)");
  // Every iteration writes y[0]; each reads what the one before wrote.
  EXPECT_EQ(prim_body("accumulate"), R"(  for i in 0..n {
    y[0] = y[0] + x[i]
  }
}
)");
  EXPECT_EQ(prim_body("shifted"), R"(  for i in 1..n {
    y[i] = y[i - 1] + x[i]
  }
}
)");
  EXPECT_EQ(prim_body("rows"), R"(  parallel for i in 0..n {
    vectorize for j in 0..m {
      y[i, j] = x[i, j] * 2.0
    }
  }
}
)");
}

// Prims in forms legalize does not make: the schedule comes from the access analysis, not
// from the statement shapes.
TEST_F(ScheduleTest, FormsLegalizeDoesNotMake) {
  SCHEDULE_PRIMS(R"(
prim reduce_outermost(x: f32[n, k, m]) -> (y: f32[n, m]) {
  for r in 0..k {
    for i in 0..n {
      for j in 0..m {
        y[i, j] = y[i, j] + x[i, r, j]
      }
    }
  }
}

prim matmul_ijk(a: f32[n, k], b: f32[k, m]) -> (c: f32[n, m]) {
  for i in 0..n {
    for j in 0..m {
      for r in 0..k {
        c[i, j] = c[i, j] + a[i, r] * b[r, j]
      }
    }
  }
}

prim steps(x: f32[n, m]) -> (y: f32[t, n, m]) {
  for s in 1..t {
    for i in 0..n {
      for j in 0..m {
        y[s, i, j] = y[s - 1, i, j] * x[i, j]
      }
    }
  }
}

prim running(x: f32[n]) -> (y: f32[n]) {
  var run: f32 = 0.0
  for i in 0..n {
    run = run + x[i]
    y[i] = run
  }
}

prim column_scan(x: f32[n, m]) -> (y: f32[n, m]) {
  for i in 1..n {
    for j in 0..m {
      y[i, j] = y[i - 1, j] + x[i, j]
    }
  }
}
)");
  expect_valid_and_round_trips();
  // The reduction loop moves inside the kept row loop, which runs in parallel; the columns
  // stay innermost and vectorized.
  EXPECT_EQ(prim_body("reduce_outermost"), R"(  parallel for i in 0..n {
    for r in 0..k {
      vectorize for j in 0..m {
        y[i, j] = y[i, j] + x[i, r, j]
      }
    }
  }
}
)");
  // The reduction over r accumulates into c[i, j]; j moves inside it, contiguous in c and b.
  EXPECT_EQ(prim_body("matmul_ijk"), R"(  parallel for i in 0..n {
    for r in 0..k {
      vectorize for j in 0..m {
        c[i, j] = c[i, j] + a[i, r] * b[r, j]
      }
    }
  }
}
)");
  // s carries a true dependence; the rows, independent whatever s does, move out of it.
  EXPECT_EQ(prim_body("steps"), R"(  parallel for i in 0..n {
    for s in 1..t {
      vectorize for j in 0..m {
        y[s, i, j] = y[s - 1, i, j] * x[i, j]
      }
    }
  }
}
)");
  // Every partial sum is stored: a scan, neither parallel nor vectorized.
  EXPECT_EQ(prim_body("running"), R"(  var run: f32 = 0.0
  for i in 0..n {
    run = run + x[i]
    y[i] = run
  }
}
)");
  // Row i reads row i - 1: i stays serial (and outermost); each row is vectorized.
  EXPECT_EQ(prim_body("column_scan"), R"(  for i in 1..n {
    vectorize for j in 0..m {
      y[i, j] = y[i - 1, j] + x[i, j]
    }
  }
}
)");
}

TEST_F(ScheduleTest, BertLayer) {
  ASSERT_TRUE(schedule(read_source("examples/bert_layer.dsc"))) << errors();
  expect_valid_and_round_trips();
  // Every prim got parallel loops, and none a parallel loop inside a loop that is not.
  struct Nesting : ir::IRVisitor {
    int parallel = 0;
    bool bad = false;
    std::vector<bool> serial_outside{false};

  protected:
    void visit_node(const ir::For* node) override {
      bool is_parallel = node->for_kind == ir::ForKind::Parallel;
      parallel += is_parallel ? 1 : 0;
      bad |= is_parallel && serial_outside.back();
      serial_outside.push_back(serial_outside.back() || !is_parallel);
      ir::IRVisitor::visit_node(node);
      serial_outside.pop_back();
    }
  };
  for (const ir::Module::Decl& d : out_.decls) {
    if (!d.prim) continue;
    Nesting n;
    n.visit(d.prim->body);
    EXPECT_GT(n.parallel, 0) << ir::print_prim(*d.prim);
    EXPECT_FALSE(n.bad) << ir::print_prim(*d.prim);
  }
}

} // namespace
} // namespace dsc::testing
