// The front end never crashes: random bytes, random token soup, mutated programs and
// pathologically deep nesting all end in diagnostics (or a module), nothing else.

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "LangTestUtil.h"
#include "lang/Ast.h"
#include "support/LargeStack.h"

namespace dsc::lang {
namespace {

using testing::parse;

const char* const kValidPrograms[] = {
    R"(import nn
fn layer(x: f32[B, S, 768], w: f32[768, 2304], b: f32[2304]) -> f32[B, S, 768]
  where B >= 1, 1 <= S <= 512
{
  let q, k, v = split(matmul(x, w) + b, 3, axis=-1)
  let qh = permute(reshape(q, [B, S, 12, 64]), [0, 2, 1, 3])
  let p = nn.softmax(matmul(qh, qh) * 0.125, axis=-1)
  let y: f32[B, S, 768] = if true { let t = q * 2; t } else { -k }
  return y
})",
    R"(prim add_relu(a: f32[n], b: f32[n]) -> (y: f32[n]) where n % 8 == 0 {
  parallel for i in 0..n {
    var acc: f32 = 0.0
    if i > 0 && a[i] >= 0.0 { acc = acc + a[i] } else { acc = exp(b[i]) }
    alloc t: f32[8] shared
    y[i] = max(select(acc > 1.0, acc, 1.0), cast(i, "f32"))
  }
})",
    R"(extern fn sgemm(a: f32[m, k], b: f32[k, n]) -> f32[m, n] where m >= 1 = "blas.sgemm"
fn g(x: tensor, axis: int = -1, eps: float = 1e-5, name: str = "n") { return (x, x[0]) })",
};

const char* const kTokens[] = {"import",
                               "fn",
                               "prim",
                               "extern",
                               "let",
                               "var",
                               "return",
                               "if",
                               "else",
                               "for",
                               "in",
                               "where",
                               "parallel",
                               "vectorize",
                               "unroll",
                               "alloc",
                               "local",
                               "shared",
                               "global",
                               "true",
                               "false",
                               "carry",
                               "while",
                               "x",
                               "B",
                               "f32",
                               "tensor",
                               "int",
                               "nn",
                               "0",
                               "1",
                               "768",
                               "0.5",
                               "1e-3",
                               "\"f16\"",
                               "->",
                               "..",
                               "==",
                               "!=",
                               "<=",
                               ">=",
                               "&&",
                               "||",
                               "[",
                               "]",
                               "(",
                               ")",
                               "{",
                               "}",
                               ",",
                               ":",
                               ";",
                               "=",
                               ".",
                               "?",
                               "+",
                               "-",
                               "*",
                               "/",
                               "%",
                               "<",
                               ">",
                               "!",
                               "#c\n",
                               "\n",
                               " ",
                               "\"",
                               "$",
                               "9999999999999999999999"};

TEST(Robustness, RandomBytes) {
  std::mt19937 rng(1234);
  for (int iter = 0; iter < 3000; ++iter) {
    std::uniform_int_distribution<int> len(0, 200);
    std::string text(static_cast<size_t>(len(rng)), '\0');
    for (char& c : text)
      c = static_cast<char>(rng() & 0xFF);
    auto p = parse(text);
    // Whatever happened, failure came with a diagnostic.
    EXPECT_TRUE(p->module.has_value() || p->diags.has_errors());
  }
}

TEST(Robustness, RandomTokenSoup) {
  std::mt19937 rng(42);
  std::uniform_int_distribution<size_t> pick(0, std::size(kTokens) - 1);
  for (int iter = 0; iter < 3000; ++iter) {
    std::uniform_int_distribution<int> len(0, 60);
    std::string text;
    for (int i = len(rng); i > 0; --i)
      text += std::string(kTokens[pick(rng)]) + " ";
    auto p = parse(text);
    EXPECT_TRUE(p->module.has_value() || p->diags.has_errors()) << text;
  }
}

TEST(Robustness, MutatedPrograms) {
  std::mt19937 rng(7);
  for (const char* program : kValidPrograms) {
    std::string base = program;
    // The unmutated programs are valid (all but the import, which has no stdlib here).
    for (int iter = 0; iter < 1500; ++iter) {
      std::string text = base;
      std::uniform_int_distribution<int> edits(1, 4);
      for (int e = edits(rng); e > 0 && !text.empty(); --e) {
        std::uniform_int_distribution<size_t> pos(0, text.size() - 1);
        size_t at = pos(rng);
        switch (rng() % 4) {
        case 0:
          text.erase(at, 1 + rng() % 8);
          break;
        case 1:
          text.insert(at, kTokens[rng() % std::size(kTokens)]);
          break;
        case 2:
          text[at] = static_cast<char>(rng() & 0xFF);
          break;
        default: {
          size_t other = pos(rng);
          std::swap(text[at], text[other]);
        }
        }
      }
      auto p = parse(text);
      EXPECT_TRUE(p->module.has_value() || p->diags.has_errors()) << text;
    }
  }
}

std::string repeat(const std::string& s, size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (size_t i = 0; i < n; ++i)
    out += s;
  return out;
}

void expect_too_deep(const std::string& text) {
  auto p = parse(text);
  EXPECT_FALSE(p->module);
  EXPECT_NE(p->printed().find("nesting is too deep"), std::string::npos)
      << p->printed().substr(0, 500);
  // One diagnostic for the depth, not one per level.
  EXPECT_LE(p->diags.error_count(), 3u);
}

