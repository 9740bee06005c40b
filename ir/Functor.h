#pragma once
// Visitors and a mutator over the IR, generated from Nodes.def.
//
// IRVisitor walks every node (graph Exprs, PrimExprs, Stmts); override the `visit` of the
// kinds you care about and call the base to keep walking.
// IRMutator rebuilds bottom-up and returns the original node when no child changed
// (`same_as`), so untouched subtrees are shared. Rebuilt nodes keep their location and type.
//
// The Vars a Block's bindings bind are binders, not uses: the visitor does not visit them and
// the mutator keeps them (override visit_node/mutate_node(const Block*) to see them). Symbolic
// expressions (dims, Index values, loop bounds) are leaves to both.

#include "ir/IR.h"

namespace dsc::ir {

class IRVisitor {
public:
  virtual ~IRVisitor() = default;
  void visit(const Expr& e);
  void visit(const PrimExpr& e);
  void visit(const Stmt& s);

protected:
#define DSC_IR_EXPR(Name) virtual void visit_node(const Name* node);
#define DSC_IR_PRIM_EXPR(Name) virtual void visit_node(const Name* node);
#define DSC_IR_STMT(Name) virtual void visit_node(const Name* node);
#include "ir/Nodes.def"
};

class IRMutator {
public:
  virtual ~IRMutator() = default;
  Expr mutate(const Expr& e);
  PrimExpr mutate(const PrimExpr& e);
  Stmt mutate(const Stmt& s);

protected:
  // `self` is the handle of `node`, returned unchanged when nothing below changed.
#define DSC_IR_EXPR(Name) virtual Expr mutate_node(const Name* node, const Expr& self);
#define DSC_IR_PRIM_EXPR(Name) virtual PrimExpr mutate_node(const Name* node, const PrimExpr& self);
#define DSC_IR_STMT(Name) virtual Stmt mutate_node(const Name* node, const Stmt& self);
#include "ir/Nodes.def"
};

} // namespace dsc::ir
