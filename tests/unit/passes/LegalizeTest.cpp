// legalize on .dsc text through the front end, infer_shapes, collect_facts and inline_calls:
// every op family becomes prims (or BLAS externs, or stays a reshape), the result verifies,
// prints as .dsc that parses back to an equal module, and a few prims are checked as text.

#include <gtest/gtest.h>

#include "ir/OpRegistry.h"
#include "passes/InlineCalls.h"
#include "passes/Legalize.h"
#include "tests/unit/passes/SourcePassTest.h"

namespace dsc::testing {
namespace {

// Each op on its own, as the two halves of legalize describe and materialize it; fusion has
// its tests in FuseTest.cpp.
class LegalizeTest : public SourcePassTest {
protected:
  // The whole front half, then legalize without fusion; false after any error.
  bool legalize(const std::string& text) {
    ctx_.fuse = false;
    return run_passes(text, "legalize");
  }

  size_t count_prims() const {
    size_t n = 0;
    for (const ir::Module::Decl& d : out_.decls)
      n += d.prim ? 1 : 0;
    return n;
  }

  // The callees of f's bindings, one per line.
  std::string callees(const std::string& f) const {
    std::string s;
    for (const ir::Binding& b : out_.function(f)->body.as<ir::Block>()->bindings) {
      const ir::Call* c = b.value.as<ir::Call>();
      s += (c ? c->callee : ir::node_kind_name(b.value.kind())) + std::string("\n");
    }
    return s;
  }

  std::string prim_text(const std::string& name) const {
    Ref<ir::PrimFunc> p = out_.prim(name);
    return p ? ir::print_prim(*p) : "<no prim " + name + ">";
  }
};

// The prims' bodies, without their signature line, for golden comparisons.
#define EXPECT_PRIM(name, text) EXPECT_EQ(prim_text(name), text)

TEST_F(LegalizeTest, BertLayer) {
  ASSERT_TRUE(legalize(read_source("examples/bert_layer.dsc"))) << errors();
  expect_valid_and_round_trips();
  // Six matmuls on BLAS, five reshapes left as aliases, everything else one prim per op.
  size_t externs = 0;
  for (const ir::Module::Decl& d : out_.decls)
    if (d.ext) {
      ++externs;
      EXPECT_EQ(d.ext->symbol, "dsc.sgemm");
    }
  EXPECT_EQ(externs, 6u);
  EXPECT_EQ(count_prims(), 41u);
  std::string calls = callees("layer");
  size_t reshapes = 0;
  for (size_t at = calls.find("reshape\n"); at != std::string::npos;
       at = calls.find("reshape\n", at + 1))
    ++reshapes;
  EXPECT_EQ(reshapes, 5u);
  EXPECT_EQ(ir::print_extern(*out_.ext("layer_sgemm_1")),
            "extern fn layer_sgemm_1(a: f32[B, 12, S, 64], b: f32[B, 12, 64, S]) -> "
            "f32[B, 12, S, S] = \"dsc.sgemm\"\n");
  // The softmax's row max: a local accumulator over the contiguous last axis (the prim's max
  // keeps NaN).
  EXPECT_PRIM("layer_max_0", R"(prim layer_max_0(x: f32[B, 12, S, S]) -> (out: f32[B, 12, S, 1]) {
  for i0 in 0..B {
    for i1 in 0..12 {
      for i2 in 0..S {
        var acc: f32 = -1.0 / 0.0
        for r0 in 0..S {
          acc = max(acc, x[i0, i1, i2, r0])
        }
        out[i0, i1, i2, 0] = acc
      }
    }
  }
}
)");
  EXPECT_PRIM("layer_mean_0", R"(prim layer_mean_0(x: f32[B, S, 768]) -> (out: f32[B, S, 1]) {
  for i0 in 0..B {
    for i1 in 0..S {
      var acc: f32 = 0.0
      for r0 in 0..768 {
        acc = acc + x[i0, i1, r0]
      }
      out[i0, i1, 0] = acc / 768.0
    }
  }
}
)");
  // The mask broadcast: its dims of 1 read index 0.
  EXPECT_PRIM(
      "layer_add_1",
      R"(prim layer_add_1(a: f32[B, 12, S, S], b: f32[B, 1, 1, S]) -> (out: f32[B, 12, S, S]) {
  for i0 in 0..B {
    for i1 in 0..12 {
      for i2 in 0..S {
        for i3 in 0..S {
          out[i0, i1, i2, i3] = a[i0, i1, i2, i3] + b[i0, 0, 0, i3]
        }
      }
    }
  }
}
)");
}