TEST(Robustness, DeepParentheses) {
  size_t n = 100000;
  expect_too_deep("fn f(x: f32[B]) { return " + repeat("(", n) + "x" + repeat(")", n) + " }");
  expect_too_deep("fn f(x: f32[B]) { return " + repeat("(", n)); // never closed
  expect_too_deep("fn f(x: f32[B]) { return " + repeat("[", n));
  expect_too_deep(repeat("{", n));
}

TEST(Robustness, DeepOperatorChains) {
  size_t n = 30000;
  expect_too_deep("fn f(x: f32[B]) { return " + repeat("-", n) + "x }");
  expect_too_deep("fn f(x: f32[B]) { return " + repeat("!", n) + "x }");
  expect_too_deep("fn f(x: f32[B]) { return x" + repeat(" < x", n) + " }");
  expect_too_deep("fn f(x: f32[B]) { return f(" + repeat("f(", n) + ") }");
}

// A chain of binary operators of one level is one level of nesting however long, up to
// kMaxChainLength operators; the walkers recurse once per link, so it is parsed on the
// compiler's large stack, as dscc parses.
TEST(Robustness, LongOperatorChainsAreOneLevel) {
  const size_t n = 30000;
  for (const std::string& text :
       {"fn f(x: f32[B]) { return x" + repeat(" + x", n) + " }",
        "fn f(x: f32[B]) { return x" + repeat(" * 2.0 - x", n / 2) + " }",
        "fn f(x: f32[B" + repeat(" + B", n) + "]) { return x }",
        "fn f(x: f32[B]) where " + repeat("B + ", n) + "1 > 0 { return x }",
        "prim p(a: f32[n]) -> (y: f32[n]) { for i in 0..n { y[i] = a[i]" +
            repeat(" + a[i]", n) + " } }"}) {
    bool ok = on_large_stack([&] {
      auto p = parse(text);
      return p->module && p->diags.error_count() == 0;
    });
    EXPECT_TRUE(ok) << text.substr(0, 80);
  }
  const auto longest = static_cast<size_t>(lang::ast::kMaxChainLength);
  on_large_stack([&] {
    auto p = parse("fn f(x: f32[B]) { return x" + repeat(" + x", longest + 1) + " }");
    EXPECT_FALSE(p->module);
    EXPECT_NE(p->printed().find("chain of operators is too long"), std::string::npos)
        << p->printed().substr(0, 500);
    EXPECT_EQ(p->diags.error_count(), 1u);
  });
}

TEST(Robustness, DeepStatements) {
  size_t n = 5000;
  expect_too_deep("prim p(a: f32[n]) -> (y: f32[n]) {" + repeat(" for i in 0..n {", n) +
                  repeat("}", n) + "}");
  expect_too_deep("prim p(a: f32[n]) -> (y: f32[n]) {" + repeat(" if true {", n) + repeat("}", n) +
                  "}");
  // Statements get too deep before their braces do; a dropped loop keeps its prefix safe.
  for (const char* kind : {"parallel", "vectorize", "unroll"}) {
    expect_too_deep("prim p(a: f32[n]) -> (y: f32[n]) {" +
                    repeat(std::string(" ") + kind + " for i in 0..n {", 200) + repeat("}", 200) +
                    "}");
  }
  expect_too_deep("prim p(a: f32[n]) -> (y: f32[n]) {" + repeat(" if true { } else", 200) + " { }" +
                  "}");
  expect_too_deep("fn f(c: bool[]) { return " + repeat("if c { c } else ", n) + "{ c } }");
  expect_too_deep("fn f(x: " + repeat("(", n) + "f32[]" + repeat(",)", n) + ") { return x }");
}

TEST(Robustness, ModerateNestingIsFine) {
  size_t n = 100;
  auto p = parse("fn f(x: f32[B]) { return " + repeat("(", n) + "x" + repeat(")", n) +
                 repeat(" + x", n) + " }");
  EXPECT_TRUE(p->module) << p->printed().substr(0, 500);
  auto q = parse("prim p(a: f32[n]) -> (y: f32[n]) {" + repeat(" for i in 0..n {", 1) +
                 repeat(" if true {", 50) + " y[i] = a[i]" + repeat("}", 51) + "}");
  EXPECT_TRUE(q->module) << q->printed().substr(0, 500);
}

TEST(Robustness, LongFlatInputs) {
  // Long but flat: many statements, long lists, many parameters.
  std::string body;
  for (int i = 0; i < 5000; ++i)
    body += "let v" + std::to_string(i) + " = x + 1\n";
  auto p = parse("fn f(x: f32[B]) {\n" + body + "return x }");
  EXPECT_TRUE(p->module) << p->printed().substr(0, 500);
  auto q = parse("fn f(x: f32[B]) { return concat([" + repeat("x, ", 20000) + "x]) }");
  EXPECT_TRUE(q->module) << q->printed().substr(0, 500);
}

TEST(Robustness, ManyErrorsStayBounded) {
  // A file of garbage lines yields one diagnostic per line at most.
  std::string text = repeat("fn ) ( } { $ let\n", 2000);
  auto p = parse(text);
  EXPECT_FALSE(p->module);
  EXPECT_LE(p->diags.error_count(), 4000u);
}

} // namespace
} // namespace dsc::lang
