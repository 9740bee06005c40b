// infer_shapes on hand-built modules: bindings, asserted types, tuples, if, calls to module
// functions, externs and imported generic functions, facts, and error recovery.

#include "passes/InferShapes.h"

#include <memory>

#include "tests/unit/passes/PassTestUtil.h"

namespace dsc::testing {
namespace {

using ir::Expr;
using ir::VarRef;
using Strings = std::vector<std::string>;

class InferShapesTest : public IRBuilderTest {
protected:
  ir::Module run(const ir::Module& m) {
    out_ = passes::infer_shapes(m, ctx_);
    return out_;
  }
  ir::Module run(std::vector<Ref<ir::Function>> fns) {
    ir::Module m;
    for (auto& f : fns)
      m.add(f);
    return run(m);
  }

  const ir::Function& out(const std::string& name) {
    Ref<ir::Function> f = out_.function(name);
    internal_assert(f) << "no function " << name;
    return *f;
  }

  static const ir::Type* find_type(const Expr& e, const std::string& name) {
    if (const ir::Block* b = e.as<ir::Block>()) {
      for (const ir::Binding& bind : b->bindings) {
        for (const VarRef& v : bind.vars)
          if (v->name == name) return &v->type;
        if (const ir::Type* t = find_type(bind.value, name)) return t;
      }
      return find_type(b->result, name);
    }
    if (const ir::If* i = e.as<ir::If>()) {
      if (const ir::Type* t = find_type(i->then_branch, name)) return t;
      return find_type(i->else_branch, name);
    }
    return nullptr;
  }

  // The type of the value bound to `var` in function `f` of the last result.
  std::string type_of(const std::string& f, const std::string& var) {
    const ir::Type* t = find_type(out(f).body, var);
    return t ? ir::to_string(*t) : "<no binding " + var + ">";
  }

  std::string ret_of(const std::string& f) { return ir::to_string(out(f).ret_type); }

  // Non-where facts as "predicate (what)" plus " [proved]" for those decided already.
  Strings facts(const std::string& f) {
    Strings s;
    for (const ir::ShapeFact& fact : out(f).facts) {
      if (fact.origin == ir::ShapeFact::Origin::Where) continue;
      s.push_back(sym::to_string(fact.predicate) + " (" + fact.what + ")" +
                  (fact.status == ir::ShapeFact::Status::Proved ? " [proved]" : ""));
    }
    return s;
  }