TEST_F(LegalizeTest, Mlp) {
  ASSERT_TRUE(legalize(read_source("examples/mlp.dsc"))) << errors();
  expect_valid_and_round_trips();
  EXPECT_EQ(callees("mlp"), "mlp_sgemm_0\nmlp_add_0\nmlp_maximum_0\nmlp_sgemm_1\nmlp_add_1\n"
                            "mlp_max_0\nmlp_sub_0\nmlp_exp_0\nmlp_sum_0\nmlp_div_0\n");
  // relu: NaN-propagating maximum against the literal, as the interpreter computes it.
  EXPECT_PRIM("mlp_maximum_0", R"(prim mlp_maximum_0(a: f32[B, 256]) -> (out: f32[B, 256]) {
  for i0 in 0..B {
    for i1 in 0..256 {
      let a_value: f32 = a[i0, i1]
      let b_value: f32 = 0.0
      out[i0, i1] = select(b_value != b_value, b_value, select(a_value < b_value, b_value, a_value))
    }
  }
}
)");
}

TEST_F(LegalizeTest, ElementwiseDtypes) {
  ASSERT_TRUE(legalize(R"(
fn f(x: f32[B, S], h: f16[B, S], i: i32[B, S], m: bool[B, S]) {
  let a = h + h * 0.1
  let d = i / i
  let p = pow(i, 2)
  let r = cast(x, "i32")
  let s = cast(m, "f16")
  let u = where(m, x, 1.0)
  let ab = abs(i)
  let nb = !m
  let lt = x < 0.5
  return (a, d, p, r, s, u, ab, nb, lt)
}
)")) << errors();
  expect_valid_and_round_trips();
  EXPECT_EQ(count_prims(), 10u);
  // f16 computes in f32 and rounds once on store; the literal is rounded to f16 first.
  EXPECT_PRIM("f_mul_0", R"(prim f_mul_0(a: f16[B, S]) -> (out: f16[B, S]) {
  for i0 in 0..B {
    for i1 in 0..S {
      out[i0, i1] = cast(cast(a[i0, i1], "f32") * cast(cast(0.1, "f16"), "f32"), "f16")
    }
  }
}
)");
  // Integer division is the prim's floor division (x / 0 == 0, x / -1 wraps), as the
  // interpreter's.
  EXPECT_PRIM("f_div_0", R"(prim f_div_0(a: i32[B, S]) -> (out: i32[B, S]) {
  for i0 in 0..B {
    for i1 in 0..S {
      out[i0, i1] = a[i0, i1] / a[i0, i1]
    }
  }
}
)");
  EXPECT_PRIM("f_pow_0", R"(prim f_pow_0(a: i32[B, S]) -> (out: i32[B, S]) {
  for i0 in 0..B {
    for i1 in 0..S {
      out[i0, i1] = pow(a[i0, i1], 2)
    }
  }
}
)");
  // A prim's cast saturates float to int (NaN to 0) as the interpreter does.
  EXPECT_PRIM("f_cast_0", R"(prim f_cast_0(x: f32[B, S]) -> (out: i32[B, S]) {
  for i0 in 0..B {
    for i1 in 0..S {
      out[i0, i1] = cast(x[i0, i1], "i32")
    }
  }
}
)");
  EXPECT_PRIM("f_cast_1", R"(prim f_cast_1(x: bool[B, S]) -> (out: f16[B, S]) {
  for i0 in 0..B {
    for i1 in 0..S {
      out[i0, i1] = cast(x[i0, i1], "f16")
    }
  }
}
)");
  EXPECT_PRIM("f_where_0", R"(prim f_where_0(cond: bool[B, S], a: f32[B, S]) -> (out: f32[B, S]) {
  for i0 in 0..B {
    for i1 in 0..S {
      out[i0, i1] = select(cond[i0, i1], a[i0, i1], 1.0)
    }
  }
}
)");
  EXPECT_PRIM("f_abs_0", R"(prim f_abs_0(x: i32[B, S]) -> (out: i32[B, S]) {
  for i0 in 0..B {
    for i1 in 0..S {
      out[i0, i1] = abs(x[i0, i1])
    }
  }
}
)");
  EXPECT_PRIM("f_lt_0", R"(prim f_lt_0(a: f32[B, S]) -> (out: bool[B, S]) {
  for i0 in 0..B {
    for i1 in 0..S {
      out[i0, i1] = a[i0, i1] < 0.5
    }
  }
}
)");
}

