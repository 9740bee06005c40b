// The printer's side of the round trip (RoundTripTest.cpp has the front end's): for each
// snippet, parse -> print -> parse gives a structurally equal module with the same hash, under
// both print options, and printing is a fixed point; hand-built IR in forms the front end never
// produces (clashing names, PrimBinary index arithmetic, nested Seqs) reads back equal too.

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>

#include "ir/Printer.h"
#include "ir/StructuralEqual.h"
#include "ir/Verifier.h"
#include "lang/Frontend.h"
#include "symbolic/Expr.h"
#include "tests/unit/ir/IRBuilders.h"

namespace dsc::lang {
namespace {

// A small stand-in for stdlib/nn.dsc, so that these tests exercise the printer
// and parser alone.
const char* const kNn = R"(
fn relu(x: tensor) -> tensor {
  return maximum(x, 0.0)
}
fn softmax(x: tensor, axis: int = -1) -> tensor {
  let shifted = x - max(x, axis=axis, keepdims=true)
  let e = exp(shifted)
  return e / sum(e, axis=axis, keepdims=true)
}
fn layer_norm(x: tensor, gamma: tensor, beta: tensor, eps: float = 1e-5) -> tensor {
  let mu = mean(x, axis=-1, keepdims=true)
  let centered = x - mu
  let variance = mean(centered * centered, axis=-1, keepdims=true)
  return centered * rsqrt(variance + eps) * gamma + beta
}
)";

// A directory holding kNn as nn.dsc, removed when the test binary exits.
class StdlibDir {
public:
  StdlibDir() {
    namespace fs = std::filesystem;
    path_ = fs::temp_directory_path() / ("dsc_roundtrip_stdlib_" + std::to_string(::getpid()));
    fs::create_directories(path_);
    std::ofstream(path_ / "nn.dsc") << kNn;
  }
  ~StdlibDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string path() const { return path_.string(); }

private:
  std::filesystem::path path_;
};

std::string stdlib_dir() {
  static const StdlibDir dir;
  return dir.path();
}

struct Parsed {
  std::optional<ir::Module> module;
  std::string errors;
};

Parsed parse(const std::string& text, const std::string& name) {
  SourceManager sources;
  uint32_t file = sources.add(name, text);
  DiagnosticEngine diags(sources);
  Parsed p;
  FrontendOptions options;
  options.stdlib_dirs = {stdlib_dir()};
  p.module = parse_module(sources, file, diags, options);
  std::ostringstream os;
  diags.print(os);
  p.errors = os.str();
  return p;
}

::testing::AssertionResult round_trips(const std::string& source,
                                       const ir::PrintOptions& options = {}) {
  Parsed first = parse(source, "source.dsc");
  if (!first.module)
    return ::testing::AssertionFailure() << "the source does not parse:\n" << first.errors;
  std::vector<std::string> problems = ir::verify(*first.module);
  if (!problems.empty())
    return ::testing::AssertionFailure() << "the parsed module fails the verifier: " << problems[0];
  std::string printed = ir::print_module(*first.module, options);
  Parsed second = parse(printed, "printed.dsc");
  if (!second.module)
    return ::testing::AssertionFailure() << "the printed text does not parse:\n"
                                         << second.errors << "--- printed:\n"
                                         << printed;
  if (!ir::structural_equal(*first.module, *second.module))
    return ::testing::AssertionFailure() << "reparsing the printed text gives another module; "
                                            "printed:\n"
                                         << printed << "--- reprinted:\n"
                                         << ir::print_module(*second.module, options);
  if (ir::structural_hash(*first.module) != ir::structural_hash(*second.module))
    return ::testing::AssertionFailure() << "equal modules hash differently:\n" << printed;
  std::string reprinted = ir::print_module(*second.module, options);
  if (reprinted != printed)
    return ::testing::AssertionFailure() << "printing is not a fixed point:\n"
                                         << printed << "--- then:\n"
                                         << reprinted;
  return ::testing::AssertionSuccess();
}

class PrinterRoundTripTest : public ::testing::TestWithParam<const char*> {};

TEST_P(PrinterRoundTripTest, PrintParsePrint) {
  EXPECT_TRUE(round_trips(GetParam()));
  ir::PrintOptions bare;
  bare.show_inferred_types = false;
  EXPECT_TRUE(round_trips(GetParam(), bare));
}

const char* const kSnippets[] = {
    // Generic functions with attribute parameters and defaults.
    kNn,
    // The docs' MLP.
    R"(import nn
fn mlp(x: f32[B, 784], w1: f32[784, 256], b1: f32[256], w2: f32[256, 10], b2: f32[10])
    -> f32[B, 10]
  where B >= 1
{
  let h = nn.relu(matmul(x, w1) + b1)
  return nn.softmax(matmul(h, w2) + b2, axis=-1)
})",
    // Attention pieces: destructuring, reshape/permute lists, floats, kwargs.
    R"(import nn
fn layer(x: f32[B, S, 768], mask: f32[B, S], w_qkv: f32[768, 2304], b_qkv: f32[2304],
         g1: f32[768], e1: f32[768]) -> f32[B, S, 768]
  where B >= 1, 1 <= S <= 512
{
  let q, k, v = split(matmul(x, w_qkv) + b_qkv, 3, axis=-1)
  let qh = permute(reshape(q, [B, S, 12, 64]), [0, 2, 1, 3])
  let kh = permute(reshape(k, [B, S, 12, 64]), [0, 2, 3, 1])
  let vh = permute(reshape(v, [B, S, 12, 64]), [0, 2, 1, 3])
  let p = nn.softmax(matmul(qh, kh) * 0.125 + reshape(mask, [B, 1, 1, S]), axis=-1)
  let a = reshape(permute(matmul(p, vh), [0, 2, 1, 3]), [B, S, 768])
  return nn.layer_norm(x + a, g1, e1, eps=1e-12)
})",
    // Precedence and parentheses.
    R"(fn ops(a: f32[N], b: f32[N], c: f32[N]) -> f32[N] {
  let s = (a + b) * c - a / (b - c) + -a * b
  let t = a - (b - c) - -(1) * a
  let u = a * -2.5 + (-1.0) * b
  let m = (a < b) == (b < c)
  let l = a < b && b <= c || !(a >= c) && !(a != b)
  let w = where(l, s, t)
  return -(w + u)
})",
    // Comparison chains, literals of every kind, strings with escapes.
    R"(fn lits(x: f32[N], flag: bool = true, name: str = "a\"b\\c", eps: float = 1e-05,
           axis: int = -2) -> i64[N] {
  let c = 0 < x <= 1.5
  let y = cast(x, dtype="f16")
  let z = full([N, 2], 3.0e+2, dtype="f32")
  let k = arange(0, N, step=1, dtype="i64")
  return k
})",
    // Tuples, indexing, lists, `if` with bindings, `else if`, asserted types.
    R"(fn control(c: bool[], d: bool[], x: f32[B, 4], y: f32[B, 4]) -> (f32[B, 4], f32[B, 4]) {
  let t = (x, y)
  let one = (x,)
  let first = t[0]
  let cat = concat([x, y, one[0]], axis=0)
  let n: i64[M, 2] = nonzero(x)
  let r = if c {
    let s = x * 2.0
    s + first
  } else if d {
    y
  } else {
    let u = exp(y);
    -u
  }
  let q = if c { x } else { y }
  return (r, q + (if d { x } else { y }))
})",
    // Loops: a growing carry, a run-time end with its bound, conditions simple and not.
    R"(fn loops(x: f32[T, D], y: f32[1, D], n: i64[], s: f32[N]) -> tensor {
  let c = for i in 0..N carry (cache: f32[T + i, D] = x) {
    concat([cache, y], axis=0)
  }
  let a, b = for j in 1..n where j < 64 carry (a = y, b: f32[j, D] = y) while sum(a) < 3.0 {
    let a2 = a * 2.0
    (a2, concat([b, a2], axis=0))
  }
  let z = for k in 0..N carry (z = y) while {
    let m = max(z)
    m < 1.0
  } {
    for i in 0..T carry (w = z) { w + 1.0 }
  }
  return (c, a, b, z)
})",
    // Anonymous dims and dims as values.
    R"(fn anon(x: f32[?, 4], y: f32[?, ?], z: f32[_d0, _d2]) -> f32[_d0, 4] {
  let s = slice(x, axis=0, start=0, end=_d0 - 1, step=1)
  let p = pad(x, [0, 1, 2, 3], value=0.0)
  return x
})",
    // Prims with every statement.
    R"(prim add_relu(a: f32[n], b: f32[n]) -> (y: f32[n]) {
  parallel for i in 0..n {
    y[i] = max(a[i] + b[i], 0.0)
  }
})",
    R"(prim stmts(a: f32[n, 64], idx: i64[n]) -> (y: f32[n], z: f32[])
  where n % 8 == 0
{
  alloc t: f32[64] local
  alloc s: f16[n, 2] shared
  for i in 1..n {
    var acc: f32 = 0.0
    vectorize for j in 0..64 {
      acc = acc + a[i, j] * -1.5
    }
    let h: f16 = cast(acc, "f16")
    let k: i64 = idx[i] % 4
    if acc > 0.0 && !(k == 2) {
      y[i] = acc
    } else if acc < -1.0 {
      y[i] = exp(-acc)
    } else {
      y[i] = select(acc == 0.0, min(acc, 1.0), pow(acc, 2.0))
    }
    t[i % 64] = a[i, (i + 1) * 2 % 64]
  }
  unroll for k in 0..4 {
    z[] = -(1.0) + sqrt(t[k * 16])
  }
})",
    // Anonymous dims in prim and extern signatures.
    R"(prim anon(a: f32[?, 4], b: f32[_d0, ?]) -> (y: f32[_d1, ?]) {
  for i in 0.._d0 {
    y[min(i, _d1 - 1), 0] = a[i, 0] + b[i, 0]
  }
}
extern fn ext(a: f32[?, ?], b: f32[_d1]) -> f32[_d0] = "lib.ext")",
    // Externs.
    R"(extern fn sgemm(a: f32[m, k], b: f32[k, n]) -> f32[m, n] = "blas.sgemm"
