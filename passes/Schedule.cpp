#include "passes/Schedule.h"

#include <functional>
#include <map>
#include <optional>
#include <set>

#include "ir/Functor.h"
#include "passes/AccessAnalysis.h"
#include "passes/GpuSchedule.h"
#include "passes/IRUtil.h"
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
// Nest interchanges tried per prim, a bound on the search (each one moves a loop for good).
constexpr int kMaxInterchanges = 64;

bool mentions(const sym::Expr& e, const std::string& name) {
  return e.defined() && sym::free_symbols(e).count(name) > 0;
}

std::optional<int64_t> const_value(const sym::Expr& e) {
  sym::Expr s = sym::simplify(e);
  if (const sym::Const* c = s.as<sym::Const>()) return c->value;
  return std::nullopt;
}

// The loop `f`'s body is, when it is one loop (a perfect nest).
const ir::For* perfectly_nested(const ir::For& f) {
  return unwrap(f.body).as<ir::For>();
}

bool bounds_mention(const ir::For& f, const std::string& var) {
  return mentions(f.min, var) || mentions(f.extent, var);
}

// Reads and assignments of one local, and mentions of one symbol in indices and loop bounds.
struct Uses : ir::IRVisitor {
  using ir::IRVisitor::visit;
  std::string local, symbol;
  const ir::For* skip = nullptr; // not counted inside this loop's body
  int local_reads = 0, local_assigns = 0, symbol_uses = 0;

protected:
  void visit_node(const ir::LocalRef* node) override { local_reads += node->name == local; }
  void visit_node(const ir::Assign* node) override {
    local_assigns += node->name == local;
    ir::IRVisitor::visit_node(node);
  }
  void visit_node(const ir::Index* node) override { symbol_uses += mentions(node->value, symbol); }
  void visit_node(const ir::For* node) override {
    symbol_uses += bounds_mention(*node, symbol);
    if (node != skip) ir::IRVisitor::visit_node(node);
  }
};

class PrimScheduler {
public:
  PrimScheduler(const ir::PrimFunc& p, PassContext& ctx) : p_(p), ctx_(ctx) {
    for (const std::vector<ir::Buffer>* bufs : {&p.inputs, &p.outputs})
      for (const ir::Buffer& b : *bufs)
        dtypes_[b.name] = b.dtype;
    names_ = prim_names(p);
  }

  Stmt run() {
    Stmt body = interchange_accumulators(p_.body);
    body = interchange_nests(body);
    return assign_kinds(body);
  }

private:
  AccessAnalysis analyze(const Stmt& body) const { return AccessAnalysis(p_, body, ctx_.prover); }

  std::string fresh(const std::string& hint) {
    for (int k = 0;; ++k) {
      std::string name = hint + std::to_string(k);
      if (names_.insert(name).second) return name;
    }
  }

  // Loads in the loop's body that are contiguous along `var`.
  static int contiguous_loads(const AccessAnalysis& a, const LoopInfo& loop,
                              const std::string& var) {
    int n = 0;
    for (size_t id : loop.accesses) {
      const Access& x = a.accesses()[id];
      n += !x.is_store() && a.contiguous(x, var);
    }
    return n;
  }

  // Every store in the loop's body is contiguous along `var`, and some access is.
  static bool contiguous_along(const AccessAnalysis& a, const LoopInfo& loop,
                               const std::string& var) {
    bool any = false;
    for (size_t id : loop.accesses) {
      const Access& x = a.accesses()[id];
      bool c = a.contiguous(x, var);
      if (x.is_store() && !c) return false;
      any |= c;
    }
    return any;
  }

  // An innermost loop whose iterations may run as vector lanes: independent, or a reduction
  // into locals only (the code generator keeps vector accumulators), over contiguous elements.
  static bool vectorizable(const AccessAnalysis& a, const LoopInfo& loop) {
    if (!loop.innermost || loop.loop->for_kind != ForKind::Serial) return false;
    if (std::optional<int64_t> n = const_value(loop.loop->extent); n && *n < kMinVectorExtent)
      return false;
    bool lanes = loop.independent;
    if (loop.reduction) {
      lanes = true;
      for (const Reduction& r : loop.reductions)
        lanes = lanes && r.into_local;
    }
    return lanes && contiguous_along(a, loop, loop.loop->var);
  }

  // --------------------------------------------------------------- accumulator interchange

  Stmt interchange_accumulators(const Stmt& s) {
    AccessAnalysis a = analyze(s);
    struct Walker : ir::IRMutator {
      PrimScheduler* self = nullptr;
      const AccessAnalysis* analysis = nullptr;

    protected:
      Stmt mutate_node(const ir::For* node, const Stmt& me) override {
        Stmt swapped = self->interchange(*node, *analysis);
        if (swapped.defined()) return swapped;
        return ir::IRMutator::mutate_node(node, me);
      }
    } w;
    w.self = this;
    w.analysis = &a;
    return w.mutate(s);
  }

