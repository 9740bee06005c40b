// fuse (passes/legalize/Fuse.h), step 1: producers into consumers. The Fuser, its bookkeeping
// and the helpers the steps share are declared in passes/legalize/Fuser.h.

#include <algorithm>
#include <map>
#include <set>

#include "ir/Functor.h"
#include "ir/Intrinsics.h"
#include "passes/legalize/ElementRewrite.h"
#include "passes/legalize/Fuser.h"
#include "passes/legalize/ReshapeRemap.h"
#include "passes/legalize/Scalar.h"
#include "symbolic/Printer.h"
#include "symbolic/Simplify.h"

namespace dsc::passes::lowering::fusion {

namespace {

// A producer this size or smaller may be evaluated once per use when cheap; larger ones are
// evaluated once per element of their result (or stay apart).
constexpr size_t kDuplicableNodes = 48;
// ... and when it reads at most this many buffers.
constexpr size_t kDuplicableBuffers = 4;
// The most scalar nodes one fused element may hold (docs/dscc.md, "Limits"), as TVM bounds a
// fused function's depth: a chain of thousands of elementwise ops becomes kernels of this size
// each, so that fusing costs time linear in the chain's length (each inlining copies at most
// this much) and every kernel stays a size LLVM compiles quickly. The models in the zoo fuse
// elements of at most 180 nodes; a split costs one store and one load per this many nodes.
constexpr size_t kMaxFusedNodes = 1024;

struct ElementCost {
  size_t nodes = 0;
  size_t loads = 0;
  std::set<std::string> buffers; // those loaded
  bool costly = false;
};

ElementCost cost_of(const Element& e) {
  struct Count : ir::IRVisitor {
    ElementCost cost;
#define DSC_IR_EXPR(Name)
#define DSC_IR_STMT(Name)
#define DSC_IR_PRIM_EXPR(Name)                                                                     \
  void visit_node(const ir::Name* node) override {                                                 \
    ++cost.nodes;                                                                                  \
    note(node);                                                                                    \
    ir::IRVisitor::visit_node(node);                                                               \
  }
#include "ir/Nodes.def"
#undef DSC_IR_EXPR
#undef DSC_IR_STMT
#undef DSC_IR_PRIM_EXPR
    void note(const ir::Intrinsic* i) {
      const ir::IntrinsicDef* def = ir::find_intrinsic(i->name);
      if (!def || def->cost == ir::Cost::Costly) cost.costly = true;
    }
    void note(const ir::Load* l) {
      ++cost.loads;
      cost.buffers.insert(l->buffer);
    }
    void note(const ir::PrimExprNode*) {}
  } count;
  for (const LocalLet& l : e.lets)
    count.visit(l.value);
  count.visit(e.value);
  return count.cost;
}

bool has_guarding_select(const ir::PrimExpr& e) {
  struct Find : ir::IRVisitor {
    bool found = false;
    void visit_node(const ir::Intrinsic* i) override {
      found = found || is_guarding_select(ir::PrimExpr(i));
      ir::IRVisitor::visit_node(i);
    }
  } find;
  find.visit(e);
  return find.found;
}

bool has_guarding_select(const Element& e) {
  for (const LocalLet& l : e.lets)
    if (has_guarding_select(l.value)) return true;
  return has_guarding_select(e.value);
}

// Indices compared by structure (the symbolic order), not by their printed text.
struct IndicesLess {
  bool operator()(const Indices& a, const Indices& b) const {
    return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(), sym::ExprLess());
  }
};

// The elements of a map, reduction or stitch description, where a load may be replaced.
std::vector<Element*> elements(ComputeDesc& d) {
  std::vector<Element*> out;
  for (MapOutput& m : d.maps)
    out.push_back(&m.element);
  if (d.kind == ComputeDesc::Kind::Reduce) out.push_back(&d.reduction.body);
  for (Stage& s : d.stitch.stages)
    out.push_back(s.kind == Stage::Kind::Reduce ? &s.reduction.body : &s.element);
  return out;
}

bool loads_outside_elements(const ComputeDesc& d, const std::string& buffer) {
  std::vector<const Reduction*> reductions;
  if (d.kind == ComputeDesc::Kind::Reduce) reductions.push_back(&d.reduction);
  for (const Stage& s : d.stitch.stages)
    if (s.kind == Stage::Kind::Reduce) reductions.push_back(&s.reduction);
  bool found = false;
  struct Find : ir::IRVisitor {
    const std::string& buffer;
    bool& found;
    Find(const std::string& b, bool& f) : buffer(b), found(f) {}
    void visit_node(const ir::Load* l) override { found = found || l->buffer == buffer; }
  } find(buffer, found);
  for (const Reduction* r : reductions) {
    if (r->condition.defined()) find.visit(r->condition);
    if (r->finish.defined()) find.visit(r->finish);
  }
  return found;
}

// The variables an element of `d` runs over, with their extents.
std::vector<std::pair<sym::Expr, sym::Expr>> loop_vars(const ComputeDesc& d) {
  std::vector<std::pair<sym::Expr, sym::Expr>> out;
  auto add = [&](const IndexSpace& s) {
    for (size_t a = 0; a < s.vars.size(); ++a)
      if (s.vars[a].is<sym::Sym>()) out.emplace_back(s.vars[a], s.extents[a]);
  };
  if (d.kind == ComputeDesc::Kind::Map) {
    add(d.maps.front().space);
  } else if (d.kind == ComputeDesc::Kind::Stitch) {
    // Producers are pulled before anything is stitched: a stitch here is one an op describes
    // (argmax's), reductions over its rows.
    add(d.stitch.rows);
    for (const Stage& s : d.stitch.stages)
      if (s.kind == Stage::Kind::Reduce) add(s.reduction.reduced);
  } else {
    add(d.reduction.space);
    add(d.reduction.reduced);
  }
  return out;
}

} // namespace

