// Each construct of docs/language.md's graph functions, parsed into the IR it stands for.

#include <gtest/gtest.h>

#include "LangTestUtil.h"
#include "ir/IR.h"
#include "symbolic/Printer.h"

namespace dsc::lang {
namespace {

using testing::parse;

std::string dims(const std::vector<symbolic::Expr>& ds) {
  std::string out;
  for (size_t i = 0; i < ds.size(); ++i)
    out += (i ? ", " : "") + symbolic::to_string(ds[i]);
  return out;
}

// The body of function `name`, which must exist.
const ir::Block& body(const ir::Module& m, const std::string& name) {
  Ref<ir::Function> f = m.function(name);
  internal_assert(f.defined()) << "no function " << name;
  const ir::Block* b = f->body.as<ir::Block>();
  internal_assert(b) << "body is not a Block";
  return *b;
}

// The value of the binding of `var` in function `fn`.
ir::Expr bound_value(const ir::Module& m, const std::string& fn, const std::string& var) {
  for (const ir::Binding& b : body(m, fn).bindings)
    for (const ir::VarRef& v : b.vars)
      if (v->name == var) return b.value;
  internal_error << "no binding of " << var;
}

const ir::Call& as_call(const ir::Expr& e) {
  const ir::Call* c = e.as<ir::Call>();
  internal_assert(c) << "not a Call: " << ir::node_kind_name(e.kind());
  return *c;
}

TEST(Parser, EmptyModule) {
  auto p = parse("");
  ASSERT_TRUE(p->module) << p->printed();
  EXPECT_TRUE(p->module->decls.empty());
  auto q = parse("  # only a comment\n;;\n");
  ASSERT_TRUE(q->module) << q->printed();
}

TEST(Parser, DeclarationKindsInSourceOrder) {
  auto p = parse(R"(
prim p(a: f32[n]) -> (y: f32[n]) { }
fn f(x: f32[B]) -> f32[B] { return x }
extern fn sgemm(a: f32[m, k], b: f32[k, n]) -> f32[m, n] = "blas.sgemm"
)");
  ASSERT_TRUE(p->module) << p->printed();
  const ir::Module& m = *p->module;
  ASSERT_EQ(m.decls.size(), 3u);
  EXPECT_TRUE(m.decls[0].prim.defined());
  EXPECT_TRUE(m.decls[1].fn.defined());
  EXPECT_TRUE(m.decls[2].ext.defined());
  EXPECT_EQ(m.decls[0].name(), "p");
  EXPECT_EQ(m.decls[1].name(), "f");
  Ref<ir::ExternFunc> e = m.ext("sgemm");
  ASSERT_TRUE(e.defined());
  EXPECT_EQ(e->symbol, "blas.sgemm");
  ASSERT_EQ(e->params.size(), 2u);
  EXPECT_EQ(ir::to_string(e->params[1]->type), "f32[k, n]");
  EXPECT_EQ(ir::to_string(e->ret_type), "f32[m, n]");
  EXPECT_EQ(e->loc.line, 4u);
  EXPECT_EQ(e->loc.col, 1u);
}

TEST(Parser, ParameterTypes) {
  auto p = parse(R"(
fn f(x: f32[B, S, 768], m: bool[], t: (f32[B], i64[B, 2]), g: tensor, axis: int = -1,
     eps: float = 1e-5, keep: bool = true, mode: str = "fast", scale: float = 2) {
  return x
})");
  ASSERT_TRUE(p->module) << p->printed();
  Ref<ir::Function> f = p->module->function("f");
  ASSERT_EQ(f->params.size(), 9u);
  EXPECT_EQ(ir::to_string(f->params[0]->type), "f32[B, S, 768]");
  EXPECT_EQ(ir::to_string(f->params[1]->type), "bool[]");
  EXPECT_EQ(ir::to_string(f->params[2]->type), "(f32[B], i64[B, 2])");
  EXPECT_EQ(f->params[3]->type.kind, ir::Type::Kind::Any);
  EXPECT_EQ(f->params[4]->type.kind, ir::Type::Kind::Int);
  EXPECT_EQ(f->params[5]->type.kind, ir::Type::Kind::Float);
  EXPECT_EQ(f->params[6]->type.kind, ir::Type::Kind::Bool);
  EXPECT_EQ(f->params[7]->type.kind, ir::Type::Kind::Str);
  ASSERT_EQ(f->defaults.size(), 9u);
  for (int i = 0; i < 4; ++i)
    EXPECT_FALSE(f->defaults[i].defined()) << i;
  EXPECT_EQ(std::get<int64_t>(f->defaults[4].as<ir::Literal>()->value), -1);
  EXPECT_DOUBLE_EQ(std::get<double>(f->defaults[5].as<ir::Literal>()->value), 1e-5);
  EXPECT_EQ(std::get<bool>(f->defaults[6].as<ir::Literal>()->value), true);
  EXPECT_EQ(f->defaults[7].as<ir::StringImm>()->value, "fast");
  // An integer default of a float parameter is a float.
  EXPECT_DOUBLE_EQ(std::get<double>(f->defaults[8].as<ir::Literal>()->value), 2.0);
  EXPECT_TRUE(f->ret_type.is_unknown());
  EXPECT_EQ(f->params[0]->loc.line, 2u);
  EXPECT_EQ(f->params[0]->loc.col, 6u);
}

TEST(Parser, DimExpressions) {
  auto p = parse("fn f(x: f32[S, 2*S, S+1, S/2, S%8, min(S, 64), max(S, 1), -S, (S-1)*2]) "
                 "{ return x }");
  ASSERT_TRUE(p->module) << p->printed();
  Ref<ir::Function> f = p->module->function("f");
  EXPECT_EQ(dims(f->params[0]->type.shape),
            "S, 2*S, S + 1, S/2, S%8, min(S, 64), max(S, 1), -S, (S - 1)*2");
  // Built raw, not simplified: S+1 is an Add of a symbol and a constant.
  EXPECT_TRUE(f->params[0]->type.shape[2].is<symbolic::Add>());
  EXPECT_TRUE(f->params[0]->type.shape[3].is<symbolic::FloorDiv>());
}

TEST(Parser, AnonymousDimsAreNumberedPerFunction) {
  auto p = parse(R"(
fn f(x: f32[?, ?], y: f32[_d0, 3]) -> f32[?] {
  let z: f32[?] = x
  return z
}
fn g(x: f32[?]) { return x })");
  ASSERT_TRUE(p->module) << p->printed();
  Ref<ir::Function> f = p->module->function("f");
  EXPECT_EQ(dims(f->params[0]->type.shape), "_d0, _d1");
  EXPECT_EQ(dims(f->params[1]->type.shape), "_d0, 3");
  EXPECT_EQ(dims(f->ret_type.shape), "_d2");
  EXPECT_EQ(dims(body(*p->module, "f").bindings[0].vars[0]->type.shape), "_d3");
  EXPECT_EQ(dims(p->module->function("g")->params[0]->type.shape), "_d0");
}

TEST(Parser, WhereClauses) {
  auto p = parse(R"(
fn f(x: f32[B, S]) where B >= 1, 1 <= S <= 512, S % 8 == 0, B != S || B > 2, !(S < 4) {
  return x
})");
  ASSERT_TRUE(p->module) << p->printed();
  Ref<ir::Function> f = p->module->function("f");
  ASSERT_EQ(f->where.size(), 5u);
  EXPECT_EQ(symbolic::to_string(f->where[0].predicate), "1 <= B");
  // A chain is a conjunction.
  EXPECT_EQ(symbolic::to_string(f->where[1].predicate), "1 <= S && S <= 512");
  EXPECT_TRUE(f->where[1].predicate.is<symbolic::And>());
  EXPECT_EQ(symbolic::to_string(f->where[2].predicate), "S%8 == 0");
  EXPECT_EQ(symbolic::to_string(f->where[3].predicate), "B != S || 2 < B");
  EXPECT_EQ(symbolic::to_string(f->where[4].predicate), "!(S < 4)");
  EXPECT_EQ(f->where[1].loc.line, 2u);
  EXPECT_EQ(f->where[1].loc.col, 36u); // the first operator of the chain
}

TEST(Parser, LetBindingsAndReturn) {
  auto p = parse(R"(
fn f(x: f32[B, S], w: f32[S, 4]) -> f32[B, 4] {
  let h = matmul(x, w)
  let y: f32[B, 4] = h
  let q, k, v = split(h, 3, axis=-1)
  return y
})");
  ASSERT_TRUE(p->module) << p->printed();
  const ir::Block& b = body(*p->module, "f");
  ASSERT_EQ(b.bindings.size(), 3u);
  EXPECT_EQ(b.bindings[0].vars[0]->name, "h");
  EXPECT_FALSE(b.bindings[0].has_asserted_type);
  EXPECT_TRUE(b.bindings[0].vars[0]->type.is_unknown());
  EXPECT_TRUE(b.bindings[1].has_asserted_type);
  EXPECT_EQ(ir::to_string(b.bindings[1].vars[0]->type), "f32[B, 4]");
  ASSERT_EQ(b.bindings[2].vars.size(), 3u);
  EXPECT_EQ(b.bindings[2].vars[2]->name, "v");
  // References are the binding's Var itself.
  EXPECT_TRUE(b.result.same_as(ir::Expr(b.bindings[1].vars[0])));
  const ir::Call& mm = as_call(b.bindings[0].value);
  EXPECT_EQ(mm.callee, "matmul");
  Ref<ir::Function> f = p->module->function("f");
  EXPECT_TRUE(mm.args[0].same_as(ir::Expr(f->params[0])));
  EXPECT_EQ(b.bindings[0].loc.line, 3u);
  EXPECT_EQ(b.bindings[0].loc.col, 3u);
}

TEST(Parser, TypeAssertionBindsNewSymbols) {
  auto p = parse(R"(
fn f(x: f32[B]) -> i64[N] {
  let idx: i64[N] = nonzero(x)
  let r = reshape(idx, [N, 1])
  return idx
})");
  ASSERT_TRUE(p->module) << p->printed();
  const ir::Block& b = body(*p->module, "f");
  EXPECT_EQ(ir::to_string(b.bindings[0].vars[0]->type), "i64[N]");
  const ir::Call& r = as_call(b.bindings[1].value);
  ASSERT_TRUE(r.args[1].is<ir::ShapeExpr>());
  EXPECT_EQ(dims(r.args[1].as<ir::ShapeExpr>()->dims), "N, 1");
}

TEST(Parser, DiscardedNames) {
  auto p = parse("fn f(x: f32[B]) { let _, b, _ = split(x, 3) return b }");
  ASSERT_TRUE(p->module) << p->printed();
  EXPECT_EQ(body(*p->module, "f").bindings[0].vars.size(), 3u);
}

TEST(Parser, InfixOperatorsBecomeCalls) {
  auto p = parse(R"(
fn f(a: f32[B], b: f32[B], c: bool[B]) {
  let t1 = a + b
  let t2 = a - b
  let t3 = a * b
  let t4 = a / b
  let t5 = a == b
  let t6 = a != b
  let t7 = a < b
  let t8 = a <= b
  let t9 = a > b
  let t10 = a >= b
  let t11 = c && c
  let t12 = c || c
  let t13 = !c
  let t14 = -a
  let t15 = a % b
  return t1
})");
  ASSERT_TRUE(p->module) << p->printed();
  const char* expected[] = {"add",         "sub",        "mul",         "div", "eq",
                            "ne",          "lt",         "le",          "gt",  "ge",
                            "logical_and", "logical_or", "logical_not", "neg", "mod"};
  const ir::Block& b = body(*p->module, "f");
  ASSERT_EQ(b.bindings.size(), 15u);
  for (size_t i = 0; i < 15; ++i)
    EXPECT_EQ(as_call(b.bindings[i].value).callee, expected[i]);
  // The operator's location.
  EXPECT_EQ(b.bindings[0].value->loc.line, 3u);
  EXPECT_EQ(b.bindings[0].value->loc.col, 14u);
}

TEST(Parser, Precedence) {
  auto p = parse(R"(
fn f(a: f32[B], b: f32[B], c: f32[B]) {
  let x = a + b * c
  let y = (a + b) * c
  let z = a - b - c
  let w = a < b && b < c || !(a == c)
  let v = -a * b
  return x
})");
  ASSERT_TRUE(p->module) << p->printed();
  const ir::Module& m = *p->module;
  const ir::Call& x = as_call(bound_value(m, "f", "x"));
  EXPECT_EQ(x.callee, "add");
  EXPECT_EQ(as_call(x.args[1]).callee, "mul");
  const ir::Call& y = as_call(bound_value(m, "f", "y"));
  EXPECT_EQ(y.callee, "mul");
  EXPECT_EQ(as_call(y.args[0]).callee, "add");
  const ir::Call& z = as_call(bound_value(m, "f", "z"));
  EXPECT_EQ(z.callee, "sub"); // left-associative: (a - b) - c
  EXPECT_EQ(as_call(z.args[0]).callee, "sub");
  EXPECT_TRUE(z.args[1].is<ir::Var>());
  const ir::Call& w = as_call(bound_value(m, "f", "w"));
  EXPECT_EQ(w.callee, "logical_or");
  EXPECT_EQ(as_call(w.args[0]).callee, "logical_and");
  EXPECT_EQ(as_call(w.args[1]).callee, "logical_not");
  const ir::Call& v = as_call(bound_value(m, "f", "v"));
  EXPECT_EQ(v.callee, "mul"); // unary minus binds tighter
  EXPECT_EQ(as_call(v.args[0]).callee, "neg");
}

TEST(Parser, ChainedComparisonOfTensorsIsAConjunction) {
  auto p = parse("fn f(a: f32[B], b: f32[B], c: f32[B]) { return a < b <= c }");
  ASSERT_TRUE(p->module) << p->printed();
  const ir::Call& r = as_call(body(*p->module, "f").result);
  EXPECT_EQ(r.callee, "logical_and");
  const ir::Call& l1 = as_call(r.args[0]);
  const ir::Call& l2 = as_call(r.args[1]);
  EXPECT_EQ(l1.callee, "lt");
  EXPECT_EQ(l2.callee, "le");
  EXPECT_TRUE(l1.args[1].same_as(l2.args[0])); // b, evaluated once
}

TEST(Parser, Literals) {
  auto p = parse(R"(
fn f(x: f32[B]) {
  let a = x * 0.125
  let b = x + 2
  let c = x + -1
  let d = x * -0.5
  let e = x + -(1)
  let g = where(x > 0.0, true, false)
  let h = cast(x, dtype="f16")
  let i = x + 9223372036854775807 + -9223372036854775808
  return a
})");
  ASSERT_TRUE(p->module) << p->printed();
  const ir::Module& m = *p->module;
  const ir::Literal* a = as_call(bound_value(m, "f", "a")).args[1].as<ir::Literal>();
  ASSERT_TRUE(a);
  EXPECT_DOUBLE_EQ(std::get<double>(a->value), 0.125);
  EXPECT_TRUE(a->type.weak);
  EXPECT_EQ(std::get<int64_t>(as_call(bound_value(m, "f", "b")).args[1].as<ir::Literal>()->value),
            2);
  // A minus right before a number is part of the literal...
  EXPECT_EQ(std::get<int64_t>(as_call(bound_value(m, "f", "c")).args[1].as<ir::Literal>()->value),
            -1);
  EXPECT_DOUBLE_EQ(
      std::get<double>(as_call(bound_value(m, "f", "d")).args[1].as<ir::Literal>()->value), -0.5);
  // ...but not before a parenthesized one.
  const ir::Call& e = as_call(as_call(bound_value(m, "f", "e")).args[1]);
  EXPECT_EQ(e.callee, "neg");
  const ir::Call& g = as_call(bound_value(m, "f", "g"));
  EXPECT_EQ(std::get<bool>(g.args[1].as<ir::Literal>()->value), true);
  const ir::Call& h = as_call(bound_value(m, "f", "h"));
  ASSERT_EQ(h.kwargs.size(), 1u);
  EXPECT_EQ(h.kwargs[0].name, "dtype");
  EXPECT_EQ(h.kwargs[0].value.as<ir::StringImm>()->value, "f16");
  const ir::Call& i = as_call(bound_value(m, "f", "i"));
  EXPECT_EQ(std::get<int64_t>(i.args[1].as<ir::Literal>()->value), INT64_MIN);
}

TEST(Parser, CallsWithKeywordArguments) {
  auto p = parse(R"(
fn f(x: f32[B, S]) {
  let s = sum(x, axis=[1, 2], keepdims=true,)
  let t = layer(x, x)
  return s
})");
  ASSERT_TRUE(p->module) << p->printed();
  const ir::Call& s = as_call(bound_value(*p->module, "f", "s"));
  EXPECT_EQ(s.callee, "sum");
  ASSERT_EQ(s.args.size(), 1u);
  ASSERT_EQ(s.kwargs.size(), 2u);
  EXPECT_EQ(s.kwargs[0].name, "axis");
  ASSERT_TRUE(s.kwargs[0].value.is<ir::ShapeExpr>());
  EXPECT_EQ(dims(s.kwargs[0].value.as<ir::ShapeExpr>()->dims), "1, 2");
  EXPECT_EQ(s.kwargs[1].loc.col, 31u);
  ASSERT_NE(s.kwarg("keepdims"), nullptr);
  // Unknown callees are the op registry's business, not the parser's.
  EXPECT_EQ(as_call(bound_value(*p->module, "f", "t")).callee, "layer");
}

TEST(Parser, ListsOfDimsAndListsOfTensors) {
  auto p = parse(R"(
fn f(x: f32[B, S, 768], y: f32[B, S, 768], heads: int = 12) {
  let a = reshape(x, [B, S * 12, 64])
  let b = concat([x, y], axis=1)
  let c = permute(x, [0, 2, 1])
  let d = reshape(x, [B, S, heads, -1])
  let e = reshape(x, [])
  let g = slice(x, axis=1, start=0, end=S-1, step=1)
  let h = full([B, S], 0.0)
  let i = broadcast_to(x, [min(B, 4), S, 768])
  return a
})");
  ASSERT_TRUE(p->module) << p->printed();
  const ir::Module& m = *p->module;
  auto arg = [&](const char* var, size_t i) { return as_call(bound_value(m, "f", var)).args[i]; };
  ASSERT_TRUE(arg("a", 1).is<ir::ShapeExpr>());
  EXPECT_EQ(dims(arg("a", 1).as<ir::ShapeExpr>()->dims), "B, S*12, 64");
  ASSERT_TRUE(arg("b", 0).is<ir::ListExpr>());
  EXPECT_EQ(arg("b", 0).as<ir::ListExpr>()->items.size(), 2u);
  EXPECT_EQ(dims(arg("c", 1).as<ir::ShapeExpr>()->dims), "0, 2, 1");
  // An int parameter stands for itself in a dim list.
  EXPECT_EQ(dims(arg("d", 1).as<ir::ShapeExpr>()->dims), "B, S, heads, -1");
  EXPECT_TRUE(arg("e", 1).as<ir::ShapeExpr>()->dims.empty());
  // A scalar integer expression over symbols is a one-dim ShapeExpr.
  const ir::Call& g = as_call(bound_value(m, "f", "g"));
  ASSERT_TRUE(g.kwarg("end"));
  ASSERT_TRUE(g.kwarg("end")->is<ir::ShapeExpr>());
  EXPECT_EQ(dims(g.kwarg("end")->as<ir::ShapeExpr>()->dims), "S - 1");
  EXPECT_TRUE(g.kwarg("start")->is<ir::Literal>());
  EXPECT_EQ(dims(arg("h", 0).as<ir::ShapeExpr>()->dims), "B, S");
  EXPECT_EQ(dims(arg("i", 1).as<ir::ShapeExpr>()->dims), "min(B, 4), S, 768");
}

TEST(Parser, TuplesAndGetItem) {
  auto p = parse(R"(
fn f(x: f32[B], y: f32[B]) -> (f32[B], f32[B]) {
  let t = (x, y)
  let one = (x,)
  let none = ()
  let s = split(x, 2)
  let a = s[1]
  return (t[0], a)
})");
  ASSERT_TRUE(p->module) << p->printed();
  const ir::Module& m = *p->module;
  EXPECT_EQ(bound_value(m, "f", "t").as<ir::Tuple>()->fields.size(), 2u);
  EXPECT_EQ(bound_value(m, "f", "one").as<ir::Tuple>()->fields.size(), 1u);
  EXPECT_EQ(bound_value(m, "f", "none").as<ir::Tuple>()->fields.size(), 0u);
  const ir::GetItem* a = bound_value(m, "f", "a").as<ir::GetItem>();
  ASSERT_TRUE(a);
  EXPECT_EQ(a->index, 1);
  const ir::Tuple* r = body(m, "f").result.as<ir::Tuple>();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->fields[0].as<ir::GetItem>()->index, 0);
  EXPECT_EQ(ir::to_string(m.function("f")->ret_type), "(f32[B], f32[B])");
}

TEST(Parser, IfExpressions) {
  auto p = parse(R"(
fn f(c: bool[], a: f32[B], b: f32[B]) {
  let y = if c { let t = a * 2; t } else { b }
  let z = if c { a } else if c { b } else { let u = b + 1
    u }
  return y
})");
  ASSERT_TRUE(p->module) << p->printed();
  const ir::If* y = bound_value(*p->module, "f", "y").as<ir::If>();
  ASSERT_TRUE(y);
  const ir::Block* then_b = y->then_branch.as<ir::Block>();
  ASSERT_EQ(then_b->bindings.size(), 1u);
  EXPECT_TRUE(then_b->result.same_as(ir::Expr(then_b->bindings[0].vars[0])));
  EXPECT_TRUE(y->else_branch.as<ir::Block>()->bindings.empty());
  const ir::If* z = bound_value(*p->module, "f", "z").as<ir::If>();
  ASSERT_TRUE(z);
  // `else if` is an else-branch holding just the nested if.
  const ir::Block* else_b = z->else_branch.as<ir::Block>();
  ASSERT_TRUE(else_b->result.is<ir::If>());
  EXPECT_EQ(else_b->result.as<ir::If>()->else_branch.as<ir::Block>()->bindings.size(), 1u);
}

TEST(Parser, BranchScopesEndWithTheBranch) {
  auto p = parse(R"(
fn f(c: bool[], a: f32[B]) {
  let y = if c { let t = a; t } else { let t = a; t }
  return y
})");
  EXPECT_TRUE(p->module) << p->printed(); // the two t's do not clash
}

TEST(Parser, SemicolonResultSeparator) {
  // `;` ends the let, so `(a, a)` is the branch's result rather than a call of b.
  auto p = parse("fn f(c: bool[], a: f32[B]) { let y = if c { let b = a; (a, a) } else { (a, a) }"
                 " return y }");
  ASSERT_TRUE(p->module) << p->printed();
  const ir::If* y = body(*p->module, "f").bindings[0].value.as<ir::If>();
  EXPECT_TRUE(y->then_branch.as<ir::Block>()->result.is<ir::Tuple>());
}

TEST(Parser, NewlinesAreInsignificant) {
  auto a = parse("fn f(x: f32[B]) -> f32[B] where B >= 1 { let y = x + 1 let z = y * 2 return z }");
  auto b = parse("fn f(\n x: f32[\nB]\n)\n->\nf32[B]\nwhere\nB\n>=\n1\n{\nlet\ny\n=\nx\n+\n1\n;"
                 "let z = y *\n 2; return\n z;\n}\n");
  ASSERT_TRUE(a->module) << a->printed();
  ASSERT_TRUE(b->module) << b->printed();
  EXPECT_EQ(body(*a->module, "f").bindings.size(), 2u);
  EXPECT_EQ(body(*b->module, "f").bindings.size(), 2u);
}

TEST(Parser, TrailingCommas) {
  auto p = parse("fn f(x: f32[B, S,], y: f32[B],) -> (f32[B],) { return (sum(x, axis=1,),) }");
  ASSERT_TRUE(p->module) << p->printed();
  EXPECT_EQ(ir::to_string(p->module->function("f")->ret_type), "(f32[B],)");
}

TEST(Parser, SymbolAsAValue) {
  auto p = parse("fn f(x: f32[B, S]) { let n = arange(0, S) return n }");
  ASSERT_TRUE(p->module) << p->printed();
  const ir::Call& c = as_call(body(*p->module, "f").bindings[0].value);
  EXPECT_TRUE(c.args[0].is<ir::Literal>());
  ASSERT_TRUE(c.args[1].is<ir::ShapeExpr>());
  EXPECT_EQ(dims(c.args[1].as<ir::ShapeExpr>()->dims), "S");
}

TEST(Parser, ReturnTypeMayNameASymbolBoundInTheBody) {
  auto p = parse("fn f(x: f32[B]) -> i64[N, 1] { let n: i64[N, 1] = nonzero(x) return n }");
  ASSERT_TRUE(p->module) << p->printed();
  EXPECT_EQ(ir::to_string(p->module->function("f")->ret_type), "i64[N, 1]");
}

TEST(Parser, ExternWithWhere) {
  auto p = parse(R"(
extern fn conv(x: f32[N, C, H, W], w: f32[K, C, 3, 3]) -> f32[N, K, H, W]
  where H >= 3, W >= 3
  = "cudnn.conv2d"(stride = [1, 1], padding = [1, 1], dilation = [1, 1], groups = [1])
)");
  ASSERT_TRUE(p->module) << p->printed();
  Ref<ir::ExternFunc> e = p->module->ext("conv");
  ASSERT_EQ(e->where.size(), 2u);
  EXPECT_EQ(symbolic::to_string(e->where[1].predicate), "3 <= W");
  EXPECT_EQ(e->symbol, "cudnn.conv2d");
}

// A routine's attributes: lists of ints (a negative one too; the routine's table, not the
// parser, decides what they may be), named as the table names them, in its order.
TEST(Parser, ExternRoutineAttributes) {
  auto p = parse(R"(
extern fn conv(x: f32[1, 2, 9, 9], w: f32[4, 1, 3, 3]) -> f32[1, 4, 5, 9]
  = "cudnn.conv2d"(stride = [2, 1], padding = [1, -1], dilation = [1, 2], groups = [2],)
)");
  ASSERT_TRUE(p->module) << p->printed();
  Ref<ir::ExternFunc> e = p->module->ext("conv");
  ASSERT_EQ(e->attributes.size(), 4u);
  EXPECT_EQ(e->attributes[0], (ir::RoutineAttribute{"stride", {2, 1}}));
  EXPECT_EQ(e->attributes[1], (ir::RoutineAttribute{"padding", {1, -1}}));
  EXPECT_EQ(e->attributes[3], (ir::RoutineAttribute{"groups", {2}}));
  p = parse(R"(extern fn conv(x: f32[1, 1, 5, 5], w: f32[1, 1, 3, 3]) -> f32[1, 1, 3, 3]
  = "cudnn.conv2d"(padding = [0, 0], stride = [1, 1], dilation = [1, 1], groups = [1]))");
  EXPECT_FALSE(p->module);
  EXPECT_EQ(p->first_error(), "routine \"cudnn.conv2d\" takes the attributes stride, padding, "
                              "dilation and groups, not 'padding' here");
  p = parse(R"(extern fn mm(a: f32[2, 3], b: f32[3, 4]) -> f32[2, 4] = "blas.sgemm"(x = []))");
  EXPECT_FALSE(p->module);
}

TEST(Parser, ImportsAreRecorded) {
  auto p = parse("import nn\nfn f(x: f32[B]) { return x }");
  // Without a stdlib directory holding nn.dsc, the import itself is the error.
  EXPECT_FALSE(p->module);
  EXPECT_EQ(p->first_error(), "cannot find module 'nn'");
}

} // namespace
} // namespace dsc::lang