  ir::Module out_;
};

// ---------------------------------------------------------------- bindings

TEST_F(InferShapesTest, AttentionHeadChain) {
  VarRef x = var("x", "f32[B, S, 768]"), w = var("w", "f32[768, 2304]"), b = var("b", "f32[2304]");
  VarRef qkv = var("qkv"), q = var("q"), k = var("k"), v = var("v"), qh = var("qh"), kh = var("kh"),
         s = var("s"), p = var("p");
  auto f =
      fn("attn", {x, w, b},
         {let(qkv, call("add", {call("matmul", {ref(x), ref(w)}), ref(b)})),
          let_many({q, k, v},
                   call("split", {ref(qkv), lit(int64_t{3})}, {kw("axis", lit(int64_t{-1}))})),
          let(qh, call("permute", {call("reshape", {ref(q), shape({"B", "S", "12", "64"})}),
                                   shape({"0", "2", "1", "3"})})),
          let(kh, call("permute", {call("reshape", {ref(k), shape({"B", "S", "12", "64"})}),
                                   shape({"0", "2", "3", "1"})})),
          let(s, call("mul", {call("matmul", {ref(qh), ref(kh)}), lit(0.125)})),
          let(p, call("div", {call("exp", {ref(s)}),
                              call("sum", {call("exp", {ref(s)})},
                                   {kw("axis", lit(int64_t{-1})), kw("keepdims", lit(true))})}))},
         ref(p));
  run({f});
  EXPECT_EQ(messages(), "");
  EXPECT_EQ(type_of("attn", "qkv"), "f32[B, S, 2304]");
  EXPECT_EQ(type_of("attn", "k"), "f32[B, S, 768]");
  EXPECT_EQ(type_of("attn", "qh"), "f32[B, 12, S, 64]");
  EXPECT_EQ(type_of("attn", "kh"), "f32[B, 12, 64, S]");
  EXPECT_EQ(type_of("attn", "p"), "f32[B, 12, S, S]");
  EXPECT_EQ(ret_of("attn"), "f32[B, 12, S, S]");
  EXPECT_TRUE(facts("attn").empty());
  // Every node of the body has a type now.
  const ir::Block* body = out("attn").body.as<ir::Block>();
  EXPECT_EQ(ir::to_string(body->bindings[0].value->type), "f32[B, S, 2304]");
  EXPECT_EQ(ir::to_string(body->type), "f32[B, 12, S, S]");
}

TEST_F(InferShapesTest, UsesAreRebuiltWithNewVars) {
  VarRef x = var("x", "f32[N]"), y = var("y"), z = var("z");
  auto f =
      fn("f", {x}, {let(y, call("exp", {ref(x)})), let(z, call("add", {ref(y), ref(y)}))}, ref(z));
  run({f});
  const ir::Block* body = out("f").body.as<ir::Block>();
  const ir::Call* add = body->bindings[1].value.as<ir::Call>();
  ASSERT_NE(add, nullptr);
  // The argument is the new Var of y, the one bound above, with its type.
  EXPECT_TRUE(add->args[0].same_as(Expr(body->bindings[0].vars[0])));
  EXPECT_FALSE(body->bindings[0].vars[0].same_as(y));
  EXPECT_EQ(ir::to_string(add->args[0]->type), "f32[N]");
  EXPECT_TRUE(body->result.same_as(Expr(body->bindings[1].vars[0])));
  // Parameters keep their Vars and their written types.
  EXPECT_TRUE(out("f").params[0].same_as(x));
}

TEST_F(InferShapesTest, RunTimeFactsAreRecordedOnceAndAssumedAfter) {
  VarRef x = var("x", "f32[S]"), y = var("y", "f32[T]"), a = var("a"), b = var("b"), c = var("c");
  auto f = fn("f", {x, y},
              {let(a, call("add", {ref(x), ref(y)})), let(b, call("mul", {ref(y), ref(x)})),
               let(c, call("reshape", {ref(a), shape({"T"})}))},
              ref(c), "?", {"S >= 1"});
  run({f});
  EXPECT_EQ(messages(), "");
  EXPECT_EQ(type_of("f", "a"), "f32[S]");
  EXPECT_EQ(type_of("f", "b"), "f32[T]");
  EXPECT_EQ(facts("f"), (Strings{"S == T (broadcast of dim 0 of add)"}));
  // Where clauses come first.
  ASSERT_FALSE(out("f").facts.empty());
  EXPECT_EQ(out("f").facts[0].origin, ir::ShapeFact::Origin::Where);
  EXPECT_EQ(sym::to_string(out("f").facts[0].predicate), "1 <= S");
}

TEST_F(InferShapesTest, WhereClausesAndParameterDimsAreAssumed) {
  VarRef x = var("x", "f32[B, S]"), y = var("y"), z = var("z", "f32[S - 1]"), u = var("u");
  auto f = fn("f", {x, z},
              {let(y, call("reshape", {ref(x), shape({"-1", "8"})})),
               let(u, call("slice", {ref(z)}, {kw("end", shape({"S - 1"}))}))},
              ref(y), "?", {"S % 8 == 0"});
  run({f});
  EXPECT_EQ(messages(), "");
  EXPECT_EQ(type_of("f", "y"), "f32[B*S/8, 8]");
  EXPECT_EQ(type_of("f", "u"), "f32[S - 1]");
  // S % 8 from the where clause and S >= 1 from z's type prove everything: nothing is left for
  // run time (proved facts are listed for --emit=facts).
  for (const std::string& fact : facts("f"))
    EXPECT_TRUE(fact.size() > 9 && fact.substr(fact.size() - 9) == " [proved]") << fact;
}

// ---------------------------------------------------------------- asserted types

TEST_F(InferShapesTest, AssertedTypeBindsNewSymbols) {
  VarRef m = var("m", "bool[B, S]"), idx = var("idx", "i64[N, 2]"), r = var("r"), t = var("t");
  auto f = fn("f", {m},
              {let_typed(idx, call("nonzero", {ref(m)})),
               let(r, call("reshape", {ref(idx), shape({"2", "N"})})),
               let(t, call("add", {ref(r), ref(r)}))},
              ref(t));
  run({f});
  EXPECT_EQ(messages(), "");
  EXPECT_EQ(type_of("f", "idx"), "i64[N, 2]");
  EXPECT_EQ(type_of("f", "r"), "i64[2, N]");
  EXPECT_EQ(facts("f"), (Strings{"nnz0 <= B*S (nonzero: the count is at most the element count)",
                                 "N == nnz0 (N is bound by let idx: dims at axis 0) [proved]"}));
}

TEST_F(InferShapesTest, AssertedTypeChecksKnownDims) {
  VarRef x = var("x", "f32[S, 4]"), y = var("y", "f32[T, 4]"), z = var("z", "f32[S, 5]");
  auto f = fn("f", {x}, {let_typed(y, ref(x)), let_typed(z, ref(x))}, ref(y));
  run({f});
  EXPECT_EQ(messages(), "error: let z: dims at axis 1 differ: 5 vs 4\n");
  EXPECT_EQ(type_of("f", "y"), "f32[T, 4]");
  EXPECT_EQ(type_of("f", "z"), "?");
}

TEST_F(InferShapesTest, AssertedTypeRunTimeFactForKnownSymbols) {
  VarRef x = var("x", "f32[S]"), u = var("u", "f32[T]"), y = var("y", "f32[T]");
  auto f = fn("f", {x, u}, {let_typed(y, ref(x))}, ref(y));
  run({f});
  EXPECT_EQ(messages(), "");
  EXPECT_EQ(facts("f"), (Strings{"S == T (let y: dims at axis 0)"}));
  EXPECT_EQ(out("f").facts.back().origin, ir::ShapeFact::Origin::Op);
}

TEST_F(InferShapesTest, AssertedTypeDTypeAndRankErrors) {
  VarRef x = var("x", "f16[S]"), y = var("y", "f32[S]"), z = var("z", "f16[S, 1]");
  VarRef w = var("w", "f32[]");
  auto f =
      fn("f", {x}, {let_typed(y, ref(x)), let_typed(z, ref(x)), let_typed(w, lit(2.0))}, ref(x));
  run({f});
  EXPECT_EQ(messages(), "error: let y: expected dtype f32, got f16[S]\n"
                        "error: let z: expected rank 2 (f16[S, 1]), got rank 1 (f16[S])\n");
  EXPECT_EQ(type_of("f", "w"), "f32[]");
}

TEST_F(InferShapesTest, AssertedTypeSolvesLinearDims) {
  VarRef x2 = var("x", "f32[2*S + 4]"), y2 = var("y", "f32[2*N + 2]"), z2 = var("z");
  auto g = fn("g", {x2},
              {let_typed(y2, ref(x2)), let(z2, call("reshape", {ref(y2), shape({"N + 1", "2"})}))},
              ref(z2));
  run({g});
  EXPECT_EQ(messages(), "");
  EXPECT_EQ(type_of("g", "z"), "f32[N + 1, 2]");
  EXPECT_EQ(facts("g"), (Strings{"N == S + 1 (N is bound by let y: dims at axis 0) [proved]"}));
}

// ---------------------------------------------------------------- tuples and if

TEST_F(InferShapesTest, TuplesAndGetItem) {
  VarRef x = var("x", "f32[B, 6]"), t = var("t"), a = var("a"), bad = var("bad"), c = var("c");
  auto f = fn("f", {x},
              {let(t, call("split", {ref(x), shape({"2", "4"})}, {kw("axis", lit(int64_t{1}))})),
               let(a, ir::GetItem::make(ref(t), 1, {}, loc())),
               let(bad, ir::GetItem::make(ref(t), 2, {}, loc())),
               let(c, ir::GetItem::make(ref(x), 0, {}, loc()))},
              ir::Tuple::make({ref(a), ref(x)}, {}, loc()));
  run({f});
  EXPECT_EQ(messages(), "error: index 2 is out of range for a tuple of 2\n"
                        "error: cannot index f32[B, 6] with [0]: only tuples can be indexed (use "
                        "slice or take)\n");
  EXPECT_EQ(type_of("f", "t"), "(f32[B, 2], f32[B, 4])");
  EXPECT_EQ(type_of("f", "a"), "f32[B, 4]");
  EXPECT_EQ(ret_of("f"), "(f32[B, 4], f32[B, 6])");
}

TEST_F(InferShapesTest, DestructuringArity) {
  VarRef x = var("x", "f32[6]"), a = var("a"), b = var("b"), c = var("c"), d = var("d"),
         e = var("e");
  auto f = fn("f", {x},
              {let_many({a, b}, call("split", {ref(x), lit(int64_t{3})})), let_many({c, d}, ref(x)),
               let(e, call("add", {ref(a), ref(c)}))},
              ref(x));
  run({f});
  EXPECT_EQ(messages(), "error: cannot destructure a tuple of 3 into 2 names\n"
                        "error: cannot destructure f32[6] into 2 names: it is not a tuple\n");
  EXPECT_EQ(type_of("f", "a"), "?");
  EXPECT_EQ(type_of("f", "e"), "?"); // no cascade
}

TEST_F(InferShapesTest, IfBranches) {
  VarRef x = var("x", "f32[S]"), c = var("c", "bool[]"), y = var("y"), t = var("t");
  Expr then_b = block({let(t, call("mul", {ref(x), lit(2.0)}))}, ref(t));
  Expr else_b = block({}, call("neg", {ref(x)}));
  auto f = fn("f", {x, c}, {let(y, ir::If::make(ref(c), then_b, else_b, {}, loc()))}, ref(y));
  run({f});
  EXPECT_EQ(messages(), "");
  EXPECT_EQ(type_of("f", "y"), "f32[S]");
  EXPECT_EQ(type_of("f", "t"), "f32[S]");
}

TEST_F(InferShapesTest, IfErrors) {
  VarRef x = var("x", "f32[S]"), z = var("z", "f32[T]"), c = var("c", "bool[S]"), y = var("y");
  VarRef y2 = var("y2");
  Expr if1 = ir::If::make(ref(c), block({}, ref(x)), block({}, ref(x)), {}, loc());
  Expr if2 = ir::If::make(call("lt", {lit(int64_t{1}), lit(int64_t{2})}), block({}, ref(x)),
                          block({}, ref(z)), {}, loc());
  VarRef y3 = var("y3");
  Expr if3 = ir::If::make(call("lt", {lit(int64_t{1}), lit(int64_t{2})}), block({}, ref(x)),
                          block({}, call("reshape", {ref(x), shape({"S", "1"})})), {}, loc());
  auto f = fn("f", {x, z, c}, {let(y, if1), let(y2, if2), let(y3, if3)}, ref(y));
  run({f});
  EXPECT_EQ(messages(), "error: the condition of if must be a bool[] tensor, got bool[S]\n"
                        "error: the branches of if have different types: f32[S] vs f32[S, 1] "
                        "(ranks differ)\n");
  // Dims the branches may disagree on become a fresh symbol between the two.
  EXPECT_EQ(type_of("f", "y2"), "f32[S0]");
  EXPECT_EQ(facts("f"), (Strings{"min(S, T) <= S0 (if: dim 0 of the result is S or T)",
                                 "S0 <= max(S, T) (if: dim 0 of the result is S or T)"}));
}

TEST_F(InferShapesTest, BranchFactsStayInTheBranch) {
  VarRef x = var("x", "f32[S]"), z = var("z", "f32[T]"), c = var("c", "bool[]"), y = var("y"),
         t = var("t"), u = var("u");
  Expr then_b = block({let(t, call("add", {ref(x), ref(z)}))}, ref(t));
  auto f = fn("f", {x, z, c},
              {let(y, ir::If::make(ref(c), then_b, block({}, ref(x)), {}, loc())),
               let(u, call("sub", {ref(x), ref(z)}))},
              ref(u));
  run({f});
  EXPECT_EQ(messages(), "");
  // The check in the branch does not hold after it, so the one after is recorded again as
  // its own fact (the same predicate: deduplicated).
  EXPECT_EQ(facts("f"), (Strings{"S == T (broadcast of dim 0 of add)"}));
}

// ---------------------------------------------------------------- errors

TEST_F(InferShapesTest, ErrorsDoNotCascade) {
  VarRef x = var("x", "f32[B, 768]"), w = var("w", "f32[512, 10]"), y = var("y"), z = var("z"),
         s = var("s"), q = var("q");
  auto f = fn("f", {x, w},
              {let(y, call("matmul", {ref(x), ref(w)})), let(z, call("add", {ref(y), ref(x)})),
               let_many({s, q}, call("split", {ref(z), lit(int64_t{2})})),
               let(x, call("exp", {ref(s)}))},
              ref(z));
  run({f});
  EXPECT_EQ(messages(), "error: matmul: contracted dims differ: 768 vs 512\n");
  // At the call: a Var's own location is where it was bound.
  const ir::Block* body = f->body.as<ir::Block>();
  EXPECT_EQ(diags_.diagnostics()[0].loc.col, body->bindings[0].value->loc.col);
  EXPECT_EQ(type_of("f", "z"), "?");
  EXPECT_EQ(ret_of("f"), "?");
}

TEST_F(InferShapesTest, UnknownOpSuggestsNames) {
  VarRef x = var("x", "f32[B]"), y = var("y"), z = var("z"), u = var("u");
  VarRef hx = var("x", "f32[N]");
  auto helper = fn("helper_fn", {hx}, {}, ref(hx));
  auto f = fn("f", {x},
              {let(y, call("matmull", {ref(x), ref(x)})), let(z, call("helper_fm", {ref(x)})),
               let(u, call("frobnicate", {ref(x)}))},
              ref(x));
  run({helper, f});
  EXPECT_EQ(messages(), "error: unknown op 'matmull'\n  note: did you mean 'matmul'?\n"
                        "error: unknown op 'helper_fm'\n  note: did you mean 'helper_fn'?\n"
                        "error: unknown op 'frobnicate'\n");
}

// ---------------------------------------------------------------- calls to module functions

TEST_F(InferShapesTest, CallsBindCalleeSymbols) {
  VarRef a = var("a", "f32[M, K]"), b = var("b", "f32[K, N]"), r = var("r");
  auto mm = fn("mm", {a, b}, {let(r, call("matmul", {ref(a), ref(b)}))}, ref(r));
  VarRef x = var("x", "f32[B, 768]"), w = var("w", "f32[768, 10]"), y = var("y");
  auto f = fn("f", {x, w}, {let(y, call("mm", {ref(x), ref(w)}))}, ref(y));
  run({mm, f});
  EXPECT_EQ(messages(), "");
  EXPECT_EQ(ret_of("mm"), "f32[M, N]");
  EXPECT_EQ(type_of("f", "y"), "f32[B, 10]");
}

TEST_F(InferShapesTest, CallsCheckLaterAppearancesOfASymbol) {
  VarRef a = var("a", "f32[M, K]"), b = var("b", "f32[K, N]");
  auto mm = fn("mm", {a, b}, {}, call("matmul", {ref(a), ref(b)}), "f32[M, N]");
  VarRef x = var("x", "f32[B, 768]"), w = var("w", "f32[512, 10]"), v = var("v", "f32[T, 10]");
  VarRef y = var("y"), z = var("z");
  auto f = fn("f", {x, w, v},
              {let(y, call("mm", {ref(x), ref(w)})), let(z, call("mm", {ref(x), ref(v)}))}, ref(z));
  run({mm, f});
  EXPECT_EQ(messages(), "error: mm: argument 'b': dims at axis 0 differ: 768 vs 512\n");
  EXPECT_EQ(type_of("f", "y"), "?");
  EXPECT_EQ(type_of("f", "z"), "f32[B, 10]");
  EXPECT_EQ(facts("f"), (Strings{"T == 768 (mm: argument 'b': dims at axis 0)"}));
}

TEST_F(InferShapesTest, CallsCheckWhereClausesAndKeywordArguments) {
  VarRef a = var("a", "f32[S]"), b = var("b", "f32[T]");
  auto g = fn("g", {a, b}, {}, call("concat", {ir::ListExpr::make({ref(a), ref(b)}, {}, loc())}),
              "?", {"S >= 2", "T <= 64"});
  VarRef x = var("x", "f32[U]"), y = var("y"), z = var("z");
  auto f = fn("f", {x},
              {let(y, call("g", {}, {kw("b", shape({"1"})), kw("a", ref(x))})),
               let(z, call("g", {ref(x)}, {kw("b", ref(x))}))},
              ref(z), "?", {"U >= 4"});
  run({g, f});
  EXPECT_EQ(messages(), "error: g: argument 'b' must be a tensor\n");
  EXPECT_EQ(ret_of("g"), "f32[S + T]");
  EXPECT_EQ(type_of("f", "z"), "f32[2*U]");
  EXPECT_EQ(facts("f"), (Strings{"U <= 64 (where clause 'T <= 64' of g)"}));
}

TEST_F(InferShapesTest, CallArgumentErrors) {
  VarRef a = var("a", "f32[S]");
  auto g = fn("g", {a}, {}, ref(a));
  VarRef x = var("x", "f16[U]"), x2 = var("x2", "f32[U, 2]"), y = var("y"), z = var("z"),
         u = var("u"), v = var("v");
  auto f = fn("f", {x, x2},
              {let(y, call("g", {ref(x)})), let(z, call("g", {ref(x2)})),
               let(u, call("g", {ref(x), ref(x)})), let(v, call("g", {}, {kw("b", ref(x))}))},
              ref(x));
  run({g, f});
  EXPECT_EQ(messages(), "error: g: argument 'a': expected dtype f32, got f16[U]\n"
                        "error: g: argument 'a': expected rank 1 (f32[S]), got rank 2 (f32[U, 2])\n"
                        "error: g takes 1 argument, got 2\n"
                        "error: g has no parameter 'b'\n"
                        "error: g: missing argument 'a'\n");
}

TEST_F(InferShapesTest, CallsSolveLinearParameterDims) {
  VarRef a = var("a", "f32[2*S]"), r = var("r");
  auto half = fn("half", {a}, {let(r, call("reshape", {ref(a), shape({"S", "2"})}))}, ref(r));
  VarRef x = var("x", "f32[10]"), t = var("t", "f32[T]"), y = var("y"), z = var("z");
  auto f =
      fn("f", {x, t}, {let(y, call("half", {ref(x)})), let(z, call("half", {ref(t)}))}, ref(z));
  run({half, f});
  EXPECT_EQ(messages(), "");
  EXPECT_EQ(type_of("f", "y"), "f32[5, 2]");
  EXPECT_EQ(type_of("f", "z"), "f32[T/2, 2]");
  EXPECT_EQ(facts("f"), (Strings{"T%2 == 0 (half: argument 'a': dims at axis 0: T must fit 2*S)"}));
}

// A dim that no symbol can be solved from binds the callee's symbols when the argument's dim
// has its form term by term (legalize writes a strided convolution's result as (H + 1)/2 into
// the prims that read it); the operands of + may come in either order. Other arguments are
// still refused.
TEST_F(InferShapesTest, CallsMatchParameterDimsTermByTerm) {
  VarRef a = var("a", "f32[(H + 1)/2, (H + W)/2]");
  auto pool = fn("pool", {a}, {}, ref(a));
  VarRef x = var("x", "f32[(Y + 1)/2, (A + Y)/2]"), c = var("c", "f32[4, 4]"),
         d = var("d", "f32[(Y + 2)/2, 3]");
  VarRef y = var("y"), z = var("z"), u = var("u");
  auto f = fn("f", {x, c, d},
              {let(y, call("pool", {ref(x)})), let(z, call("pool", {ref(c)})),
               let(u, call("pool", {ref(d)}))},
              ref(y));
  run({pool, f});
  EXPECT_EQ(messages(),
            "error: pool: argument 'a': dims at axis 0: cannot infer H from (H + 1)/2 == 4\n"
            "error: pool: argument 'a': dims at axis 1: cannot infer H, W from (H + W)/2 == 4\n"
            "error: pool: argument 'a': dims at axis 0: cannot infer H from (H + 1)/2 == Y/2 + 1\n"
            "error: pool: argument 'a': dims at axis 1: cannot infer H, W from (H + W)/2 == 3\n");
  EXPECT_EQ(type_of("f", "y"), "f32[(Y + 1)/2, (A + Y)/2]");
}

TEST_F(InferShapesTest, CalleeAndCallerSymbolsMayShareNames) {
  VarRef w = var("w", "f32[K, N]");
  auto swap = fn("swap", {w}, {}, call("permute", {ref(w), shape({"1", "0"})}), "f32[N, K]");
  VarRef a = var("a", "f32[M]"), b = var("b", "f32[M + N]");
  auto tail = fn("tail", {a, b}, {}, ref(b), "f32[N]");
  VarRef x = var("x", "f32[N, K]"), y = var("y", "f32[N]"), z = var("z", "f32[N + 3]");
  VarRef s = var("s"), t = var("t");
  auto f = fn("f", {x, y, z},
              {let(s, call("swap", {ref(x)})), let(t, call("tail", {ref(y), ref(z)}))}, ref(s));
  run({swap, tail, f});
  EXPECT_EQ(messages(), "");
  EXPECT_EQ(type_of("f", "s"), "f32[K, N]");
  EXPECT_EQ(type_of("f", "t"), "f32[3]");
  EXPECT_TRUE(facts("f").empty());
}

TEST_F(InferShapesTest, DataDependentReturnSymbolsAreFreshPerCall) {
  VarRef m = var("m", "bool[S]"), idx = var("idx", "i64[N, 1]");
  auto nz = fn("nz", {m}, {let_typed(idx, call("nonzero", {ref(m)}))}, ref(idx));
  VarRef x = var("x", "bool[T]"), a = var("a"), b = var("b");
  auto f = fn("f", {x}, {let(a, call("nz", {ref(x)})), let(b, call("nz", {ref(x)}))}, ref(x));
  run({nz, f});
  EXPECT_EQ(messages(), "");
  EXPECT_EQ(ret_of("nz"), "i64[N, 1]");
  EXPECT_EQ(type_of("f", "a"), "i64[N0, 1]");
  EXPECT_EQ(type_of("f", "b"), "i64[N1, 1]");
  // Inferring the result again changes nothing (an inferred return type then counts as
  // declared, so its symbols would be taken: f returns x here).
  run(ir::Module(out_));
  EXPECT_EQ(messages(), "");
  EXPECT_EQ(type_of("f", "a"), "i64[N0, 1]");
  EXPECT_EQ(type_of("f", "b"), "i64[N1, 1]");
  EXPECT_EQ(ret_of("nz"), "i64[N, 1]");
  EXPECT_EQ(facts("nz"), (Strings{"nnz0 <= S (nonzero: the count is at most the element count)",
                                  "N == nnz0 (N is bound by let idx: dims at axis 0) [proved]"}));
}

TEST_F(InferShapesTest, DeclaredReturnTypes) {
  VarRef x = var("x", "f32[S]");
  auto ok = fn("ok", {x}, {}, call("concat", {ir::ListExpr::make({ref(x), ref(x)}, {}, loc())}),
               "f32[2*S]");
  VarRef x2 = var("x", "f32[S]");
  auto bad =
      fn("bad", {x2}, {}, call("concat", {ir::ListExpr::make({ref(x2), ref(x2)}, {}, loc())}),
         "f32[2*S + 1]");
  VarRef x3 = var("x", "f32[S]"), t = var("t", "f32[T]");
  auto runtime = fn("runtime", {x3, t}, {}, ref(x3), "f32[T]");
  VarRef x4 = var("x", "f32[S]");
  auto dtype = fn("dtype", {x4}, {}, ref(x4), "i32[S]");
  run({ok, bad, runtime, dtype});
  ASSERT_EQ(diags_.diagnostics().size(), 2u) << messages();
  EXPECT_EQ(diags_.diagnostics()[0].message,
            "return type of bad: dims at axis 0 differ: 2*S + 1 vs 2*S");
  ASSERT_EQ(diags_.diagnostics()[0].notes.size(), 1u);
  EXPECT_EQ(diags_.diagnostics()[0].notes[0].message.rfind("they can never be equal (e.g. S=", 0),
            0u);
  EXPECT_EQ(diags_.diagnostics()[1].message,
            "return type of dtype: expected dtype i32, got f32[S]");
  EXPECT_EQ(ret_of("ok"), "f32[2*S]");
  EXPECT_EQ(facts("runtime"), (Strings{"S == T (return type of runtime: dims at axis 0)"}));
}

TEST_F(InferShapesTest, RecursionNeedsADeclaredReturnType) {
  VarRef x = var("x", "f32[S]");
  auto f = fn("f", {x}, {}, call("f", {ref(x)}));
  VarRef x2 = var("x", "f32[S]");
  auto g = fn("g", {x2}, {}, call("g", {ref(x2)}), "f32[S]");
  run({f, g});
  EXPECT_EQ(messages(), "error: recursive call to 'f' needs a declared return type\n");
  EXPECT_EQ(ret_of("g"), "f32[S]");
}

TEST_F(InferShapesTest, ExternsAndPrims) {
  ir::Module m;
  auto* e = new ir::ExternFunc();
  e->name = "sgemm";
  e->params = {var("a", "f32[m, k]"), var("b", "f32[k, n]")};
  e->ret_type = type("f32[m, n]");
  e->symbol = "blas.sgemm";
  m.add(Ref<ir::ExternFunc>(e));
  auto* p = new ir::PrimFunc();
  p->name = "add_relu";
  p->inputs = {ir::Buffer{"a", ir::DType::F32, {dim("m"), dim("n")}, {}},
               ir::Buffer{"b", ir::DType::F32, {dim("m"), dim("n")}, {}}};
  p->outputs = {ir::Buffer{"y", ir::DType::F32, {dim("m"), dim("n")}, {}}};
  p->body = ir::Seq::make({});
  m.add(Ref<ir::PrimFunc>(p));
  auto* opaque = new ir::ExternFunc();
  opaque->name = "opaque";
  opaque->params = {var("a", "tensor")};
  opaque->ret_type = type("tensor");
  m.add(Ref<ir::ExternFunc>(opaque));
  VarRef x = var("x", "f32[B, 64]"), w = var("w", "f32[64, 8]"), y = var("y"), z = var("z"),
         o = var("o");
  m.add(fn("f", {x, w},
           {let(y, call("sgemm", {ref(x), ref(w)})), let(z, call("add_relu", {ref(y), ref(y)})),
            let(o, call("opaque", {ref(x)}))},
           ref(z)));
  run(m);
  EXPECT_EQ(messages(),
            "error: the result type of 'opaque' is tensor, so its calls cannot be typed\n");
  EXPECT_EQ(type_of("f", "y"), "f32[B, 8]");
  EXPECT_EQ(type_of("f", "z"), "f32[B, 8]");
  ASSERT_TRUE(out_.ext("sgemm").defined());
  ASSERT_TRUE(out_.prim("add_relu").defined());
}

// ---------------------------------------------------------------- generic functions

class GenericTest : public InferShapesTest {
protected:
  // nn.softmax(x: tensor, axis: int = -1) and friends, as an imported module.
  void SetUp() override {
    auto nn = std::make_shared<ir::Module>();
    VarRef x = var("x", "tensor"), axis = var("axis", "int"), m = var("m"), e = var("e");
    nn->add(fn("softmax", {x, axis},
               {let(m, call("max", {ref(x)}, {kw("axis", ref(axis)), kw("keepdims", lit(true))})),
                let(e, call("exp", {call("sub", {ref(x), ref(m)})}))},
               call("div", {ref(e), call("sum", {ref(e)},
                                         {kw("axis", ref(axis)), kw("keepdims", lit(true))})}),
               "?", {}, {Expr(), lit(int64_t{-1})}));
    // heads(x: tensor, h: int): [B, S, D] -> [B, h, S, D/h], naming dims with an assertion.
    VarRef hx = var("x", "tensor"), h = var("h", "int"), named = var("named", "f32[B, S, D]");
    nn->add(fn("heads", {hx, h}, {let_typed(named, ref(hx))},
               call("permute", {call("reshape", {ref(named), shape({"B", "S", "h", "D/h"})}),
                                shape({"0", "2", "1", "3"})})));
    // scale(x: tensor, by: float = 0.5): calls a sibling function by its bare name.
    VarRef sx = var("x", "tensor"), by = var("by", "float");
    nn->add(fn("scale", {sx, by}, {}, call("softmax", {call("mul", {ref(sx), ref(by)})}), "?", {},
               {Expr(), lit(0.5)}));
    VarRef rx = var("x", "tensor");
    nn->add(fn("loop", {rx}, {}, call("loop", {ref(rx)})));
    // linear(x: tensor, w: f32[K, N]): a typed parameter in a generic function.
    VarRef lx = var("x", "tensor"), lw = var("w", "f32[K, N]");
    nn->add(fn("linear", {lx, lw}, {}, call("matmul", {ref(lx), ref(lw)}), "?", {"N % 2 == 0"}));
    module_.imports.push_back(ir::Import{"nn", {}, nn});
  }

