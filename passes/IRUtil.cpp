#include "passes/IRUtil.h"

#include <set>

#include "ir/Functor.h"

#include "symbolic/Eval.h"

namespace dsc::passes {

namespace sym = symbolic;

bool is_generic(const ir::Function& f) {
  for (const ir::VarRef& p : f.params)
    if (p->type.kind == ir::Type::Kind::Any || p->type.is_attribute()) return true;
  return false;
}

void add_symbols(const sym::Expr& e, std::set<std::string>& out) {
  if (!e.defined()) return;
  for (const std::string& s : sym::free_symbols(e))
    out.insert(s);
}

void add_symbols(const ir::Type& t, std::set<std::string>& out) {
  for (const sym::Expr& d : t.shape)
    add_symbols(d, out);
  for (const ir::Type& f : t.fields)
    add_symbols(f, out);
}

void collect_symbols(const ir::Expr& e, bool all, std::set<std::string>& symbols,
                     std::set<std::string>* names) {
  if (!e.defined()) return;
  if (all) add_symbols(e->type, symbols);
  switch (e.kind()) {
  case ir::NodeKind::Var:
    if (names) names->insert(e.as<ir::Var>()->name);
    return;
  case ir::NodeKind::ShapeExpr:
    for (const sym::Expr& d : e.as<ir::ShapeExpr>()->dims)
      add_symbols(d, symbols);
    return;
  case ir::NodeKind::ListExpr:
    for (const ir::Expr& i : e.as<ir::ListExpr>()->items)
      collect_symbols(i, all, symbols, names);
    return;
  case ir::NodeKind::Call: {
    const ir::Call* c = e.as<ir::Call>();
    for (const ir::Expr& a : c->args)
      collect_symbols(a, all, symbols, names);
    for (const ir::KeywordArg& k : c->kwargs)
      collect_symbols(k.value, all, symbols, names);
    return;
  }
  case ir::NodeKind::Tuple:
    for (const ir::Expr& f : e.as<ir::Tuple>()->fields)
      collect_symbols(f, all, symbols, names);
    return;
  case ir::NodeKind::GetItem:
    collect_symbols(e.as<ir::GetItem>()->tuple, all, symbols, names);
    return;
  case ir::NodeKind::If: {
    const ir::If* i = e.as<ir::If>();
    if (i->cond.defined()) collect_symbols(i->cond, all, symbols, names);
    if (i->guard.defined()) add_symbols(i->guard, symbols);
    collect_symbols(i->then_branch, all, symbols, names);
    collect_symbols(i->else_branch, all, symbols, names);
    return;
  }
  case ir::NodeKind::Loop: {
    const ir::Loop* l = e.as<ir::Loop>();
    symbols.insert(l->var);
    add_symbols(l->lo, symbols);
    if (l->bound.defined()) add_symbols(l->bound, symbols);
    if (all && l->trips.defined()) add_symbols(l->trips, symbols);
    collect_symbols(l->hi, all, symbols, names);
    for (size_t k = 0; k < l->carries.size(); ++k) {
      if (names) names->insert(l->carries[k]->name);
      if (all || l->declared[k]) add_symbols(l->carries[k]->type, symbols);
      collect_symbols(l->inits[k], all, symbols, names);
    }
    collect_symbols(l->cond, all, symbols, names);
    collect_symbols(l->body, all, symbols, names);
    return;
  }
  case ir::NodeKind::Block: {
    const ir::Block* b = e.as<ir::Block>();
    for (const ir::Binding& bind : b->bindings) {
      for (const ir::VarRef& v : bind.vars) {
        if (names) names->insert(v->name);
        if (all || bind.has_asserted_type) add_symbols(v->type, symbols);
      }
      collect_symbols(bind.value, all, symbols, names);
    }
    collect_symbols(b->result, all, symbols, names);
    return;
  }
  default:
    return;
  }
}

Ref<ir::Function> rebuild_function(const ir::Function& f, ir::Type ret_type, ir::Expr body,
                                   std::vector<ir::ShapeFact> facts) {
  auto* nf = new ir::Function();
  nf->name = f.name;
  nf->params = f.params;
  nf->defaults = f.defaults;
  nf->ret_type = std::move(ret_type);
  nf->where = f.where;
  nf->body = std::move(body);
  nf->facts = std::move(facts);
  nf->loc = f.loc;
  return Ref<ir::Function>(nf);
}

std::set<std::string> prim_names(const ir::PrimFunc& p) {
  StmtNames n = stmt_names(p.body);
  std::set<std::string> names = n.symbols;
  names.insert(n.loop_vars.begin(), n.loop_vars.end());
  names.insert(n.declared.begin(), n.declared.end());
  for (const std::vector<ir::Buffer>* bufs : {&p.inputs, &p.outputs})
    for (const ir::Buffer& b : *bufs) {
      names.insert(b.name);
      for (const symbolic::Expr& d : b.shape) add_symbols(d, names);
    }
  return names;
}

const ir::Stmt& unwrap(const ir::Stmt& s) {
  if (const ir::Seq* seq = s.as<ir::Seq>(); seq && seq->stmts.size() == 1) return unwrap(seq->stmts[0]);
  return s;
}

StmtNames stmt_names(const ir::Stmt& s) {
  struct Names : ir::IRVisitor {
    StmtNames out;

  protected:
    void visit_node(const ir::Index* node) override { add_symbols(node->value, out.symbols); }
    void visit_node(const ir::For* node) override {
      out.loop_vars.insert(node->var);
      add_symbols(node->min, out.symbols);
      add_symbols(node->extent, out.symbols);
      ir::IRVisitor::visit_node(node);
    }
    void visit_node(const ir::LocalDecl* node) override {
      out.declared.insert(node->name);
      ir::IRVisitor::visit_node(node);
    }
    void visit_node(const ir::Alloc* node) override {
      out.declared.insert(node->name);
      for (const symbolic::Expr& d : node->shape) add_symbols(d, out.symbols);
      ir::IRVisitor::visit_node(node);
    }
  } names;
  names.visit(s);
  return std::move(names.out);
}

std::vector<ir::Binding> live_bindings(const ir::Block& body) {
  struct Reads : ir::IRVisitor {
    std::set<const ir::Var*> vars;
    void visit_node(const ir::Var* v) override { vars.insert(v); }
  } reads;
  reads.visit(body.result);
  std::vector<bool> live(body.bindings.size(), false);
  for (size_t i = body.bindings.size(); i-- > 0;) {
    const ir::Binding& b = body.bindings[i];
    for (const ir::VarRef& v : b.vars)
      live[i] = live[i] || reads.vars.count(v.get());
    if (live[i]) reads.visit(b.value);
  }
  std::vector<ir::Binding> out;
  for (size_t i = 0; i < body.bindings.size(); ++i)
    if (live[i]) out.push_back(body.bindings[i]);
  return out;
}

} // namespace dsc::passes
