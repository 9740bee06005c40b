#include "passes/GpuSchedule.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/Functor.h"
#include "ir/OpRegistry.h"
#include "passes/AccessAnalysis.h"
#include "passes/IRUtil.h"
#include "symbolic/Simplify.h"

namespace dsc::passes {

namespace {

namespace sym = symbolic;
using ir::ForKind;
using ir::PrimExpr;
using ir::Stmt;

// Loops of a constant extent below this are too short to spread over a block's threads.
constexpr int64_t kMinThreadExtent = 32;

bool mentions(const sym::Expr& e, const std::set<std::string>& names) {
  if (!e.defined()) return false;
  for (const std::string& s : sym::free_symbols(e))
    if (names.count(s)) return true;
  return false;
}

// Replaces loop variables (symbols) in indices, loop bounds and allocation shapes.
class SubstituteVars : public ir::IRMutator {
public:
  explicit SubstituteVars(const std::map<std::string, sym::Expr>& subst) : subst_(subst) {}

protected:
  using ir::IRMutator::mutate_node;
  PrimExpr mutate_node(const ir::Index* node, const PrimExpr&) override {
    return ir::Index::make(sym::simplify(ir::substitute(node->value, subst_)), node->loc);
  }
  Stmt mutate_node(const ir::For* node, const Stmt&) override {
    return ir::For::make(node->var, sym::simplify(ir::substitute(node->min, subst_)),
                         sym::simplify(ir::substitute(node->extent, subst_)), node->for_kind,
                         mutate(node->body), node->loc);
  }
  Stmt mutate_node(const ir::Alloc* node, const Stmt&) override {
    std::vector<sym::Expr> shape;
    for (const sym::Expr& d : node->shape) shape.push_back(sym::simplify(ir::substitute(d, subst_)));
    return ir::Alloc::make(node->name, node->dtype, std::move(shape), node->scope, node->loc);
  }

private:
  const std::map<std::string, sym::Expr>& subst_;
};

// Sets the kind of the loops given, leaving everything else as it is.
class SetKinds : public ir::IRMutator {
public:
  explicit SetKinds(const std::set<const ir::For*>& threads) : threads_(threads) {}

protected:
  using ir::IRMutator::mutate_node;
  Stmt mutate_node(const ir::For* node, const Stmt&) override {
    ForKind kind = threads_.count(node) ? ForKind::GpuThreadX : node->for_kind;
    return ir::For::make(node->var, node->min, node->extent, kind, mutate(node->body), node->loc);
  }

private:
  const std::set<const ir::For*>& threads_;
};

bool has_loop(const Stmt& s) {
  struct Finder : ir::IRVisitor {
    bool found = false;

  protected:
    void visit_node(const ir::For*) override { found = true; }
  } f;
  f.visit(s);
  return f.found;
}

// The loops at the top level of a row: those not inside another loop or a condition.
void row_loops(const Stmt& s, std::vector<const ir::For*>* loops, bool* other) {
  if (const ir::Seq* seq = s.as<ir::Seq>()) {
    for (const Stmt& c : seq->stmts) row_loops(c, loops, other);
  } else if (const ir::For* f = s.as<ir::For>()) {
    loops->push_back(f);
  } else if (s.as<ir::IfStmt>() || s.as<ir::Alloc>() || s.as<ir::Evaluate>()) {
    *other |= has_loop(s) || s.as<ir::Alloc>() || s.as<ir::Evaluate>();
  }
}

class GpuScheduler {
public:
  GpuScheduler(const ir::PrimFunc& p, PassContext& ctx)
      : p_(p), analysis_(p, p.body, ctx.prover), names_(prim_names(p)) {}

  Stmt run() {
    if (std::optional<Stmt> s = element_nests()) return *s;
    const Stmt* inner = nullptr;
    const std::vector<const ir::For*> outer = outer_chain(p_.body, &inner);
    if (outer.empty()) return single_thread();
    const sym::Expr count = element_count(outer);

    if (!has_loop(*inner)) return per_thread(outer, *inner, count, kGpuElementsPerThread);
    std::vector<const ir::For*> loops;
    bool other = false;
    row_loops(*inner, &loops, &other);
    if (!other && rows_per_block(loops)) return per_block(outer, *inner, count, loops);
    return per_thread(outer, *inner, count, 1);
  }

private:
  std::string fresh(const std::string& hint) {
    for (int k = 0;; ++k) {
      std::string name = k == 0 ? hint : hint + std::to_string(k);
      if (names_.insert(name).second) return name;
    }
  }

