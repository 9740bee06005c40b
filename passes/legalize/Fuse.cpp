#include "passes/legalize/Fuse.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "ir/Functor.h"
#include "ir/Intrinsics.h"
#include "ir/LibraryRoutine.h"
#include "ir/OpRegistry.h"
#include "passes/legalize/ElementRewrite.h"
#include "passes/legalize/Epilogue.h"
#include "passes/legalize/ReshapeRemap.h"
#include "passes/legalize/Scalar.h"
#include "passes/legalize/VendorEpilogue.h"
#include "symbolic/Printer.h"
#include "symbolic/Simplify.h"

namespace dsc::passes::lowering {

namespace sym = symbolic;

namespace {

using VarKey = const ir::ExprNode*;
using Indices = std::vector<sym::Expr>;

// A producer this size or smaller may be evaluated once per use when cheap; larger ones are
// evaluated once per element of their result (or stay apart).
constexpr size_t kDuplicableNodes = 48;

// How `call`'s routine reads operand k: through its strided view, or as it is.
ir::StridedView operand_layout(const LibraryCall& call, size_t k) {
  return k < call.views.size() && call.views[k] ? *call.views[k]
                                                : ir::dense_view(call.args[k]->type.shape);
}

void vars_read(const ir::Expr& e, std::vector<VarKey>& out) {
  struct Vars : ir::IRVisitor {
    std::vector<VarKey>& out;
    explicit Vars(std::vector<VarKey>& o) : out(o) {}
    void visit_node(const ir::Var* v) override { out.push_back(v); }
  } vars(out);
  vars.visit(e);
}

struct ElementCost {
  size_t nodes = 0;
  size_t loads = 0;
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
    void note(const ir::Load*) {
      ++cost.loads;
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

// The indices of a load when every one is symbolic (no data-dependent index).
std::optional<Indices> symbolic_indices(const ir::Load& load) {
  Indices idx;
  for (const ir::PrimExpr& i : load.indices) {
    const ir::Index* x = i.as<ir::Index>();
    if (!x) return std::nullopt;
    idx.push_back(x->value);
  }
  return idx;
}

std::string key_of(const Indices& idx) {
  std::string k;
  for (const sym::Expr& i : idx)
    k += sym::to_string(i) + ",";
  return k;
}

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

// A map, reduction or stitch: its inputs are read by loads in its scalar parts, where fusion
// can replace them (a library call or a view reads whole values).
bool reads_by_loads(const ComputeDesc& d) {
  return d.kind == ComputeDesc::Kind::Map || d.kind == ComputeDesc::Kind::Reduce ||
         d.kind == ComputeDesc::Kind::Stitch;
}

// The dtype of a Reduce or Scalar stage's row value: its finish's, its accumulator's or its
// element's (a compute dtype; the stage's output, if any, stores it converted).
ir::DType row_value_dtype(const Stage& s) {
  if (s.kind == Stage::Kind::Scalar) return s.element.value->dtype;
  return s.reduction.finish.defined() ? s.reduction.finish->dtype : s.reduction.identity->dtype;
}

ir::Type result_type(const std::vector<ir::Type>& fields) {
  return fields.size() == 1 ? fields.front() : ir::Type::tuple(fields);
}

struct Group {
  ComputeDesc desc;
  std::vector<size_t> members;
  std::vector<VarKey> stage_var; // per stage, the member's var
  std::map<VarKey, size_t> stage_of;
  std::vector<FusedOp> ops;
  std::vector<FusionFact> facts;
  bool open = true;
};

class Fuser {
public:
  Fuser(std::vector<FnItem>& items, const ir::Expr& result, FnContext& ctx, FusionLog* log)
      : items_(items), ctx_(ctx), log_(log) {
    std::vector<VarKey> rs;
    vars_read(result, rs);
    results_.insert(rs.begin(), rs.end());
  }

  void run() {
    index_vars();
    for (FnItem& it : items_)
      if (!it.dropped && it.desc && it.desc->kind == ComputeDesc::Kind::Library) read_in_place(it);
    for (size_t i = 0; i < items_.size(); ++i)
      if (!items_[i].dropped && items_[i].desc && reads_by_loads(*items_[i].desc)) pull_producers(i);
    drop_absorbed();
    stitch();
    write_in_place();
    epilogues();
    chains();
    report_refusals();
    for (FnItem& it : items_)
      if (!it.dropped && it.desc && it.ops.size() > 1) name_inputs_after_values(*it.desc);
  }

private:
  // ---- who defines and who reads each var -------------------------------------------------

  void index_vars() {
    for (size_t i = 0; i < items_.size(); ++i) {
      const FnItem& it = items_[i];
      for (size_t k = 0; k < it.binding.vars.size(); ++k)
        def_[it.binding.vars[k].get()] = {i, k};
      for (VarKey v : reads(it)) {
        ++uses_[v];
        readers_[v].push_back(i);
      }
    }
  }

  // A value that will be in memory whatever fusion does: a result of the fn, or read by
  // something other than a map or a reduction (a library call, a prim written by hand), itself
  // or through a reshape.
  bool materialized(VarKey v) {
    if (results_.count(v)) return true;
    for (size_t j : readers_[v]) {
      const FnItem& r = items_[j];
      if (!r.desc) return true;
      ComputeDesc::Kind k = r.desc->kind;
      if (k == ComputeDesc::Kind::View) {
        if (materialized(r.binding.vars.front().get())) return true;
      } else if (!reads_by_loads(*r.desc)) {
        return true;
      }
    }
    return false;
  }

  // The vars an item reads, each once.
  std::set<VarKey> reads(const FnItem& it) const {
    std::vector<VarKey> vs;
    for (const ir::Binding& b : it.inserted)
      vars_read(b.value, vs);
    if (it.desc && reads_by_loads(*it.desc)) {
      for (const ComputeDesc::Input& in : it.desc->inputs)
        vars_read(in.arg, vs);
    } else if (it.desc && it.desc->kind == ComputeDesc::Kind::Library) {
      // Its operands as fuse left them (read in place from a source), and its epilogue's.
      for (const ir::Expr& a : it.desc->library.args)
        vars_read(a, vs);
      if (it.desc->library.epilogue)
        for (const ComputeDesc::Input& in : it.desc->library.epilogue->inputs)
          vars_read(in.arg, vs);
    } else {
      vars_read(it.binding.value, vs);
    }
    return std::set<VarKey>(vs.begin(), vs.end());
  }

  bool used_elsewhere(VarKey v) const {
    auto it = uses_.find(v);
    return results_.count(v) || (it != uses_.end() && it->second > 1);
  }

  // A refusal, reported at the end only if the two ops end up in different kernels.
  void refuse(const FnItem& producer, const FnItem& consumer, std::string why,
              std::vector<FusionFact> facts = {}) {
    refusals_.push_back(Refusal{static_cast<size_t>(&producer - items_.data()),
                                static_cast<size_t>(&consumer - items_.data()), std::move(why),
                                std::move(facts)});
  }

  void report_refusals() {
    if (!log_) return;
    std::map<std::string, size_t> line_of;
    for (Refusal& r : refusals_) {
      const FnItem& p = items_[r.producer];
      std::set<size_t> a = kernels_of(r.producer), b = kernels_of(r.consumer);
      bool together = std::any_of(a.begin(), a.end(), [&](size_t k) { return b.count(k) > 0; });
      if (together || reshapes_a_library_result(p)) continue;
      FusionDecision d;
      d.fn = ctx_.fn().name;
      d.variant = ctx_.variant();
      d.ops = {p.ops.back(), items_[r.consumer].ops.back()};
      d.refused = std::move(r.why);
      d.facts = std::move(r.facts);
      // One line per producer and reason, naming every consumer it stays apart from.
      std::string key = std::to_string(r.producer) + "/" + d.refused;
      auto it = line_of.find(key);
      if (it == line_of.end()) {
        line_of[key] = log_->decisions.size();
        log_->decisions.push_back(std::move(d));
      } else {
        FusionDecision& line = log_->decisions[it->second];
        line.ops.push_back(items_[r.consumer].ops.back());
        line.facts.insert(line.facts.end(), d.facts.begin(), d.facts.end());
      }
    }
  }

  // A reshape of a library call's result costs nothing to read (a product written in place
  // through a permute's layout, then reshaped): there is no copy left to fuse.
  bool reshapes_a_library_result(const FnItem& p) const {
    if (p.dropped || !p.desc || p.desc->kind != ComputeDesc::Kind::View) return false;
    const ir::Call* reshape = p.desc->call.as<ir::Call>();
    if (!reshape || reshape->args.empty()) return false;
    auto def = def_.find(reshape->args[0].get());
    if (def == def_.end()) return false;
    const FnItem& source = items_[def->second.first];
    return !source.dropped && source.desc && source.desc->kind == ComputeDesc::Kind::Library;
  }

  // The items whose kernels compute item i: its own, its stitched group's last member's, or
  // (when it was absorbed and dropped) those of the items that absorbed it.
  std::set<size_t> kernels_of(size_t i) const {
    if (items_[i].dropped) {
      auto by = absorbed_by_.find(i);
      if (by != absorbed_by_.end()) {
        std::set<size_t> out;
        for (size_t c : by->second)
          for (size_t k : kernels_of(c))
            out.insert(k);
        return out;
      }
    }
    // A stitched group's member: the group's kernels (the group may have become a library
    // call's epilogue, and that call another's part).
    auto it = kernel_of_.find(i);
    if (it != kernel_of_.end() && it->second != i) return kernels_of(it->second);
    return {i};
  }

  // A fact for the log, when it is not true by its form alone.
  void note_fact(std::vector<FusionFact>& facts, const sym::Expr& a, const sym::Expr& b,
                 const std::string& why, const sym::ProofResult& r) {
    if (sym::simplify(a).same_as(sym::simplify(b))) return;
    sym::Expr same = sym::eq(a, b);
    facts.push_back(FusionFact{sym::to_string(a) + " == " + sym::to_string(b), why,
                               ctx_.outcome(same, r)});
    if (r.verdict != sym::Verdict::Proved) ctx_.want_guard(same);
  }

  // A fused kernel's inputs are named after the values passed for them (x, w_o, mask), not
  // after the parameters of whichever op read them first.
  static void name_inputs_after_values(ComputeDesc& d) {
    ElementRewrite rw;
    for (ComputeDesc::Input& in : d.inputs) {
      const ir::Var* v = in.arg.as<ir::Var>();
      if (!v || in.buffer.name == v->name) continue;
      std::string name = d.names.fresh(v->name);
      rw.buffers[in.buffer.name] = name;
      in.buffer.name = name;
    }
    rewrite_desc(d, rw);
  }

  // ---- 0. operands read in place --------------------------------------------------------------

  // A routine that reads strided views (dsc.sgemm) reads an operand made by a chain of index
  // maps (permute, transpose, split, slice: maps whose element is one load of one input, and
  // reshapes) from the chain's source, when the source's linear index is affine in the
  // operand's indices: the strides are its coefficients, the offset its constant. The chain's
  // items stay only for other readers. Runs first, so that the source (a bias added to a
  // product) is not pulled into the chain and can become the product's epilogue instead.
  void read_in_place(FnItem& c) {
    LibraryCall& call = c.desc->library;
    const ir::LibraryRoutine* routine = call.routine;
    if (!routine || !routine->views) return;
    for (size_t k = 0; k < call.args.size() && k < 2; ++k) {
      if (k < call.views.size() && call.views[k]) continue;
      const ir::Type& t = call.args[k]->type;
      NameSet names(ctx_.symbols());
      Indices vars;
      for (size_t a = 0; a < t.rank(); ++a) vars.push_back(sym::sym(names.fresh("v", true)));
      std::vector<size_t> chain;
      std::vector<FusionFact> facts; // the reshapes' equal products
      ir::Expr source = call.args[k];
      Indices at = vars;
      while (step_back(source, at, chain, facts)) {
      }
      if (chain.empty()) continue;
      std::optional<ir::StridedView> view = affine_view(source->type, at, vars, t.shape);
      if (!view) {
        refuse(items_[chain.front()], c, "the operand's index map is not affine in its indices");
        continue;
      }
      // The routine's own conditions on the layouts (OpenBLAS reads a matrix with one unit
      // stride; dsc's GEMM steps through at most two batch dims), asked as lowering will.
      std::vector<ir::StridedView> layouts;
      for (size_t a = 0; a < call.args.size(); ++a)
        layouts.push_back(a == k ? *view : operand_layout(call, a));
      layouts.push_back(call.result_view.value_or(ir::dense_view(c.desc->type.shape)));
      if (std::string why; !routine->scalar_args(layouts, call.attributes, &why)) {
        refuse(items_[chain.front()], c, "the routine cannot read the operand in place: " + why);
        continue;
      }
      call.views.resize(call.args.size());
      call.views[k] = std::move(*view);
      // uses_ and readers_ count each var an item reads once.
      const size_t reader = static_cast<size_t>(&c - items_.data());
      const std::set<VarKey> before = reads(c);
      call.args[k] = source;
      const std::set<VarKey> after = reads(c);
      for (VarKey v : before)
        if (!after.count(v)) {
          --uses_[v];
          std::vector<size_t>& rs = readers_[v];
          rs.erase(std::remove(rs.begin(), rs.end(), reader), rs.end());
        }
      for (VarKey v : after)
        if (!before.count(v)) {
          ++uses_[v];
          readers_[v].push_back(reader);
        }
      for (size_t p : chain) absorb(c, items_[p], {});
      for (FusionFact& f : facts) {
        auto same = [&](const FusionFact& g) {
          return g.fact == f.fact && g.why == f.why && g.outcome == f.outcome;
        };
        if (std::none_of(c.facts.begin(), c.facts.end(), same)) c.facts.push_back(std::move(f));
      }
    }
    drop_unread(c);
  }

  // One step back from `value`, read at `at`, through the index map or reshape that made it:
  // `value` and `at` become the producer's operand and the indices read there.
  bool step_back(ir::Expr& value, Indices& at, std::vector<size_t>& chain,
                 std::vector<FusionFact>& facts) {
    auto def = def_.find(value.get());
    if (def == def_.end()) return false;
    FnItem& p = items_[def->second.first];
    const size_t o = def->second.second; // which of p's results
    if (p.dropped || !p.desc) return false;
    const ComputeDesc& d = *p.desc;
    if (d.kind == ComputeDesc::Kind::View) {
      const ir::Call* reshape = d.call.as<ir::Call>();
      if (!reshape || reshape->args.empty() || !reshape->args[0].is<ir::Var>()) return false;
      const ir::Expr& from = reshape->args[0];
      FusionFact fact;
      std::optional<ReshapeRemap> remap =
          ReshapeRemap::make(from->type.shape, d.type.shape, ctx_, &fact);
      if (!remap) return false;
      at = (*remap)(at);
      for (FusionFact& f : remap->facts()) facts.push_back(std::move(f));
      value = from;
      chain.push_back(def->second.first);
      return true;
    }
    if (d.kind != ComputeDesc::Kind::Map || o >= d.maps.size() || o >= d.outputs.size()) return false;
    const Element& e = d.maps[o].element;
    const ir::Load* load = e.value.as<ir::Load>();
    if (!e.lets.empty() || !load || load->dtype != d.outputs[o].dtype) return false;
    std::optional<Indices> idx = symbolic_indices(*load);
    if (!idx) return false;
    const ComputeDesc::Input* in = nullptr;
    for (const ComputeDesc::Input& i : d.inputs)
      if (i.buffer.name == load->buffer) in = &i;
    if (!in || !in->arg.is<ir::Var>() || in->arg->type.dtype != d.outputs[o].dtype) return false;
    std::map<std::string, sym::Expr> subst;
    const IndexSpace& space = d.maps[o].space;
    for (size_t a = 0; a < space.vars.size() && a < at.size(); ++a)
      if (const sym::Sym* v = space.vars[a].as<sym::Sym>()) subst[v->name] = at[a];
    Indices next;
    for (const sym::Expr& i : *idx) next.push_back(sym::simplify(ir::substitute(i, subst)));
    at = std::move(next);
    value = in->arg;
    chain.push_back(def->second.first);
    return true;
  }

  // The view of a buffer of `source` type whose element `vars` is the buffer's element `at`,
  // when `at`'s row-major linear index is affine in `vars`.
  static std::optional<ir::StridedView> affine_view(const ir::Type& source, const Indices& at,
                                                    const Indices& vars,
                                                    const std::vector<sym::Expr>& shape) {
    if (at.size() != source.rank()) return std::nullopt;
    sym::Expr linear = 0, stride = 1;
    for (size_t a = at.size(); a-- > 0;) {
      linear = linear + at[a] * stride;
      stride = stride * source.shape[a];
    }
    linear = sym::simplify(linear);
    std::map<std::string, sym::Expr> zero;
    for (const sym::Expr& v : vars) zero[v.as<sym::Sym>()->name] = 0;
    ir::StridedView view;
    view.shape = shape;
    view.offset = sym::simplify(ir::substitute(linear, zero));
    sym::Expr rebuilt = view.offset;
    for (const sym::Expr& v : vars) {
      std::map<std::string, sym::Expr> unit = zero;
      unit[v.as<sym::Sym>()->name] = 1;
      sym::Expr coefficient = sym::simplify(ir::substitute(linear, unit) - view.offset);
      view.strides.push_back(coefficient);
      rebuilt = rebuilt + coefficient * v;
    }
    // The coefficients hold no variable (each was substituted), so this is the whole test.
    if (sym::compare(sym::simplify(linear - rebuilt), sym::Expr(0)) != 0) return std::nullopt;
    return view;
  }

  // Drops the items of index maps that nothing reads any more (their readers now read in place).
  void drop_unread(const FnItem& reader) {
    for (size_t i : absorbed_from(reader)) {
      FnItem& it = items_[i];
      if (it.dropped) continue;
      bool read = false;
      for (const ir::VarRef& v : it.binding.vars) read = read || results_.count(v.get()) || uses_[v.get()] > 0;
      if (read) continue;
      it.dropped = true;
      for (VarKey r : reads(it)) --uses_[r];
    }
  }

  std::vector<size_t> absorbed_from(const FnItem& reader) const {
    std::vector<size_t> out;
    const size_t c = static_cast<size_t>(&reader - items_.data());
    for (const auto& [p, by] : absorbed_by_)
      if (std::find(by.begin(), by.end(), c) != by.end()) out.push_back(p);
    std::sort(out.begin(), out.end(), std::greater<size_t>()); // consumers before producers
    return out;
  }

  // ---- 1. producers into consumers ---------------------------------------------------------

  void pull_producers(size_t c) {
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
  std::optional<std::vector<Indices>> loads_of(const ComputeDesc& d, const std::string& buffer) {
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
  std::string input_for(ComputeDesc& c, const ir::Expr& arg, const ir::Buffer& like) {
    for (const ComputeDesc::Input& in : c.inputs)
      if (in.arg.get() == arg.get()) return in.buffer.name;
    ir::Buffer b = like;
    b.name = c.names.fresh(like.name);
    c.inputs.push_back(ComputeDesc::Input{b, arg});
    ++uses_[arg.get()];
    return b.name;
  }

  void remove_input(FnItem& c, const std::string& buffer) {
    std::vector<ComputeDesc::Input>& ins = c.desc->inputs;
    for (size_t k = 0; k < ins.size(); ++k) {
      if (ins[k].buffer.name != buffer) continue;
      --uses_[ins[k].arg.get()];
      ins.erase(ins.begin() + static_cast<std::ptrdiff_t>(k));
      return;
    }
  }

  void absorb(FnItem& c, FnItem& p, std::vector<FusionFact> facts) {
    std::vector<FusedOp> ops = p.ops;
    ops.insert(ops.end(), c.ops.begin(), c.ops.end());
    c.ops = std::move(ops);
    // Each fact once (two operands read through the same reshape rest on the same fact).
    for (const std::vector<FusionFact>* from : {&p.facts, &facts})
      for (const FusionFact& f : *from)
        if (std::none_of(c.facts.begin(), c.facts.end(), [&](const FusionFact& g) {
              return g.fact == f.fact && g.why == f.why;
            }))
          c.facts.push_back(f);
    p.absorbed = true;
    absorbed_by_[static_cast<size_t>(&p - items_.data())].push_back(
        static_cast<size_t>(&c - items_.data()));
  }

  // `c` reads the reshape `p` as its source at remapped indices.
  bool read_through_view(FnItem& c, size_t k, FnItem& p) {
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
  bool once_per_element(const ComputeDesc& c, const std::vector<Indices>& loads,
                        const std::vector<sym::Expr>& extents, std::vector<FusionFact>& facts,
                        std::string& why) {
    std::set<std::string> distinct;
    for (const Indices& idx : loads)
      distinct.insert(key_of(idx));
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
  bool inline_map(FnItem& c, size_t k, FnItem& p, size_t o) {
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
    // Each element of `c`, with a copy of p's element per distinct index; a copy read more
    // than once, or read where the consumer guards, is a local of its own.
    for (Element* e : elements(d)) {
      std::map<std::string, ir::PrimExpr> copies;
      std::map<std::string, int> reads;
      for_each_load_in(*e, buffer, [&](const std::optional<Indices>& idx) {
        if (idx) ++reads[key_of(*idx)];
      });
      std::vector<LocalLet> lets;
      ElementRewrite rw;
      rw.on_load = [&](const ir::Load& l) -> ir::PrimExpr {
        if (l.buffer != buffer) return ir::PrimExpr();
        Indices idx = *symbolic_indices(l);
        std::string key = key_of(idx);
        auto it = copies.find(key);
        if (it != copies.end()) return it->second;
        Element copy = instantiate(d, pd, o, idx);
        lets.insert(lets.end(), copy.lets.begin(), copy.lets.end());
        ir::PrimExpr value = copy.value;
        if (value->dtype != l.dtype) value = convert(value, l.dtype);
        bool leaf = value.is<ir::Load>() || value.is<ir::LocalRef>() || value.is<ir::Index>();
        if (reads[key] > 1 && !leaf && !consumer_guards) {
          std::string name = d.names.fresh(pd.op);
          lets.push_back(LocalLet{name, value});
          value = ir::LocalRef::make(value->dtype, name);
        }
        return copies[key] = value;
      };
      Element rewritten = rw.apply(*e);
      lets.insert(lets.end(), rewritten.lets.begin(), rewritten.lets.end());
      rewritten.lets = std::move(lets);
      *e = std::move(rewritten);
    }
    remove_input(c, buffer);
    absorb(c, p, std::move(facts));
    return true;
  }

  // Each load of `buffer` in `e`, with its indices (nullopt for a data-dependent one).
  static void for_each_load_in(const Element& e, const std::string& buffer,
                               const std::function<void(const std::optional<Indices>&)>& fn) {
    struct Loads : ir::IRVisitor {
      const std::string& buffer;
      const std::function<void(const std::optional<Indices>&)>& fn;
      Loads(const std::string& b, const std::function<void(const std::optional<Indices>&)>& f)
          : buffer(b), fn(f) {}
      void visit_node(const ir::Load* l) override {
        if (l->buffer == buffer) fn(symbolic_indices(*l));
        ir::IRVisitor::visit_node(l);
      }
    } loads(buffer, fn);
    for (const LocalLet& l : e.lets)
      loads.visit(l.value);
    loads.visit(e.value);
  }

  // Output `o` of map `p` at `idx`, in `c`'s names: p's inputs become c's, its locals get
  // fresh names and its index variables become `idx`.
  Element instantiate(ComputeDesc& c, const ComputeDesc& p, size_t o, const Indices& idx) {
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

  // ---- 3. results written in place --------------------------------------------------------------

  // A map that only permutes a library product's dims (its element one load of the product, at
  // its own index variables in another order), and is the product's only reader, becomes the
  // product written through a strided view of the map's result: the routine stores each
  // element where the map would have moved it (a product of attention heads straight into the
  // head-merged layout), and the copy is gone.
  void write_in_place() {
    for (FnItem& c : items_) {
      if (c.dropped || !c.desc || c.desc->kind != ComputeDesc::Kind::Map || c.desc->maps.size() != 1 ||
          c.desc->outputs.size() != 1)
        continue;
      const Element& e = c.desc->maps.front().element;
      const ir::Load* load = e.value.as<ir::Load>();
      if (!e.lets.empty() || !load) continue;
      std::optional<size_t> k = c.desc->input_number(*load);
      if (!k) continue;
      auto def = def_.find(c.desc->inputs[*k].arg.get());
      if (def == def_.end()) continue;
      FnItem& p = items_[def->second.first];
      if (p.dropped || !p.desc || p.desc->kind != ComputeDesc::Kind::Library) continue;
      write_through_view(c, p, *load);
    }
  }

  void write_through_view(FnItem& c, FnItem& p, const ir::Load& load) {
    const LibraryCall& library = p.desc->library;
    const ir::LibraryRoutine* routine = library.routine;
    if (!routine || !routine->views || library.epilogue || library.result_view) return;
    if (p.binding.vars.size() != 1 || used_elsewhere(p.binding.vars.front().get())) {
      refuse(p, c, "another consumer reads the product");
      return;
    }
    const ir::Buffer& out = c.desc->outputs.front();
    const IndexSpace& space = c.desc->maps.front().space;
    const std::vector<sym::Expr>& dims = p.desc->type.shape;
    std::optional<Indices> idx = symbolic_indices(load);
    if (load.dtype != out.dtype || !idx || idx->size() != dims.size()) return;
    // Product dim d goes to the map's dim whose variable it is read at.
    const ir::StridedView dense = ir::dense_view(out.shape);
    ir::StridedView view;
    view.shape = dims;
    view.offset = sym::Expr(0);
    std::vector<FusionFact> facts;
    std::set<size_t> used;
    for (size_t d = 0; d < dims.size(); ++d) {
      std::optional<size_t> axis;
      for (size_t a = 0; a < space.vars.size(); ++a)
        if (space.vars[a].is<sym::Sym>() && sym::compare((*idx)[d], space.vars[a]) == 0) axis = a;
      if (!axis) {
        if (sym::compare((*idx)[d], sym::Expr(0)) != 0 || !ctx_.is_one(dims[d])) {
          refuse(p, c, "the map reads the product other than by permuting its dims");
          return;
        }
        view.strides.push_back(sym::Expr(0));
        continue;
      }
      if (!used.insert(*axis).second) {
        refuse(p, c, "the map reads the product other than by permuting its dims");
        return;
      }
      sym::ProofResult r = ctx_.decide(sym::eq(dims[d], space.extents[*axis]));
      note_fact(facts, dims[d], space.extents[*axis], "the map permutes the product's dims", r);
      if (r.verdict != sym::Verdict::Proved) {
        refuse(p, c, "the map is not shown to permute the product's dims", std::move(facts));
        return;
      }
      view.strides.push_back(dense.strides[*axis]);
    }
    for (size_t a = 0; a < space.vars.size(); ++a)
      if (space.vars[a].is<sym::Sym>() && !used.count(a)) {
        refuse(p, c, "the map repeats the product along a dim of its own");
        return;
      }
    // The routine's own conditions: a permutation (ir/StridedView.h), and its scalars (rows
    // written contiguously, batch dims it can step through), asked as lowering will.
    std::string why = ir::permutation_mismatch(view, c.desc->type);
    std::vector<ir::StridedView> layouts;
    for (size_t a = 0; a < library.args.size(); ++a)
      layouts.push_back(operand_layout(library, a));
    layouts.push_back(view);
    if (why.empty() && !routine->scalar_args(layouts, library.attributes, &why)) {
      refuse(p, c, "the product cannot be written through the map's layout: " + why);
      return;
    }
    take_over(c, p, std::move(facts), [&](LibraryCall& call) { call.result_view = std::move(view); });
  }

  // `c` becomes `p`'s library call with c's result type, changed by `set` (given its epilogue
  // or its result's view); p is dropped.
  void take_over(FnItem& c, FnItem& p, std::vector<FusionFact> facts,
                 const std::function<void(LibraryCall&)>& set) {
    ComputeDesc call = *p.desc;
    call.type = c.desc->type;
    set(call.library);
    c.desc = std::move(call);
    absorb(c, p, std::move(facts));
    p.dropped = true;
  }

  // ---- 4. epilogues ----------------------------------------------------------------------------

  // A map that is the only reader of a library product (of a routine with an epilogue entry)
  // and covers it exactly becomes the product's epilogue (passes/legalize/Epilogue.h): the map's
  // item turns into the library call, with the map run on each block of rows the routine
  // finishes.
  void epilogues() {
    for (FnItem& c : items_) {
      if (c.dropped || !c.desc) continue;
      const bool map = c.desc->kind == ComputeDesc::Kind::Map && c.desc->maps.size() == 1;
      const bool stitched = c.desc->kind == ComputeDesc::Kind::Stitch && c.desc->outputs.size() == 1;
      if (!map && !stitched) continue;
      for (const ComputeDesc::Input& in : c.desc->inputs) {
        auto def = def_.find(in.arg.get());
        if (def == def_.end()) continue;
        FnItem& p = items_[def->second.first];
        if (p.dropped || !p.desc || p.desc->kind != ComputeDesc::Kind::Library) continue;
        if (take_as_epilogue(c, p)) break;
      }
    }
  }

  // Whether `c` became `p`'s epilogue: a prim the routine runs on each block of rows, or, for a
  // cublas.sgemm product, a bias and activation cuBLASLt finishes itself (VendorEpilogue.h).
  bool take_as_epilogue(FnItem& c, FnItem& p) {
    const LibraryCall& library = p.desc->library;
    const ir::LibraryRoutine* routine = library.routine;
    const bool vendor = routine && takes_vendor_epilogues(*routine);
    if (!routine || (!routine->epilogue_function && !vendor) || library.epilogue)
      return false; // none to take
    if (library.result_view) {
      refuse(p, c, "the product is written through a strided view, and an epilogue runs on "
                   "dense rows");
      return false;
    }
    if (p.binding.vars.size() != 1 || used_elsewhere(p.binding.vars.front().get())) {
      refuse(p, c, "another consumer reads the product");
      return false;
    }
    // What the map, or the stitched group's result, runs over.
    const bool stitched = c.desc->kind == ComputeDesc::Kind::Stitch;
    if (vendor && stitched) {
      refuse(p, c, "cuBLASLt finishes a bias and an activation, not a reduction over rows");
      return false;
    }
    const std::vector<sym::Expr>& extents = stitched
                                                ? c.desc->stitch.stages.back().space.extents
                                                : c.desc->maps.front().space.extents;
    const std::vector<sym::Expr>& dims = p.desc->type.shape;
    if (extents.size() != dims.size()) {
      refuse(p, c, "the map does not cover the product exactly");
      return false;
    }
    // How the map reads first (no prover), then whether it covers the product.
    ComputeDesc map = *c.desc;
    name_inputs_after_values(map);
    std::string buffer; // the map's input that is the product
    for (const ComputeDesc::Input& in : map.inputs)
      if (in.arg.get() == p.binding.vars.front().get()) buffer = in.buffer.name;
    std::string why;
    std::shared_ptr<ComputeDesc> epilogue = stitched
                                                ? make_stitched_epilogue(map, buffer, ctx_, &why)
                                                : make_epilogue(map, buffer, ctx_, &why);
    if (!epilogue) {
      refuse(p, c, why);
      return false;
    }
    std::optional<VendorEpilogue> finished;
    if (vendor && !(finished = vendor_epilogue(c, p, *epilogue))) return false;
    // The result covers the product, and a stitched group's reductions run over its columns.
    std::vector<std::pair<sym::Expr, sym::Expr>> equal;
    for (size_t a = 0; a < dims.size(); ++a) equal.emplace_back(extents[a], dims[a]);
    if (stitched)
      for (const Stage& s : c.desc->stitch.stages)
        if (s.kind == Stage::Kind::Reduce)
          equal.emplace_back(s.reduction.reduced.extents.front(), dims.back());
    std::vector<FusionFact> facts;
    for (const auto& [a, b] : equal) {
      sym::ProofResult r = ctx_.decide(sym::eq(a, b));
      note_fact(facts, a, b, "the epilogue covers the product", r);
      if (r.verdict != sym::Verdict::Proved) {
        refuse(p, c, "the map is not shown to cover the product exactly", std::move(facts));
        return false;
      }
    }
    if (finished) {
      const ir::Expr bias = epilogue->inputs[finished->bias_input].arg;
      take_over(c, p, std::move(facts), [&](LibraryCall& call) {
        call.routine = finished->routine;
        call.args.push_back(bias);
        if (!call.views.empty()) call.views.resize(call.args.size());
      });
      return true;
    }
    take_over(c, p, std::move(facts),
              [&](LibraryCall& call) { call.epilogue = std::move(epilogue); });
    return true;
  }

  // The cuBLASLt routine that finishes `epilogue` (the map `c` rewritten onto product `p`),
  // where the target offers it, the routine takes the operands as they are read, and the depth
  // is proved positive (cuBLASLt's epilogue needs a product); nullopt after a refusal.
  std::optional<VendorEpilogue> vendor_epilogue(FnItem& c, FnItem& p, const ComputeDesc& epilogue) {
    const LibraryCall& library = p.desc->library;
    std::string why;
    std::optional<VendorEpilogue> finished =
        match_vendor_epilogue(epilogue, *library.routine, ctx_.pass().target, &why);
    if (!finished) {
      refuse(p, c, why);
      return std::nullopt;
    }
    const ir::LibraryRoutine* routine = finished->routine;
    const ir::Expr& bias = epilogue.inputs[finished->bias_input].arg;
    std::vector<ir::StridedView> layouts = {operand_layout(library, 0), operand_layout(library, 1),
                                            ir::dense_view(bias->type.shape),
                                            ir::dense_view(p.desc->type.shape)};
    if (!routine || !routine->scalar_args(layouts, library.attributes, &why)) {
      refuse(p, c, "cuBLASLt cannot take the product so: " + why);
      return std::nullopt;
    }
    const sym::Expr depth = layouts[0].shape.back();
    if (ctx_.decide(sym::le(sym::Expr(1), depth)).verdict != sym::Verdict::Proved) {
      refuse(p, c,
             "the product's depth " + sym::to_string(depth) +
                 " is not shown to be at least 1, which cuBLASLt's epilogue needs");
      return std::nullopt;
    }
    return finished;
  }

  // ---- 5. chained products --------------------------------------------------------------------

  // A dsc.sgemm product whose A is another dsc.sgemm product (with its epilogue, if it has one)
  // that nothing else reads, read as it is, both with operands of their own per batch element,
  // becomes one call of dsc.sgemm_chain: the first
  // product is computed a block of rows at a time, its epilogue run on the block, and the block
  // multiplied on at once, so the first product is never stored whole (attention: QKᵀ, its
  // scale, mask and softmax, then ·V, with one block of scores per thread).
  void chains() {
    for (FnItem& c : items_) {
      if (c.dropped || !c.desc || c.desc->kind != ComputeDesc::Kind::Library) continue;
      const LibraryCall& second = c.desc->library;
      if (!second.routine || second.epilogue || second.args.size() != 2) continue;
      // The routine that chains two of this routine's products (dsc.sgemm_chain), if any.
      const ir::LibraryRoutine* chained = ir::extending_routine(
          second.routine->id, ir::RoutineRole::MatmulChain, second.routine->target);
      if (!chained) continue;
      auto def = def_.find(second.args[0].get());
      if (def == def_.end()) continue;
      FnItem& p = items_[def->second.first];
      if (p.dropped || !p.desc || p.desc->kind != ComputeDesc::Kind::Library ||
          p.desc->library.routine != second.routine || p.desc->library.args.size() != 2)
        continue;
      chain(c, p, chained);
    }
  }

  void chain(FnItem& c, FnItem& p, const ir::LibraryRoutine* routine) {
    const LibraryCall& first = p.desc->library;
    const LibraryCall& second = c.desc->library;
    if (first.result_view) {
      refuse(p, c, "the first product is written through a strided view, not kept to a block");
      return;
    }
    if (p.binding.vars.size() != 1 || used_elsewhere(p.binding.vars.front().get())) {
      refuse(p, c, "another consumer reads the first product");
      return;
    }
    auto view_of = [](const LibraryCall& call, size_t k) {
      return k < call.views.size() ? call.views[k] : std::nullopt;
    };
    const std::vector<sym::Expr>& product = p.desc->type.shape;
    if (std::optional<ir::StridedView> a = view_of(second, 0);
        a && ir::view_text(*a) != ir::view_text(ir::dense_view(product))) {
      refuse(p, c, "the second product reads the first through a strided view");
      return;
    }
    LibraryCall merged;
    merged.routine = routine;
    merged.args = {first.args[0], first.args[1], second.args[1]};
    merged.views = {view_of(first, 0), view_of(first, 1), view_of(second, 1)};
    if (!merged.views[0] && !merged.views[1] && !merged.views[2]) merged.views.clear();
    merged.result_view = second.result_view;
    merged.epilogue = first.epilogue;
    // The routine's own conditions (both products step through the same batch and rows), asked
    // as lowering will.
    std::vector<ir::StridedView> layouts;
    for (size_t a = 0; a < merged.args.size(); ++a)
      layouts.push_back(operand_layout(merged, a));
    layouts.push_back(merged.result_view.value_or(ir::dense_view(c.desc->type.shape)));
    std::string why;
    std::optional<std::vector<sym::Expr>> scalars =
        routine->scalar_args(layouts, merged.attributes, &why);
    if (!scalars) {
      refuse(p, c, "the products cannot be chained: " + why);
      return;
    }
    // Only products with operands of their own per batch element (attention's heads): a B or
    // D shared by the batch (weights) would be read again for every block of rows, and a block
    // holds only 32K / n rows (an FFN's 3072 columns: 10 rows, measured 18% slower).
    auto shared = [&](size_t outer) {
      return sym::simplify((*scalars)[outer]).same_as(sym::Expr(0)) &&
             sym::simplify((*scalars)[outer + 1]).same_as(sym::Expr(0));
    };
    if (shared(ir::kBOuter) || shared(ir::kChainDOuter)) {
      refuse(p, c, "the products share an operand across the batch (weights), which a block of "
                   "rows at a time would read again for every block");
      return;
    }
    c.desc->library = std::move(merged);
    absorb(c, p, {});
    p.dropped = true;
  }

  void drop_absorbed() {
    for (size_t i = items_.size(); i-- > 0;) {
      FnItem& it = items_[i];
      if (!it.absorbed || !it.desc) continue;
      bool used = false;
      for (const ir::VarRef& v : it.binding.vars)
        used = used || results_.count(v.get()) || uses_[v.get()] > 0;
      if (used) continue;
      it.dropped = true;
      for (VarKey v : reads(it))
        --uses_[v];
    }
  }

  // ---- 2. stitching rows -------------------------------------------------------------------

  void stitch() {
    std::vector<Group> groups;
    std::map<VarKey, size_t> group_of;
    std::map<size_t, size_t> group_of_item;
    std::map<size_t, std::set<VarKey>> item_reads;
    for (size_t i = 0; i < items_.size(); ++i) {
      FnItem& c = items_[i];
      if (c.dropped) continue;
      item_reads[i] = reads(c);
      // The open groups it reads (a closed group's results are in memory before it runs).
      std::set<size_t> read_groups;
      for (VarKey v : item_reads[i]) {
        auto g = group_of.find(v);
        if (g != group_of.end() && groups[g->second].open) read_groups.insert(g->second);
      }
      bool joined = false;
      if (read_groups.size() == 1 && stitchable(c)) {
        size_t g = *read_groups.begin();
        joined = join(groups[g], i);
        if (joined) {
          group_of[c.binding.vars.front().get()] = g;
          group_of_item[i] = g;
        }
      }
      if (joined) continue;
      for (size_t g : read_groups)
        groups[g].open = false;
      if (stitchable(c) && c.desc->kind == ComputeDesc::Kind::Reduce) {
        group_of[c.binding.vars.front().get()] = groups.size();
        group_of_item[i] = groups.size();
        groups.push_back(start(i));
      }
    }
    for (size_t g = 0; g < groups.size(); ++g) {
      if (groups[g].members.size() < 2) continue;
      std::set<VarKey> outside;
      for (const auto& [i, rs] : item_reads) {
        auto gi = group_of_item.find(i);
        if (gi != group_of_item.end() && gi->second == g) continue;
        outside.insert(rs.begin(), rs.end());
      }
      finish(groups[g], outside);
    }
  }

  // A reduction with no condition, or a single-output map, of one binding var.
  static bool stitchable(const FnItem& c) {
    if (!c.desc || c.binding.vars.size() != 1 || c.desc->outputs.size() != 1) return false;
    if (c.desc->kind == ComputeDesc::Kind::Reduce) return !c.desc->reduction.condition.defined();
    return c.desc->kind == ComputeDesc::Kind::Map;
  }

  Group start(size_t i) {
    const FnItem& c = items_[i];
    Group g{*c.desc, {i}, {c.binding.vars.front().get()}, {}, c.ops, c.facts, true};
    g.stage_of[c.binding.vars.front().get()] = 0;
    ComputeDesc& d = g.desc;
    d.kind = ComputeDesc::Kind::Stitch;
    d.stitch.rows = d.reduction.space;
    Stage s;
    s.kind = Stage::Kind::Reduce;
    s.reduction = d.reduction;
    s.local = d.names.fresh(d.op);
    s.output = 0;
    d.stitch.stages.push_back(std::move(s));
    return g;
  }

  // Joins item i to group g: its space must be the rows (a reduction or a row value) or the
  // rows with loops of its own where the rows have extent 1 (a map), and it must read the
  // group's row values at its own row and the group's maps at its own row.
  bool join(Group& g, size_t i) {
    FnItem& c = items_[i];
    const ComputeDesc& cd = *c.desc;
    ComputeDesc& gd = g.desc;
    const IndexSpace& rows = gd.stitch.rows;
    bool reduce = cd.kind == ComputeDesc::Kind::Reduce;
    const IndexSpace& space = reduce ? cd.reduction.space : cd.maps.front().space;
    if (space.vars.size() != rows.vars.size()) return false;
    std::vector<FusionFact> facts;
    bool inner = false;
    for (size_t a = 0; a < rows.vars.size(); ++a) {
      bool row = rows.vars[a].is<sym::Sym>(), own = space.vars[a].is<sym::Sym>();
      if (!row) {
        if (own && reduce) return false;
        inner = inner || own;
        continue;
      }
      if (!own) return false;
      sym::ProofResult r = ctx_.decide(sym::eq(space.extents[a], rows.extents[a]));
      note_fact(facts, space.extents[a], rows.extents[a], "row extent of " + cd.op, r);
      if (r.verdict != sym::Verdict::Proved) {
        refuse(items_[g.members.front()], c, "its extent is not shown equal to the rows'", facts);
        return false;
      }
    }
    // Its reads of the group: at its own row (and index 0 of a row value's kept dims).
    std::map<std::string, size_t> member_input; // c's buffer -> stage
    for (const ComputeDesc::Input& in : cd.inputs) {
      auto s = g.stage_of.find(in.arg.get());
      if (s != g.stage_of.end()) member_input[in.buffer.name] = s->second;
    }
    bool at_row = true;
    for_each_load(cd, [&](const ir::Load& l) {
      auto s = member_input.find(l.buffer);
      if (s == member_input.end()) return;
      std::optional<Indices> idx = symbolic_indices(l);
      if (!idx) {
        at_row = false;
        return;
      }
      bool row_value = gd.stitch.stages[s->second].kind != Stage::Kind::Map;
      for (size_t a = 0; a < rows.vars.size(); ++a) {
        if (rows.vars[a].is<sym::Sym>())
          at_row = at_row && (*idx)[a].same_as(space.vars[a]);
        else if (row_value)
          at_row = at_row && (*idx)[a].same_as(sym::Expr(0));
      }
    });
    if (!at_row) {
      refuse(items_[g.members.front()], c, "it reads the group's results at other rows");
      return false;
    }
    // Rename c into the group: row variables become the rows', its own loops, locals and
    // buffers get fresh names, and its reads of the group become row values or loads of the
    // group's maps.
    ElementRewrite rw;
    for (size_t a = 0; a < space.vars.size(); ++a) {
      const sym::Sym* v = space.vars[a].as<sym::Sym>();
      if (!v) continue;
      rw.indices[v->name] =
          rows.vars[a].is<sym::Sym>() ? rows.vars[a] : sym::sym(gd.names.fresh(v->name));
    }
    if (reduce) {
      for (const sym::Expr& v : cd.reduction.reduced.vars)
        if (const sym::Sym* s = v.as<sym::Sym>())
          rw.indices[s->name] = sym::sym(gd.names.fresh(s->name));
      rw.locals[cd.reduction.accumulator] = gd.names.fresh(cd.reduction.accumulator);
    }
    const Element& own_element = reduce ? cd.reduction.body : cd.maps.front().element;
    for (const LocalLet& l : own_element.lets)
      rw.locals[l.name] = gd.names.fresh(l.name);
    for (const ComputeDesc::Input& in : cd.inputs) {
      if (member_input.count(in.buffer.name)) continue;
      std::string name;
      for (const ComputeDesc::Input& gin : gd.inputs)
        if (gin.arg.get() == in.arg.get()) name = gin.buffer.name;
      if (name.empty()) {
        ir::Buffer b = in.buffer;
        b.name = gd.names.fresh(in.buffer.name);
        gd.inputs.push_back(ComputeDesc::Input{b, in.arg});
        name = b.name;
      }
      rw.buffers[in.buffer.name] = name;
    }
    rw.on_load = [&](const ir::Load& l) -> ir::PrimExpr {
      auto s = member_input.find(l.buffer);
      if (s == member_input.end()) return ir::PrimExpr();
      const Stage& stage = gd.stitch.stages[s->second];
      if (stage.kind == Stage::Kind::Map)
        return ir::Load::make(l.dtype, gd.outputs[*stage.output].name, l.indices, l.loc);
      ir::PrimExpr value = ir::LocalRef::make(row_value_dtype(stage), stage.local);
      // The value as the member stored it (rounded to a 16-bit float, say), as c read it.
      return value->dtype == l.dtype ? value : convert(value, l.dtype);
    };
    Stage stage;
    stage.local = gd.names.fresh(cd.op);
    ir::Buffer out = cd.outputs.front();
    out.name = gd.names.fresh(out.name);
    stage.output = gd.outputs.size();
    gd.outputs.push_back(out);
    if (reduce) {
      stage.kind = Stage::Kind::Reduce;
      stage.reduction = cd.reduction;
      rw.apply_to(stage.reduction);
    } else {
      stage.kind = inner ? Stage::Kind::Map : Stage::Kind::Scalar;
      stage.space = rw.apply(cd.maps.front().space);
      stage.element = rw.apply(cd.maps.front().element);
    }
    g.stage_of[c.binding.vars.front().get()] = gd.stitch.stages.size();
    g.stage_var.push_back(c.binding.vars.front().get());
    gd.stitch.stages.push_back(std::move(stage));
    g.members.push_back(i);
    g.ops.insert(g.ops.end(), c.ops.begin(), c.ops.end());
    g.facts.insert(g.facts.end(), c.facts.begin(), c.facts.end());
    g.facts.insert(g.facts.end(), facts.begin(), facts.end());
    return true;
  }

  // A map stage's row that later stages read back and nothing outside needs is written into
  // the output of the last stage that reads it, when that stage reads it only at the index
  // it writes (element by element, it reads before it writes): softmax's exponentials become
  // its quotients in place, with no full-size intermediate. The stages written in place.
  std::set<size_t> write_rows_in_place(Group& g, const std::set<VarKey>& outside) {
    ComputeDesc& d = g.desc;
    std::vector<Stage>& stages = d.stitch.stages;
    std::set<size_t> in_place;
    std::set<size_t> shared; // outputs a row was redirected into: one row each at a time
    for (size_t s = 0; s < stages.size(); ++s) {
      VarKey v = g.stage_var[s];
      if (stages[s].kind != Stage::Kind::Map || outside.count(v) || results_.count(v)) continue;
      const ir::Buffer& row = d.outputs[*stages[s].output];
      std::optional<size_t> last;
      for (size_t t = s + 1; t < stages.size(); ++t)
        if (stage_reads(stages[t], row.name)) last = t;
      if (!last || stages[*last].kind != Stage::Kind::Map) continue;
      Stage& f = stages[*last];
      const ir::Buffer& out = d.outputs[*f.output];
      bool same = out.dtype == row.dtype && out.shape.size() == row.shape.size();
      for (size_t a = 0; same && a < out.shape.size(); ++a)
        same = ctx_.equal(out.shape[a], row.shape[a]);
      if (!same || shared.count(*f.output) || !reads_only_at(f.element, row.name, f.space.vars))
        continue;
      // Every stage that writes the row's buffer (this one, and any row redirected into it
      // before) now writes f's output, and every read of it reads there.
      ElementRewrite rw;
      rw.buffers[row.name] = out.name;
      for (Stage& t : stages)
        rw.apply_to(t);
      size_t from = *stages[s].output;
      for (size_t t = 0; t < stages.size(); ++t) {
        if (stages[t].output != from || t == *last) continue;
        stages[t].output = f.output;
        in_place.insert(t);
      }
      shared.insert(*f.output);
    }
    return in_place;
  }

  static bool stage_reads(const Stage& s, const std::string& buffer) {
    bool found = false;
    for_each_load(s, [&](const ir::Load& l) { found = found || l.buffer == buffer; });
    return found;
  }

  // Every load of `buffer` in `e` is at `at` (a data-dependent index is no proof).
  static bool reads_only_at(const Element& e, const std::string& buffer, const Indices& at) {
    bool only = true;
    for_each_load_in(e, buffer, [&](const std::optional<Indices>& idx) {
      only = only && idx;
      for (size_t a = 0; only && a < idx->size(); ++a)
        only = (*idx)[a].same_as(at[a]);
    });
    return only;
  }

  // The group becomes its last member's description; the others are dropped. Outputs are the
  // maps' (later stages read them) and the row values something outside the group reads.
  void finish(Group& g, const std::set<VarKey>& outside) {
    // The members' reads become the group's (counted once, for the epilogues after).
    for (size_t m : g.members) forget_reads(m);
    ComputeDesc& d = g.desc;
    std::set<size_t> in_place = write_rows_in_place(g, outside);
    std::vector<ir::Buffer> outputs;
    std::vector<ir::VarRef> vars;
    std::vector<ir::Type> types;
    std::map<size_t, size_t> renumbered; // candidate output -> output
    for (size_t s = 0; s < d.stitch.stages.size(); ++s) {
      Stage& stage = d.stitch.stages[s];
      const FnItem& member = items_[g.members[s]];
      VarKey v = g.stage_var[s];
      if (stage.kind != Stage::Kind::Map && !outside.count(v) && !results_.count(v)) {
        stage.output.reset();
        continue;
      }
      if (in_place.count(s)) continue; // renumbered with the stage whose output it shares
      renumbered[*stage.output] = outputs.size();
      outputs.push_back(d.outputs[*stage.output]);
      stage.output = outputs.size() - 1;
      vars.push_back(member.binding.vars.front());
      types.push_back(member.binding.vars.front()->type);
    }
    for (size_t s : in_place) {
      Stage& stage = d.stitch.stages[s];
      stage.output = renumbered.at(*stage.output);
    }
    d.outputs = std::move(outputs);
    d.type = result_type(types);
    FnItem& last = items_[g.members.back()];
    for (size_t m : g.members)
      kernel_of_[m] = g.members.back();
    for (size_t m = 0; m + 1 < g.members.size(); ++m) {
      FnItem& member = items_[g.members[m]];
      member.dropped = true;
      last.inserted.insert(last.inserted.begin(), member.inserted.begin(), member.inserted.end());
    }
    last.binding = ir::Binding{vars, last.binding.value, false, last.binding.loc};
    last.desc = std::move(d);
    last.ops = std::move(g.ops);
    last.facts = std::move(g.facts);
    const size_t at = g.members.back();
    for (VarKey v : reads(last)) {
      ++uses_[v];
      readers_[v].push_back(at);
    }
  }

  // Item i no longer reads what it reads now.
  void forget_reads(size_t i) {
    for (VarKey v : reads(items_[i])) {
      --uses_[v];
      std::vector<size_t>& rs = readers_[v];
      rs.erase(std::remove(rs.begin(), rs.end(), i), rs.end());
    }
  }

  std::vector<FnItem>& items_;
  FnContext& ctx_;
  FusionLog* log_;
  std::map<VarKey, std::pair<size_t, size_t>> def_;
  std::map<VarKey, int> uses_;
  std::map<VarKey, std::vector<size_t>> readers_;
  std::set<VarKey> results_;
  struct Refusal {
    size_t producer, consumer;
    std::string why;
    std::vector<FusionFact> facts;
  };
  std::vector<Refusal> refusals_;
  std::map<size_t, size_t> kernel_of_;
  std::map<size_t, std::vector<size_t>> absorbed_by_;
};

} // namespace

void fuse(std::vector<FnItem>& items, const ir::Expr& result, FnContext& ctx, FusionLog* log) {
  Fuser(items, result, ctx, log).run();
}

} // namespace dsc::passes::lowering
