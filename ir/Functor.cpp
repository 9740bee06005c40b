#include "ir/Functor.h"

namespace dsc::ir {

// ---------------------------------------------------------------- dispatch

void IRVisitor::visit(const Expr& e) {
  if (!e.defined()) return;
  switch (e.kind()) {
#define DSC_IR_EXPR(Name)                                                                          \
  case NodeKind::Name:                                                                             \
    visit_node(e.as<Name>());                                                                      \
    return;
#include "ir/Nodes.def"
  default:
    internal_error << "not a graph expression: " << node_kind_name(e.kind());
  }
}

void IRVisitor::visit(const PrimExpr& e) {
  if (!e.defined()) return;
  switch (e.kind()) {
#define DSC_IR_PRIM_EXPR(Name)                                                                     \
  case NodeKind::Name:                                                                             \
    visit_node(e.as<Name>());                                                                      \
    return;
#include "ir/Nodes.def"
  default:
    internal_error << "not a prim expression: " << node_kind_name(e.kind());
  }
}

void IRVisitor::visit(const Stmt& s) {
  if (!s.defined()) return;
  switch (s.kind()) {
#define DSC_IR_STMT(Name)                                                                          \
  case NodeKind::Name:                                                                             \
    visit_node(s.as<Name>());                                                                      \
    return;
#include "ir/Nodes.def"
  default:
    internal_error << "not a statement: " << node_kind_name(s.kind());
  }
}

Expr IRMutator::mutate(const Expr& e) {
  if (!e.defined()) return e;
  switch (e.kind()) {
#define DSC_IR_EXPR(Name)                                                                          \
  case NodeKind::Name:                                                                             \
    return mutate_node(e.as<Name>(), e);
#include "ir/Nodes.def"
  default:
    internal_error << "not a graph expression: " << node_kind_name(e.kind());
  }
}

PrimExpr IRMutator::mutate(const PrimExpr& e) {
  if (!e.defined()) return e;
  switch (e.kind()) {
#define DSC_IR_PRIM_EXPR(Name)                                                                     \
  case NodeKind::Name:                                                                             \
    return mutate_node(e.as<Name>(), e);
#include "ir/Nodes.def"
  default:
    internal_error << "not a prim expression: " << node_kind_name(e.kind());
  }
}

Stmt IRMutator::mutate(const Stmt& s) {
  if (!s.defined()) return s;
  switch (s.kind()) {
#define DSC_IR_STMT(Name)                                                                          \
  case NodeKind::Name:                                                                             \
    return mutate_node(s.as<Name>(), s);
#include "ir/Nodes.def"
  default:
    internal_error << "not a statement: " << node_kind_name(s.kind());
  }
}

// ---------------------------------------------------------------- visitor

void IRVisitor::visit_node(const Var*) {}
void IRVisitor::visit_node(const Literal*) {}
void IRVisitor::visit_node(const StringImm*) {}
void IRVisitor::visit_node(const ShapeExpr*) {}

void IRVisitor::visit_node(const ListExpr* node) {
  for (const Expr& e : node->items)
    visit(e);
}

void IRVisitor::visit_node(const Call* node) {
  for (const Expr& e : node->args)
    visit(e);
  for (const KeywordArg& k : node->kwargs)
    visit(k.value);
}

void IRVisitor::visit_node(const Tuple* node) {
  for (const Expr& e : node->fields)
    visit(e);
}

void IRVisitor::visit_node(const GetItem* node) {
  visit(node->tuple);
}

void IRVisitor::visit_node(const If* node) {
  if (node->cond.defined()) visit(node->cond);
  visit(node->then_branch);
  visit(node->else_branch);
}

void IRVisitor::visit_node(const Loop* node) {
  visit(node->hi);
  for (const Expr& e : node->inits)
    visit(e);
  if (node->cond.defined()) visit(node->cond);
  visit(node->body);
}

void IRVisitor::visit_node(const Block* node) {
  for (const Binding& b : node->bindings)
    visit(b.value);
  visit(node->result);
}

void IRVisitor::visit_node(const IntImm*) {}
void IRVisitor::visit_node(const FloatImm*) {}
void IRVisitor::visit_node(const Index*) {}
void IRVisitor::visit_node(const LocalRef*) {}

void IRVisitor::visit_node(const Load* node) {
  for (const PrimExpr& i : node->indices)
    visit(i);
}

void IRVisitor::visit_node(const PrimBinary* node) {
  visit(node->a);
  visit(node->b);
}

void IRVisitor::visit_node(const Intrinsic* node) {
  for (const PrimExpr& a : node->args)
    visit(a);
}

void IRVisitor::visit_node(const Cast* node) {
  visit(node->value);
}

void IRVisitor::visit_node(const For* node) {
  visit(node->body);
}

void IRVisitor::visit_node(const Store* node) {
  for (const PrimExpr& i : node->indices)
    visit(i);
  visit(node->value);
}

void IRVisitor::visit_node(const LocalDecl* node) {
  visit(node->init);
}
void IRVisitor::visit_node(const Assign* node) {
  visit(node->value);
}

void IRVisitor::visit_node(const IfStmt* node) {
  visit(node->cond);
  visit(node->then_body);
  visit(node->else_body);
}

void IRVisitor::visit_node(const Alloc*) {}

void IRVisitor::visit_node(const Seq* node) {
  for (const Stmt& s : node->stmts)
    visit(s);
}

void IRVisitor::visit_node(const Evaluate* node) {
  visit(node->value);
}

// ---------------------------------------------------------------- mutator

namespace {

// Replaces each element by f(element); true when any changed.
template <typename T, typename F> bool mutate_each(std::vector<T>& items, F&& f) {
  bool changed = false;
  for (T& item : items) {
    T next = f(item);
    if (next.same_as(item)) continue;
    item = std::move(next);
    changed = true;
  }
  return changed;
}

} // namespace

Expr IRMutator::mutate_node(const Var*, const Expr& self) {
  return self;
}
Expr IRMutator::mutate_node(const Literal*, const Expr& self) {
  return self;
}
Expr IRMutator::mutate_node(const StringImm*, const Expr& self) {
  return self;
}
Expr IRMutator::mutate_node(const ShapeExpr*, const Expr& self) {
  return self;
}

Expr IRMutator::mutate_node(const ListExpr* node, const Expr& self) {
  std::vector<Expr> items = node->items;
  if (!mutate_each(items, [this](const Expr& x) { return mutate(x); })) return self;
  return ListExpr::make(std::move(items), node->type, node->loc);
}

Expr IRMutator::mutate_node(const Call* node, const Expr& self) {
  std::vector<Expr> args = node->args;
  bool changed = mutate_each(args, [this](const Expr& x) { return mutate(x); });
  std::vector<KeywordArg> kwargs = node->kwargs;
  for (KeywordArg& k : kwargs) {
    Expr v = mutate(k.value);
    if (v.same_as(k.value)) continue;
    k.value = std::move(v);
    changed = true;
  }
  if (!changed) return self;
  return Call::make(node->callee, std::move(args), std::move(kwargs), node->type, node->loc);
}

Expr IRMutator::mutate_node(const Tuple* node, const Expr& self) {
  std::vector<Expr> fields = node->fields;
  if (!mutate_each(fields, [this](const Expr& x) { return mutate(x); })) return self;
  return Tuple::make(std::move(fields), node->type, node->loc);
}

Expr IRMutator::mutate_node(const GetItem* node, const Expr& self) {
  Expr tuple = mutate(node->tuple);
  if (tuple.same_as(node->tuple)) return self;
  return GetItem::make(std::move(tuple), node->index, node->type, node->loc);
}

Expr IRMutator::mutate_node(const If* node, const Expr& self) {
  Expr cond = node->cond.defined() ? mutate(node->cond) : node->cond;
  Expr then_branch = mutate(node->then_branch);
  Expr else_branch = mutate(node->else_branch);
  if (cond.same_as(node->cond) && then_branch.same_as(node->then_branch) &&
      else_branch.same_as(node->else_branch))
    return self;
  if (node->guard.defined())
    return If::make_guarded(node->guard, std::move(then_branch), std::move(else_branch),
                            node->type, node->loc);
  return If::make(std::move(cond), std::move(then_branch), std::move(else_branch), node->type,
                  node->loc);
}

Expr IRMutator::mutate_node(const Loop* node, const Expr& self) {
  Expr hi = mutate(node->hi);
  std::vector<Expr> inits = node->inits;
  bool changed = mutate_each(inits, [this](const Expr& x) { return mutate(x); });
  Expr cond = node->cond.defined() ? mutate(node->cond) : node->cond;
  Expr body = mutate(node->body);
  if (!changed && hi.same_as(node->hi) && cond.same_as(node->cond) && body.same_as(node->body))
    return self;
  return node->with(node->lo, std::move(hi), node->carries, std::move(inits), std::move(cond),
                    std::move(body), node->trips, node->type);
}

Expr IRMutator::mutate_node(const Block* node, const Expr& self) {
  std::vector<Binding> bindings = node->bindings;
  bool changed = false;
  for (Binding& b : bindings) {
    Expr v = mutate(b.value);
    if (v.same_as(b.value)) continue;
    b.value = std::move(v);
    changed = true;
  }
  Expr result = mutate(node->result);
  if (!changed && result.same_as(node->result)) return self;
  // A Block's type is its result's, so Block::make recomputes it.
  return Block::make(std::move(bindings), std::move(result), node->loc);
}

PrimExpr IRMutator::mutate_node(const IntImm*, const PrimExpr& self) {
  return self;
}
PrimExpr IRMutator::mutate_node(const FloatImm*, const PrimExpr& self) {
  return self;
}
PrimExpr IRMutator::mutate_node(const Index*, const PrimExpr& self) {
  return self;
}
PrimExpr IRMutator::mutate_node(const LocalRef*, const PrimExpr& self) {
  return self;
}

PrimExpr IRMutator::mutate_node(const Load* node, const PrimExpr& self) {
  std::vector<PrimExpr> indices = node->indices;
  if (!mutate_each(indices, [this](const PrimExpr& x) { return mutate(x); })) return self;
  return Load::make(node->dtype, node->buffer, std::move(indices), node->loc);
}

PrimExpr IRMutator::mutate_node(const PrimBinary* node, const PrimExpr& self) {
  PrimExpr a = mutate(node->a);
  PrimExpr b = mutate(node->b);
  if (a.same_as(node->a) && b.same_as(node->b)) return self;
  return PrimBinary::make(node->op, std::move(a), std::move(b), node->loc);
}

PrimExpr IRMutator::mutate_node(const Intrinsic* node, const PrimExpr& self) {
  std::vector<PrimExpr> args = node->args;
  if (!mutate_each(args, [this](const PrimExpr& x) { return mutate(x); })) return self;
  return Intrinsic::make(node->dtype, node->name, std::move(args), node->loc);
}

PrimExpr IRMutator::mutate_node(const Cast* node, const PrimExpr& self) {
  PrimExpr value = mutate(node->value);
  if (value.same_as(node->value)) return self;
  return Cast::make(node->dtype, std::move(value), node->loc);
}

Stmt IRMutator::mutate_node(const For* node, const Stmt& self) {
  Stmt body = mutate(node->body);
  if (body.same_as(node->body)) return self;
  return For::make(node->var, node->min, node->extent, node->for_kind, std::move(body), node->loc);
}

Stmt IRMutator::mutate_node(const Store* node, const Stmt& self) {
  std::vector<PrimExpr> indices = node->indices;
  bool changed = mutate_each(indices, [this](const PrimExpr& x) { return mutate(x); });
  PrimExpr value = mutate(node->value);
  if (!changed && value.same_as(node->value)) return self;
  return Store::make(node->buffer, std::move(indices), std::move(value), node->loc);
}

Stmt IRMutator::mutate_node(const LocalDecl* node, const Stmt& self) {
  PrimExpr init = mutate(node->init);
  if (init.same_as(node->init)) return self;
  return LocalDecl::make(node->name, node->dtype, node->is_mutable, std::move(init), node->loc);
}

Stmt IRMutator::mutate_node(const Assign* node, const Stmt& self) {
  PrimExpr value = mutate(node->value);
  if (value.same_as(node->value)) return self;
  return Assign::make(node->name, std::move(value), node->loc);
}

Stmt IRMutator::mutate_node(const IfStmt* node, const Stmt& self) {
  PrimExpr cond = mutate(node->cond);
  Stmt then_body = mutate(node->then_body);
  Stmt else_body = mutate(node->else_body);
  if (cond.same_as(node->cond) && then_body.same_as(node->then_body) &&
      else_body.same_as(node->else_body))
    return self;
  return IfStmt::make(std::move(cond), std::move(then_body), std::move(else_body), node->loc);
}

Stmt IRMutator::mutate_node(const Alloc*, const Stmt& self) {
  return self;
}

Stmt IRMutator::mutate_node(const Seq* node, const Stmt& self) {
  std::vector<Stmt> stmts = node->stmts;
  if (!mutate_each(stmts, [this](const Stmt& x) { return mutate(x); })) return self;
  return Seq::make(std::move(stmts), node->loc);
}

Stmt IRMutator::mutate_node(const Evaluate* node, const Stmt& self) {
  PrimExpr value = mutate(node->value);
  if (value.same_as(node->value)) return self;
  return Evaluate::make(std::move(value), node->loc);
}

} // namespace dsc::ir