void Fuser::pull_producers(size_t c) {
  for (bool changed = true; changed;) {
    changed = false;
    ComputeDesc& d = *items_[c].desc;
    for (size_t k = 0; k < d.inputs.size() && !changed; ++k) {
      auto def = def_.find(d.inputs[k].arg.get());
      if (def == def_.end()) continue;
      FnItem& p = items_[def->second.first];
      if (!p.desc) continue;
      if (p.desc->kind == ComputeDesc::Kind::View)
        changed = read_through_view(items_[c], k, p);
      else if (p.desc->kind == ComputeDesc::Kind::Map)
        changed = inline_map(items_[c], k, p, def->second.second);
    }
  }
}

// The symbolic indices of every load of `buffer` in `d`, or nullopt when one is data-
// dependent or the load is outside the elements.
std::optional<std::vector<Indices>> Fuser::loads_of(const ComputeDesc& d,
                                                    const std::string& buffer) {
  std::vector<Indices> out;
  bool ok = !loads_outside_elements(d, buffer);
  for_each_load(d, [&](const ir::Load& l) {
    if (l.buffer != buffer) return;
    std::optional<Indices> idx = symbolic_indices(l);
    if (!idx)
      ok = false;
    else
      out.push_back(*idx);
  });
  if (!ok) return std::nullopt;
  return out;
}

// The name `c` reads `arg` by: an input it already has, or a new one (named after `hint`).
std::string Fuser::input_for(ComputeDesc& c, const ir::Expr& arg, const ir::Buffer& like) {
  for (const ComputeDesc::Input& in : c.inputs)
    if (in.arg.get() == arg.get()) return in.buffer.name;
  ir::Buffer b = like;
  b.name = c.names.fresh(like.name);
  c.inputs.push_back(ComputeDesc::Input{b, arg});
  ++uses_[arg.get()];
  return b.name;
}

void Fuser::remove_input(FnItem& c, const std::string& buffer) {
  std::vector<ComputeDesc::Input>& ins = c.desc->inputs;
  for (size_t k = 0; k < ins.size(); ++k) {
    if (ins[k].buffer.name != buffer) continue;
    --uses_[ins[k].arg.get()];
    ins.erase(ins.begin() + static_cast<std::ptrdiff_t>(k));
    return;
  }
}