extern fn gemv(a: f32[m, k], x: f32[k]) -> f32[m] where k >= 1 = "blas.sgemv")",
};

INSTANTIATE_TEST_SUITE_P(Snippets, PrinterRoundTripTest, ::testing::ValuesIn(kSnippets));

// IR built by hand, in forms the front end never produces itself, still prints
// as text that reads back structurally equal.
TEST(PrinterRoundTripBuiltTest, HandBuiltModule) {
  using namespace ir::test;
  using symbolic::sym;
  ir::Module m;
  {
    ir::VarRef c = var("c", ir::Type::scalar(ir::DType::Bool));
    ir::VarRef x = var("x", f32({sym("_d0"), 4}));
    ir::VarRef axis = var("axis", ir::Type::of_kind(ir::Type::Kind::Int));
    // Clashing, reserved and invalid names; results that need a `;`; neg of
    // literals.
    ir::VarRef y1 = var("y", f32({sym("_d0"), 4})), y2 = var("y"), sym_name = var("_d0");
    ir::VarRef callee_name = var("exp"), odd = var("a.b"), t = var("t");
    ir::Expr branch = ir::If::make(c, block({let(t, call("exp", {x}))}, call("neg", {t})),
                                   block({}, call("neg", {lit(int64_t{1})})));
    ir::Expr body =
        block({let(y1, call("add", {x, lit(int64_t{-1})})), let(y2, call("mul", {y1, lit(-0.5)})),
               let(sym_name, branch), let(callee_name, call("exp", {sym_name})),
               let(odd, call("sum", {callee_name}, {kw("axis", axis), kw("keepdims", lit(true))}))},
              ir::Tuple::make({odd, y2}));
    m.add(function("f", {c, x, axis}, ir::Type::unknown(), body, {symbolic::le(1, sym("_d0"))},
                   {ir::Expr(), ir::Expr(), lit(int64_t{-1})}));
  }
  {
    // Index arithmetic built from PrimBinary and IntImm, a one-statement loop
    // body, nested Seqs.
    ir::PrimExpr i = idx(sym("i"));
    ir::PrimExpr at = bin(ir::BinaryOp::Add,
                          bin(ir::BinaryOp::Mul, i, ir::IntImm::make(ir::DType::I64, 2)), idx(1));
    ir::Stmt store = ir::Store::make("y", {at}, load("a", {i}));
    ir::Stmt loop = ir::For::make("i", 0, sym("n"), ir::ForKind::Parallel, store);
    m.add(prim("p", {buffer("a", {sym("n")})}, {buffer("y", {2 * sym("n") + 1})},
               ir::Seq::make({ir::Seq::make({loop})})));
  }
  std::string printed = ir::print_module(m);
  Parsed back = parse(printed, "built.dsc");
  ASSERT_TRUE(back.module) << back.errors << "--- printed:\n" << printed;
  EXPECT_TRUE(ir::structural_equal(m, *back.module)) << printed << "--- reprinted:\n"
                                                     << ir::print_module(*back.module);
  EXPECT_EQ(ir::structural_hash(m), ir::structural_hash(*back.module));
  // The reparsed module is in the front end's own forms; from there printing is a fixed point.
  std::string canonical = ir::print_module(*back.module);
  Parsed again = parse(canonical, "canonical.dsc");
  ASSERT_TRUE(again.module) << again.errors;
  EXPECT_EQ(ir::print_module(*again.module), canonical);
}

} // namespace
} // namespace dsc::lang
