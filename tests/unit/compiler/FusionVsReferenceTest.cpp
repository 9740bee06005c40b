// Fusion (passes/legalize/Fuse.h) compiled through the whole CPU pipeline against the
// reference interpreter at six shapes each (1, 7, 17 and random sizes with primes), with the
// number of generated kernels it must reach, and without fusion (a kernel per op); then guarded
// variants, at shapes that take each branch.

#include <gtest/gtest.h>

#include "tests/unit/compiler/CompileUtil.h"
#include "tests/unit/compiler/GuardedCases.h"

namespace dsc::testing {
namespace {

struct FusionCase {
  NumericCase numeric;
  size_t kernels; // generated prims with fusion
};

std::vector<FusionCase> cases() {
  return {
      // Reductions stitched with their producers and consumers: one kernel, one row at a time.
      {{"softmax", "import nn\nfn f(x: f32[B, S, T]) { return nn.softmax(x * 4.0, axis=-1) }", {"B", "S", "T"}}, 1},
      {{"softmax_middle_axis", "import nn\nfn f(x: f32[B, S, T]) { return nn.softmax(x, axis=1) }", {"B", "S", "T"}}, 1},
      {{"log_softmax", "import nn\nfn f(x: f32[B, T]) { return nn.log_softmax(x, axis=-1) }", {"B", "T"}, 2, 1e-4}, 1},
      {{"layer_norm_residual", "import nn\nfn f(x: f32[B, S, D], y: f32[B, S, D], g: f32[D], b: f32[D]) {\n  return nn.layer_norm(x + y, g, b)\n}", {"B", "S", "D"}, 2, 1e-3}, 1},
      {{"rms_norm", "import nn\nfn f(x: f32[B, D], g: f32[D]) { return nn.rms_norm(x, g) }", {"B", "D"}, 2, 1e-4}, 1},
      {{"reduce_outer_axis", "fn f(x: f32[N, M]) { return x - mean(x, axis=0, keepdims=true) }", {"N", "M"}, 2, 1e-4}, 1},
      // The first softmax's quotients are the second's input, row by row, each written in
      // place into the one output.
      {{"softmax_of_softmax", "import nn\nfn f(x: f32[B, T]) { return nn.softmax(nn.softmax(x) * 8.0) }", {"B", "T"}}, 1},
      {{"f16_softmax", "import nn\nfn f(x: f16[B, T]) { return nn.softmax(x, axis=-1) }", {"B", "T"}}, 1},
      // A row value something outside the group also reads is stored too.
      {{"row_value_escapes", "fn f(x: f32[B, T]) {\n  let m = max(x, axis=-1, keepdims=true)\n  return (exp(x - m), m * 2.0)\n}", {"B", "T"}}, 1},
      // ResNet's stem: the relu is computed where the pool reads the convolution (a padded
      // conv and a padded pool are each a guarded reduction, kept apart); an unpadded pool
      // starts a group that its consumer joins, row by row.
      // A convolution reduction (f64) with its ReLU, then the pool; in f32 the convolution is
      // dsc.conv2d and the ReLU goes with the pool.
      {{"conv_relu_max_pool", "import nn\nfn f(x: f64[N, 2, H, W], w: f64[3, 2, 3, 3]) {\n  return max_pool2d(nn.relu(conv2d(x, w, padding=1)), 3, stride=2, padding=1)\n}", {"N", "H", "W"}, 2, 1e-9}, 2},
      {{"conv_call_relu_max_pool", "import nn\nfn f(x: f32[N, 2, H, W], w: f32[3, 2, 3, 3]) {\n  return max_pool2d(nn.relu(conv2d(x, w, padding=1)), 3, stride=2, padding=1)\n}", {"N", "H", "W"}, 2, 1e-4}, 1},
      {{"avg_pool_then_map", "fn f(x: f32[N, C, H, W]) where H >= 2, W >= 2 { return avg_pool2d(x * 2.0, 2) + 1.0 }", {"N", "C", "H", "W"}, 2, 2e-5, 2}, 1},
      // argmax and argmin are two reductions per row: a cheap producer is computed in both, a
      // costly one (evaluated twice per element there) stays apart, a consumer reads the
      // indices from memory, and a stitched group they read is closed before them.
      {{"argmax_of_map", "fn f(x: f32[B, T], b: f32[T]) { return argmax(x * 2.0 + b) }", {"B", "T"}}, 1},
      {{"argmin_of_reshape", "fn f(x: f32[B, S, D]) { return argmin(reshape(x - 1.0, [B * S, D]), axis=0) }", {"B", "S", "D"}}, 1},
      {{"argmax_costly_producer", "fn f(x: f32[B, T]) { return argmax(exp(x), axis=0, keepdims=true) }", {"B", "T"}}, 2},
      {{"argmax_then_map", "fn f(x: f32[B, T], y: f32[B]) { return cast(argmin(x), dtype=\"f32\") + y }", {"B", "T"}}, 2},
      {{"argmax_of_softmax", "import nn\nfn f(x: f32[B, T]) { return argmax(nn.softmax(x * 4.0)) }", {"B", "T"}}, 2},
      // Operands read in place by dsc.sgemm through strides, with no copy: a transposed A, a
      // batch of B matrices transposed per product against one A, and attention's heads as
      // column blocks of one QKV product (its bias the product's epilogue, the one prim); a
      // head merge is not affine in the operand's indices and keeps its kernel, unless it is
      // the merge of a product's heads, which the product then writes in place (as a product
      // whose only reader permutes it: no kernel).
      {{"matmul_transposed_operand", "fn f(a: f32[K, M], b: f32[K, N]) { return matmul(permute(a, [1, 0]), b) }", {"M", "K", "N"}, 2, 1e-4}, 0},
      {{"matmul_shared_a_transposed_b", "fn f(w: f32[M, K], x: f32[B, N, K]) { return matmul(w, permute(x, [0, 2, 1])) }", {"B", "M", "K", "N"}, 2, 1e-4}, 0},
      {{"attention_heads_in_place", "import nn\nfn f(x: f32[B, S, 24], w: f32[24, 72], b: f32[72]) {\n  let q, k, v = split(matmul(x, w) + b, 3, axis=-1)\n  let qh = permute(reshape(q, [B, S, 4, 6]), [0, 2, 1, 3])\n  let kh = permute(reshape(k, [B, S, 4, 6]), [0, 2, 3, 1])\n  let vh = permute(reshape(v, [B, S, 4, 6]), [0, 2, 1, 3])\n  return matmul(nn.softmax(matmul(qh, kh) * 0.25), vh)\n}", {"B", "S"}, 2, 1e-4}, 2},
      {{"attention_heads_merged_in_place", "import nn\nfn f(x: f32[B, S, 24], w: f32[24, 72], b: f32[72]) {\n  let q, k, v = split(matmul(x, w) + b, 3, axis=-1)\n  let qh = permute(reshape(q, [B, S, 4, 6]), [0, 2, 1, 3])\n  let kh = permute(reshape(k, [B, S, 4, 6]), [0, 2, 3, 1])\n  let vh = permute(reshape(v, [B, S, 4, 6]), [0, 2, 1, 3])\n  let o = matmul(nn.softmax(matmul(qh, kh) * 0.25), vh)\n  return reshape(permute(o, [0, 2, 1, 3]), [B, S, 24])\n}", {"B", "S"}, 2, 1e-4}, 2},
      {{"product_permuted_in_place", "fn f(a: f32[B, M, K], b: f32[B, K, N]) { return permute(matmul(a, b), [1, 0, 2]) }", {"B", "M", "K", "N"}, 2, 1e-4}, 0},
      {{"heads_merged_not_in_place", "fn f(x: f32[B, 4, S, 6], w: f32[24, N]) { return matmul(reshape(permute(x, [0, 2, 1, 3]), [B, S, 24]), w) }", {"B", "S", "N"}, 2, 1e-4}, 1},
      // Elementwise, broadcast and injective chains, through reshapes that split and merge.
      {{"chain", "fn f(a: f32[N, M], b: f32[M]) { return exp(a * 2.0 + b) - 1.0 }", {"N", "M"}}, 1},
      {{"reshape_merge", "fn f(x: f32[B, S, D]) { return reshape(x * 2.0, [B * S, D]) + 1.0 }", {"B", "S", "D"}}, 1},
      {{"reshape_split_permute", "fn f(x: f32[B, S, 12]) {\n  return permute(reshape(x + 1.0, [B, S, 3, 4]), [0, 2, 1, 3]) * 0.5\n}", {"B", "S"}}, 1},
      {{"split_permute", "fn f(x: f32[B, 6], w: f32[6]) {\n  let a, b = split(x + w, 2, axis=-1)\n  return (permute(a, [1, 0]), b * b)\n}", {"B"}}, 2},
      {{"concat_of_maps", "fn f(a: f32[N, M], b: f32[K, M]) { return concat([a * 2.0, b + 1.0], axis=0) }", {"N", "M", "K"}}, 1},
      {{"int_matmul_transposed", "fn f(a: i64[K, N], b: i64[K, M]) { return matmul(permute(a, [1, 0]), b) }", {"N", "K", "M"}, 50}, 1},
      // A map that is a product's only reader runs as the GEMM's epilogue, on each block of
      // rows as the GEMM finishes it: bias, gelu, a value per row and a residual (one prim, the
      // epilogue, and no kernel of its own); a ReLU over a 2-d product; a batch of products with
      // B matrices of their own. Inputs indexed by a row's position rather than offset by rows
      // (a value per product of the batch, a matrix broadcast over it, attention's mask per
      // batch) are read whole where the block's first row puts the row. Kept a kernel of its
      // own: a product with two readers, and a product read transposed.
      {{"matmul_epilogue", "import nn\nfn f(x: f32[B, S, K], w: f32[K, N], b: f32[N], r: f32[B, S, N], s: f32[B, S, 1]) {\n  return nn.gelu(matmul(x, w) + b) * s + r\n}", {"B", "S", "K", "N"}, 2, 1e-4}, 1},
      {{"matmul_relu_epilogue", "import nn\nfn f(a: f32[M, K], b: f32[K, N]) { return nn.relu(matmul(a, b) * 0.5 - 0.25) }", {"M", "K", "N"}, 2, 1e-4}, 1},
      // A stitched group that reads the product row by row runs as its epilogue too, in place:
      // layer_norm after a residual add and a bias, softmax of a scaled product. One reducing
      // the product's columns (softmax over axis 0) is no epilogue.
      {{"matmul_layer_norm_epilogue", "import nn\nfn f(x: f32[B, S, K], w: f32[K, N], b: f32[N], r: f32[B, S, N], g: f32[N], e: f32[N]) {\n  return nn.layer_norm(r + matmul(x, w) + b, g, e)\n}", {"B", "S", "K", "N"}, 2, 1e-3}, 1},
      {{"matmul_softmax_epilogue", "import nn\nfn f(a: f32[M, K], b: f32[K, N]) { return nn.softmax(matmul(a, b) * 0.5) }", {"M", "K", "N"}, 2, 1e-4}, 1},
      {{"matmul_softmax_columns", "import nn\nfn f(a: f32[M, K], b: f32[K, N]) { return nn.softmax(matmul(a, b), axis=0) }", {"M", "K", "N"}, 2, 1e-4}, 1},
      {{"batched_matmul_position_inputs", "fn f(a: f32[B, M, K], b: f32[B, K, N], c: f32[M, N], d: f32[B, 1, N]) { return matmul(a, b) + c - d }", {"B", "M", "K", "N"}, 2, 1e-4}, 1},
      {{"attention_mask_epilogue", "import nn\nfn f(q: f32[B, H, S, D], k: f32[B, H, D, S], mask: f32[B, S]) {\n  return nn.softmax(matmul(q, k) * 0.125 + reshape(mask, [B, 1, 1, S]))\n}", {"B", "H", "S", "D"}, 2, 1e-4}, 2},
      // A product read only by another product, as its A, runs with it a block of rows at a
      // time (dsc.sgemm_chain), its epilogue on each block: attention with its mask per batch,
      // its heads merged; a decode step's, where one product's batch dims merge into one and the
      // other's do not; and two plain batched products (through shared weights they stay two
      // calls: lit fuse/chain.test).
      {{"attention_masked_chain", "import nn\nfn f(x: f32[B, S, 24], w: f32[24, 72], b: f32[72], mask: f32[B, S]) {\n  let q, k, v = split(matmul(x, w) + b, 3, axis=-1)\n  let qh = permute(reshape(q, [B, S, 4, 6]), [0, 2, 1, 3])\n  let kh = permute(reshape(k, [B, S, 4, 6]), [0, 2, 3, 1])\n  let vh = permute(reshape(v, [B, S, 4, 6]), [0, 2, 1, 3])\n  let p = nn.softmax(matmul(qh, kh) * 0.25 + reshape(mask, [B, 1, 1, S]))\n  return reshape(permute(matmul(p, vh), [0, 2, 1, 3]), [B, S, 24])\n}", {"B", "S"}, 2, 1e-4}, 2},
      {{"chain_batch_merged_in_one_product", "import nn\nfn f(x: f32[B, 24], k: f32[B, 2, 6, T], v: f32[B, 2, T, 6]) {\n  let q, r = split(x, 2, axis=-1)\n  return matmul(nn.softmax(matmul(reshape(q, [B, 2, 1, 6]), k)), v)\n}", {"B", "T"}, 2, 1e-4}, 1},
      {{"two_products_chained", "fn f(a: f32[B, M, K], b: f32[B, K, N], d: f32[B, N, E]) { return matmul(matmul(a, b), d) }", {"B", "M", "K", "N", "E"}, 2, 1e-3}, 0},
      {{"matmul_two_readers", "fn f(a: f32[M, K], b: f32[K, N]) {\n  let y = matmul(a, b)\n  return (y + 1.0, y * 2.0)\n}", {"M", "K", "N"}, 2, 1e-4}, 2},
      {{"batched_matmul_map", "fn f(a: f32[B, M, K], b: f32[B, K, N]) { return matmul(a, b) + 1.0 }", {"B", "M", "K", "N"}, 2, 1e-4}, 1},
      {{"matmul_read_transposed", "fn f(a: f32[M, K], b: f32[K, N]) { return permute(matmul(a, b), [1, 0]) - 1.0 }", {"M", "K", "N"}, 2, 1e-4}, 1},
      // A cheap value read by several consumers is computed in each.
      // A value nothing reads gets no kernel, nor does what only it reads.
      {{"dead_values", "fn f(a: f32[N, M], b: f32[N, M]) {\n  let t = exp(b)\n  let d = sum(t, axis=0)\n  let u = a * 2.0\n  return u + 1.0\n}", {"N", "M"}}, 1},
      {{"cheap_shared", "fn f(a: f32[N, M]) {\n  let t = a * 2.0\n  return (t + 1.0, t * 3.0)\n}", {"N", "M"}}, 2},
      // Kept apart: a costly value read at a broadcast (it would be computed M times per
      // element), a producer whose locals a guarded branch would evaluate eagerly, and a
      // gather's data-dependent index.
      {{"costly_broadcast", "fn f(a: f32[N, 1], b: f32[N, M]) { return exp(a) + b }", {"N", "M"}}, 2},
      {{"relu_into_concat", "import nn\nfn f(a: f32[N, M], b: f32[K, M]) { return concat([nn.relu(a), b + 1.0], axis=0) }", {"N", "M", "K"}}, 2},
      {{"gather", "fn f(x: f32[N, M], i: i64[K]) { return take(x * 2.0, i, axis=0) }", {"N", "M", "K"}, -1}, 2},
  };
}

void PrintTo(const FusionCase& c, std::ostream* os) { *os << c.numeric.name; }

class FusionVsReference : public ::testing::TestWithParam<FusionCase> {};

TEST_P(FusionVsReference, FusedMatchesAtRandomShapes) {
  const FusionCase& c = GetParam();
  CompiledProgram p = compile_program(c.numeric.source, "f");
  ASSERT_EQ(p.errors, "") << c.numeric.source;
  EXPECT_EQ(p.kernels, c.kernels);
  expect_matches_reference(c.numeric, p);
}

TEST_P(FusionVsReference, UnfusedMatchesWithAKernelPerOp) {
  const FusionCase& c = GetParam();
  CompiledProgram p = compile_program(c.numeric.source, "f", /*fuse=*/false);
  ASSERT_EQ(p.errors, "") << c.numeric.source;
  EXPECT_GE(p.kernels, c.kernels);
  expect_matches_reference(c.numeric, p);
}

INSTANTIATE_TEST_SUITE_P(Fusion, FusionVsReference, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<FusionCase>& param) {
                           return param.param.numeric.name;
                         });

class GuardedFusionVsReference : public ::testing::TestWithParam<GuardedCase> {};

TEST_P(GuardedFusionVsReference, EachVariantMatchesWhereItRuns) {
  const GuardedCase& c = GetParam();
  CompiledProgram p = compile_program(c.numeric.source, "f");
  ASSERT_EQ(p.errors, "") << c.numeric.source;
  EXPECT_EQ(p.kernels, c.kernels);
  expect_each_variant_matches(c, p);
}

INSTANTIATE_TEST_SUITE_P(Fusion, GuardedFusionVsReference, ::testing::ValuesIn(guarded_cases()),
                         [](const ::testing::TestParamInfo<GuardedCase>& param) {
                           return param.param.numeric.name;
                         });

} // namespace
} // namespace dsc::testing
