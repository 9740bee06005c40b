#include "passes/AccessAnalysis.h"

#include <functional>
#include <optional>
#include <set>

#include "ir/Combiner.h"
#include "ir/Functor.h"
#include "support/Assert.h"
#include "symbolic/Eval.h"
#include "symbolic/Polynomial.h"
#include "symbolic/Simplify.h"

namespace dsc::passes {

namespace {

namespace sym = symbolic;

bool mentions_any(const sym::Expr& e, const std::set<std::string>& names) {
  for (const std::string& s : sym::free_symbols(e))
    if (names.count(s)) return true;
  return false;
}

// c when e == c*var + g with c and g free of var; undefined when e is not affine in var.
sym::Expr coefficient(const sym::Expr& e, const std::string& var) {
  sym::Polynomial p = sym::Polynomial::from_expr(sym::simplify(e));
  if (!p.ok()) return sym::Expr();
  sym::Polynomial c;
  for (const sym::Term& t : p.terms()) {
    int degree = 0;
    sym::Polynomial rest = sym::Polynomial::constant(t.coeff);
    for (const sym::Expr& f : t.monomial.factors) {
      const sym::Sym* s = f.as<sym::Sym>();
      if (s && s->name == var) {
        ++degree;
        continue;
      }
      if (sym::free_symbols(f).count(var)) return sym::Expr();
      rest = rest * sym::Polynomial::atom(f);
    }
    if (degree > 1) return sym::Expr();
    if (degree == 1) c = c + rest;
  }
  return c.ok() ? sym::simplify(c.to_expr()) : sym::Expr();
}

// Reads of locals and loads of buffers in an expression or statement.
struct Reads : ir::IRVisitor {
  using ir::IRVisitor::visit;
  std::map<std::string, int> locals;
  std::map<std::string, int> buffers;

protected:
  void visit_node(const ir::LocalRef* node) override { ++locals[node->name]; }
  void visit_node(const ir::Load* node) override {
    ++buffers[node->buffer];
    ir::IRVisitor::visit_node(node);
  }
};

template <typename Node> Reads reads_of(const Node& n) {
  Reads r;
  r.visit(n);
  return r;
}

// `value` as `name op e` or `e op name` with op a combiner: the op and e.
std::vector<sym::Expr> canonical_indices(const std::vector<ir::PrimExpr>& indices) {
  std::vector<sym::Expr> out;
  for (const ir::PrimExpr& i : indices) {
    const ir::Index* x = i.as<ir::Index>();
    out.push_back(x ? sym::simplify(x->value) : sym::Expr());
  }
  return out;
}

bool same_indices(const std::vector<sym::Expr>& a, const std::vector<sym::Expr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!a[i].defined() || !b[i].defined() || !a[i].same_as(b[i])) return false;
  return true;
}

// What a loop body declares, assigns and does, besides its accesses.
struct BodySummary : ir::IRVisitor {
  using ir::IRVisitor::visit;
  std::set<std::string> locals, allocs;
  std::vector<const ir::Assign*> assigns;
  std::map<std::string, int> local_reads;
  bool has_effect = false;

protected:
  void visit_node(const ir::LocalDecl* node) override {
    locals.insert(node->name);
    ir::IRVisitor::visit_node(node);
  }
  void visit_node(const ir::Alloc* node) override {
    allocs.insert(node->name);
    ir::IRVisitor::visit_node(node);
  }
  void visit_node(const ir::Assign* node) override {
    assigns.push_back(node);
    ir::IRVisitor::visit_node(node);
  }
  void visit_node(const ir::LocalRef* node) override { ++local_reads[node->name]; }
  void visit_node(const ir::Evaluate* node) override {
    has_effect = true;
    ir::IRVisitor::visit_node(node);
  }
};

} // namespace