TEST_F(LegalizeTest, Broadcasting) {
  ASSERT_TRUE(legalize(R"(
fn f(x: f32[B, S], b: f32[S], c: f32[B, 1], s: f32[]) {
  let y = b * c
  return y - x * s
}
)")) << errors();
  expect_valid_and_round_trips();
  EXPECT_PRIM("f_mul_0", R"(prim f_mul_0(a: f32[S], b: f32[B, 1]) -> (out: f32[B, S]) {
  for i0 in 0..B {
    for i1 in 0..S {
      out[i0, i1] = a[i1] * b[i0, 0]
    }
  }
}
)");
  EXPECT_PRIM("f_mul_1", R"(prim f_mul_1(a: f32[B, S], b: f32[]) -> (out: f32[B, S]) {
  for i0 in 0..B {
    for i1 in 0..S {
      out[i0, i1] = a[i0, i1] * b[]
    }
  }
}
)");
}

TEST_F(LegalizeTest, Reductions) {
  ASSERT_TRUE(legalize(R"(
fn f(x: f32[B, S, D], h: f16[B, S], i: i32[B, S]) {
  return (sum(x, axis=-2), mean(x, axis=[0, 2], keepdims=true), max(x), min(i, axis=-1),
          sum(h), max(i, axis=0))
}
)")) << errors();
  expect_valid_and_round_trips();
  EXPECT_PRIM("f_sum_0", R"(prim f_sum_0(x: f32[B, S, D]) -> (out: f32[B, D]) {
  for i0 in 0..B {
    for i1 in 0..D {
      var acc: f32 = 0.0
      for r0 in 0..S {
        acc = acc + x[i0, r0, i1]
      }
      out[i0, i1] = acc
    }
  }
}
)");
  EXPECT_PRIM("f_mean_0", R"(prim f_mean_0(x: f32[B, S, D]) -> (out: f32[1, S, 1]) {
  for i0 in 0..S {
    var acc: f32 = 0.0
    for r0 in 0..B {
      for r1 in 0..D {
        acc = acc + x[r0, i0, r1]
      }
    }
    out[0, i0, 0] = acc / cast(B*D, "f32")
  }
}
)");
  EXPECT_PRIM("f_max_0", R"(prim f_max_0(x: f32[B, S, D]) -> (out: f32[]) {
  var acc: f32 = -1.0 / 0.0
  for r0 in 0..B {
    for r1 in 0..S {
      for r2 in 0..D {
        acc = max(acc, x[r0, r1, r2])
      }
    }
  }
  out[] = acc
}
)");
  EXPECT_PRIM("f_min_0", R"(prim f_min_0(x: i32[B, S]) -> (out: i32[B]) {
  for i0 in 0..B {
    var acc: i32 = 2147483647
    for r0 in 0..S {
      acc = min(acc, x[i0, r0])
    }
    out[i0] = acc
  }
}
)");
  // f16 accumulates in f32.
  EXPECT_PRIM("f_sum_1", R"(prim f_sum_1(x: f16[B, S]) -> (out: f16[]) {
  var acc: f32 = 0.0
  for r0 in 0..B {
    for r1 in 0..S {
      acc = acc + cast(x[r0, r1], "f32")
    }
  }
  out[] = cast(acc, "f16")
}
)");
  EXPECT_PRIM("f_max_1", R"(prim f_max_1(x: i32[B, S]) -> (out: i32[S]) {
  for i0 in 0..S {
    var acc: i32 = -2147483648
    for r0 in 0..B {
      acc = max(acc, x[r0, i0])
    }
    out[i0] = acc
  }
}
)");
}

