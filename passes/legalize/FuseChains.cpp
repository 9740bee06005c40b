// fuse (passes/legalize/Fuse.h), step 5: chained products. The Fuser, its bookkeeping
// and the helpers the steps share are declared in passes/legalize/Fuser.h.

#include "ir/LibraryRoutine.h"
#include "passes/legalize/Fuser.h"
#include "symbolic/Simplify.h"

namespace dsc::passes::lowering::fusion {

// A dsc.sgemm product whose A is another dsc.sgemm product (with its epilogue, if it has one)
// that nothing else reads, read as it is, both with operands of their own per batch element,
// becomes one call of dsc.sgemm_chain: the first
// product is computed a block of rows at a time, its epilogue run on the block, and the block
// multiplied on at once, so the first product is never stored whole (attention: QKᵀ, its
// scale, mask and softmax, then ·V, with one block of scores per thread).
void Fuser::chains() {
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

void Fuser::chain(FnItem& c, FnItem& p, const ir::LibraryRoutine* routine) {
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
      a && !ir::same_view(*a, ir::dense_view(product))) {
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
    refuse(p, c,
           "the products share an operand across the batch (weights), which a block of "
           "rows at a time would read again for every block");
    return;
  }
  c.desc->library = std::move(merged);
  absorb(c, p, {});
  p.dropped = true;
}

} // namespace dsc::passes::lowering::fusion
