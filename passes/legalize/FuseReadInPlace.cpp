// fuse (passes/legalize/Fuse.h), step 0: operands read in place. The Fuser, its bookkeeping
// and the helpers the steps share are declared in passes/legalize/Fuser.h.

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "ir/LibraryRoutine.h"
#include "ir/OpRegistry.h"
#include "passes/legalize/Fuser.h"
#include "passes/legalize/ReshapeRemap.h"
#include "symbolic/Simplify.h"

namespace dsc::passes::lowering::fusion {

namespace {

// The view of a buffer of `source` type whose element `vars` is the buffer's element `at`,
// when `at`'s row-major linear index is affine in `vars`.
std::optional<ir::StridedView> affine_view(const ir::Type& source, const Indices& at,
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
  for (const sym::Expr& v : vars)
    zero[v.as<sym::Sym>()->name] = 0;
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

} // namespace

// A routine that reads strided views (dsc.sgemm) reads an operand made by a chain of index
// maps (permute, transpose, split, slice: maps whose element is one load of one input, and
// reshapes) from the chain's source, when the source's linear index is affine in the
// operand's indices: the strides are its coefficients, the offset its constant. The chain's
// items stay only for other readers. Runs first, so that the source (a bias added to a
// product) is not pulled into the chain and can become the product's epilogue instead.
void Fuser::read_in_place(FnItem& c) {
  LibraryCall& call = c.desc->library;
  const ir::LibraryRoutine* routine = call.routine;
  if (!routine || !routine->views) return;
  for (size_t k = 0; k < call.args.size() && k < 2; ++k) {
    if (k < call.views.size() && call.views[k]) continue;
    const ir::Type& t = call.args[k]->type;
    NameSet names(ctx_.symbols());
    Indices vars;
    for (size_t a = 0; a < t.rank(); ++a)
      vars.push_back(sym::sym(names.fresh("v", true)));
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
    for (size_t p : chain)
      absorb(c, items_[p], {});
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
bool Fuser::step_back(ir::Expr& value, Indices& at, std::vector<size_t>& chain,
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
    for (FusionFact& f : remap->facts())
      facts.push_back(std::move(f));
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
  for (const sym::Expr& i : *idx)
    next.push_back(sym::simplify(ir::substitute(i, subst)));
  at = std::move(next);
  value = in->arg;
  chain.push_back(def->second.first);
  return true;
}

// Drops the items of index maps that nothing reads any more (their readers now read in place).
void Fuser::drop_unread(const FnItem& reader) {
  for (size_t i : absorbed_from(reader)) {
    FnItem& it = items_[i];
    if (!it.dropped) drop_if_unread(it);
  }
}

std::vector<size_t> Fuser::absorbed_from(const FnItem& reader) const {
  std::vector<size_t> out;
  const size_t c = static_cast<size_t>(&reader - items_.data());
  for (const auto& [p, by] : absorbed_by_)
    if (std::find(by.begin(), by.end(), c) != by.end()) out.push_back(p);
  std::sort(out.begin(), out.end(), std::greater<size_t>()); // consumers before producers
  return out;
}

} // namespace dsc::passes::lowering::fusion