TEST_F(LegalizeTest, Layout) {
  ASSERT_TRUE(legalize(R"(
fn f(x: f32[B, S], y: f32[B, T], idx: i32[K], j: i64[S]) {
  let g0, g1 = split(x, [1, S - 1], axis=1)
  return (concat([x, y], axis=-1), g1, slice(x, axis=1, start=1, end=S, step=2),
          take(x, idx, axis=1), pad(x, [0, 0, 1, 2], value=-1.0), permute(x, [1, 0]),
          broadcast_to(j, [B, S]), reshape(x, [S, B]))
}
)")) << errors();
  expect_valid_and_round_trips();
  EXPECT_PRIM("f_concat_0",
              R"(prim f_concat_0(x: f32[B, S], x0: f32[B, T]) -> (out: f32[B, S + T]) {
  for i0 in 0..B {
    for i1 in 0..S {
      out[i0, i1] = x[i0, i1]
    }
  }
  for i2 in 0..B {
    for i3 in 0..T {
      out[i2, S + i3] = x0[i2, i3]
    }
  }
}
)");
  EXPECT_PRIM("f_split_0",
              R"(prim f_split_0(x: f32[B, S]) -> (out: f32[B, 1], out0: f32[B, S - 1]) {
  for i0 in 0..B {
    out[i0, 0] = x[i0, 0]
  }
  for i1 in 0..B {
    for i2 in 0..S - 1 {
      out0[i1, i2] = x[i1, i2 + 1]
    }
  }
}
)");
  EXPECT_PRIM("f_slice_0", R"(prim f_slice_0(x: f32[B, S]) -> (out: f32[B, S/2]) {
  for i0 in 0..B {
    for i1 in 0..S/2 {
      out[i0, i1] = x[i0, 2*i1 + 1]
    }
  }
}
)");
  // Negative indices count from the end; out-of-range ones are clamped into x.
  EXPECT_PRIM("f_take_0", R"(prim f_take_0(x: f32[B, S], indices: i32[K]) -> (out: f32[B, K]) {
  for i0 in 0..B {
    for i1 in 0..K {
      let k: i64 = cast(indices[i1], "i64")
      let j: i64 = min(max(select(k < 0, k + S, k), 0), S - 1)
      out[i0, i1] = x[i0, j]
    }
  }
}
)");
  EXPECT_PRIM("f_pad_0", R"(prim f_pad_0(x: f32[B, S]) -> (out: f32[B, S + 3]) {
  for i0 in 0..B {
    for i1 in 0..S + 3 {
      if 1 <= i1 && i1 < S + 1 {
        out[i0, i1] = x[i0, i1 - 1]
      } else {
        out[i0, i1] = -1.0
      }
    }
  }
}
)");
  EXPECT_PRIM("f_permute_0", R"(prim f_permute_0(x: f32[B, S]) -> (out: f32[S, B]) {
  for i0 in 0..S {
    for i1 in 0..B {
      out[i0, i1] = x[i1, i0]
    }
  }
}
)");
  EXPECT_PRIM("f_broadcast_to_0", R"(prim f_broadcast_to_0(x: i64[S]) -> (out: i64[B, S]) {
  for i0 in 0..B {
    for i1 in 0..S {
      out[i0, i1] = x[i1]
    }
  }
}
)");
  // reshape stays: the host makes it an alias.
  EXPECT_NE(callees("f").find("reshape\n"), std::string::npos);
  EXPECT_EQ(count_prims(), 7u);
}