// `c` reads the reshape `p` as its source at remapped indices.
bool Fuser::read_through_view(FnItem& c, size_t k, FnItem& p) {
  ComputeDesc& d = *c.desc;
  const ir::Call* call = p.desc->call.as<ir::Call>();
  if (!call || call->args.empty() || !call->args[0].is<ir::Var>()) return false;
  const ir::Expr& source = call->args[0];
  std::string buffer = d.inputs[k].buffer.name;
  if (!loads_of(d, buffer)) {
    refuse(p, c, "a data-dependent index reads it");
    return false;
  }
  FusionFact fact;
  sym::Expr undecided;
  std::optional<ReshapeRemap> remap =
      ReshapeRemap::make(source->type.shape, p.desc->type.shape, ctx_, &fact, &undecided);
  if (!remap) {
    if (undecided.defined()) ctx_.want_guard(undecided);
    refuse(p, c, "the reshape is not shown to be an index remap", {fact});
    return false;
  }
  ir::Buffer like{"x", source->type.dtype, source->type.shape, {}};
  for (sym::Expr& dim : like.shape)
    dim = sym::simplify(dim);
  std::string from = input_for(d, source, like);
  ElementRewrite rw;
  rw.on_load = [&](const ir::Load& l) -> ir::PrimExpr {
    if (l.buffer != buffer) return ir::PrimExpr();
    std::vector<ir::PrimExpr> is;
    for (const sym::Expr& i : (*remap)(*symbolic_indices(l)))
      is.push_back(index(i));
    return ir::Load::make(l.dtype, from, std::move(is), l.loc);
  };
  rewrite_desc(d, rw);
  remove_input(c, buffer);
  absorb(c, p, remap->facts());
  return true;
}

// Checks that `c` evaluates each element of a costly producer at most once: it reads it at
// one index, a permutation of all of its loop variables over the producer's extents.
bool Fuser::once_per_element(const ComputeDesc& c, const std::vector<Indices>& loads,
                             const std::vector<sym::Expr>& extents, std::vector<FusionFact>& facts,
                             std::string& why) {
  std::set<Indices, IndicesLess> distinct(loads.begin(), loads.end());
  if (distinct.size() != 1 || c.maps.size() > 1) {
    why = "it is costly and would be evaluated at more than one index per element";
    return false;
  }
  std::vector<std::pair<sym::Expr, sym::Expr>> vars = loop_vars(c);
  std::set<std::string> seen;
  const Indices& idx = loads.front();
  for (size_t a = 0; a < idx.size(); ++a) {
    if (ctx_.is_one(extents[a])) continue;
    const sym::Sym* v = idx[a].as<sym::Sym>();
    auto var = std::find_if(vars.begin(), vars.end(), [&](const auto& lv) {
      return v && lv.first.template as<sym::Sym>()->name == v->name;
    });
    if (!v || var == vars.end() || !seen.insert(v->name).second) {
      why = "it is costly and its consumer does not read each element once";
      return false;
    }
    sym::ProofResult r = ctx_.decide(sym::eq(var->second, extents[a]));
    note_fact(facts, var->second, extents[a], "each element read once", r);
    if (r.verdict != sym::Verdict::Proved) {
      why = "it is costly and its consumer's extent is not shown equal to its own";
      return false;
    }
  }
  if (seen.size() != vars.size()) {
    why = "it is costly and its consumer reads each element more than once (a broadcast)";
    return false;
  }
  return true;
}