AccessAnalysis::AccessAnalysis(const ir::PrimFunc& prim, const ir::Stmt& body,
                               symbolic::Prover& prover)
    : prover_(prover) {
  for (const ir::WhereClause& w : prim.where)
    facts_.add(w.predicate);
  for (const std::vector<ir::Buffer>* bufs : {&prim.inputs, &prim.outputs})
    for (const ir::Buffer& b : *bufs)
      shapes_[b.name] = b.shape;

  struct Collector : ir::IRVisitor {
    using ir::IRVisitor::visit;
    AccessAnalysis* self = nullptr;
    std::vector<size_t> open; // indices into loops_ of the loops around

    void add(const ir::Load* load, const ir::Store* store, const std::string& buffer,
             const std::vector<ir::PrimExpr>& indices) {
      Access a;
      a.load = load;
      a.store = store;
      a.buffer = buffer;
      a.indices = canonical_indices(indices);
      auto shape = self->shapes_.find(a.buffer);
      bool known = shape != self->shapes_.end() && shape->second.size() == a.indices.size();
      if (known) {
        sym::Expr flat(0);
        for (size_t k = 0; k < a.indices.size() && flat.defined(); ++k)
          flat = a.indices[k].defined() ? flat * shape->second[k] + a.indices[k] : sym::Expr();
        if (flat.defined()) a.flat = sym::simplify(flat);
      }
      for (size_t l : open) {
        const std::string& var = self->loops_[l].loop->var;
        a.strides[var] = a.flat.defined() ? coefficient(a.flat, var) : sym::Expr();
      }
      size_t id = self->accesses_.size();
      self->accesses_.push_back(std::move(a));
      for (size_t l : open)
        self->loops_[l].accesses.push_back(id);
    }

  protected:
    void visit_node(const ir::For* node) override {
      LoopInfo info;
      info.loop = node;
      info.innermost = true;
      if (!open.empty()) {
        info.parent = self->loops_[open.back()].loop;
        self->loops_[open.back()].innermost = false;
      }
      self->index_[node] = self->loops_.size();
      open.push_back(self->loops_.size());
      self->loops_.push_back(std::move(info));
      ir::IRVisitor::visit_node(node);
      open.pop_back();
    }
    void visit_node(const ir::Alloc* node) override {
      self->shapes_[node->name] = node->shape;
      ir::IRVisitor::visit_node(node);
    }
    void visit_node(const ir::Load* node) override {
      add(node, nullptr, node->buffer, node->indices);
      ir::IRVisitor::visit_node(node);
    }
    void visit_node(const ir::Store* node) override {
      add(nullptr, node, node->buffer, node->indices);
      ir::IRVisitor::visit_node(node);
    }
  } collect;
  collect.self = this;
  collect.visit(body);

  for (LoopInfo& info : loops_)
    analyze_loop(info);
}

const LoopInfo& AccessAnalysis::loop(const ir::For* f) const {
  auto it = index_.find(f);
  internal_assert(it != index_.end()) << "a loop outside the analyzed statement";
  return loops_[it->second];
}

sym::Expr AccessAnalysis::stride(const Access& a, const std::string& var) const {
  auto it = a.strides.find(var);
  return it == a.strides.end() ? sym::Expr() : it->second;
}

bool AccessAnalysis::contiguous(const Access& a, const std::string& var) const {
  sym::Expr s = stride(a, var);
  if (!s.defined()) return false;
  if (const sym::Const* c = s.as<sym::Const>()) return c->value == 1;
  return prover_.prove(sym::eq(s, sym::Expr(1)), facts_).verdict == sym::Verdict::Proved;
}

bool AccessAnalysis::at_least(const sym::Expr& e, int64_t low) const {
  return proves(sym::ge(e, sym::Expr(low)));
}

bool AccessAnalysis::proves(const sym::Expr& predicate) const {
  return prover_.prove(predicate, facts_).verdict == sym::Verdict::Proved;
}