TEST_F(LegalizeTest, MatmulOnBlas) {
  ASSERT_TRUE(legalize(R"(
fn f(x: f32[B, S, K], w: f32[K, N], q: f32[B, H, S, D], k: f32[B, H, D, S], a: f32[M, K],
     bb: f32[B, K, N], one: f32[1, K, N], lone: f32[1, S, K]) {
  return (matmul(x, w), matmul(q, k), matmul(a, bb), matmul(x, one), matmul(lone, bb))
}
)")) << errors();
  expect_valid_and_round_trips();
  EXPECT_EQ(count_prims(), 0u);
  std::string externs;
  for (const ir::Module::Decl& d : out_.decls)
    if (d.ext) externs += ir::print_extern(*d.ext);
  EXPECT_EQ(
      externs,
      "extern fn f_sgemm_0(a: f32[B, S, K], b: f32[K, N]) -> f32[B, S, N] = \"dsc.sgemm\"\n"
      "extern fn f_sgemm_1(a: f32[B, H, S, D], b: f32[B, H, D, S]) -> f32[B, H, S, S] = "
      "\"dsc.sgemm\"\n"
      "extern fn f_sgemm_2(a: f32[M, K], b: f32[B, K, N]) -> f32[B, M, N] = \"dsc.sgemm\"\n"
      "extern fn f_sgemm_3(a: f32[S, K], b: f32[B, K, N]) -> f32[B, S, N] = \"dsc.sgemm\"\n");
  // A batch of ones is reshaped away (an alias) first; the same signature reuses its extern.
  EXPECT_EQ(callees("f"), "f_sgemm_0\nf_sgemm_1\nf_sgemm_2\nreshape\nf_sgemm_0\nreshape\n"
                          "f_sgemm_3\n");
}

TEST_F(LegalizeTest, MatmulLoopNests) {
  ASSERT_TRUE(legalize(R"(
fn f(a: i32[M, K], b: i32[K, N], v: f32[K], m: f32[M, K], x: f32[B, 1, S, K], y: f32[1, H, K, T]) {
  return (matmul(a, b), matmul(m, v), matmul(v, m), matmul(x, y))
}
)")) << errors();
  expect_valid_and_round_trips();
  EXPECT_EQ(count_prims(), 4u);
  EXPECT_PRIM("f_matmul_0", R"(prim f_matmul_0(a: i32[M, K], b: i32[K, N]) -> (out: i32[M, N]) {
  for i0 in 0..M {
    for i1 in 0..N {
      var acc: i32 = 0
      for k0 in 0..K {
        acc = acc + a[i0, k0] * b[k0, i1]
      }
      out[i0, i1] = acc
    }
  }
}
)");
  EXPECT_PRIM("f_matmul_1", R"(prim f_matmul_1(a: f32[M, K], b: f32[K]) -> (out: f32[M]) {
  for i0 in 0..M {
    var acc: f32 = 0.0
    for k0 in 0..K {
      acc = acc + a[i0, k0] * b[k0]
    }
    out[i0] = acc
  }
}
)");
  // Batch dims that broadcast against each other.
  EXPECT_PRIM("f_matmul_3",
              R"(prim f_matmul_3(a: f32[B, 1, S, K], b: f32[1, H, K, T]) -> (out: f32[B, H, S, T]) {
  for i0 in 0..B {
    for i1 in 0..H {
      for i2 in 0..S {
        for i3 in 0..T {
          var acc: f32 = 0.0
          for k0 in 0..K {
            acc = acc + a[i0, 0, i2, k0] * b[0, i1, k0, i3]
          }
          out[i0, i1, i2, i3] = acc
        }
      }
    }
  }
}
)");
}

// Not f32 (which calls the target's convolution routine, below): a reduction.
TEST_F(LegalizeTest, Conv2d) {
  ASSERT_TRUE(legalize(R"(
fn f(c: f64[N, C, H, W], w: f64[O, 2, 3, 3], x: f64[N, 3, H, W], k: f64[8, 3, 2, 2])
  where C == 4, O % 2 == 0, H >= 3, W >= 3
{
  return (conv2d(c, w, stride=[2, 1], padding=1, groups=2), conv2d(x, k, dilation=2))
}
)")) << errors();
  expect_valid_and_round_trips();
  EXPECT_PRIM(
      "f_conv2d_0",
      R"(prim f_conv2d_0(x: f64[N, C, H, W], w: f64[O, 2, 3, 3]) -> (out: f64[N, O, (H + 1)/2, W]) {
  for i0 in 0..N {
    for i1 in 0..O {
      for i2 in 0..(H + 1)/2 {
        for i3 in 0..W {
          var acc: f64 = 0.0
          for r0 in 0..2 {
            for r1 in 0..3 {
              for r2 in 0..3 {
                if 0 <= 2*i2 + r1 - 1 && 2*i2 + r1 - 1 < H && 0 <= i3 + r2 - 1 && i3 + r2 - 1 < W {
                  acc = acc + x[i0, r0 + 2*(i1/(O/2)), 2*i2 + r1 - 1, i3 + r2 - 1] * w[i1, r0, r1, r2]
                }
              }
            }
          }
          out[i0, i1, i2, i3] = acc
        }
      }
    }
  }
}
)");
  // No padding: no bounds test.
  EXPECT_PRIM(
      "f_conv2d_1",
      R"(prim f_conv2d_1(x: f64[N, 3, H, W], w: f64[8, 3, 2, 2]) -> (out: f64[N, 8, H - 2, W - 2]) {
  for i0 in 0..N {
    for i1 in 0..8 {
      for i2 in 0..H - 2 {
        for i3 in 0..W - 2 {
          var acc: f64 = 0.0
          for r0 in 0..3 {
            for r1 in 0..2 {
              for r2 in 0..2 {
                acc = acc + x[i0, r0, i2 + 2*r1, i3 + 2*r2] * w[i1, r0, r1, r2]
              }
            }
          }
          out[i0, i1, i2, i3] = acc
        }
      }
    }
  }
}
)");
}

