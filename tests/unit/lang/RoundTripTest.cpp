// Printing a parsed module gives .dsc text that parses back to a structurally equal module,
// and printing is a fixed point.

#include <string>

#include <gtest/gtest.h>

#include "LangTestUtil.h"
#include "ir/Printer.h"
#include "ir/StructuralEqual.h"

namespace dsc::lang {
namespace {

using testing::parse;

const char* const kPrograms[] = {
    R"(fn layer(x: f32[B, S, 768], w_qkv: f32[768, 2304], b_qkv: f32[2304], mask: f32[B, S])
    -> f32[B, S, 768]
  where B >= 1, 1 <= S <= 512, S % 8 == 0
{
  let q, k, v = split(matmul(x, w_qkv) + b_qkv, 3, axis=-1)
  let qh = permute(reshape(q, [B, S, 12, 64]), [0, 2, 1, 3])
  let kh = permute(reshape(k, [B, S, 12, 64]), [0, 2, 3, 1])
  let p = softmax(matmul(qh, kh) * 0.125 + reshape(mask, [B, 1, 1, S]), axis=-1)
  let a = reshape(permute(matmul(p, v), [0, 2, 1, 3]), [B, S, 768])
  return a - -1 + -(1) * (x / 2.5e-3) - -x
})",
    R"(fn ops(a: f32[B], b: f32[B], c: bool[B]) -> (bool[B], f32[B]) {
  let t1 = (a == b) != c
  let t2 = a < b && a <= b || !(a > b) && a >= b
  let t3 = 0 < a <= b
  let t4 = where(c, a, b)
  let t5 = cast(a, dtype="f16")
  let t6 = sum(a, axis=[0], keepdims=true)
  let t7 = concat([a, b], axis=0)
  let t8 = slice(a, axis=0, start=0, end=B - 1, step=1)
  let t9 = split(a, 2)
  let t10 = (t9[0], t9[1],)
  let t11 = (a,)
  let t12 = ()
  return (t2, t9[1])
})",
    R"(fn conds(c: bool[], a: f32[B], b: f32[B]) {
  let y = if c { a } else { b }
  let z = if c { let t = a * 2; t } else if c { b } else { let u = b + 1; let w = u * u; w }
  let n: i64[N, 1] = nonzero(a)
  let r = reshape(n, [N])
  return if c { y } else { z }
})",
    R"(fn attrs(x: tensor, axis: int = -1, eps: float = 1e-05, keep: bool = false,
    mode: str = "a\"b\\c", big: int = -9223372036854775808) {
  let y = reshape(x, [axis, -1])
  return x + eps
})",
    R"(fn anon(x: f32[?, ?], y: f32[_d0, 4]) -> f32[?] {
  let z: f32[?, _d1] = x
  return z
})",
    R"(prim add_relu(a: f32[n], b: f32[n]) -> (y: f32[n]) {
  parallel for i in 0..n {
    y[i] = max(a[i] + b[i], 0.0)
  }
})",
    R"(prim kitchen(a: f16[n, m], idx: i64[n], c: i32[n]) -> (y: f16[n], z: i32[n], w: f32[])
  where n >= 1, m % 4 == 0
{
  for i in 0..n {
    var acc: f16 = 0.0
    let base = i * m
    vectorize for j in 0..m {
      acc = acc + a[i, j] * 0.5
    }
    unroll for k in 1..4 {
      acc = acc - a[idx[i], k + 1]
    }
    if 0 < i && i < n - 1 {
      y[i] = select(acc > 1.0, acc, -acc)
    } else if i == 0 {
      y[i] = exp(acc) + sqrt(abs(acc))
    } else {
      y[i] = cast(base, "f16")
    }
    z[i] = c[i] * 2 + c[min(i + 1, n - 1)] % 3
    alloc t: f32[m] shared
    alloc u: i32[4]
    t[0] = pow(cast(acc, "f32"), 2.0)
    sync_threads()
  }
  w[] = -1.5
})",
    R"(extern fn sgemm(a: f32[m, k], b: f32[k, n]) -> f32[m, n] = "blas.sgemm"
extern fn conv(x: f32[N, C, H, W], w: f32[K, C, 3, 3]) -> f32[N, K, H, W]
  where H >= 3, W >= 3
  = "cudnn.conv2d"(stride = [1, 1], padding = [1, 1], dilation = [1, 1], groups = [1])
fn use(a: f32[m, k], b: f32[k, n]) { return sgemm(a, b) })",
};

class RoundTrip : public ::testing::TestWithParam<const char*> {};

TEST_P(RoundTrip, PrintThenParseIsTheSameModule) {
  auto first = parse(GetParam());
  ASSERT_TRUE(first->module) << first->printed();
  std::string text = ir::print_module(*first->module);
  auto second = parse(text);
  ASSERT_TRUE(second->module) << second->printed() << "\nprinted:\n" << text;
  EXPECT_TRUE(ir::structural_equal(*first->module, *second->module)) << text;
  EXPECT_EQ(text, ir::print_module(*second->module));
}

INSTANTIATE_TEST_SUITE_P(Programs, RoundTrip, ::testing::ValuesIn(kPrograms));

} // namespace
} // namespace dsc::lang