  // The independent outer loops of `s`, down its perfectly nested chain, and in `inner` what
  // is below them; bounds may not mention the variables of the loops around them, so that the
  // chain flattens into one index.
  std::vector<const ir::For*> outer_chain(const Stmt& s, const Stmt** inner) const {
    std::vector<const ir::For*> outer;
    std::set<std::string> outer_vars;
    *inner = &s;
    while (const ir::For* f = unwrap(**inner).as<ir::For>()) {
      if (!analysis_.loop(f).independent || mentions(f->min, outer_vars) ||
          mentions(f->extent, outer_vars))
        break;
      outer.push_back(f);
      outer_vars.insert(f->var);
      *inner = &f->body;
    }
    return outer;
  }

  static sym::Expr element_count(const std::vector<const ir::For*>& outer) {
    sym::Expr count = 1;
    for (const ir::For* f : outer) count = count * f->extent;
    return sym::simplify(count);
  }

  struct Nest {
    std::vector<const ir::For*> outer;
    const Stmt* inner = nullptr;
    sym::Expr count;
  };

  // A body that is a sequence of element nests (each an independent chain with no loop below
  // it), where no nest touches an element another one writes, as concat's copies into the
  // slices of its output: one element per thread over the largest nest, each nest under its
  // own bound, so that every nest runs in parallel rather than on one thread.
  std::optional<Stmt> element_nests() {
    const ir::Seq* seq = unwrap(p_.body).as<ir::Seq>();
    if (!seq || seq->stmts.size() < 2) return std::nullopt;
    std::vector<Nest> nests;
    for (const Stmt& s : seq->stmts) {
      Nest n;
      n.outer = outer_chain(s, &n.inner);
      if (n.outer.empty() || has_loop(*n.inner)) return std::nullopt;
      n.count = element_count(n.outer);
      nests.push_back(std::move(n));
    }
    for (size_t i = 0; i < nests.size(); ++i)
      for (size_t j = i + 1; j < nests.size(); ++j)
        if (!apart(nests[i], nests[j])) return std::nullopt;

    const std::string b = fresh("gpu_block"), t = fresh("gpu_thread");
    const sym::Expr flat = sym::Expr(sym::Sym::make(b)) * kGpuThreadsPerBlock + sym::Sym::make(t);
    std::vector<Stmt> bodies;
    sym::Expr most = 0;
    for (const Nest& n : nests) {
      Stmt body = SubstituteVars(unflatten(n.outer, flat)).mutate(*n.inner);
      PrimExpr in_range = ir::PrimBinary::make(ir::BinaryOp::LT, ir::Index::make(flat),
                                               ir::Index::make(n.count));
      bodies.push_back(ir::IfStmt::make(in_range, body, Stmt()));
      most = sym::max(most, n.count);
    }
    Stmt body = ir::For::make(t, 0, kGpuThreadsPerBlock, ForKind::GpuThreadX, ir::Seq::make(bodies));
    const sym::Expr blocks =
        sym::simplify(sym::floordiv(most + (kGpuThreadsPerBlock - 1), kGpuThreadsPerBlock));
    return ir::For::make(b, 0, blocks, ForKind::GpuBlockX, body);
  }

  // Proved: no element that one nest writes is touched by the other.
  bool apart(const Nest& x, const Nest& y) const {
    const std::vector<Access>& all = analysis_.accesses();
    for (size_t i : analysis_.loop(x.outer.front()).accesses)
      for (size_t j : analysis_.loop(y.outer.front()).accesses) {
        const Access &a = all[i], &c = all[j];
        if (a.buffer != c.buffer || (!a.is_store() && !c.is_store())) continue;
        if (!disjoint(a, x, c, y)) return false;
      }
    return true;
  }

  // Proved: some dimension indexes `a` (in nest x) and `c` (in nest y) over ranges that do
  // not meet.
  bool disjoint(const Access& a, const Nest& x, const Access& c, const Nest& y) const {
    if (a.indices.size() != c.indices.size()) return false;
    for (size_t d = 0; d < a.indices.size(); ++d) {
      sym::Expr alo, ahi, clo, chi;
      if (!a.indices[d].defined() || !c.indices[d].defined() ||
          !index_range(a.indices[d], x, &alo, &ahi) || !index_range(c.indices[d], y, &clo, &chi))
        continue;
      if (analysis_.proves(sym::lt(ahi, clo)) || analysis_.proves(sym::lt(chi, alo))) return true;
    }
    return false;
  }

  // The least and greatest value of `e` over the nest's loops, where `e` grows by a
  // non-negative constant with each of their variables (so its extremes are at their ends).
  static bool index_range(const sym::Expr& e, const Nest& n, sym::Expr* lo, sym::Expr* hi) {
    std::map<std::string, sym::Expr> low, high;
    for (const ir::For* f : n.outer) {
      const sym::Expr v = sym::Sym::make(f->var);
      const sym::Expr step = sym::simplify(ir::substitute(e, {{f->var, v + 1}}) - e);
      const sym::Const* k = step.as<sym::Const>();
      if (!k || k->value < 0) return false;
      low[f->var] = f->min;
      high[f->var] = f->min + f->extent - 1;
    }
    *lo = sym::simplify(ir::substitute(e, low));
    *hi = sym::simplify(ir::substitute(e, high));
    return true;
  }