// Replaces `c`'s loads of output `o` of map `p` (its input k) by p's element.
bool Fuser::inline_map(FnItem& c, size_t k, FnItem& p, size_t o) {
  ComputeDesc& d = *c.desc;
  const ComputeDesc& pd = *p.desc;
  const MapOutput& pm = pd.maps[o];
  VarKey var = d.inputs[k].arg.get();
  std::string buffer = d.inputs[k].buffer.name;
  std::optional<std::vector<Indices>> loads = loads_of(d, buffer);
  if (!loads) {
    refuse(p, c, "a data-dependent index reads it");
    return false;
  }
  if (has_guarding_select(pm.element)) {
    refuse(p, c, "its element selects between pieces (concat, pad), which must stay a branch");
    return false;
  }
  bool consumer_guards = false;
  for (Element* e : elements(d))
    consumer_guards = consumer_guards || has_guarding_select(*e);
  if (consumer_guards && !pm.element.lets.empty()) {
    refuse(p, c, "its locals would be evaluated outside its consumer's guarded branch");
    return false;
  }
  ElementCost cost = cost_of(pm.element);
  bool once = !used_elsewhere(var);
  std::vector<FusionFact> facts;
  if (!once && materialized(var) && cost.loads > 1) {
    refuse(p, c,
           "it is in memory anyway (another consumer needs it), and reading it is "
           "cheaper than computing it again");
    return false;
  }
  // Copied into several consumers, a producer makes each read every buffer it reads. Down a
  // chain of them (a deep model's residual adds, each read by the next layer's norm and by the
  // next add) the copies would grow with depth, every layer's norm reading every earlier
  // layer's results; past a few buffers the producer is read from memory instead.
  if (!once && cost.buffers.size() > kDuplicableBuffers) {
    refuse(p, c,
           "it has other consumers and reads " + std::to_string(cost.buffers.size()) +
               " buffers, which each of them would read again");
    return false;
  }
  if (cost.costly || cost.nodes > kDuplicableNodes) {
    std::string why;
    if (!once) {
      refuse(p, c,
             cost.costly ? "it is costly and has other consumers"
                         : "it is too large to evaluate once per consumer");
      return false;
    }
    if (!once_per_element(d, *loads, pd.outputs[o].shape, facts, why)) {
      refuse(p, c, why, facts);
      return false;
    }
  }
  size_t consumer_nodes = 0;
  for (Element* e : elements(d))
    consumer_nodes += cost_of(*e).nodes;
  std::set<Indices, IndicesLess> distinct(loads->begin(), loads->end());
  if (consumer_nodes + distinct.size() * cost.nodes > kMaxFusedNodes) {
    refuse(p, c,
           "the fused element would exceed " + std::to_string(kMaxFusedNodes) +
               " scalar operations, the most one kernel holds");
    return false;
  }
  // Each element of `c`, with a copy of p's element per distinct index; a copy read more
  // than once, or read where the consumer guards, is a local of its own.
  for (Element* e : elements(d)) {
    std::map<Indices, ir::PrimExpr, IndicesLess> copies;
    std::map<Indices, int, IndicesLess> reads;
    for_each_load_in(*e, buffer, [&](const std::optional<Indices>& idx) {
      if (idx) ++reads[*idx];
    });
    std::vector<LocalLet> lets;
    ElementRewrite rw;
    rw.on_load = [&](const ir::Load& l) -> ir::PrimExpr {
      if (l.buffer != buffer) return ir::PrimExpr();
      const Indices key = *symbolic_indices(l);
      auto it = copies.find(key);
      if (it != copies.end()) return it->second;
      Element copy = instantiate(d, pd, o, key);
      lets.insert(lets.end(), copy.lets.begin(), copy.lets.end());
      // A copy read more than once is a local of the producer's own (unrounded) value.
      ir::PrimExpr value = copy.value;
      bool leaf = value.is<ir::Load>() || value.is<ir::LocalRef>() || value.is<ir::Index>();
      if (reads[key] > 1 && !leaf && !consumer_guards) {
        std::string name = d.names.fresh(pd.op);
        lets.push_back(LocalLet{name, value});
        value = ir::LocalRef::make(value->dtype, name);
      }
      return copies[key] = rw.handoff(value, l.dtype);
    };
    Element rewritten = rw.apply(*e);
    lets.insert(lets.end(), rewritten.lets.begin(), rewritten.lets.end());
    rewritten.lets = std::move(lets);
    *e = std::move(rewritten);
  }
  remove_input(c, buffer);
  absorb(c, p, std::move(facts));
  // Its last reader has it now: dropped at once, so that a long chain keeps one fused element
  // alive at a time rather than every prefix of it.
  drop_if_unread(p);
  if (p.dropped)
    for (MapOutput& m : p.desc->maps)
      m.element = Element{};
  return true;
}

// Output `o` of map `p` at `idx`, in `c`'s names: p's inputs become c's, its locals get
// fresh names and its index variables become `idx`.
Element Fuser::instantiate(ComputeDesc& c, const ComputeDesc& p, size_t o, const Indices& idx) {
  const MapOutput& m = p.maps[o];
  ElementRewrite rw;
  for (size_t a = 0; a < m.space.vars.size(); ++a)
    if (const sym::Sym* v = m.space.vars[a].as<sym::Sym>()) rw.indices[v->name] = idx[a];
  for (const LocalLet& l : m.element.lets)
    rw.locals[l.name] = c.names.fresh(l.name);
  for (const ComputeDesc::Input& in : p.inputs)
    rw.buffers[in.buffer.name] = input_for(c, in.arg, in.buffer);
  return rw.apply(m.element);
}

// After step 1: a producer every consumer inlined, that nothing reads any more, is dropped.
void Fuser::drop_absorbed() {
  for (size_t i = items_.size(); i-- > 0;) {
    FnItem& it = items_[i];
    if (it.absorbed && it.desc && !it.dropped) drop_if_unread(it);
  }
}

} // namespace dsc::passes::lowering::fusion