// f32 calls the target's convolution (dsc.conv2d on the CPU) with the op's attributes.
TEST_F(LegalizeTest, Conv2dF32CallsTheTargetsRoutine) {
  ASSERT_TRUE(legalize(R"(
fn f(x: f32[N, 4, H, W], w: f32[6, 2, 3, 3]) where H >= 3, W >= 3 {
  return conv2d(x, w, stride=[2, 1], padding=1, dilation=[1, 2], groups=2)
}
)")) << errors();
  expect_valid_and_round_trips();
  Ref<ir::ExternFunc> e = out_.ext("f_conv2d_0");
  ASSERT_TRUE(e.defined());
  EXPECT_EQ(e->symbol, "dsc.conv2d");
  EXPECT_EQ(e->attributes,
            (std::vector<ir::RoutineAttribute>{
                {"stride", {2, 1}}, {"padding", {1, 1}}, {"dilation", {1, 2}}, {"groups", {2}}}));
}

TEST_F(LegalizeTest, Pools) {
  ASSERT_TRUE(legalize(R"(
fn f(x: f32[N, C, H, W]) where H >= 3 {
  return (max_pool2d(x, 3, stride=2, padding=[0, 1]), avg_pool2d(x, [2, 3], stride=1, padding=[0, 1]),
          avg_pool2d(x, [2, 3], padding=1, count_include_pad=true))
}
)")) << errors();
  expect_valid_and_round_trips();
  // Only the padded axis (the width) is guarded; the padding is never read.
  EXPECT_PRIM(
      "f_max_pool2d_0",
      R"(prim f_max_pool2d_0(x: f32[N, C, H, W]) -> (out: f32[N, C, (H + 1)/2 - 1, (W + 1)/2]) {
  for i0 in 0..N {
    for i1 in 0..C {
      for i2 in 0..(H + 1)/2 - 1 {
        for i3 in 0..(W + 1)/2 {
          var acc: f32 = -1.0 / 0.0
          for r0 in 0..3 {
            for r1 in 0..3 {
              if 0 <= 2*i3 + r1 - 1 && 2*i3 + r1 - 1 < W {
                acc = max(acc, x[i0, i1, 2*i2 + r0, 2*i3 + r1 - 1])
              }
            }
          }
          out[i0, i1, i2, i3] = acc
        }
      }
    }
  }
}
)");
  // The average divides by the window's elements inside the image: the unpadded height's 2
  // times the clipped width.
  EXPECT_PRIM(
      "f_avg_pool2d_0",
      R"(prim f_avg_pool2d_0(x: f32[N, C, H, W]) -> (out: f32[N, C, H - 1, W]) {
  for i0 in 0..N {
    for i1 in 0..C {
      for i2 in 0..H - 1 {
        for i3 in 0..W {
          var acc: f32 = 0.0
          for r0 in 0..2 {
            for r1 in 0..3 {
              if 0 <= i3 + r1 - 1 && i3 + r1 - 1 < W {
                acc = acc + x[i0, i1, i2 + r0, i3 + r1 - 1]
              }
            }
          }
          out[i0, i1, i2, i3] = acc / cast(2 * (min(W, i3 + 2) - max(i3 - 1, 0)), "f32")
        }
      }
    }
  }
}
)");
  // Counting the padding: a constant divisor, 2*3; the stride is the kernel.
  EXPECT_PRIM(
      "f_avg_pool2d_1",
      R"(prim f_avg_pool2d_1(x: f32[N, C, H, W]) -> (out: f32[N, C, H/2 + 1, (W + 2)/3]) {
  for i0 in 0..N {
    for i1 in 0..C {
      for i2 in 0..H/2 + 1 {
        for i3 in 0..(W + 2)/3 {
          var acc: f32 = 0.0
          for r0 in 0..2 {
            for r1 in 0..3 {
              if 0 <= 2*i2 + r0 - 1 && 2*i2 + r0 - 1 < H && (0 <= 3*i3 + r1 - 1 && 3*i3 + r1 - 1 < W) {
                acc = acc + x[i0, i1, 2*i2 + r0 - 1, 3*i3 + r1 - 1]
              }
            }
          }
          out[i0, i1, i2, i3] = acc / 6.0
        }
      }
    }
  }
}
)");
}