  void add(Ref<ir::Function> f) { module_.add(f); }

  ir::Module module_;
};

TEST_F(GenericTest, InstantiatesAtEachCall) {
  VarRef x = var("x", "f32[B, S]"), h = var("h", "f16[T]"), y = var("y"), z = var("z"),
         u = var("u");
  add(fn("f", {x, h},
         {let(y, call("nn.softmax", {ref(x)}, {kw("axis", lit(int64_t{0}))})),
          let(z, call("nn.softmax", {ref(h)})), let(u, call("nn.scale", {ref(x)}))},
         ref(y)));
  run(module_);
  EXPECT_EQ(messages(), "");
  EXPECT_EQ(type_of("f", "y"), "f32[B, S]");
  EXPECT_EQ(type_of("f", "z"), "f16[T]");
  EXPECT_EQ(type_of("f", "u"), "f32[B, S]");
  EXPECT_TRUE(facts("f").empty());
  // The generic function itself is not inferred or changed.
  ir::Module nn_out = run(module_);
  EXPECT_EQ(module_.imports[0].module.get(), nn_out.imports[0].module.get());
}

TEST_F(GenericTest, AssertedSymbolsInTheCalleeTakeTheCallersDims) {
  VarRef x = var("x", "f32[N, L, 768]"), x2 = var("x2", "f32[2, 3, 768]"), y = var("y"),
         z = var("z"), u = var("u");
  Expr five = call("nn.heads", {ref(x), lit(int64_t{5})});
  Expr five_const = call("nn.heads", {ref(x2), lit(int64_t{5})});
  add(fn("f", {x, x2},
         {let(y, call("nn.heads", {ref(x)}, {kw("h", lit(int64_t{12}))})), let(z, five),
          let(u, five_const)},
         ref(y)));
  run(module_);
  EXPECT_EQ(type_of("f", "y"), "f32[N, 12, L, 64]");
  // 768 is not a multiple of 5: the counts agree only for empty tensors, so a run-time
  // check when N and L are symbols, and an error for constants.
  EXPECT_EQ(type_of("f", "z"), "f32[N, 5, L, 153]");
  EXPECT_EQ(facts("f"), (Strings{"L*N == 0 (in nn.heads: reshape: element counts)"}));
  EXPECT_EQ(messages(), "error: reshape: element counts differ: 4608 vs 4590\n"
                        "  note: in nn.heads, called here\n");
  ASSERT_EQ(diags_.diagnostics().size(), 1u);
  // The note, and the fact, are at the user's call.
  EXPECT_EQ(diags_.diagnostics()[0].notes[0].loc.col, five_const->loc.col);
  EXPECT_EQ(out("f").facts.back().loc.col, five->loc.col);
}

TEST_F(GenericTest, ErrorsInsideTheCalleePointAtTheCallSite) {
  VarRef x = var("x", "f32[B, S]"), y = var("y"), z = var("z"), w = var("w");
  add(fn("f", {x},
         {let(y, call("nn.softmax", {ref(x)}, {kw("axis", lit(int64_t{5}))})),
          let(z, call("nn.softmax", {ref(x)}, {kw("axis", ref(x))})),
          let(w, call("nn.softmax", {lit(int64_t{1})}, {kw("axiz", lit(int64_t{1}))}))},
         ref(x)));
  run(module_);
  EXPECT_EQ(messages(), "error: max: axis 5 is out of range for rank 2\n"
                        "  note: in nn.softmax, called here\n"
                        "error: nn.softmax: argument 'axis' must be an integer literal\n"
                        "error: nn.softmax has no parameter 'axiz'\n"
                        "  note: did you mean 'axis'?\n");
  EXPECT_EQ(type_of("f", "y"), "?");
}

TEST_F(GenericTest, RecursionIsAnError) {
  VarRef x = var("x", "f32[B]"), y = var("y");
  add(fn("f", {x}, {let(y, call("nn.loop", {ref(x)}))}, ref(y)));
  run(module_);
  EXPECT_EQ(messages(), "error: recursive call to 'loop' cannot be instantiated\n"
                        "  note: in nn.loop, called here\n");
}

TEST_F(GenericTest, TypedParametersAndWhereClausesOfGenericFunctions) {
  VarRef x = var("x", "f32[B, 64]"), w = var("w", "f32[64, O]"), w2 = var("w2", "f32[32, 8]");
  VarRef y = var("y"), z = var("z");
  add(fn(
      "f", {x, w, w2},
      {let(y, call("nn.linear", {ref(x), ref(w)})), let(z, call("nn.linear", {ref(x), ref(w2)}))},
      ref(y)));
  run(module_);
  EXPECT_EQ(type_of("f", "y"), "f32[B, O]");
  EXPECT_EQ(facts("f"), (Strings{"O%2 == 0 (where clause 'N%2 == 0' of nn.linear)"}));
  EXPECT_EQ(messages(), "error: matmul: contracted dims differ: 64 vs 32\n"
                        "  note: in nn.linear, called here\n");
}

TEST_F(GenericTest, AssertionsInTheCalleeUseItsOwnSymbols) {
  // g(x: tensor, w: f32[K, N]) { let t: f32[N, K] = permute(w, [1, 0]); t }, called with the
  // caller's own K and N swapped.
  VarRef gx = var("x", "tensor"), gw = var("w", "f32[K, N]"), gt = var("t", "f32[N, K]");
  add(fn("g", {gx, gw}, {let_typed(gt, call("permute", {ref(gw), shape({"1", "0"})}))}, ref(gt)));
  VarRef x = var("x", "f32[B]"), w = var("w", "f32[N, K]"), y = var("y");
  add(fn("f", {x, w}, {let(y, call("g", {ref(x), ref(w)}))}, ref(y)));
  run(module_);
  EXPECT_EQ(messages(), "");
  EXPECT_EQ(type_of("f", "y"), "f32[K, N]");
  EXPECT_TRUE(facts("f").empty());
}

TEST_F(GenericTest, UnknownImportedNameSuggests) {
  VarRef x = var("x", "f32[B]"), y = var("y");
  add(fn("f", {x}, {let(y, call("nn.sofmax", {ref(x)}))}, ref(y)));
  run(module_);
  EXPECT_EQ(messages(), "error: unknown op 'nn.sofmax'\n  note: did you mean 'nn.softmax'?\n");
}

TEST_F(GenericTest, GenericFunctionsOfTheModuleItself) {
  VarRef gx = var("x", "tensor"), k = var("k", "int");
  add(fn(
      "twice", {gx, k}, {},
      call("concat", {ir::ListExpr::make({ref(gx), ref(gx)}, {}, loc())}, {kw("axis", ref(k))})));
  VarRef x = var("x", "f32[B, S]"), y = var("y");
  add(fn("f", {x}, {let(y, call("twice", {ref(x), lit(int64_t{1})}))}, ref(y)));
  run(module_);
  EXPECT_EQ(messages(), "");
  EXPECT_EQ(type_of("f", "y"), "f32[B, 2*S]");
  EXPECT_EQ(out_.function("twice")->ret_type.is_unknown(), true);
}

} // namespace
} // namespace dsc::testing
