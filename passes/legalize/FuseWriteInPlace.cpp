// fuse (passes/legalize/Fuse.h), step 3: results written in place. The Fuser, its bookkeeping
// and the helpers the steps share are declared in passes/legalize/Fuser.h.

#include <set>

#include "ir/LibraryRoutine.h"
#include "passes/legalize/Fuser.h"

namespace dsc::passes::lowering::fusion {

// A map that only permutes a library product's dims (its element one load of the product, at
// its own index variables in another order), and is the product's only reader, becomes the
// product written through a strided view of the map's result: the routine stores each
// element where the map would have moved it (a product of attention heads straight into the
// head-merged layout), and the copy is gone.
void Fuser::write_in_place() {
  for (FnItem& c : items_) {
    if (c.dropped || !c.desc || c.desc->kind != ComputeDesc::Kind::Map ||
        c.desc->maps.size() != 1 || c.desc->outputs.size() != 1)
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

void Fuser::write_through_view(FnItem& c, FnItem& p, const ir::Load& load) {
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

} // namespace dsc::passes::lowering::fusion
