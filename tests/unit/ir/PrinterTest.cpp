#include "ir/Printer.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "symbolic/Expr.h"
#include "tests/unit/ir/IRBuilders.h"

namespace dsc::ir {
namespace {

using symbolic::sym;
using namespace test;

class PrinterTest : public ::testing::Test {
protected:
  VarRef a = var("a"), b = var("b"), c = var("c"), d = var("d");
};

// ---------------------------------------------------------------- graph expressions

TEST_F(PrinterTest, AtomsAndCalls) {
  EXPECT_EQ(to_string(Expr(a)), "a");
  EXPECT_EQ(to_string(lit(int64_t{768})), "768");
  EXPECT_EQ(to_string(lit(int64_t{-3})), "-3");
  EXPECT_EQ(to_string(lit(true)), "true");
  EXPECT_EQ(to_string(lit(false)), "false");
  EXPECT_EQ(to_string(StringImm::make("f16")), "\"f16\"");
  EXPECT_EQ(to_string(StringImm::make("a\"b\\c")), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(to_string(ShapeExpr::make({sym("B"), sym("S") * 12, 64})), "[B, S*12, 64]");
  EXPECT_EQ(to_string(ShapeExpr::make({})), "[]");
  EXPECT_EQ(to_string(ListExpr::make({a, b})), "[a, b]");
  EXPECT_EQ(to_string(call("matmul", {a, b})), "matmul(a, b)");
  EXPECT_EQ(to_string(call("nn.softmax", {a}, {{"axis", lit(int64_t{-1}), {}}})),
            "nn.softmax(a, axis=-1)");
  EXPECT_EQ(to_string(call("concat", {ListExpr::make({a, b})}, {{"axis", lit(int64_t{1}), {}}})),
            "concat([a, b], axis=1)");
  EXPECT_EQ(to_string(call("zeros", {},
                           {{"shape", ShapeExpr::make({sym("B")}), {}},
                            {"dtype", StringImm::make("f16"), {}}})),
            "zeros(shape=[B], dtype=\"f16\")");
  EXPECT_EQ(to_string(call("sum", {a},
                           {{"axis", ShapeExpr::make({1, 2}), {}}, {"keepdims", lit(true), {}}})),
            "sum(a, axis=[1, 2], keepdims=true)");
  EXPECT_EQ(to_string(Tuple::make({a, b})), "(a, b)");
  EXPECT_EQ(to_string(Tuple::make({a})), "(a,)");
  EXPECT_EQ(to_string(Tuple::make({})), "()");
  EXPECT_EQ(to_string(GetItem::make(a, 0)), "a[0]");
  EXPECT_EQ(to_string(GetItem::make(call("split", {a, lit(int64_t{2})}), 1)), "split(a, 2)[1]");
  EXPECT_EQ(to_string(GetItem::make(GetItem::make(a, 1), 0)), "a[1][0]");
}

TEST_F(PrinterTest, InfixOperators) {
  EXPECT_EQ(to_string(call("add", {a, b})), "a + b");
  EXPECT_EQ(to_string(call("sub", {a, b})), "a - b");
  EXPECT_EQ(to_string(call("mul", {a, b})), "a * b");
  EXPECT_EQ(to_string(call("div", {a, b})), "a / b");
  EXPECT_EQ(to_string(call("mod", {a, b})), "a % b");
  EXPECT_EQ(to_string(call("eq", {a, b})), "a == b");
  EXPECT_EQ(to_string(call("ne", {a, b})), "a != b");
  EXPECT_EQ(to_string(call("lt", {a, b})), "a < b");
  EXPECT_EQ(to_string(call("le", {a, b})), "a <= b");
  EXPECT_EQ(to_string(call("gt", {a, b})), "a > b");
  EXPECT_EQ(to_string(call("ge", {a, b})), "a >= b");
  EXPECT_EQ(to_string(call("logical_and", {a, b})), "a && b");
  EXPECT_EQ(to_string(call("logical_or", {a, b})), "a || b");
  EXPECT_EQ(to_string(call("neg", {a})), "-a");
  EXPECT_EQ(to_string(call("logical_not", {a})), "!a");
  // Anything but exactly two positional arguments is an ordinary call.
  EXPECT_EQ(to_string(call("add", {a, b}, {{"alpha", lit(int64_t{1}), {}}})), "add(a, b, alpha=1)");
  EXPECT_EQ(to_string(call("add", {a, b, c})), "add(a, b, c)");
  EXPECT_EQ(to_string(call("add", {a})), "add(a)");
  EXPECT_EQ(to_string(call("neg", {a, b})), "neg(a, b)");
  EXPECT_EQ(to_string(call("pow", {a, b})), "pow(a, b)");
}

TEST_F(PrinterTest, Precedence) {
  auto add = [&](Expr x, Expr y) { return call("add", {x, y}); };
  auto sub = [&](Expr x, Expr y) { return call("sub", {x, y}); };
  auto mul = [&](Expr x, Expr y) { return call("mul", {x, y}); };
  auto div = [&](Expr x, Expr y) { return call("div", {x, y}); };
  auto lt = [&](Expr x, Expr y) { return call("lt", {x, y}); };
  auto eq = [&](Expr x, Expr y) { return call("eq", {x, y}); };
  auto land = [&](Expr x, Expr y) { return call("logical_and", {x, y}); };
  auto lor = [&](Expr x, Expr y) { return call("logical_or", {x, y}); };
  auto neg = [&](Expr x) { return call("neg", {x}); };
  auto lnot = [&](Expr x) { return call("logical_not", {x}); };

  EXPECT_EQ(to_string(add(mul(a, b), c)), "a * b + c");
  EXPECT_EQ(to_string(add(a, mul(b, c))), "a + b * c");
  EXPECT_EQ(to_string(mul(add(a, b), c)), "(a + b) * c");
  EXPECT_EQ(to_string(mul(a, add(b, c))), "a * (b + c)");
  // Left associative: the right operand of the same level keeps its parentheses.
  EXPECT_EQ(to_string(sub(sub(a, b), c)), "a - b - c");
  EXPECT_EQ(to_string(sub(a, sub(b, c))), "a - (b - c)");
  EXPECT_EQ(to_string(add(a, add(b, c))), "a + (b + c)");
  EXPECT_EQ(to_string(div(div(a, b), c)), "a / b / c");
  EXPECT_EQ(to_string(div(a, mul(b, c))), "a / (b * c)");
  EXPECT_EQ(to_string(call("mod", {mul(a, b), c})), "a * b % c");
  EXPECT_EQ(to_string(call("mod", {a, mul(b, c)})), "a % (b * c)");
  EXPECT_EQ(to_string(mul(div(a, b), c)), "a / b * c");
  // Comparisons never chain without parentheses.
  EXPECT_EQ(to_string(lt(add(a, b), mul(c, d))), "a + b < c * d");
  EXPECT_EQ(to_string(lt(lt(a, b), c)), "(a < b) < c");
  EXPECT_EQ(to_string(eq(a, lt(b, c))), "a == (b < c)");
  EXPECT_EQ(to_string(land(lt(a, b), lt(c, d))), "a < b && c < d");
  EXPECT_EQ(to_string(lor(land(a, b), c)), "a && b || c");
  EXPECT_EQ(to_string(land(lor(a, b), c)), "(a || b) && c");
  EXPECT_EQ(to_string(lor(a, land(b, c))), "a || b && c");
  EXPECT_EQ(to_string(land(a, land(b, c))), "a && (b && c)");
  // Prefix operators.
  EXPECT_EQ(to_string(neg(add(a, b))), "-(a + b)");
  EXPECT_EQ(to_string(mul(neg(a), b)), "-a * b");
  EXPECT_EQ(to_string(mul(a, neg(b))), "a * (-b)");
  EXPECT_EQ(to_string(sub(a, neg(b))), "a - (-b)");
  EXPECT_EQ(to_string(neg(neg(a))), "-(-a)");
  EXPECT_EQ(to_string(lnot(lt(a, b))), "!(a < b)");
  EXPECT_EQ(to_string(lnot(lnot(a))), "!!a");
  EXPECT_EQ(to_string(lnot(neg(a))), "!(-a)");
  EXPECT_EQ(to_string(neg(GetItem::make(a, 0))), "-a[0]");
  EXPECT_EQ(to_string(neg(call("exp", {a}))), "-exp(a)");
  // Negative literals versus negated ones.
  EXPECT_EQ(to_string(neg(lit(int64_t{1}))), "-(1)");
  EXPECT_EQ(to_string(neg(lit(0.5))), "-(0.5)");
  EXPECT_EQ(to_string(neg(lit(int64_t{-1}))), "-(-1)");
  EXPECT_EQ(to_string(add(a, lit(int64_t{-1}))), "a + (-1)");
  EXPECT_EQ(to_string(mul(lit(-0.5), a)), "-0.5 * a");
  EXPECT_EQ(to_string(mul(a, lit(0.125))), "a * 0.125");
  EXPECT_EQ(to_string(lt(a, lit(int64_t{-1}))), "a < -1");
  EXPECT_EQ(to_string(land(a, neg(b))), "a && -b");
  // Postfix binds tightest.
  EXPECT_EQ(to_string(GetItem::make(add(a, b), 0)), "(a + b)[0]");
  EXPECT_EQ(to_string(GetItem::make(neg(a), 0)), "(-a)[0]");
  EXPECT_EQ(to_string(GetItem::make(Tuple::make({a, b}), 1)), "(a, b)[1]");
  // Arguments and list items need no parentheses.
  EXPECT_EQ(to_string(call("f", {add(a, b), lor(a, b)})), "f(a + b, a || b)");
  EXPECT_EQ(to_string(Tuple::make({add(a, b), neg(c)})), "(a + b, -c)");
}

TEST_F(PrinterTest, IfExpressions) {
  Expr simple = If::make(a, block({}, b), block({}, c));
  EXPECT_EQ(to_string(simple), "if a { b } else { c }");
  EXPECT_EQ(to_string(call("add", {simple, d})), "(if a { b } else { c }) + d");
  EXPECT_EQ(to_string(call("add", {d, simple})), "d + (if a { b } else { c })");
  EXPECT_EQ(to_string(call("f", {simple})), "f(if a { b } else { c })");

  VarRef t = var("t", f32({sym("B")}));
  Expr with_let = If::make(call("lt", {a, b}),
                           block({let(t, call("mul", {a, lit(int64_t{2})}))}, t), block({}, b));
  EXPECT_EQ(to_string(with_let), "if a < b {\n"
                                 "  let t = a * 2  # f32[B]\n"
                                 "  t\n"
                                 "} else {\n"
                                 "  b\n"
                                 "}");
}

// ---------------------------------------------------------------- functions

TEST_F(PrinterTest, FunctionGolden) {
  VarRef x = var("x", f32({sym("B"), 768}));
  VarRef bias = var("b", f32({768}));
  VarRef axis = var("axis", Type::of_kind(Type::Kind::Int));
  VarRef y = var("y", f32({sym("B"), 768}));
  Expr body = block({let(y, call("add", {x, bias}))}, y);
  Ref<Function> f = function("f", {x, bias, axis}, f32({sym("B"), 768}), body,
                             {symbolic::ge(sym("B"), 1), symbolic::le(sym("S"), 512)},
                             {Expr(), Expr(), lit(int64_t{-1})});
  EXPECT_EQ(print_function(*f), "fn f(x: f32[B, 768], b: f32[768], axis: int = -1) -> f32[B, 768]\n"
                                "  where 1 <= B, S <= 512\n"
                                "{\n"
                                "  let y = x + b  # f32[B, 768]\n"
                                "  return y\n"
                                "}\n");
  PrintOptions no_types;
  no_types.show_inferred_types = false;
  EXPECT_EQ(print_function(*f, no_types),
            "fn f(x: f32[B, 768], b: f32[768], axis: int = -1) -> f32[B, 768]\n"
            "  where 1 <= B, S <= 512\n"
            "{\n"
            "  let y = x + b\n"
            "  return y\n"
            "}\n");
}

TEST_F(PrinterTest, FunctionWithoutWhereOrReturnType) {
  VarRef x = var("x", Type::of_kind(Type::Kind::Any));
  VarRef eps = var("eps", Type::of_kind(Type::Kind::Float));
  VarRef name = var("name", Type::of_kind(Type::Kind::Str));
  VarRef flag = var("flag", Type::of_kind(Type::Kind::Bool));
  VarRef y = var("y"); // no inferred type: no comment
  Ref<Function> f =
      function("g", {x, eps, name, flag}, Type::unknown(), block({let(y, call("exp", {x}))}, y), {},
               {Expr(), lit(1e-12), StringImm::make("f16"), lit(false)});
  EXPECT_EQ(print_function(*f),
            "fn g(x: tensor, eps: float = 1e-12, name: str = \"f16\", flag: bool = false) {\n"
            "  let y = exp(x)\n"
            "  return y\n"
            "}\n");
}

TEST_F(PrinterTest, BindingForms) {
  VarRef x = var("x", f32({sym("B"), 12}));
  VarRef q = var("q", f32({sym("B"), 4})), k = var("k", f32({sym("B"), 4})),
         v = var("v", f32({sym("B"), 4}));
  VarRef n = var("n", Type::tensor(DType::I64, {sym("N"), 2}));
  VarRef t = var("t", Type::tuple({f32({sym("B")}), f32({sym("B")})}));
  Binding destructure{
      {q, k, v}, call("split", {x, lit(int64_t{3})}, {{"axis", lit(int64_t{-1}), {}}}), false, {}};
  Binding asserted{{n}, call("nonzero", {x}), true, {}};
  Expr body = block({destructure, asserted, let(t, Tuple::make({q, k}))}, call("add", {q, v}));
  Ref<Function> f = function("h", {x}, Type::unknown(), body);
  EXPECT_EQ(print_function(*f), "fn h(x: f32[B, 12]) {\n"
                                "  let q, k, v = split(x, 3, axis=-1)  # f32[B, 4], f32[B, 4], "
                                "f32[B, 4]\n"
                                "  let n: i64[N, 2] = nonzero(x)\n"
                                "  let t = (q, k)  # (f32[B], f32[B])\n"
                                "  return q + v\n"
                                "}\n");
}

TEST_F(PrinterTest, IfInFunctionBody) {
  VarRef cond = var("c", Type::scalar(DType::Bool));
  VarRef x = var("x", f32({sym("N")}));
  VarRef t = var("t", f32({sym("N")}));
  VarRef u = var("u", f32({sym("N")}));
  VarRef z = var("z", f32({sym("N")}));
  Expr inner = If::make(cond, block({let(u, call("exp", {x}))}, u), block({}, x));
  Expr branchy = If::make(cond, block({let(t, call("mul", {x, lit(2.0)}))}, t), block({}, inner));
  Ref<Function> f = function("k", {cond, x}, f32({sym("N")}), block({let(z, branchy)}, z));
  EXPECT_EQ(print_function(*f), "fn k(c: bool[], x: f32[N]) -> f32[N] {\n"
                                "  let z = if c {\n"
                                "    let t = x * 2.0  # f32[N]\n"
                                "    t\n"
                                "  } else if c {\n"
                                "    let u = exp(x)  # f32[N]\n"
                                "    u\n"
                                "  } else {\n"
                                "    x\n"
                                "  }  # f32[N]\n"
                                "  return z\n"
                                "}\n");
}

TEST_F(PrinterTest, BranchResultsThatWouldContinueALetGetASemicolon) {
  VarRef cond = var("c", Type::scalar(DType::Bool));
  VarRef x = var("x", f32({4}));
  auto branch_with = [&](Expr result) {
    VarRef t = var("t");
    return If::make(cond, block({let(t, call("exp", {x}))}, result), block({}, x));
  };
  auto printed = [&](Expr e) {
    VarRef z = var("z");
    return print_function(*function("f", {cond, x}, Type::unknown(), block({let(z, e)}, z)));
  };
  EXPECT_EQ(printed(branch_with(call("neg", {x}))), "fn f(c: bool[], x: f32[4]) {\n"
                                                    "  let z = if c {\n"
                                                    "    let t = exp(x);\n"
                                                    "    -x\n"
                                                    "  } else {\n"
                                                    "    x\n"
                                                    "  }\n"
                                                    "  return z\n"
                                                    "}\n");
  EXPECT_NE(printed(branch_with(Tuple::make({x, x}))).find("let t = exp(x);\n    (x, x)\n"),
            std::string::npos);
  EXPECT_NE(printed(branch_with(ListExpr::make({x}))).find("let t = exp(x);\n    [x]\n"),
            std::string::npos);
  EXPECT_NE(printed(branch_with(lit(int64_t{-1}))).find("let t = exp(x);\n    -1\n"),
            std::string::npos);
  // The `;` goes before the type comment.
  VarRef typed_t = var("t", f32({4}));
  Expr typed =
      If::make(cond, block({let(typed_t, call("exp", {x}))}, call("neg", {typed_t})), block({}, x));
  EXPECT_NE(printed(typed).find("let t = exp(x);  # f32[4]\n    -t\n"), std::string::npos);
  // Other results need none.
  EXPECT_NE(printed(branch_with(call("add", {x, x}))).find("let t = exp(x)\n    x + x\n"),
            std::string::npos);
}

TEST_F(PrinterTest, AnonymousDimsPrintAsQuestionMarksInReadingOrder) {
  // The front end names a signature's `?` dims _d0, _d1, ... as it reads them: a symbol prints
  // as `?` only where reading `?` would give it back.
  symbolic::Expr d0 = sym("_d0"), d1 = sym("_d1"), d12 = sym("_d12");
  VarRef x = var("x", f32({d0, 4}));
  VarRef y = var("y", f32({d0, d12, d1}));
  VarRef z = var("z", f32({d0 + 1, d1}));
  Ref<Function> f = function("anon", {x, y, z}, f32({d0}), block({}, x));
  EXPECT_EQ(print_function(*f),
            "fn anon(x: f32[?, 4], y: f32[_d0, _d12, ?], z: f32[_d0 + 1, _d1]) -> f32[_d0] {\n"
            "  return x\n"
            "}\n");
  // Prims read inputs, then outputs.
  Ref<PrimFunc> p = prim("p", {buffer("a", {d0})}, {buffer("y", {d0, d1})}, Seq::make({}));
  EXPECT_EQ(print_prim(*p), "prim p(a: f32[?]) -> (y: f32[_d0, ?]) {\n}\n");
  // Outside a signature the names are kept.
  EXPECT_EQ(to_string(ShapeExpr::make({d0})), "[_d0]");
}

TEST_F(PrinterTest, LetNamesAvoidSymbolsAndCallees) {
  VarRef x = var("x", f32({sym("B")}));
  VarRef big_b = var("B"), e = var("exp"), n = var("N", f32({sym("N")})), keep = var("_");
  Binding asserted{{n}, call("nonzero", {x}), true, {}};
  Expr body =
      block({let(big_b, call("exp", {x})), let(e, big_b), asserted, let(keep, x), let(var("_"), x)},
            call("reshape", {e, ShapeExpr::make({sym("S")})}));
  Ref<Function> f = function("f", {x}, Type::unknown(), body);
  EXPECT_EQ(print_function(*f), "fn f(x: f32[B]) {\n"
                                "  let B_1 = exp(x)\n"
                                "  let exp_1 = B_1\n"
                                "  let N_1: f32[N] = nonzero(x)\n"
                                "  let _ = x\n"
                                "  let _ = x\n"
                                "  return reshape(exp_1, [S])\n"
                                "}\n");
}

TEST_F(PrinterTest, ClashingAndInvalidVarNamesAreMadeDistinct) {
  VarRef x = var("x", f32({4}));
  VarRef y1 = var("y"), y2 = var("y"), y3 = var("y_1"), kw = var("for"), odd = var("0:weird");
  Expr body = block({let(y1, call("exp", {x})), let(y2, call("exp", {y1})),
                     let(y3, call("exp", {y2})), let(kw, y3), let(odd, kw)},
                    odd);
  Ref<Function> f = function("names", {x}, Type::unknown(), body);
  EXPECT_EQ(print_function(*f), "fn names(x: f32[4]) {\n"
                                "  let y = exp(x)\n"
                                "  let y_1 = exp(y)\n"
                                "  let y_1_1 = exp(y_1)\n"
                                "  let for_ = y_1_1\n"
                                "  let _0_weird = for_\n"
                                "  return _0_weird\n"
                                "}\n");
}

// ---------------------------------------------------------------- prims

TEST_F(PrinterTest, PrimGolden) {
  auto* p = new PrimFunc;
  Ref<PrimFunc> keep(p);
  p->name = "add_relu";
  p->inputs = {buffer("a", {sym("n")}), buffer("b", {sym("n")})};
  p->outputs = {buffer("y", {sym("n")})};
  PrimExpr i = idx(sym("i"));
  Stmt store = Store::make(
      "y", {i},
      PrimBinary::make(BinaryOp::Max,
                       PrimBinary::make(BinaryOp::Add, load("a", {i}), load("b", {i})), fimm(0.0)));
  p->body = Seq::make({For::make("i", 0, sym("n"), ForKind::Parallel, Seq::make({store}))});
  EXPECT_EQ(print_prim(*p), "prim add_relu(a: f32[n], b: f32[n]) -> (y: f32[n]) {\n"
                            "  parallel for i in 0..n {\n"
                            "    y[i] = max(a[i] + b[i], 0.0)\n"
                            "  }\n"
                            "}\n");
}

TEST_F(PrinterTest, PrimStatements) {
  auto* p = new PrimFunc;
  Ref<PrimFunc> keep(p);
  p->name = "stmts";
  p->inputs = {buffer("a", {sym("n"), 64})};
  p->outputs = {buffer("y", {sym("n")}), buffer("z", {})};
  p->where = {WhereClause{symbolic::eq(symbolic::floormod(sym("n"), 8), 0), {}}};
  symbolic::Expr i = sym("i"), j = sym("j");
  PrimExpr acc = LocalRef::make(DType::F32, "acc");
  Stmt inner = For::make(
      "j", 0, 64, ForKind::Vectorized,
      Assign::make("acc", PrimBinary::make(BinaryOp::Add, acc, load("a", {idx(i), idx(j)}))));
  Stmt cond =
      IfStmt::make(PrimBinary::make(BinaryOp::GT, acc, fimm(0.0)), Store::make("y", {idx(i)}, acc),
                   Store::make("y", {idx(i)}, Intrinsic::make(DType::F32, "exp", {acc})));
  Stmt body = Seq::make({
      LocalDecl::make("acc", DType::F32, true, fimm(0.0)),
      inner,
      LocalDecl::make("h", DType::F16, false, Cast::make(DType::F16, acc)),
      cond,
      IfStmt::make(PrimBinary::make(BinaryOp::EQ, idx(i), idx(0)), Store::make("z", {}, fimm(-1.5)),
                   Stmt()),
  });
  p->body = Seq::make({
      Alloc::make("t", DType::F32, {64}, MemoryScope::Local),
      Alloc::make("s", DType::F16, {sym("n"), 2}, MemoryScope::Shared),
      For::make("i", 1, sym("n") - 1, ForKind::Serial, body),
      For::make("k", 0, 4, ForKind::Unrolled,
                Evaluate::make(Intrinsic::make(DType::I32, "barrier", {}))),
  });
  EXPECT_EQ(print_prim(*p), "prim stmts(a: f32[n, 64]) -> (y: f32[n], z: f32[])\n"
                            "  where n%8 == 0\n"
                            "{\n"
                            "  alloc t: f32[64] local\n"
                            "  alloc s: f16[n, 2] shared\n"
                            "  for i in 1..n {\n"
                            "    var acc: f32 = 0.0\n"
                            "    vectorize for j in 0..64 {\n"
                            "      acc = acc + a[i, j]\n"
                            "    }\n"
                            "    let h: f16 = cast(acc, \"f16\")\n"
                            "    if acc > 0.0 {\n"
                            "      y[i] = acc\n"
                            "    } else {\n"
                            "      y[i] = exp(acc)\n"
                            "    }\n"
                            "    if i == 0 {\n"
                            "      z[] = -1.5\n"
                            "    }\n"
                            "  }\n"
                            "  unroll for k in 0..4 {\n"
                            "    barrier()\n"
                            "  }\n"
                            "}\n");
}

TEST_F(PrinterTest, PrimExpressionPrecedence) {
  PrimExpr x = LocalRef::make(DType::F32, "x"), y = LocalRef::make(DType::F32, "y");
  PrimExpr i = idx(sym("i")), n = LocalRef::make(DType::I64, "n");
  EXPECT_EQ(to_string(bin(BinaryOp::Mul, bin(BinaryOp::Add, x, y), x)), "(x + y) * x");
  EXPECT_EQ(to_string(bin(BinaryOp::Add, bin(BinaryOp::Mul, x, y), x)), "x * y + x");
  EXPECT_EQ(to_string(bin(BinaryOp::Sub, x, bin(BinaryOp::Sub, y, x))), "x - (y - x)");
  EXPECT_EQ(to_string(bin(BinaryOp::Sub, x, fimm(-1.0))), "x - (-1.0)");
  EXPECT_EQ(to_string(bin(BinaryOp::LT, x, fimm(-1.0))), "x < -1.0");
  EXPECT_EQ(to_string(bin(BinaryOp::Mul, fimm(-1.0), x)), "-1.0 * x");
  EXPECT_EQ(to_string(bin(BinaryOp::Mod, n, IntImm::make(DType::I64, 8))), "n % 8");
  EXPECT_EQ(to_string(bin(BinaryOp::Add, n, IntImm::make(DType::I64, -2))), "n + (-2)");
  EXPECT_EQ(to_string(bin(BinaryOp::Min, bin(BinaryOp::Add, x, y), x)), "min(x + y, x)");
  EXPECT_EQ(to_string(bin(BinaryOp::Mul, bin(BinaryOp::Max, x, y), x)), "max(x, y) * x");
  PrimExpr cmp = bin(BinaryOp::LT, x, y);
  EXPECT_EQ(to_string(bin(BinaryOp::Or, bin(BinaryOp::And, cmp, cmp), cmp)),
            "x < y && x < y || x < y");
  EXPECT_EQ(to_string(bin(BinaryOp::And, bin(BinaryOp::Or, cmp, cmp), cmp)),
            "(x < y || x < y) && x < y");
  EXPECT_EQ(to_string(bin(BinaryOp::GE, x, y)), "x >= y");
  EXPECT_EQ(to_string(bin(BinaryOp::NE, x, y)), "x != y");
  // Index expressions carry their own precedence from symbolic/.
  EXPECT_EQ(to_string(idx(sym("i") * 4 + sym("j"))), "i*4 + j");
  EXPECT_EQ(to_string(bin(BinaryOp::Mul, idx(sym("i") + 1), IntImm::make(DType::I64, 2))),
            "(i + 1) * 2");
  EXPECT_EQ(to_string(bin(BinaryOp::Add, idx(sym("i") * 2), n)), "i*2 + n");
  EXPECT_EQ(to_string(bin(BinaryOp::Sub, n, idx(-1 * sym("i")))), "n - (-i)");
  EXPECT_EQ(to_string(bin(BinaryOp::Add, i, idx(symbolic::min(sym("i"), 3)))), "i + min(i, 3)");
  EXPECT_EQ(to_string(Intrinsic::make(DType::F32, "select", {cmp, x, y})), "select(x < y, x, y)");
  EXPECT_EQ(to_string(Cast::make(DType::F32, bin(BinaryOp::Add, n, n))), "cast(n + n, \"f32\")");
  EXPECT_EQ(to_string(Load::make(DType::F32, "a", {idx(sym("i") + 1), n})), "a[i + 1, n]");
  EXPECT_EQ(to_string(IntImm::make(DType::I32, 7)), "7");
  EXPECT_EQ(to_string(IntImm::make(DType::Bool, 1)), "true");
  EXPECT_EQ(to_string(IntImm::make(DType::Bool, 0)), "false");
  // neg and logical_not read as prefix operators.
  auto neg = [](PrimExpr v) { return Intrinsic::make(v->dtype, "neg", {v}); };
  auto lnot = [](PrimExpr v) { return Intrinsic::make(DType::Bool, "logical_not", {v}); };
  EXPECT_EQ(to_string(neg(x)), "-x");
  EXPECT_EQ(to_string(neg(fimm(1.0))), "-(1.0)");
  EXPECT_EQ(to_string(neg(fimm(-1.0))), "-(-1.0)");
  EXPECT_EQ(to_string(neg(IntImm::make(DType::I32, 3))), "-(3)");
  EXPECT_EQ(to_string(neg(idx(3))), "-(3)");
  EXPECT_EQ(to_string(neg(neg(x))), "-(-x)");
  EXPECT_EQ(to_string(neg(bin(BinaryOp::Add, x, y))), "-(x + y)");
  EXPECT_EQ(to_string(bin(BinaryOp::Mul, neg(x), y)), "-x * y");
  EXPECT_EQ(to_string(bin(BinaryOp::Mul, x, neg(y))), "x * (-y)");
  EXPECT_EQ(to_string(lnot(cmp)), "!(x < y)");
  EXPECT_EQ(to_string(lnot(IntImm::make(DType::Bool, 1))), "!true");
  EXPECT_EQ(to_string(Intrinsic::make(DType::F32, "neg", {x, y})), "neg(x, y)");
}

TEST_F(PrinterTest, PrimElseIfChains) {
  PrimExpr n = idx(sym("n"));
  auto lt = [&](int64_t v) { return bin(BinaryOp::LT, n, idx(v)); };
  Stmt s1 = Store::make("y", {}, fimm(1.0)), s2 = Store::make("y", {}, fimm(2.0)),
       s3 = Store::make("y", {}, fimm(3.0));
  Stmt chain = IfStmt::make(lt(1), s1, Seq::make({IfStmt::make(lt(2), s2, s3)}));
  EXPECT_EQ(to_string(chain), "if n < 1 {\n"
                              "  y[] = 1.0\n"
                              "} else if n < 2 {\n"
                              "  y[] = 2.0\n"
                              "} else {\n"
                              "  y[] = 3.0\n"
                              "}");
  Stmt two = IfStmt::make(lt(1), s1, Seq::make({IfStmt::make(lt(2), s2, Stmt()), s3}));
  EXPECT_EQ(to_string(two), "if n < 1 {\n"
                            "  y[] = 1.0\n"
                            "} else {\n"
                            "  if n < 2 {\n"
                            "    y[] = 2.0\n"
                            "  }\n"
                            "  y[] = 3.0\n"
                            "}");
}

TEST_F(PrinterTest, ExternGolden) {
  auto* e = new ExternFunc;
  Ref<ExternFunc> keep(e);
  e->name = "sgemm";
  e->params = {var("a", f32({sym("m"), sym("k")})), var("b", f32({sym("k"), sym("n")}))};
  e->ret_type = f32({sym("m"), sym("n")});
  e->symbol = "blas.sgemm";
  EXPECT_EQ(print_extern(*e),
            "extern fn sgemm(a: f32[m, k], b: f32[k, n]) -> f32[m, n] = \"blas.sgemm\"\n");
  e->where = {WhereClause{symbolic::le(1, sym("k")), {}}};
  EXPECT_EQ(print_extern(*e), "extern fn sgemm(a: f32[m, k], b: f32[k, n]) -> f32[m, n]\n"
                              "  where 1 <= k\n"
                              "  = \"blas.sgemm\"\n");
}

TEST_F(PrinterTest, ModuleGolden) {
  Module m;
  m.imports.push_back(Import{"nn", {}, nullptr});
  VarRef x = var("x", f32({sym("B"), 784}));
  m.add(function("mlp", {x}, f32({sym("B"), 784}), block({}, call("nn.relu", {x}))));
  auto* p = new PrimFunc;
  p->name = "copy";
  p->inputs = {buffer("a", {sym("n")})};
  p->outputs = {buffer("y", {sym("n")})};
  p->body = For::make("i", 0, sym("n"), ForKind::Serial,
                      Store::make("y", {idx(sym("i"))}, load("a", {idx(sym("i"))})));
  m.add(Ref<PrimFunc>(p));
  auto* e = new ExternFunc;
  e->name = "ext";
  e->params = {var("a", f32({sym("n")}))};
  e->ret_type = f32({sym("n")});
  e->symbol = "lib.ext";
  m.add(Ref<ExternFunc>(e));
  EXPECT_EQ(print_module(m), "import nn\n"
                             "\n"
                             "fn mlp(x: f32[B, 784]) -> f32[B, 784] {\n"
                             "  return nn.relu(x)\n"
                             "}\n"
                             "\n"
                             "prim copy(a: f32[n]) -> (y: f32[n]) {\n"
                             "  for i in 0..n {\n"
                             "    y[i] = a[i]\n"
                             "  }\n"
                             "}\n"
                             "\n"
                             "extern fn ext(a: f32[n]) -> f32[n] = \"lib.ext\"\n");
  EXPECT_EQ(print_module(Module{}), "");
}

// ---------------------------------------------------------------- floats

TEST(FloatFormatTest, Goldens) {
  EXPECT_EQ(to_string(Literal::make(0.125)), "0.125");
  EXPECT_EQ(to_string(Literal::make(1e-12)), "1e-12");
  EXPECT_EQ(to_string(Literal::make(2.0)), "2.0");
  EXPECT_EQ(to_string(Literal::make(0.0)), "0.0");
  EXPECT_EQ(to_string(Literal::make(-0.0)), "-0.0");
  EXPECT_EQ(to_string(Literal::make(100000.0)), "100000.0");
  EXPECT_EQ(to_string(Literal::make(123456789.0)), "123456789.0");
  EXPECT_EQ(to_string(Literal::make(1e15)), "1000000000000000.0");
  EXPECT_EQ(to_string(Literal::make(1e16)), "1e+16");
  EXPECT_EQ(to_string(Literal::make(0.0001)), "0.0001");
  EXPECT_EQ(to_string(Literal::make(0.00001)), "1e-05");
  EXPECT_EQ(to_string(Literal::make(-2.5e-7)), "-2.5e-07");
  EXPECT_EQ(to_string(Literal::make(1e20)), "1e+20");
  EXPECT_EQ(to_string(Literal::make(0.1)), "0.1");
  EXPECT_EQ(to_string(Literal::make(1.0 / 3.0)), "0.3333333333333333");
  EXPECT_EQ(to_string(FloatImm::make(DType::F32, 3e300)), "3e+300");
  EXPECT_EQ(to_string(FloatImm::make(DType::F32, 5e-324)), "5e-324");
  // Non-finite values have no .dsc spelling: the debug form names them, module printing
  // refuses.
  EXPECT_EQ(to_string(FloatImm::make(DType::F32, std::numeric_limits<double>::infinity())), "inf");
  EXPECT_EQ(to_string(Literal::make(-std::numeric_limits<double>::infinity())), "-inf");
  EXPECT_EQ(to_string(Literal::make(std::numeric_limits<double>::quiet_NaN())), "nan");
}

TEST(FloatFormatTest, RandomDoublesRoundTrip) {
  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<double> uniform(-1e6, 1e6);
  for (int n = 0; n < 20000; ++n) {
    double v;
    if (n % 2 == 0) {
      uint64_t bits = rng();
      std::memcpy(&v, &bits, sizeof(v));
      if (!std::isfinite(v)) continue;
    } else {
      v = uniform(rng);
    }
    std::string s = to_string(FloatImm::make(DType::F64, v));
    ASSERT_NE(s.find_first_of(".e"), std::string::npos) << s << " would lex as an integer";
    double back = std::strtod(s.c_str(), nullptr);
    uint64_t x, y;
    std::memcpy(&x, &v, sizeof(v));
    std::memcpy(&y, &back, sizeof(back));
    ASSERT_EQ(x, y) << s;
    ASSERT_EQ(s, to_string(Literal::make(v)));
  }
}

TEST(FloatFormatDeathTest, ModulePrintingRejectsNonFinite) {
  VarRef x = Var::make("x", Type::tensor(DType::F32, {4}));
  Expr body = Block::make({}, Call::make("mul", {x, Literal::make(std::nan(""))}, {}));
  auto* f = new Function;
  Ref<Function> keep(f);
  f->name = "bad";
  f->params = {x};
  f->body = body;
  EXPECT_DEATH(print_function(*f), "non-finite");
}

} // namespace
} // namespace dsc::ir