  // Each outer loop's variable as a function of the flat index `flat`.
  static std::map<std::string, sym::Expr> unflatten(const std::vector<const ir::For*>& outer,
                                                    const sym::Expr& flat) {
    std::map<std::string, sym::Expr> subst;
    sym::Expr inner_count = 1;
    for (size_t j = outer.size(); j-- > 0;) {
      const ir::For* f = outer[j];
      sym::Expr v = sym::floordiv(flat, inner_count);
      if (j > 0) v = sym::floormod(v, f->extent);
      subst[f->var] = sym::simplify(f->min + v);
      inner_count = inner_count * f->extent;
    }
    return subst;
  }

  // Every loop spreads over threads: independent, or a reduction into locals only; one of them
  // reads or writes along a contiguous axis; not all of them are short.
  bool rows_per_block(const std::vector<const ir::For*>& loops) const {
    bool contiguous = false, long_enough = false;
    for (const ir::For* f : loops) {
      const LoopInfo& info = analysis_.loop(f);
      if (!info.independent) {
        if (!info.reduction) return false;
        for (const Reduction& r : info.reductions)
          if (!r.into_local) return false;
      }
      for (size_t id : info.accesses)
        contiguous |= analysis_.contiguous(analysis_.accesses()[id], f->var);
      const sym::Expr extent = sym::simplify(f->extent);
      const sym::Const* c = extent.as<sym::Const>();
      long_enough |= !c || c->value >= kMinThreadExtent;
    }
    return contiguous && long_enough;
  }

  Stmt single_thread() {
    const std::string b = fresh("gpu_block");
    Stmt body = ir::For::make(fresh("gpu_thread"), 0, 1, ForKind::GpuThreadX, p_.body);
    return ir::For::make(b, 0, 1, ForKind::GpuBlockX, body);
  }

  // block_x for b in 0..ceildiv(count, T*U) {
  //   thread_x for t in 0..T { unroll for u in 0..U { if b*T*U + u*T + t < count {..} } } }
  // U elements per thread, a block's threads side by side in each, so that every thread has U
  // independent loads in flight; with U = 1 (rows per thread) there is no unrolled loop.
  Stmt per_thread(const std::vector<const ir::For*>& outer, const Stmt& inner,
                  const sym::Expr& count, int64_t elements) {
    const std::string b = fresh("gpu_block"), t = fresh("gpu_thread");
    const std::string u = elements > 1 ? fresh("gpu_element") : "";
    const int64_t per_block = kGpuThreadsPerBlock * elements;
    sym::Expr flat = sym::Expr(sym::Sym::make(b)) * per_block;
    if (elements > 1) flat = flat + sym::Expr(sym::Sym::make(u)) * kGpuThreadsPerBlock;
    flat = flat + sym::Sym::make(t);
    Stmt body = SubstituteVars(unflatten(outer, flat)).mutate(inner);
    PrimExpr in_range = ir::PrimBinary::make(ir::BinaryOp::LT, ir::Index::make(flat),
                                             ir::Index::make(count));
    body = ir::IfStmt::make(in_range, body, Stmt());
    if (elements > 1) body = ir::For::make(u, 0, elements, ForKind::Unrolled, body);
    body = ir::For::make(t, 0, kGpuThreadsPerBlock, ForKind::GpuThreadX, body);
    const sym::Expr blocks = sym::simplify(sym::floordiv(count + (per_block - 1), per_block));
    return ir::For::make(b, 0, blocks, ForKind::GpuBlockX, body);
  }

  // block_rows for r in 0..count { row, its top-level loops thread_x }
  Stmt per_block(const std::vector<const ir::For*>& outer, const Stmt& inner,
                 const sym::Expr& count, const std::vector<const ir::For*>& loops) {
    std::set<const ir::For*> threads(loops.begin(), loops.end());
    Stmt row = SetKinds(threads).mutate(inner);
    const std::string r = fresh("gpu_row");
    row = SubstituteVars(unflatten(outer, sym::Sym::make(r))).mutate(row);
    return ir::For::make(r, 0, count, ForKind::GpuBlockRows, row);
  }

  const ir::PrimFunc& p_;
  AccessAnalysis analysis_;
  std::set<std::string> names_;
};

} // namespace

ir::Stmt gpu_schedule(const ir::PrimFunc& p, PassContext& ctx) {
  if (!p.body.defined()) return p.body;
  return GpuScheduler(p, ctx).run();
}

} // namespace dsc::passes