void AccessAnalysis::analyze_loop(LoopInfo& info) {
  const std::string& var = info.loop->var;
  BodySummary body;
  body.visit(info.loop->body);

  std::set<std::string> inner_vars, other_vars;
  for (const LoopInfo& l : loops_) {
    if (l.loop->var == var) continue;
    other_vars.insert(l.loop->var);
    for (const ir::For* p = l.parent; p; p = loop(p).parent)
      if (p == info.loop) inner_vars.insert(l.loop->var);
  }

  // Some dimension indexes both as c*var + g, the same nonzero c and g, g free of `varying`.
  auto separated = [&](const Access& w, const Access& a, const std::set<std::string>& varying) {
    if (w.indices.size() != a.indices.size()) return false;
    for (size_t k = 0; k < w.indices.size(); ++k) {
      if (!w.indices[k].defined() || !a.indices[k].defined()) continue;
      sym::Expr c = coefficient(w.indices[k], var);
      if (!c.defined() || !sym::canonically_equal(c, coefficient(a.indices[k], var))) continue;
      bool nonzero = c.is<sym::Const>() ? c.as<sym::Const>()->value != 0
                                        : prover_.prove(sym::ne(c, sym::Expr(0)), facts_).verdict ==
                                              sym::Verdict::Proved;
      if (!nonzero) continue;
      sym::Expr g = sym::simplify(w.indices[k] - c * sym::sym(var));
      if (!sym::canonically_equal(g, a.indices[k] - c * sym::sym(var))) continue;
      if (!sym::free_symbols(g).count(var) && !mentions_any(g, varying)) return true;
    }
    return false;
  };

  // Buffers the loop writes (Allocs inside it are private to an iteration).
  std::map<std::string, std::vector<const Access*>> by_buffer;
  std::set<std::string> written;
  for (size_t id : info.accesses) {
    const Access& a = accesses_[id];
    if (body.allocs.count(a.buffer)) continue;
    by_buffer[a.buffer].push_back(&a);
    if (a.is_store()) written.insert(a.buffer);
  }
  auto all_separated = [&](const std::string& b, const std::set<std::string>& varying) {
    for (const Access* w : by_buffer[b]) {
      if (!w->is_store()) continue;
      for (const Access* a : by_buffer[b])
        if (!separated(*w, *a, varying)) return false;
    }
    return true;
  };

  // Every access of b is `b[I] = b[I] op e` or its load of b[I], one op, e loading no b.
  auto buffer_reduction = [&](const std::string& b) -> std::optional<ir::BinaryOp> {
    std::optional<ir::BinaryOp> op;
    std::set<const ir::Load*> update_loads;
    for (const Access* a : by_buffer[b]) {
      if (!a->is_store()) continue;
      const ir::Store* s = a->store;
      std::optional<ir::Update> u = ir::as_update(s->value, [&](const ir::PrimExpr& e) {
        const ir::Load* l = e.as<ir::Load>();
        return l && l->buffer == b && same_indices(canonical_indices(l->indices), a->indices);
      });
      if (!u || (op && *op != u->op) || reads_of(u->other).buffers.count(b)) return std::nullopt;
      op = u->op;
      update_loads.insert(u->self.as<ir::Load>());
    }
    for (const Access* a : by_buffer[b])
      if (!a->is_store() && !update_loads.count(a->load)) return std::nullopt;
    return op;
  };

  // Every assignment to t is `t = t op e`, one op, e reading no t, and t is read nowhere else.
  auto local_reduction = [&](const std::string& t) -> std::optional<ir::BinaryOp> {
    std::optional<ir::BinaryOp> op;
    int updates = 0;
    for (const ir::Assign* a : body.assigns) {
      if (a->name != t) continue;
      std::optional<ir::Update> u = ir::as_update(a->value, [&](const ir::PrimExpr& e) {
        const ir::LocalRef* r = e.as<ir::LocalRef>();
        return r && r->name == t;
      });
      if (!u || (op && *op != u->op) || reads_of(u->other).locals.count(t)) return std::nullopt;
      op = u->op;
      ++updates;
    }
    if (body.local_reads[t] != updates) return std::nullopt;
    return op;
  };

  bool carried = false, reducible = !body.has_effect;
  std::set<std::string> seen_locals;
  for (const ir::Assign* a : body.assigns) {
    if (body.locals.count(a->name) || !seen_locals.insert(a->name).second) continue;
    carried = true;
    std::optional<ir::BinaryOp> op = local_reduction(a->name);
    if (op)
      info.reductions.push_back({a->name, true, *op});
    else
      reducible = false;
  }
  for (const std::string& b : written) {
    if (all_separated(b, inner_vars)) continue;
    carried = true;
    std::optional<ir::BinaryOp> op = buffer_reduction(b);
    if (op)
      info.reductions.push_back({b, false, *op});
    else
      reducible = false;
  }
  info.independent = !carried && !body.has_effect;
  info.reduction = carried && reducible;
  if (!info.reduction) info.reductions.clear();
  info.movable = info.independent;
  for (const std::string& b : written)
    info.movable = info.movable && all_separated(b, other_vars);
}

} // namespace dsc::passes
