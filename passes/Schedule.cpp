#include "passes/Schedule.h"

#include <functional>
#include <map>
#include <optional>
#include <set>

#include "ir/Functor.h"
#include "symbolic/Eval.h"
#include "symbolic/Simplify.h"

namespace dsc::passes {

namespace {

namespace sym = symbolic;
using ir::ForKind;
using ir::PrimExpr;
using ir::Stmt;

// Elements a parallel chunk of a split single loop covers.
constexpr int64_t kChunk = 4096;
// Loops shorter than this (by a constant extent) are not worth vectorizing.
constexpr int64_t kMinVectorExtent = 4;
// A reduction loop shorter than this (a conv's kernel width) is not worth keeping innermost.
constexpr int64_t kShortReduction = 16;

std::set<std::string> symbols_of(const sym::Expr& e) {
  return e.defined() ? sym::free_symbols(e) : std::set<std::string>{};
}

bool mentions(const sym::Expr& e, const std::string& name) {
  return symbols_of(e).count(name) > 0;
}

std::optional<int64_t> const_value(const sym::Expr& e) {
  sym::Expr s = sym::simplify(e);
  if (const sym::Const* c = s.as<sym::Const>()) return c->value;
  return std::nullopt;
}

// One buffer access; an index that is no Index (a loaded integer) is left undefined.
struct Access {
  std::string buffer;
  std::vector<sym::Expr> idx;
};

std::vector<sym::Expr> index_exprs(const std::vector<PrimExpr>& indices) {
  std::vector<sym::Expr> out;
  for (const PrimExpr& i : indices) {
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

// What a statement does, for dependence questions.
struct Summary : ir::IRVisitor {
  using ir::IRVisitor::visit;
  std::vector<Access> stores, loads;
  std::vector<const ir::Assign*> assigns;
  std::set<std::string> locals;    // declared inside
  std::set<std::string> loop_vars; // declared inside
  std::vector<const ir::For*> fors;
  bool has_evaluate = false;
  std::map<std::string, int> local_reads;

protected:
  void visit_node(const ir::Store* node) override {
    stores.push_back({node->buffer, index_exprs(node->indices)});
    ir::IRVisitor::visit_node(node);
  }
  void visit_node(const ir::Load* node) override {
    loads.push_back({node->buffer, index_exprs(node->indices)});
    ir::IRVisitor::visit_node(node);
  }
  void visit_node(const ir::Assign* node) override {
    assigns.push_back(node);
    ir::IRVisitor::visit_node(node);
  }
  void visit_node(const ir::LocalDecl* node) override {
    locals.insert(node->name);
    ir::IRVisitor::visit_node(node);
  }
  void visit_node(const ir::LocalRef* node) override { ++local_reads[node->name]; }
  void visit_node(const ir::For* node) override {
    loop_vars.insert(node->var);
    fors.push_back(node);
    ir::IRVisitor::visit_node(node);
  }
  void visit_node(const ir::Evaluate* node) override {
    has_evaluate = true;
    ir::IRVisitor::visit_node(node);
  }
};

Summary summarize(const Stmt& s) {
  Summary sm;
  sm.visit(s);
  return sm;
}

// The statement a Seq of one wraps.
const Stmt& unwrap(const Stmt& s) {
  if (const ir::Seq* seq = s.as<ir::Seq>(); seq && seq->stmts.size() == 1)
    return unwrap(seq->stmts[0]);
  return s;
}

class PrimScheduler {
public:
  explicit PrimScheduler(const ir::PrimFunc& p) : p_(p) {
    for (const std::vector<ir::Buffer>* bufs : {&p.inputs, &p.outputs})
      for (const ir::Buffer& b : *bufs)
        declare(b.name, b.dtype, b.shape);
    names_ = collect_names(p);
  }

  Stmt run() {
    Stmt body = interchange_all(p_.body);
    body = vectorize(body);
    return parallelize(body);
  }

private:
  void declare(const std::string& name, ir::DType dtype, const std::vector<sym::Expr>& shape) {
    shapes_[name] = shape;
    dtypes_[name] = dtype;
  }

  static std::set<std::string> collect_names(const ir::PrimFunc& p) {
    struct Names : ir::IRVisitor {
      std::set<std::string> names;
      void add(const sym::Expr& e) {
        for (const std::string& s : symbols_of(e))
          names.insert(s);
      }

    protected:
      void visit_node(const ir::For* node) override {
        names.insert(node->var);
        add(node->min);
        add(node->extent);
        ir::IRVisitor::visit_node(node);
      }
      void visit_node(const ir::LocalDecl* node) override {
        names.insert(node->name);
        ir::IRVisitor::visit_node(node);
      }
      void visit_node(const ir::Alloc* node) override {
        names.insert(node->name);
        ir::IRVisitor::visit_node(node);
      }
      void visit_node(const ir::Index* node) override { add(node->value); }
    } n;
    for (const std::vector<ir::Buffer>* bufs : {&p.inputs, &p.outputs})
      for (const ir::Buffer& b : *bufs) {
        n.names.insert(b.name);
        for (const sym::Expr& d : b.shape)
          n.add(d);
      }
    n.visit(p.body);
    return n.names;
  }

  std::string fresh(const std::string& hint) {
    for (int k = 0;; ++k) {
      std::string name = hint + std::to_string(k);
      if (names_.insert(name).second) return name;
    }
  }

  // The index of an access along its innermost dim that is not a constant 1 (its elements are
  // adjacent along it); undefined when it is not an Index.
  sym::Expr innermost_index(const Access& a) const {
    auto it = shapes_.find(a.buffer);
    if (a.idx.empty()) return sym::Expr();
    size_t k = a.idx.size() - 1;
    if (it != shapes_.end() && it->second.size() == a.idx.size())
      while (k > 0 && const_value(it->second[k]) == 1)
        --k;
    return a.idx[k];
  }

  // `var + g` with g free of var (and of `others`): the access moves by one element per step.
  bool contiguous(const Access& a, const std::string& var) const {
    sym::Expr e = innermost_index(a);
    if (!e.defined() || !mentions(e, var)) return false;
    return !mentions(sym::simplify(e - sym::sym(var)), var);
  }

  // --------------------------------------------------------------- reduction interchange

  Stmt interchange_all(const Stmt& s) {
    struct Walker : ir::IRMutator {
      PrimScheduler* self = nullptr;

    protected:
      Stmt mutate_node(const ir::For* node, const Stmt& me) override {
        Stmt swapped = self->interchange(*node);
        if (swapped.defined()) return swapped;
        return ir::IRMutator::mutate_node(node, me);
      }
    } w;
    w.self = this;
    return w.mutate(s);
  }

  // For j { var acc = init; R; out[..., j] = fin(acc) } with R a reduction nest updating acc:
  // Seq { for j { out[..., j] = init }; R with its innermost body inside a new `for j`,
  // updating out[..., j] in place; for j { out[..., j] = fin(out[..., j]) } }.
  Stmt interchange(const ir::For& loop) {
    const ir::Seq* body = unwrap(loop.body).as<ir::Seq>();
    if (!body || body->stmts.size() != 3) return Stmt();
    const ir::LocalDecl* decl = body->stmts[0].as<ir::LocalDecl>();
    const ir::For* reduce = unwrap(body->stmts[1]).as<ir::For>();
    const ir::Store* store = body->stmts[2].as<ir::Store>();
    if (!decl || !decl->is_mutable || !reduce || !store) return Stmt();
    const std::string& j = loop.var;
    const std::string& acc = decl->name;
    Access out{store->buffer, index_exprs(store->indices)};
    for (const sym::Expr& i : out.idx)
      if (!i.defined()) return Stmt();
    sym::Expr last = innermost_index(out);
    if (!last.defined() || !last.is<sym::Sym>() || last.as<sym::Sym>()->name != j) return Stmt();
    auto dt = dtypes_.find(out.buffer);
    if (dt == dtypes_.end() || dt->second != decl->dtype) return Stmt();

    Summary r = summarize(body->stmts[1]);
    if (!r.stores.empty() || r.has_evaluate) return Stmt();
    for (const ir::Assign* a : r.assigns)
      if (a->name != acc) return Stmt();
    for (const ir::For* f : r.fors)
      if (mentions(f->min, j) || mentions(f->extent, j)) return Stmt();
    for (const Access& a : r.loads)
      if (a.buffer == out.buffer) return Stmt();
    // The one innermost loop holds every use of acc and of j.
    const ir::For* inner = nullptr;
    for (const ir::For* f : r.fors) {
      if (!summarize(f->body).fors.empty()) continue;
      if (inner) return Stmt();
      inner = f;
    }
    if (!inner) return Stmt();
    Summary in = summarize(inner->body);
    if (in.assigns.size() != r.assigns.size() || in.local_reads[acc] != r.local_reads[acc])
      return Stmt();
    if (uses_outside(body->stmts[1], inner, j)) return Stmt();
    // The final value reads acc, and nothing of out.
    Summary fin;
    fin.visit(store->value);
    for (const Access& a : fin.loads)
      if (a.buffer == out.buffer) return Stmt();

    // Worth it: the kept axis is contiguous in some load, and in at least as many as the
    // innermost reduction loop is, unless that loop is too short to vectorize anyway (a
    // reduction over the last axis stays as it is; a conv's kernel width gives way).
    int by_j = 0, by_r = 0;
    for (const Access& a : in.loads) {
      by_j += contiguous(a, j) ? 1 : 0;
      by_r += contiguous(a, inner->var) ? 1 : 0;
    }
    std::optional<int64_t> r_extent = const_value(inner->extent);
    bool short_r = r_extent && *r_extent < kShortReduction;
    if (by_j == 0 || (by_j < by_r && !short_r)) return Stmt();

    ir::DType out_dtype = dt->second;
    PrimExpr current = ir::Load::make(out_dtype, store->buffer, store->indices);
    auto j_loop = [&](Stmt s) {
      return ir::For::make(j, loop.min, loop.extent, ForKind::Serial, std::move(s));
    };
    // acc becomes out[..., j].
    struct AccToOut : ir::IRMutator {
      std::string acc;
      const ir::Store* store = nullptr;
      PrimExpr current;

    protected:
      PrimExpr mutate_node(const ir::LocalRef* node, const PrimExpr& me) override {
        return node->name == acc ? current : me;
      }
      Stmt mutate_node(const ir::Assign* node, const Stmt& me) override {
        if (node->name != acc) return ir::IRMutator::mutate_node(node, me);
        return ir::Store::make(store->buffer, store->indices, mutate(node->value), node->loc);
      }
    } to_out;
    to_out.acc = acc;
    to_out.store = store;
    to_out.current = current;

    struct WrapInner : ir::IRMutator {
      const ir::For* inner = nullptr;
      std::function<Stmt(Stmt)> wrap;

    protected:
      Stmt mutate_node(const ir::For* node, const Stmt& me) override {
        if (node != inner) return ir::IRMutator::mutate_node(node, me);
        return ir::For::make(node->var, node->min, node->extent, node->for_kind, wrap(node->body),
                             node->loc);
      }
    } wrap;
    wrap.inner = inner;
    wrap.wrap = [&](Stmt b) { return j_loop(to_out.mutate(b)); };

    std::vector<Stmt> stmts;
    stmts.push_back(j_loop(ir::Store::make(store->buffer, store->indices, decl->init)));
    stmts.push_back(wrap.mutate(body->stmts[1]));
    const ir::LocalRef* plain = store->value.as<ir::LocalRef>();
    if (!plain || plain->name != acc)
      stmts.push_back(
          j_loop(ir::Store::make(store->buffer, store->indices, to_out.mutate(store->value))));
    return ir::Seq::make(std::move(stmts), loop.loc);
  }

  // Whether `s` mentions symbol `name` anywhere but inside `inner`'s body.
  static bool uses_outside(const Stmt& s, const ir::For* inner, const std::string& name) {
    struct Uses : ir::IRVisitor {
      const ir::For* inner = nullptr;
      std::string name;
      bool found = false;

    protected:
      void visit_node(const ir::For* node) override {
        found |= mentions(node->min, name) || mentions(node->extent, name);
        if (node != inner) ir::IRVisitor::visit_node(node);
      }
      void visit_node(const ir::Index* node) override { found |= mentions(node->value, name); }
    } u;
    u.inner = inner;
    u.name = name;
    u.visit(s);
    return u.found;
  }

  // --------------------------------------------------------------- vectorize

  // A local update the vectorizer turns into vector accumulators: acc = acc op e.
  static bool simple_reduction(const ir::Assign& a) {
    const ir::PrimBinary* b = a.value.as<ir::PrimBinary>();
    if (!b) return false;
    if (b->op != ir::BinaryOp::Add && b->op != ir::BinaryOp::Mul && b->op != ir::BinaryOp::Min &&
        b->op != ir::BinaryOp::Max)
      return false;
    auto is_acc = [&](const PrimExpr& e) {
      const ir::LocalRef* r = e.as<ir::LocalRef>();
      return r && r->name == a.name;
    };
    const PrimExpr& other = is_acc(b->a) ? b->b : b->a;
    if (!is_acc(b->a) && !is_acc(b->b)) return false;
    Summary s;
    s.visit(other);
    return s.local_reads[a.name] == 0;
  }

  bool vectorizable(const ir::For& loop) {
    if (std::optional<int64_t> n = const_value(loop.extent); n && *n < kMinVectorExtent)
      return false;
    Summary s = summarize(loop.body);
    if (!s.fors.empty() || s.has_evaluate) return false;
    bool any_contiguous = false;
    std::set<std::string> stored;
    for (const Access& a : s.stores) {
      if (!contiguous(a, loop.var)) return false;
      stored.insert(a.buffer);
      any_contiguous = true;
    }
    for (const Access& a : s.loads) {
      if (stored.count(a.buffer)) {
        bool same = false;
        for (const Access& w : s.stores)
          same |= w.buffer == a.buffer && same_indices(w.idx, a.idx);
        if (!same) return false;
      }
      any_contiguous |= contiguous(a, loop.var);
    }
    for (const ir::Assign* a : s.assigns)
      if (!s.locals.count(a->name) && !simple_reduction(*a)) return false;
    return any_contiguous;
  }

  Stmt vectorize(const Stmt& s) {
    struct Walker : ir::IRMutator {
      PrimScheduler* self = nullptr;

    protected:
      Stmt mutate_node(const ir::For* node, const Stmt& me) override {
        Stmt inner = ir::IRMutator::mutate_node(node, me);
        const ir::For* f = inner.as<ir::For>();
        if (f->for_kind != ForKind::Serial || !self->vectorizable(*f)) return inner;
        return ir::For::make(f->var, f->min, f->extent, ForKind::Vectorized, f->body, f->loc);
      }
    } w;
    w.self = this;
    return w.mutate(s);
  }

  // --------------------------------------------------------------- parallel

  // Iterations of `loop` write distinct elements and update no local declared outside it.
  bool parallel_safe(const ir::For& loop) {
    Summary s = summarize(loop.body);
    if (s.has_evaluate) return false;
    for (const ir::Assign* a : s.assigns)
      if (!s.locals.count(a->name)) return false;
    std::set<std::string> stored;
    for (const Access& a : s.stores) {
      stored.insert(a.buffer);
      bool distinct = false;
      for (const sym::Expr& i : a.idx) {
        if (!i.defined() || !mentions(i, loop.var)) continue;
        sym::Expr rest = sym::simplify(i - sym::sym(loop.var));
        bool free = !mentions(rest, loop.var);
        for (const std::string& v : s.loop_vars)
          free = free && !mentions(rest, v);
        distinct |= free;
      }
      if (!distinct) return false;
    }
    for (const Access& a : s.loads) {
      if (!stored.count(a.buffer)) continue;
      bool same = false;
      for (const Access& w : s.stores)
        same |= w.buffer == a.buffer && same_indices(w.idx, a.idx);
      if (!same) return false;
    }
    return true;
  }

  // An innermost loop over contiguous elements (too short to vectorize): it stays serial
  // inside the parallel ones.
  bool innermost_contiguous(const ir::For& f) const {
    Summary s = summarize(f.body);
    if (!s.fors.empty()) return false;
    for (const std::vector<Access>* accesses : {&s.stores, &s.loads})
      for (const Access& a : *accesses)
        if (contiguous(a, f.var)) return true;
    return false;
  }

  Stmt parallel_chain(const Stmt& s) {
    const ir::For* f = s.as<ir::For>();
    if (!f || f->for_kind != ForKind::Serial || !parallel_safe(*f)) return s;
    if (innermost_contiguous(*f)) return s;
    Stmt body = f->body;
    const Stmt& inner = unwrap(body);
    if (inner.is<ir::For>()) body = parallel_chain(inner);
    return ir::For::make(f->var, f->min, f->extent, ForKind::Parallel, body, f->loc);
  }

  static void flatten(const Stmt& s, std::vector<Stmt>& out) {
    if (const ir::Seq* seq = s.as<ir::Seq>()) {
      for (const Stmt& t : seq->stmts)
        flatten(t, out);
      return;
    }
    out.push_back(s);
  }

  Stmt parallelize(const Stmt& s) {
    std::vector<Stmt> top;
    flatten(s, top);
    for (Stmt& t : top) {
      const Stmt& u = unwrap(t);
      const ir::For* f = u.as<ir::For>();
      if (!f) continue;
      if (f->for_kind == ForKind::Vectorized) {
        t = chunked(*f);
        continue;
      }
      t = parallel_chain(u);
    }
    return ir::Seq::make(std::move(top), s->loc);
  }

  // for v in lo..lo+n vectorize { body } as parallel chunks of kChunk elements.
  Stmt chunked(const ir::For& f) {
    std::optional<int64_t> n = const_value(f.extent);
    if ((n && *n <= kChunk) || !parallel_safe(f))
      return ir::For::make(f.var, f.min, f.extent, f.for_kind, f.body, f.loc);
    std::string outer = fresh("chunk");
    sym::Expr c = sym::sym(outer);
    sym::Expr count =
        sym::simplify(sym::floordiv(f.extent + sym::Expr(kChunk - 1), sym::Expr(kChunk)));
    sym::Expr lo = sym::simplify(f.min + c * sym::Expr(kChunk));
    sym::Expr len = sym::simplify(sym::min(sym::Expr(kChunk), f.extent - c * sym::Expr(kChunk)));
    Stmt inner = ir::For::make(f.var, lo, len, ForKind::Vectorized, f.body, f.loc);
    return ir::For::make(outer, sym::Expr(0), count, ForKind::Parallel, inner, f.loc);
  }

  const ir::PrimFunc& p_;
  std::map<std::string, std::vector<sym::Expr>> shapes_;
  std::map<std::string, ir::DType> dtypes_;
  std::set<std::string> names_;
};

bool has_scheduled_loop(const Stmt& s) {
  struct Finder : ir::IRVisitor {
    bool found = false;

  protected:
    void visit_node(const ir::For* node) override {
      found |= node->for_kind != ForKind::Serial;
      ir::IRVisitor::visit_node(node);
    }
  } f;
  f.visit(s);
  return f.found;
}

} // namespace

ir::Module schedule(const ir::Module& legalized, PassContext& ctx) {
  // These are CPU schedules (parallel and vectorize loops); the GPU schedule is to come, and
  // until then a GPU target's prims stay serial.
  if (ctx.target.kind != ir::TargetKind::Cpu) return legalized;
  ir::Module out;
  out.imports = legalized.imports;
  for (const ir::Module::Decl& d : legalized.decls) {
    if (!d.prim || !d.prim->body.defined() || has_scheduled_loop(d.prim->body)) {
      out.decls.push_back(d);
      continue;
    }
    auto* p = new ir::PrimFunc();
    p->name = d.prim->name;
    p->inputs = d.prim->inputs;
    p->outputs = d.prim->outputs;
    p->where = d.prim->where;
    p->loc = d.prim->loc;
    p->body = PrimScheduler(*d.prim).run();
    out.add(Ref<ir::PrimFunc>(p));
  }
  return out;
}

} // namespace dsc::passes
