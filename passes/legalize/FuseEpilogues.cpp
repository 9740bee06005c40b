// fuse (passes/legalize/Fuse.h), step 4: epilogues. The Fuser, its bookkeeping
// and the helpers the steps share are declared in passes/legalize/Fuser.h.

#include <memory>

#include "ir/LibraryRoutine.h"
#include "passes/legalize/Epilogue.h"
#include "passes/legalize/Fuser.h"
#include "symbolic/Printer.h"

namespace dsc::passes::lowering::fusion {

// A map that is the only reader of a library product (of a routine with an epilogue entry)
// and covers it exactly becomes the product's epilogue (passes/legalize/Epilogue.h): the map's
// item turns into the library call, with the map run on each block of rows the routine
// finishes.
void Fuser::epilogues() {
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
bool Fuser::take_as_epilogue(FnItem& c, FnItem& p) {
  const LibraryCall& library = p.desc->library;
  const ir::LibraryRoutine* routine = library.routine;
  const bool vendor = routine && takes_vendor_epilogues(*routine);
  if (!routine || (!routine->epilogue_function && !vendor) || library.epilogue)
    return false; // none to take
  if (library.result_view) {
    refuse(p, c,
           "the product is written through a strided view, and an epilogue runs on "
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
  const std::vector<sym::Expr>& extents =
      stitched ? c.desc->stitch.stages.back().space.extents : c.desc->maps.front().space.extents;
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
  // The epilogue writes in place of the product, so its result keeps the product's dtype.
  const ir::DType dtype = p.desc->type.dtype;
  std::shared_ptr<ComputeDesc> epilogue =
      stitched ? make_stitched_epilogue(map, buffer, dtype, ctx_, &why)
               : make_epilogue(map, buffer, dtype, ctx_, &why);
  if (!epilogue) {
    refuse(p, c, why);
    return false;
  }
  std::optional<VendorEpilogue> finished;
  if (vendor && !(finished = vendor_epilogue(c, p, *epilogue))) return false;
  // The result covers the product, and a stitched group's reductions run over its columns.
  std::vector<std::pair<sym::Expr, sym::Expr>> equal;
  for (size_t a = 0; a < dims.size(); ++a)
    equal.emplace_back(extents[a], dims[a]);
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
std::optional<VendorEpilogue> Fuser::vendor_epilogue(FnItem& c, FnItem& p,
                                                     const ComputeDesc& epilogue) {
  const LibraryCall& library = p.desc->library;
  std::string why;
  std::optional<VendorEpilogue> finished =
      match_vendor_epilogue(epilogue, *library.routine, ctx_.module(), ctx_.pass().target, &why);
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

} // namespace dsc::passes::lowering::fusion
