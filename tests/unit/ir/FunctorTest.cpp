#include "ir/Functor.h"

#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ir/Printer.h"
#include "ir/StructuralEqual.h"
#include "symbolic/Expr.h"
#include "tests/unit/ir/IRBuilders.h"

namespace dsc::ir {
namespace {

using symbolic::sym;
using namespace test;

// A graph expression with every graph node kind below a Block.
struct GraphFixture {
  VarRef c = var("c", Type::scalar(DType::Bool));
  VarRef x = var("x", f32({sym("B"), 4}));
  VarRef t = var("t"), u = var("u"), q = var("q"), k = var("k");
  Expr split = call("split", {x, lit(int64_t{2})}, {kw("axis", lit(int64_t{-1}))});
  Expr reshaped = call("reshape", {x, ShapeExpr::make({sym("B"), 2, 2})});
  Expr concat = call("concat", {ListExpr::make({q, k})}, {kw("axis", lit(int64_t{0}))});
  Expr cast = call("cast", {x}, {kw("dtype", StringImm::make("f16"))});
  Expr branch = If::make(c, block({let(u, call("exp", {x}))}, u), block({}, x));
  Expr body = block({Binding{{q, k}, split, false, {}}, let(t, Tuple::make({q, reshaped, concat}))},
                    Tuple::make({GetItem::make(t, 0), cast, branch, lit(0.5), lit(true)}));
};

Stmt prim_body() {
  PrimExpr i = idx(sym("i"));
  PrimExpr acc = LocalRef::make(DType::F32, "acc");
  Stmt loop = For::make(
      "i", 0, sym("n"), ForKind::Serial,
      Seq::make(
          {Assign::make("acc", bin(BinaryOp::Add, acc, load("a", {i}))),
           IfStmt::make(bin(BinaryOp::LT, acc, fimm(0.0)),
                        Store::make("y", {i}, Cast::make(DType::F32, IntImm::make(DType::I32, 0))),
                        Store::make("y", {i}, Intrinsic::make(DType::F32, "exp", {acc})))}));
  return Seq::make({Alloc::make("s", DType::F32, {64}, MemoryScope::Local),
                    LocalDecl::make("acc", DType::F32, true, fimm(0.0)), loop,
                    IfStmt::make(bin(BinaryOp::EQ, idx(sym("n")), idx(0)),
                                 Evaluate::make(Intrinsic::make(DType::I32, "trap", {})), Stmt())});
}

// ---------------------------------------------------------------- visitor

class KindCounter : public IRVisitor {
public:
  std::map<std::string, int> counts;

protected:
#define DSC_IR_NODE(Name)                                                                          \
  void visit_node(const Name* node) override {                                                     \
    ++counts[#Name];                                                                               \
    IRVisitor::visit_node(node);                                                                   \
  }
#include "ir/Nodes.def"
};

TEST(IRVisitorTest, VisitsEveryGraphNodeOnce) {
  GraphFixture g;
  KindCounter counter;
  counter.visit(g.body);
  // Binders are not visited, only uses: x five times, q twice, k, t, c and u.
  EXPECT_EQ(counter.counts["Var"], 11);
  EXPECT_EQ(counter.counts["Block"], 3);
  EXPECT_EQ(counter.counts["Call"], 5);
  EXPECT_EQ(counter.counts["Literal"], 5);
  EXPECT_EQ(counter.counts["Tuple"], 2);
  EXPECT_EQ(counter.counts["GetItem"], 1);
  EXPECT_EQ(counter.counts["If"], 1);
  EXPECT_EQ(counter.counts["ShapeExpr"], 1);
  EXPECT_EQ(counter.counts["ListExpr"], 1);
  EXPECT_EQ(counter.counts["StringImm"], 1);
}

TEST(IRVisitorTest, VisitsEveryPrimNodeOnce) {
  KindCounter counter;
  counter.visit(prim_body());
  EXPECT_EQ(counter.counts["Seq"], 2);
  EXPECT_EQ(counter.counts["Alloc"], 1);
  EXPECT_EQ(counter.counts["LocalDecl"], 1);
  EXPECT_EQ(counter.counts["For"], 1);
  EXPECT_EQ(counter.counts["Assign"], 1);
  EXPECT_EQ(counter.counts["IfStmt"], 2);
  EXPECT_EQ(counter.counts["Store"], 2);
  EXPECT_EQ(counter.counts["Evaluate"], 1);
  EXPECT_EQ(counter.counts["LocalRef"], 3);
  EXPECT_EQ(counter.counts["Load"], 1);
  EXPECT_EQ(counter.counts["Index"], 5);
  EXPECT_EQ(counter.counts["PrimBinary"], 3);
  EXPECT_EQ(counter.counts["FloatImm"], 2);
  EXPECT_EQ(counter.counts["IntImm"], 1);
  EXPECT_EQ(counter.counts["Cast"], 1);
  EXPECT_EQ(counter.counts["Intrinsic"], 2);
}

TEST(IRVisitorTest, UndefinedHandlesAreSkipped) {
  KindCounter counter;
  counter.visit(Expr());
  counter.visit(PrimExpr());
  counter.visit(Stmt());
  EXPECT_TRUE(counter.counts.empty());
}

// ---------------------------------------------------------------- mutator

TEST(IRMutatorTest, NoOpMutatorReturnsTheSameNodes) {
  GraphFixture g;
  IRMutator identity;
  EXPECT_TRUE(identity.mutate(g.body).same_as(g.body));
  Stmt body = prim_body();
  EXPECT_TRUE(identity.mutate(body).same_as(body));
  PrimExpr e = bin(BinaryOp::Mul, load("a", {idx(sym("i"))}), fimm(2.0));
  EXPECT_TRUE(identity.mutate(e).same_as(e));
  EXPECT_FALSE(identity.mutate(Expr()).defined());
  EXPECT_FALSE(identity.mutate(Stmt()).defined());
}

// Renames calls to one op; everything off the path to them must stay shared.
class RenameCallee : public IRMutator {
public:
  RenameCallee(std::string from, std::string to) : from_(std::move(from)), to_(std::move(to)) {}

protected:
  Expr mutate_node(const Call* node, const Expr& self) override {
    Expr e = IRMutator::mutate_node(node, self);
    const Call* c = e.as<Call>();
    if (c->callee != from_) return e;
    return Call::make(to_, c->args, c->kwargs, c->type, c->loc);
  }

private:
  std::string from_, to_;
};

TEST(IRMutatorTest, RebuildsOnlyThePathToAChange) {
  GraphFixture g;
  RenameCallee rename("exp", "log");
  Expr out = rename.mutate(g.body);
  ASSERT_FALSE(out.same_as(g.body));
  const Block* before = g.body.as<Block>();
  const Block* after = out.as<Block>();
  // Bindings off the path are shared, vars are kept.
  ASSERT_EQ(after->bindings.size(), 2u);
  EXPECT_TRUE(after->bindings[0].value.same_as(before->bindings[0].value));
  EXPECT_TRUE(after->bindings[1].value.same_as(before->bindings[1].value));
  EXPECT_TRUE(after->bindings[0].vars[0].same_as(g.q));
  EXPECT_TRUE(after->bindings[1].vars[0].same_as(g.t));
  // The result tuple is rebuilt; of its fields only the If changed.
  const Tuple* rb = before->result.as<Tuple>();
  const Tuple* ra = after->result.as<Tuple>();
  ASSERT_NE(ra, rb);
  EXPECT_TRUE(ra->fields[0].same_as(rb->fields[0]));
  EXPECT_TRUE(ra->fields[1].same_as(rb->fields[1]));
  EXPECT_FALSE(ra->fields[2].same_as(rb->fields[2]));
  EXPECT_TRUE(ra->fields[3].same_as(rb->fields[3]));
  const If* ib = rb->fields[2].as<If>();
  const If* ia = ra->fields[2].as<If>();
  EXPECT_TRUE(ia->cond.same_as(ib->cond));
  EXPECT_FALSE(ia->then_branch.same_as(ib->then_branch));
  EXPECT_TRUE(ia->else_branch.same_as(ib->else_branch));
  EXPECT_EQ(ia->then_branch.as<Block>()->bindings[0].value.as<Call>()->callee, "log");
  // Renaming back gives a structurally equal function.
  RenameCallee back("log", "exp");
  Expr again = back.mutate(out);
  Module m1, m2;
  m1.add(function("f", {g.c, g.x}, Type::unknown(), g.body));
  m2.add(function("f", {g.c, g.x}, Type::unknown(), again));
  EXPECT_TRUE(structural_equal(m1, m2));
}

TEST(IRMutatorTest, RebuiltNodesKeepLocationAndType) {
  VarRef x = var("x", f32({4}));
  SourceLoc loc{1, 7, 9};
  Expr inner = Call::make("exp", {x}, {}, f32({4}), loc);
  Expr outer = Call::make("neg", {inner}, {}, f32({4}), SourceLoc{1, 7, 3});
  Expr tup = Tuple::make({outer}, Type::tuple({f32({4})}), SourceLoc{1, 8, 1});
  Expr item = GetItem::make(tup, 0, f32({4}), SourceLoc{1, 8, 2});
  RenameCallee rename("exp", "log");
  Expr out = rename.mutate(item);
  ASSERT_FALSE(out.same_as(item));
  EXPECT_EQ(out->loc.line, 8u);
  EXPECT_EQ(out->loc.col, 2u);
  EXPECT_TRUE(out->type == f32({4}));
  const Tuple* t = out.as<GetItem>()->tuple.as<Tuple>();
  EXPECT_EQ(t->loc.col, 1u);
  EXPECT_TRUE(t->type == Type::tuple({f32({4})}));
  const Call* n = t->fields[0].as<Call>();
  EXPECT_EQ(n->loc.col, 3u);
  EXPECT_EQ(n->args[0].as<Call>()->callee, "log");
  EXPECT_EQ(n->args[0]->loc.col, 9u);
}

// Replaces loads from one buffer with loads from another, in prims.
class RenameBuffer : public IRMutator {
protected:
  PrimExpr mutate_node(const Load* node, const PrimExpr& self) override {
    PrimExpr e = IRMutator::mutate_node(node, self);
    const Load* l = e.as<Load>();
    if (l->buffer != "a") return e;
    return Load::make(l->dtype, "b", l->indices, l->loc);
  }
};

TEST(IRMutatorTest, PrimMutationRebuildsOnlyThePath) {
  Stmt body = prim_body();
  Stmt out = RenameBuffer().mutate(body);
  ASSERT_FALSE(out.same_as(body));
  const Seq* before = body.as<Seq>();
  const Seq* after = out.as<Seq>();
  EXPECT_TRUE(after->stmts[0].same_as(before->stmts[0]));  // alloc
  EXPECT_TRUE(after->stmts[1].same_as(before->stmts[1]));  // local
  EXPECT_FALSE(after->stmts[2].same_as(before->stmts[2])); // the loop holds the load
  EXPECT_TRUE(after->stmts[3].same_as(before->stmts[3]));
  const Seq* lb = before->stmts[2].as<For>()->body.as<Seq>();
  const Seq* la = after->stmts[2].as<For>()->body.as<Seq>();
  EXPECT_FALSE(la->stmts[0].same_as(lb->stmts[0]));
  EXPECT_TRUE(la->stmts[1].same_as(lb->stmts[1]));
  EXPECT_EQ(to_string(la->stmts[0]), "acc = acc + b[i]");
  EXPECT_EQ(after->stmts[2].as<For>()->var, "i");
}

// A mutator may replace a whole statement kind.
class DropEvaluates : public IRMutator {
protected:
  Stmt mutate_node(const Evaluate*, const Stmt&) override { return Seq::make({}); }
};

TEST(IRMutatorTest, ReplacesStatements) {
  Stmt out = DropEvaluates().mutate(prim_body());
  EXPECT_EQ(to_string(out), "alloc s: f32[64] local\n"
                            "var acc: f32 = 0.0\n"
                            "for i in 0..n {\n"
                            "  acc = acc + a[i]\n"
                            "  if acc < 0.0 {\n"
                            "    y[i] = cast(0, \"f32\")\n"
                            "  } else {\n"
                            "    y[i] = exp(acc)\n"
                            "  }\n"
                            "}\n"
                            "if n == 0 {\n"
                            "}");
}

} // namespace
} // namespace dsc::ir