TEST_F(LegalizeTest, Creation) {
  ASSERT_TRUE(legalize(R"(
fn f(x: f32[B, S]) {
  return (arange(0, S), full([B, 2], 7, dtype="i32"), zeros([S], dtype="bf16"), shape_of(x),
          full([S], true, dtype="bool"), full([S], 2, dtype="f16"))
}
)")) << errors();
  expect_valid_and_round_trips();
  EXPECT_PRIM("f_arange_0", R"(prim f_arange_0() -> (out: i64[S]) {
  for i0 in 0..S {
    out[i0] = i0
  }
}
)");
  EXPECT_PRIM("f_full_0", R"(prim f_full_0() -> (out: i32[B, 2]) {
  for i0 in 0..B {
    for i1 in 0..2 {
      out[i0, i1] = 7
    }
  }
}
)");
  EXPECT_PRIM("f_zeros_0", R"(prim f_zeros_0() -> (out: bf16[S]) {
  for i0 in 0..S {
    out[i0] = cast(0.0, "bf16")
  }
}
)");
  EXPECT_PRIM("f_shape_of_0", R"(prim f_shape_of_0(x: f32[B, S]) -> (out: i64[2]) {
  out[0] = B
  out[1] = S
}
)");
  EXPECT_PRIM("f_full_1", R"(prim f_full_1() -> (out: bool[S]) {
  for i0 in 0..S {
    out[i0] = true
  }
}
)");
  EXPECT_PRIM("f_full_2", R"(prim f_full_2() -> (out: f16[S]) {
  for i0 in 0..S {
    out[i0] = cast(2.0, "f16")
  }
}
)");
}

// A prim uses symbols that none of its buffers has as a plain dim (a slice's symbolic start,
// the B and S of a [B*S, D] buffer): it takes a zero-size carrier of them, made once per fn.
TEST_F(LegalizeTest, SymbolsOnlyInCompoundDimsOrInTheBody) {
  ASSERT_TRUE(legalize(R"(
fn f(x: f32[B, S, D], t: f32[T], p: f32[P]) where T >= P + 4 {
  let flat = reshape(x, [B*S, D])
  let y = flat * 2.0
  return (y + y, slice(t, start=P, end=P + 4), arange(1, S, 2))
}
)")) << errors();
  expect_valid_and_round_trips();
  // B and S appear in the dims of f_mul_0's buffers, so they are in its signature; P appears
  // only in f_slice_0's body, so a zero-byte carrier input names it.
  EXPECT_EQ(callees("f"), "reshape\nf_mul_0\nf_add_0\nf_symbols_0\nf_slice_0\nf_arange_0\n");
  EXPECT_PRIM("f_mul_0",
              R"(prim f_mul_0(a: f32[B*S, D]) -> (out: f32[B*S, D]) {
  for i0 in 0..B*S {
    for i1 in 0..D {
      out[i0, i1] = a[i0, i1] * 2.0
    }
  }
}
)");
  EXPECT_PRIM("f_symbols_0", "prim f_symbols_0() -> (out: i8[0, P]) {\n}\n");
  EXPECT_PRIM("f_slice_0", R"(prim f_slice_0(x: f32[T], symbols: i8[0, P]) -> (out: f32[4]) {
  for i0 in 0..4 {
    out[i0] = x[P + i0]
  }
}
)");
}

// Literals are folded into the code: an op of literals alone is a prim without inputs.
TEST_F(LegalizeTest, Literals) {
  ASSERT_TRUE(legalize(R"(
fn f(x: f32[N]) {
  let t = 1.0 / 3.0
  return x * t + exp(2.0)
}
)")) << errors();
  expect_valid_and_round_trips();
  EXPECT_PRIM("f_div_0", R"(prim f_div_0() -> (out: f32[]) {
  out[] = 1.0 / 3.0
}
)");
  EXPECT_PRIM("f_exp_0", R"(prim f_exp_0() -> (out: f32[]) {
  out[] = exp(2.0)
}
)");
}

