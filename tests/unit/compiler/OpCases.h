#pragma once
// The cases of the op tests: every primitive op and every stdlib composite, as a one-function
// program with its symbols (and integer bound and tolerance where the defaults do not fit).
// OpsVsReferenceTest runs them on the CPU, CudaEmulatorVsReferenceTest through the CUDA
// backend on the block emulator.

#include <vector>

#include "tests/unit/compiler/CompileUtil.h"

namespace dsc::testing {

inline std::vector<NumericCase> cases() {
  return {
      // Elementwise arithmetic with NumPy broadcasting.
      {"add_broadcast", "fn f(a: f32[N, M], b: f32[M]) { return a + b }", {"N", "M"}},
      {"sub_outer", "fn f(a: f32[N, 1], b: f32[1, M]) { return a - b }", {"N", "M"}},
      {"mul_scalar", "fn f(a: f32[N, M]) { return a * 0.125 }", {"N", "M"}},
      {"div", "fn f(a: f32[N], b: f32[N]) { return a / (abs(b) + 0.5) }", {"N"}},
      {"pow", "fn f(a: f32[N], b: f32[N]) { return pow(abs(a) + 0.5, b) }", {"N"}},
      // Integer pow (CUDA's dsc_ipow): negative exponents, the bases 1 and -1, wrapping.
      {"pow_i64", "fn f(a: i64[N], b: i64[N]) { return pow(a - 4, b - 3) }", {"N"}, 9},
      {"pow_i32", "fn f(a: i32[N], b: i32[N]) { return pow(a - 3, b * 5) }", {"N"}, 8},
      {"maximum_minimum", "fn f(a: f32[B, N], b: f32[N]) { return maximum(a, b) + minimum(a, 0.5) }", {"B", "N"}},
      {"int_arith", "fn f(a: i64[N], b: i64[N]) { return a * 3 - b + a / (b + 1) }", {"N"}, 50},
      {"i32_add", "fn f(a: i32[N, M], b: i32[M]) { return a + b }", {"N", "M"}, 100},
      // Comparisons and logic.
      {"compare", "fn f(a: f32[N], b: f32[N]) { return logical_or(a < b, logical_and(a >= b, a != 0.0)) }", {"N"}},
      {"compare_all", "fn f(a: f32[N, M], b: f32[M]) {\n  let x = cast(a == b, dtype=\"f32\") + cast(a <= b, dtype=\"f32\")\n  return x + cast(a > b, dtype=\"f32\") + cast(logical_not(a >= 0.0), dtype=\"f32\")\n}", {"N", "M"}},
      {"where", "fn f(c: bool[N, M], a: f32[N, M], b: f32[M]) { return where(c, a, b) }", {"N", "M"}},
      // Casts.
      {"cast_f32_i32", "fn f(a: f32[N]) { return cast(a * 10.0, dtype=\"i32\") }", {"N"}},
      {"cast_i64_f32", "fn f(a: i64[N]) { return cast(a, dtype=\"f32\") }", {"N"}, 1000},
      {"cast_f16", "fn f(a: f32[N]) { return cast(a, dtype=\"f16\") }", {"N"}, 2, 1e-3},
      {"cast_bf16", "fn f(a: f32[N]) { return cast(a, dtype=\"bf16\") }", {"N"}},
      {"f16_compute", "fn f(a: f16[N, M], b: f16[M]) { return a * b + 1.0 }", {"N", "M"}},
      {"bf16_compute", "fn f(a: bf16[N], b: bf16[N]) { return exp(a) - b }", {"N"}},
      {"f64_compute", "fn f(a: f64[N]) { return exp(a) + tanh(a) }", {"N"}, 2, 1e-9},
      // Unary math.
      {"exp", "fn f(a: f32[N, M]) { return exp(a * 10.0) }", {"N", "M"}},
      {"log", "fn f(a: f32[N]) { return log(abs(a) + 0.01) }", {"N"}},
      {"tanh", "fn f(a: f32[N]) { return tanh(a * 5.0) }", {"N"}},
      {"erf", "fn f(a: f32[N]) { return erf(a * 2.0) }", {"N"}},
      {"sqrt_rsqrt", "fn f(a: f32[N]) { return sqrt(abs(a)) + rsqrt(abs(a) + 0.1) }", {"N"}},
      {"sigmoid", "fn f(a: f32[N]) { return sigmoid(a * 8.0) }", {"N"}},
      {"abs_neg", "fn f(a: f32[N]) { return abs(a) + neg(a) }", {"N"}},
      {"sin_cos", "fn f(a: f32[N, M]) { return sin(a * 10.0) + cos(a * 3.0) }", {"N", "M"}},
      // Arguments far from 0, where the reduction by pi/2 must be exact to many bits.
      {"sin_cos_large", "fn f(a: f32[N]) { return (sin(a * 100000.0), cos(a * 3e30)) }", {"N"}},
      {"sin_cos_f64", "fn f(a: f64[N]) { return sin(a * 7.0) - cos(a * 1e6) }", {"N"}, 2, 1e-9},
      {"sin_f16", "fn f(a: f16[N]) { return sin(a * 4.0) * cos(a) }", {"N"}},
      // Reductions.
      {"sum_last", "fn f(x: f32[B, S, D]) { return sum(x, axis=-1) }", {"B", "S", "D"}, 2, 1e-4},
      {"sum_middle_keep", "fn f(x: f32[B, S, D]) { return sum(x, axis=1, keepdims=true) }", {"B", "S", "D"}, 2, 1e-4},
      {"mean_two_axes", "fn f(x: f32[B, S, D]) { return mean(x, axis=[0, 2]) }", {"B", "S", "D"}, 2, 1e-4},
      {"max_min", "fn f(x: f32[B, S]) { return max(x, axis=0) + min(x, axis=0) }", {"B", "S"}},
      {"sum_int", "fn f(x: i64[B, S]) { return sum(x, axis=-1) }", {"B", "S"}, 100},
      // Arg-reductions over the first, middle and last axis, with and without keepdims. Ties
      // (the first index wins): floats truncated to a few integers, integers in {0, 1}, rows
      // of zeros of both signs. NaN (sqrt and log of negative inputs): the first NaN's index.
      {"argmax_last", "fn f(x: f32[B, S, D]) { return argmax(x) }", {"B", "S", "D"}},
      {"argmin_first_keep", "fn f(x: f32[B, S, D]) { return argmin(x, axis=0, keepdims=true) }", {"B", "S", "D"}},
      {"argmax_middle", "fn f(x: f32[B, S, D]) { return argmax(x, axis=1) }", {"B", "S", "D"}},
      {"argmin_middle_keep", "fn f(x: f32[B, S, D]) { return argmin(x, axis=-2, keepdims=true) }", {"B", "S", "D"}},
      {"argmax_vector", "fn f(x: f32[N]) { return (argmax(x), argmin(x, axis=0, keepdims=true)) }", {"N"}},
      {"argmax_ties", "fn f(x: f32[B, S]) { return argmax(cast(cast(x, dtype=\"i32\"), dtype=\"f32\")) }", {"B", "S"}},
      {"argmin_ties_axis0", "fn f(x: f32[S, B]) { return argmin(cast(cast(x * 0.75, dtype=\"i32\"), dtype=\"f32\"), axis=0) }", {"S", "B"}},
      {"argmax_int_ties", "fn f(x: i64[B, S, T]) { return (argmax(x, axis=1), argmin(x, axis=2)) }", {"B", "S", "T"}},
      {"argmin_i32", "fn f(x: i32[B, S]) { return argmin(x, axis=-1) }", {"B", "S"}, 100},
      {"argmax_all_equal", "fn f(x: f32[B, S]) { return (argmax(x * 0.0), argmin(x * 0.0, axis=0)) }", {"B", "S"}},
      {"argmax_nan", "fn f(x: f32[B, S]) { return (argmax(sqrt(x)), argmin(log(x), axis=0)) }", {"B", "S"}},
      {"argmax_f64", "fn f(x: f64[B, S]) { return argmax(x, axis=0) }", {"B", "S"}},
      {"argmin_f16", "fn f(x: f16[B, S]) { return argmin(x, keepdims=true) }", {"B", "S"}},
      {"argmax_consumed", "fn f(x: f32[B, S], y: f32[B]) { return cast(argmax(x * 2.0 + 1.0), dtype=\"f32\") * y }", {"B", "S"}},
      // Layout.
      {"reshape_view", "fn f(x: f32[B, S, 12]) { return reshape(x, [B, S*3, 4]) + 1.0 }", {"B", "S"}},
      {"reshape_infer", "fn f(x: f32[B, S, 12]) { return reshape(x, [-1, 6]) }", {"B", "S"}},
      {"permute", "fn f(x: f32[B, S, H, D]) { return permute(x, [0, 2, 3, 1]) }", {"B", "S", "H", "D"}},
      {"broadcast_to", "fn f(x: f32[1, M], y: f32[N, 1]) { return broadcast_to(x, [N, M]) + y }", {"N", "M"}},
      {"concat", "fn f(a: f32[B, S, D], b: f32[B, T, D]) { return concat([a, b], axis=1) }", {"B", "S", "T", "D"}},
      {"split_even", "fn f(x: f32[B, D, 3]) {\n  let p, q, r = split(x, 3, axis=-1)\n  return p - q * r\n}", {"B", "D"}},
      {"split_sizes", "fn f(x: f32[B, S], y: f32[B, T]) {\n  let p, q = split(concat([x, y], axis=1), [S, T], axis=1)\n  return (sum(p, axis=1), q)\n}", {"B", "S", "T"}, 2, 1e-4},
      {"slice_step", "fn f(x: f32[B, S]) where S >= 1 { return slice(x, axis=1, start=1, end=S, step=2) }", {"B", "S"}},
      {"take", "fn f(x: f32[N, M], i: i64[K]) { return take(x, i, axis=0) }", {"N", "M", "K"}, -1},
      {"take_axis1", "fn f(x: f32[M, N], i: i32[K, 2]) { return take(x, i, axis=1) }", {"N", "M", "K"}, -1},
      {"pad", "fn f(x: f32[B, S]) { return pad(x, [1, 2, 0, 3], value=0.5) }", {"B", "S"}},
      // update_slice: a copy (its result is not returned, or its operand is read again), and
      // a chain written in place into the caller's buffer (returned, and read after it).
      {"update_slice", "fn f(x: f32[B, C, 5], u: f32[B, 3, 5]) where C >= 3 { return update_slice(x, u, axis=1, start=C - 3) * 2.0 }", {"B", "C"}, 2, 2e-5, 3},
      {"update_slice_operand_read", "fn f(x: f32[B, C], u: f32[B, 1]) { return (update_slice(x, u, axis=-1, start=C - 1), x + 1.0) }", {"B", "C"}},
      {"update_slice_in_place", "fn f(x: f32[B, 2, C, 3], u: f32[B, 2, 1, 3]) {\n  let y = update_slice(x, u, axis=2, start=C - 1)\n  let z = update_slice(y, u * 2.0, axis=2, start=0)\n  return (sum(z, axis=2), z)\n}", {"B", "C"}},
      // Linear algebra and convolution.
      {"matmul_2d", "fn f(a: f32[M, K], b: f32[K, N]) { return matmul(a, b) }", {"M", "K", "N"}, 2, 1e-4},
      {"matmul_fold_batch", "fn f(a: f32[B, S, K], w: f32[K, N]) { return matmul(a, w) }", {"B", "S", "K", "N"}, 2, 1e-4},
      {"matmul_batched", "fn f(a: f32[B, H, S, K], b: f32[B, H, K, T]) { return matmul(a, b) }", {"B", "H", "S", "K", "T"}, 2, 1e-4},
      {"matmul_broadcast_batch", "fn f(a: f32[B, 1, M, K], b: f32[H, K, N]) { return matmul(a, b) }", {"B", "H", "M", "K", "N"}, 2, 1e-4},
      {"matmul_vector", "fn f(w: f32[K, N], v: f32[N]) { return matmul(w, v) }", {"K", "N"}, 2, 1e-4},
      // A bias per column after a product (on CUDA, cuBLASLt's epilogue when the depth is
      // proved positive), then with GELU's tanh approximation, and over a batch of sequences.
      {"matmul_bias", "fn f(a: f32[M, K], w: f32[K, N], b: f32[N]) where K >= 1 { return matmul(a, w) + b }", {"M", "K", "N"}, 2, 1e-4},
      {"matmul_bias_gelu_tanh", "import nn\nfn f(a: f32[M, 48], w: f32[48, N], b: f32[1, N]) { return nn.gelu_tanh(b + matmul(a, w)) }", {"M", "N"}, 2, 1e-4},
      {"matmul_fold_batch_bias", "fn f(a: f32[B, S, 32], w: f32[32, N], b: f32[N]) { return matmul(a, w) + b }", {"B", "S", "N"}, 2, 1e-4},
      // 16-bit products on dsc's GEMM (dsc.gemm_bf16, dsc.gemm_f16): accumulated in f32 and
      // rounded once, as the reference does; B read in place, transposed, or packed.
      {"matmul_2d_bf16", "fn f(a: bf16[M, K], b: bf16[K, N]) { return matmul(a, b) }", {"M", "K", "N"}},
      {"matmul_2d_f16", "fn f(a: f16[M, K], b: f16[K, N]) { return matmul(a, b) }", {"M", "K", "N"}},
      {"matmul_batched_bf16", "fn f(a: bf16[B, H, S, K], b: bf16[B, H, K, T]) { return matmul(a, b) }", {"B", "H", "S", "K", "T"}},
      {"matmul_transposed_f16", "fn f(a: f16[B, S, K], b: f16[B, T, K]) { return matmul(a, permute(b, [0, 2, 1])) }", {"B", "S", "K", "T"}},
      {"matmul_transposed_bf16", "fn f(a: bf16[S, K], b: bf16[T, K]) { return matmul(a, permute(b, [1, 0])) }", {"S", "K", "T"}},
      {"matmul_bias_gelu_bf16", "import nn\nfn f(a: bf16[M, 48], w: bf16[48, N], b: bf16[N]) { return nn.gelu_tanh(matmul(a, w) + b) }", {"M", "N"}},
      // An epilogue writes in place of the product, so a consumer that changes the dtype
      // (to f32 here, compared at bf16's tolerance) is not fused into one.
      {"matmul_bf16_then_f32", "fn f(a: bf16[M, K], b: bf16[K, N], r: bf16[M, N]) { return cast(matmul(a, b) + r, dtype=\"f32\") }", {"M", "K", "N"}, 2, 1e-2},
      {"matmul_f16_softmax_f32", "import nn\nfn f(a: f16[M, K], b: f16[K, N]) { return nn.softmax(cast(matmul(a, b), dtype=\"f32\"), axis=-1) }", {"M", "K", "N"}, 2, 2e-3},
      // Weights quantized per group (matmul_q): bytes of 0..127 (the 4-bit case's nibbles
      // 0..15 for values -8..7), f16 scales with f32 x on dsc.gemm_q8 and dsc.gemm_q4 (a few
      // rows and many), f32 scales and bf16 activations as reductions. Terms of up to 127 times
      // a scale cancel to small sums, so f32's accumulation error is relative to their sum of
      // magnitudes: 1e-3 of the result.
      {"matmul_q8", "fn f(s: f16[N, G], x: f32[M, 4*G], w: i8[N, 4*G]) { return matmul_q(x, w, s) }", {"M", "N", "G"}, 128, 1e-3},
      {"matmul_q4", "fn f(s: f16[N, G], x: f32[B, S, 4*G], w: i8[N, 2*G]) { return matmul_q(x, w, s, bits=4) }", {"B", "S", "N", "G"}, 128, 1e-3},
      {"matmul_q4_f32_scales", "fn f(s: f32[N, G], x: f32[M, 4*G], w: i8[N, 2*G]) { return matmul_q(x, w, s, bits=4) }", {"M", "N", "G"}, 128, 1e-3},
      {"matmul_q4_bf16", "fn f(s: f16[N, G], x: bf16[M, 2*G], w: i8[N, G]) { return matmul_q(x, w, s, bits=4) }", {"M", "N", "G"}, 128},
      {"matmul_i64", "fn f(a: i64[M, K], b: i64[K, N]) { return matmul(a, b) }", {"M", "K", "N"}, 10},
      {"conv2d", "fn f(x: f32[N, 3, H, W], w: f32[4, 3, 3, 3]) { return conv2d(x, w, padding=1) }", {"N", "H", "W"}, 2, 1e-4},
      {"conv2d_stride_dilation", "fn f(x: f32[N, 2, H, W], w: f32[3, 2, 2, 3]) where H >= 3, W >= 3 { return conv2d(x, w, stride=[2, 1], padding=[0, 1], dilation=2) }", {"N", "H", "W"}, 2, 1e-4, 3},
      {"conv2d_groups", "fn f(x: f32[N, 4, H, W], w: f32[4, 1, 3, 3]) { return conv2d(x, w, padding=1, groups=4) }", {"N", "H", "W"}, 2, 1e-4},
      // Not f32: the reduction (the padding its condition), on every target.
      {"conv2d_f64_reduction", "fn f(x: f64[N, 2, H, W], w: f64[3, 2, 3, 2]) { return conv2d(x, w, stride=2, padding=1) }", {"N", "H", "W"}, 2, 1e-9},
      {"conv2d_pointwise", "fn f(x: f32[N, C, H, W], w: f32[5, C, 1, 1]) { return conv2d(x, w) }", {"N", "C", "H", "W"}, 2, 1e-4},
      {"conv2d_two_groups", "fn f(x: f32[N, 4, H, W], w: f32[6, 2, 3, 2]) where W >= 2 { return conv2d(x, w, stride=[1, 3], padding=[2, 0], groups=2) }", {"N", "H", "W"}, 2, 1e-4, 2},
      {"conv2d_wide_window", "fn f(x: f32[N, 2, H, W], w: f32[3, 2, 5, 4]) { return conv2d(x, w, stride=3, padding=2) }", {"N", "H", "W"}, 2, 1e-4},
      // Pools: ResNet's stem window (3x3, stride 2, padding 1), windows of two sizes with the
      // default stride, padding excluded from and included in the average, integers, f16.
      {"max_pool2d", "fn f(x: f32[N, C, H, W]) { return max_pool2d(x, 3, stride=2, padding=1) }", {"N", "C", "H", "W"}},
      {"max_pool2d_no_pad", "fn f(x: f32[N, C, H, W]) where H >= 2, W >= 3 { return max_pool2d(x, [2, 3]) }", {"N", "C", "H", "W"}, 2, 2e-5, 3},
      {"max_pool2d_i32", "fn f(x: i32[N, C, H, W]) { return max_pool2d(x, [2, 3], stride=[1, 2], padding=[1, 2]) }", {"N", "C", "H", "W"}, 100},
      {"avg_pool2d", "fn f(x: f32[N, C, H, W]) { return avg_pool2d(x, 3, stride=2, padding=1) }", {"N", "C", "H", "W"}, 2, 1e-5},
      {"avg_pool2d_include_pad", "fn f(x: f32[N, C, H, W]) { return avg_pool2d(x, [3, 2], stride=1, padding=1, count_include_pad=true) }", {"N", "C", "H", "W"}, 2, 1e-5},
      {"avg_pool2d_f16", "fn f(x: f16[N, C, H, W]) where H >= 2, W >= 2 { return avg_pool2d(x, 2, padding=[0, 1]) }", {"N", "C", "H", "W"}, 2, 2e-5, 2},
      // Creation and shapes.
      {"arange", "fn f(x: f32[N]) { return cast(arange(0, N, 1), dtype=\"f32\") + x }", {"N"}},
      {"full_zeros", "fn f(x: f32[N, M]) { return x + full([N, M], 1.5) + zeros([M]) }", {"N", "M"}},
      {"shape_of", "fn f(x: f32[N, M, 3]) { return shape_of(x) }", {"N", "M"}},
      // The nn standard library.
      {"nn_relu", "import nn\nfn f(x: f32[B, S]) { return nn.relu(x) }", {"B", "S"}},
      {"nn_silu", "import nn\nfn f(x: f32[B, S]) { return nn.silu(x) }", {"B", "S"}},
      {"nn_gelu", "import nn\nfn f(x: f32[B, S]) { return nn.gelu(x) }", {"B", "S"}},
      {"nn_gelu_tanh", "import nn\nfn f(x: f32[B, S]) { return nn.gelu_tanh(x) }", {"B", "S"}},
      {"nn_softmax", "import nn\nfn f(x: f32[B, S, T]) { return nn.softmax(x * 4.0, axis=-1) }", {"B", "S", "T"}},
      {"nn_softmax_axis1", "import nn\nfn f(x: f32[B, S, T]) { return nn.softmax(x, axis=1) }", {"B", "S", "T"}},
      {"nn_log_softmax", "import nn\nfn f(x: f32[B, S]) { return nn.log_softmax(x, axis=-1) }", {"B", "S"}, 2, 1e-4},
      {"nn_layer_norm", "import nn\nfn f(x: f32[B, S, D], g: f32[D], b: f32[D]) { return nn.layer_norm(x, g, b) }", {"B", "S", "D"}, 2, 1e-3},
      {"nn_rms_norm", "import nn\nfn f(x: f32[B, D], g: f32[D]) { return nn.rms_norm(x, g) }", {"B", "D"}, 2, 1e-4},
      {"nn_linear", "import nn\nfn f(x: f32[B, K], w: f32[K, N], b: f32[N]) { return nn.linear(x, w, b) }", {"B", "K", "N"}, 2, 1e-4},
      {"nn_attention", "import nn\nfn f(q: f32[B, H, S, D], k: f32[B, H, T, D], v: f32[B, H, T, D]) { return nn.attention(q, k, v, scale=0.25) }", {"B", "H", "S", "T", "D"}, 2, 1e-4},
      {"nn_masked_attention", "import nn\nfn f(q: f32[B, H, S, D], k: f32[B, H, T, D], v: f32[B, H, T, D], keep: bool[B, 1, S, T]) { return nn.masked_attention(q, k, v, keep, scale=0.25) }", {"B", "H", "S", "T", "D"}, 2, 1e-4},
  };
}

} // namespace dsc::testing
