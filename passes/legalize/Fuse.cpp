#include "passes/legalize/Fuse.h"

#include <algorithm>
#include <map>
#include <set>

#include "ir/Functor.h"
#include "passes/legalize/ElementRewrite.h"
#include "passes/legalize/Fuser.h"
#include "symbolic/Printer.h"
#include "symbolic/Simplify.h"

namespace dsc::passes::lowering::fusion {

namespace {

void vars_read(const ir::Expr& e, std::vector<VarKey>& out) {
  struct Vars : ir::IRVisitor {
    std::vector<VarKey>& out;
    explicit Vars(std::vector<VarKey>& o) : out(o) {}
    void visit_node(const ir::Var* v) override { out.push_back(v); }
  } vars(out);
  vars.visit(e);
}

// A map, reduction or stitch: its inputs are read by loads in its scalar parts, where fusion
// can replace them (a library call or a view reads whole values).
bool reads_by_loads(const ComputeDesc& d) {
  return d.kind == ComputeDesc::Kind::Map || d.kind == ComputeDesc::Kind::Reduce ||
         d.kind == ComputeDesc::Kind::Stitch;
}

} // namespace

// How `call`'s routine reads operand k: through its strided view, or as it is.
ir::StridedView operand_layout(const LibraryCall& call, size_t k) {
  return k < call.views.size() && call.views[k] ? *call.views[k]
                                                : ir::dense_view(call.args[k]->type.shape);
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

// Each load of `buffer` in `e`, with its indices (nullopt for a data-dependent one).
void for_each_load_in(const Element& e, const std::string& buffer,
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

// A fused kernel's inputs are named after the values passed for them (x, w_o, mask), not
// after the parameters of whichever op read them first.
void name_inputs_after_values(ComputeDesc& d) {
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

Fuser::Fuser(std::vector<FnItem>& items, const ir::Expr& result, FnContext& ctx, FusionLog* log)
    : items_(items), ctx_(ctx), log_(log) {
  std::vector<VarKey> rs;
  vars_read(result, rs);
  results_.insert(rs.begin(), rs.end());
}

void Fuser::run() {
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

// ---- who defines and who reads each var ----------------------------------------------------

void Fuser::index_vars() {
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
bool Fuser::materialized(VarKey v) {
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
std::set<VarKey> Fuser::reads(const FnItem& it) const {
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

bool Fuser::used_elsewhere(VarKey v) const {
  auto it = uses_.find(v);
  return results_.count(v) || (it != uses_.end() && it->second > 1);
}

// Drops `it` when neither the fn's result nor any item reads what it binds any more, and takes
// its own reads back (steps 0 and 1 drop what their consumers absorbed).
void Fuser::drop_if_unread(FnItem& it) {
  for (const ir::VarRef& v : it.binding.vars)
    if (results_.count(v.get()) || uses_[v.get()] > 0) return;
  it.dropped = true;
  for (VarKey r : reads(it))
    --uses_[r];
}

// A refusal, reported at the end only if the two ops end up in different kernels.
void Fuser::refuse(const FnItem& producer, const FnItem& consumer, std::string why,
                   std::vector<FusionFact> facts) {
  refusals_.push_back(Refusal{static_cast<size_t>(&producer - items_.data()),
                              static_cast<size_t>(&consumer - items_.data()), std::move(why),
                              std::move(facts)});
}

void Fuser::report_refusals() {
  if (!log_) return;
  std::map<std::string, size_t> line_of;
  std::map<std::string, std::set<size_t>> kernels_on_line;
  for (Refusal& r : refusals_) {
    const FnItem& p = items_[r.producer];
    std::set<size_t> a = kernels_of(r.producer), b = kernels_of(r.consumer);
    bool together = std::any_of(a.begin(), a.end(), [&](size_t k) { return b.count(k) > 0; });
    if (together || reshapes_a_library_result(p)) continue;
    // One line per producer and reason, naming each consumer kernel once (down a chain, every
    // op after a split is refused the same producer in turn, all of them one kernel).
    std::string key = std::to_string(r.producer) + "/" + r.why;
    std::set<size_t>& named = kernels_on_line[key];
    if (std::includes(named.begin(), named.end(), b.begin(), b.end())) continue;
    named.insert(b.begin(), b.end());
    FusionDecision d;
    d.fn = ctx_.fn().name;
    d.variant = ctx_.variant();
    d.ops = {p.ops.back(), items_[r.consumer].ops.back()};
    d.refused = std::move(r.why);
    d.facts = std::move(r.facts);
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
bool Fuser::reshapes_a_library_result(const FnItem& p) const {
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
std::set<size_t> Fuser::kernels_of(size_t i) const {
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
void Fuser::note_fact(std::vector<FusionFact>& facts, const sym::Expr& a, const sym::Expr& b,
                      const std::string& why, const sym::ProofResult& r) {
  if (sym::simplify(a).same_as(sym::simplify(b))) return;
  sym::Expr same = sym::eq(a, b);
  facts.push_back(
      FusionFact{sym::to_string(a) + " == " + sym::to_string(b), why, ctx_.outcome(same, r)});
  if (r.verdict != sym::Verdict::Proved) ctx_.want_guard(same);
}

// ---- what the steps share ---------------------------------------------------------------------

void Fuser::absorb(FnItem& c, FnItem& p, std::vector<FusionFact> facts) {
  std::vector<FusedOp> ops = p.ops;
  ops.insert(ops.end(), c.ops.begin(), c.ops.end());
  c.ops = std::move(ops);
  // Each fact once (two operands read through the same reshape rest on the same fact).
  for (const std::vector<FusionFact>* from : {&p.facts, &facts})
    for (const FusionFact& f : *from)
      if (std::none_of(c.facts.begin(), c.facts.end(),
                       [&](const FusionFact& g) { return g.fact == f.fact && g.why == f.why; }))
        c.facts.push_back(f);
  p.absorbed = true;
  absorbed_by_[static_cast<size_t>(&p - items_.data())].push_back(
      static_cast<size_t>(&c - items_.data()));
}

// `c` becomes `p`'s library call with c's result type, changed by `set` (given its epilogue
// or its result's view); p is dropped.
void Fuser::take_over(FnItem& c, FnItem& p, std::vector<FusionFact> facts,
                      const std::function<void(LibraryCall&)>& set) {
  ComputeDesc call = *p.desc;
  call.type = c.desc->type;
  set(call.library);
  c.desc = std::move(call);
  absorb(c, p, std::move(facts));
  p.dropped = true;
}

} // namespace dsc::passes::lowering::fusion

namespace dsc::passes::lowering {

void fuse(std::vector<FnItem>& items, const ir::Expr& result, FnContext& ctx, FusionLog* log) {
  fusion::Fuser(items, result, ctx, log).run();
}

} // namespace dsc::passes::lowering