// Every stdlib composite goes through inline_calls and legalize.
TEST_F(LegalizeTest, EveryComposite) {
  ASSERT_TRUE(legalize(R"(import nn
fn f(x: f32[B, S, D], g: f32[D], b: f32[D], w: f32[D, E], c: f32[E], q: f32[B, H, S, K]) {
  return (nn.relu(x), nn.gelu(x), nn.gelu_tanh(x), nn.silu(x), nn.softmax(x, axis=1),
          nn.log_softmax(x), nn.layer_norm(x, g, b), nn.rms_norm(x, g), nn.linear(x, w, c),
          nn.attention(q, q, q))
}
)")) << errors();
  expect_valid_and_round_trips();
  for (const ir::Binding& bind : out_.function("f")->body.as<ir::Block>()->bindings) {
    const ir::Call* c = bind.value.as<ir::Call>();
    ASSERT_NE(c, nullptr);
    EXPECT_TRUE(out_.prim(c->callee) || out_.ext(c->callee) || c->callee == "reshape") << c->callee;
  }
}

// nonzero: a serial scan prim writes the indices of the nonzero elements into a buffer with a
// row per element, and the count; first_rows of the two is the value (its rows are bound at
// run time from the count).
TEST_F(LegalizeTest, NonzeroBecomesAScanAndFirstRows) {
  ASSERT_TRUE(legalize(R"(
fn f(m: bool[N]) {
  let idx: i64[K, 1] = nonzero(m)
  return idx
}
)")) << errors();
  expect_valid_and_round_trips();
  EXPECT_PRIM("f_nonzero_0", R"(prim f_nonzero_0(x: bool[N]) -> (all: i64[N, 1], count: i64[]) {
  var next: i64 = 0
  for i0 in 0..N {
    if x[i0] {
      all[next, 0] = i0
      next = next + 1
    }
  }
  count[] = next
}
)");
  const ir::Block* body = out_.function("f")->body.as<ir::Block>();
  ASSERT_EQ(body->bindings.size(), 2u);
  const ir::Call* rows = body->bindings[1].value.as<ir::Call>();
  ASSERT_NE(rows, nullptr);
  EXPECT_EQ(rows->callee, "first_rows");
}

// Keyword operands, a literal reshaped or broadcast: all become prims.
TEST_F(LegalizeTest, KeywordOperandsAndLiteralTensors) {
  ASSERT_TRUE(legalize(R"(
fn f(x: f32[N]) {
  let column = reshape(x, [N, 1])
  return (add(b=x, a=x * 2.0), reshape(1.5, [1, 1]) * column, broadcast_to(0.0, [N, 2]) + column)
}
)")) << errors();
  expect_valid_and_round_trips();
  EXPECT_PRIM("f_add_0", R"(prim f_add_0(a: f32[N], b: f32[N]) -> (out: f32[N]) {
  for i0 in 0..N {
    out[i0] = a[i0] + b[i0]
  }
}
)");
  EXPECT_PRIM("f_cast_0", R"(prim f_cast_0() -> (out: f32[1, 1]) {
  out[0, 0] = 1.5
}
)");
  EXPECT_PRIM("f_broadcast_to_0", R"(prim f_broadcast_to_0() -> (out: f32[N, 2]) {
  for i0 in 0..N {
    for i1 in 0..2 {
      out[i0, i1] = 0.0
    }
  }
}
)");
}

// Without inline_calls first: an error, not a crash.
TEST_F(LegalizeTest, NeedsInlinedInput) {
  std::optional<ir::Module> m = parse(R"(
fn f(x: f32[N]) {
  let y = exp(x * 2.0)
  return y
}
fn g(x: f32[N]) {
  return exp(x)
}
)");
  ASSERT_TRUE(m.has_value());
  ir::Module typed = typecheck(std::move(*m), ctx_);
  passes::legalize(typed, ctx_);
  EXPECT_EQ(errors(), "3:3: legalize: an operand of 'exp' is not a var or a literal (run "
                      "inline_calls first)\n"
                      "7:10: legalize: the result of 'g' is not a var or a tuple of vars (run "
                      "inline_calls first)\n");
}

// Each branch of an if is legalized as a block of its own: its ops become prims there, and
// nothing is fused across the if.
TEST_F(LegalizeTest, GraphIfBranchesAreLegalizedApart) {
  ASSERT_TRUE(legalize(R"(
fn f(x: f32[N], c: bool[]) {
  let y = x + 1.0
  let z = if c { exp(y) * 2.0 } else { y }
  return z * 3.0
}
)")) << errors();
  expect_valid_and_round_trips();
  const ir::Block* body = out_.function("f")->body.as<ir::Block>();
  ASSERT_EQ(body->bindings.size(), 3u);
  const ir::If* i = body->bindings[1].value.as<ir::If>();
  ASSERT_NE(i, nullptr);
  const ir::Block* then_block = i->then_branch.as<ir::Block>();
  ASSERT_NE(then_block, nullptr);
  ASSERT_FALSE(then_block->bindings.empty());
  for (const ir::Binding& b : then_block->bindings) {
    const ir::Call* kernel = b.value.as<ir::Call>();
    ASSERT_NE(kernel, nullptr);
    EXPECT_TRUE(out_.prim(kernel->callee)) << kernel->callee;
  }
  EXPECT_TRUE(out_.prim("f_add_0")); // y is its own kernel, before the if
}

} // namespace
} // namespace dsc::testing