  // An independent loop j around an accumulator (a local declared, updated by a reduction
  // nest, then stored to out[I] contiguously along j):
  //   for j { var acc = init; R; out[I] = fin(acc) }
  // becomes init, update and finish loops, the update's j loop innermost in R, in place:
  //   for j { out[I] = init }; R with `for j { out[I] = out[I] op e }` innermost;
  //   for j { out[I] = fin(out[I]) }.
  Stmt interchange(const ir::For& loop, const AccessAnalysis& a) {
    if (loop.for_kind != ForKind::Serial || !a.loop(&loop).independent) return Stmt();
    const ir::Seq* body = unwrap(loop.body).as<ir::Seq>();
    if (!body || body->stmts.size() != 3) return Stmt();
    const ir::LocalDecl* decl = body->stmts[0].as<ir::LocalDecl>();
    const ir::For* reduce = unwrap(body->stmts[1]).as<ir::For>();
    const ir::Store* store = body->stmts[2].as<ir::Store>();
    if (!decl || !decl->is_mutable || !reduce || !store) return Stmt();
    const std::string& j = loop.var;
    const std::string& acc = decl->name;
    auto dt = dtypes_.find(store->buffer);
    if (dt == dtypes_.end() || dt->second != decl->dtype) return Stmt();

    // R accumulates into acc alone, reads nothing of out, and its bounds do not depend on j.
    const LoopInfo& r = a.loop(reduce);
    if (!r.reduction || r.reductions.size() != 1 || !r.reductions[0].into_local ||
        r.reductions[0].target != acc)
      return Stmt();
    for (size_t id : r.accesses)
      if (a.accesses()[id].is_store() || a.accesses()[id].buffer == store->buffer) return Stmt();
    // The one innermost loop of R holds every use of acc and of j.
    const LoopInfo* inner = nullptr;
    for (const LoopInfo& l : a.loops()) {
      bool in_r = false;
      for (const ir::For* p = l.loop; p && !in_r; p = a.loop(p).parent)
        in_r = p == reduce;
      if (!in_r) continue;
      if (bounds_mention(*l.loop, j)) return Stmt();
      if (!l.innermost) continue;
      if (inner) return Stmt();
      inner = &l;
    }
    if (!inner) return Stmt();
    Uses everywhere, outside;
    everywhere.local = outside.local = acc;
    everywhere.symbol = outside.symbol = j;
    outside.skip = inner->loop;
    everywhere.visit(body->stmts[1]);
    outside.visit(body->stmts[1]);
    if (outside.symbol_uses || outside.local_reads || outside.local_assigns ||
        !everywhere.local_assigns)
      return Stmt();
    // The final value reads acc and nothing of out; out[I] is contiguous along j.
    const Access* out = nullptr;
    for (size_t id : a.loop(&loop).accesses) {
      const Access& x = a.accesses()[id];
      if (x.store == store) out = &x;
      if (!x.is_store() && x.buffer == store->buffer) return Stmt();
    }
    if (!out || !a.contiguous(*out, j)) return Stmt();
    for (const sym::Expr& i : out->indices)
      if (!i.defined()) return Stmt();

    // Worth it: the kept axis is contiguous in some load, and in at least as many as the
    // innermost reduction loop is, unless that loop is too short to vectorize anyway (a
    // reduction over the last axis stays as it is; a conv's kernel width gives way).
    int by_j = contiguous_loads(a, *inner, j);
    int by_r = contiguous_loads(a, *inner, inner->loop->var);
    std::optional<int64_t> r_extent = const_value(inner->loop->extent);
    bool short_r = r_extent && *r_extent < kShortReduction;
    if (by_j == 0 || (by_j < by_r && !short_r)) return Stmt();

    PrimExpr current = ir::Load::make(dt->second, store->buffer, store->indices);
    auto j_loop = [&](Stmt s) {
      return ir::For::make(j, loop.min, loop.extent, ForKind::Serial, std::move(s));
    };
    // acc becomes out[I].
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
    wrap.inner = inner->loop;
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

  // --------------------------------------------------------------- nest interchange

  // Swaps perfectly nested loops, one pair at a time, until none is worth swapping:
  //   - a movable loop that is not innermost moves out past a loop that is not independent
  //     (a reduction or a serial loop), so that it can run in parallel;
  //   - a movable loop moves in past an innermost loop that cannot be vectorized, when more
  //     loads are contiguous along it, so that it becomes the vector loop.
  // Either swap is legal because the movable loop's iterations write disjoint elements
  // whatever the other loop does (see AccessAnalysis.h).
  Stmt interchange_nests(Stmt body) {
    for (int k = 0; k < kMaxInterchanges; ++k) {
      AccessAnalysis a = analyze(body);
      const ir::For* outer = nullptr;
      for (const LoopInfo& o : a.loops()) {
        const ir::For* n = perfectly_nested(*o.loop);
        if (!n || o.loop->for_kind != ForKind::Serial || n->for_kind != ForKind::Serial ||
            bounds_mention(*n, o.loop->var))
          continue;
        const LoopInfo& in = a.loop(n);
        bool hoist = !o.independent && in.movable && !in.innermost;
        bool sink = in.innermost && o.movable && !vectorizable(a, in) &&
                    contiguous_along(a, in, o.loop->var) &&
                    contiguous_loads(a, in, o.loop->var) > contiguous_loads(a, in, n->var);
        if (hoist || sink) {
          outer = o.loop;
          break;
        }
      }
      if (!outer) return body;
      body = swap_with_inner(body, outer);
    }
    return body;
  }

  static Stmt swap_with_inner(const Stmt& body, const ir::For* outer) {
    struct Swap : ir::IRMutator {
      const ir::For* outer = nullptr;

    protected:
      Stmt mutate_node(const ir::For* node, const Stmt& me) override {
        if (node != outer) return ir::IRMutator::mutate_node(node, me);
        const ir::For* n = perfectly_nested(*node);
        Stmt o =
            ir::For::make(node->var, node->min, node->extent, node->for_kind, n->body, node->loc);
        return ir::For::make(n->var, n->min, n->extent, n->for_kind, o, n->loc);
      }
    } swap;
    swap.outer = outer;
    return swap.mutate(body);
  }

  // --------------------------------------------------------------- loop kinds

  // Vectorizes every vectorizable innermost loop; makes parallel the outer loops of each
  // top-level nest down its perfectly nested chain of independent loops (the code generator
  // collapses such a chain into one parallel range), stopping at the vectorized loop and at
  // an innermost loop over contiguous elements (too short to vectorize, it stays serial inside);
  // splits a top-level vectorized loop into parallel chunks.
  Stmt assign_kinds(const Stmt& body) {
    AccessAnalysis a = analyze(body);
    std::map<const ir::For*, ForKind> kinds;
    std::set<const ir::For*> chunk;
    for (const LoopInfo& l : a.loops())
      if (vectorizable(a, l)) kinds[l.loop] = ForKind::Vectorized;

    std::vector<Stmt> top;
    flatten(body, top);
    for (const Stmt& t : top) {
      const ir::For* f = unwrap(t).as<ir::For>();
      if (!f) continue;
      if (kinds.count(f)) {
        std::optional<int64_t> n = const_value(f->extent);
        if (a.loop(f).independent && !(n && *n <= kChunk)) chunk.insert(f);
        continue;
      }
      for (; f && f->for_kind == ForKind::Serial && !kinds.count(f); f = perfectly_nested(*f)) {
        const LoopInfo& l = a.loop(f);
        bool contiguous = false;
        for (size_t id : l.accesses)
          contiguous |= a.contiguous(a.accesses()[id], f->var);
        if (!l.independent || (l.innermost && contiguous)) break;
        kinds[f] = ForKind::Parallel;
      }
    }

    struct Rebuild : ir::IRMutator {
      PrimScheduler* self = nullptr;
      const std::map<const ir::For*, ForKind>* kinds = nullptr;
      const std::set<const ir::For*>* chunk = nullptr;

    protected:
      Stmt mutate_node(const ir::For* node, const Stmt& me) override {
        Stmt body = mutate(node->body);
        auto k = kinds->find(node);
        ForKind kind = k == kinds->end() ? node->for_kind : k->second;
        if (chunk->count(node)) return self->chunked(*node, body);
        if (kind == node->for_kind && body.same_as(node->body)) return me;
        return ir::For::make(node->var, node->min, node->extent, kind, body, node->loc);
      }
    } rebuild;
    rebuild.self = this;
    rebuild.kinds = &kinds;
    rebuild.chunk = &chunk;
    std::vector<Stmt> out;
    for (const Stmt& t : top)
      out.push_back(rebuild.mutate(t));
    return ir::Seq::make(std::move(out), body->loc);
  }

  static void flatten(const Stmt& s, std::vector<Stmt>& out) {
    if (const ir::Seq* seq = s.as<ir::Seq>()) {
      for (const Stmt& t : seq->stmts)
        flatten(t, out);
      return;
    }
    out.push_back(s);
  }

  // for v in lo..lo+n { body } as parallel chunks of kChunk elements around vectorized loops.
  Stmt chunked(const ir::For& f, const Stmt& body) {
    std::string outer = fresh("chunk");
    sym::Expr c = sym::sym(outer);
    sym::Expr count =
        sym::simplify(sym::floordiv(f.extent + sym::Expr(kChunk - 1), sym::Expr(kChunk)));
    sym::Expr lo = sym::simplify(f.min + c * sym::Expr(kChunk));
    sym::Expr len = sym::simplify(sym::min(sym::Expr(kChunk), f.extent - c * sym::Expr(kChunk)));
    Stmt inner = ir::For::make(f.var, lo, len, ForKind::Vectorized, body, f.loc);
    return ir::For::make(outer, sym::Expr(0), count, ForKind::Parallel, inner, f.loc);
  }

  const ir::PrimFunc& p_;
  PassContext& ctx_;
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
    // A target whose kernels run as grids of blocks gets the GPU schedule (GpuSchedule.h).
    p->body = ctx.target.runs(ir::ForKind::GpuBlockX) ? gpu_schedule(*d.prim, ctx)
                                                      : PrimScheduler(*d.prim, ctx).run();
    out.add(Ref<ir::PrimFunc>(p));
  }
  return out;
}

} // namespace dsc::passes
