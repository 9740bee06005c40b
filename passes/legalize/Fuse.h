#pragma once
// fuse: the middle of legalize, between describing each op call and materializing it. Over one
// fn's bindings, in order, it
//   0. has a routine that reads strided views (dsc.sgemm) read a permuted, reshaped or split
//      operand from its source in place, when the source's index is affine in the operand's;
//   1. inlines producers into consumers: the element of a map (elementwise, broadcast,
//      injective) replaces the consumer's load of its result, and a reshape becomes an index
//      remap (passes/legalize/ReshapeRemap.h). A costly producer (Cost::Costly intrinsics) is
//      inlined only where it is evaluated once per element of its result: its only consumer
//      reads each element once, which the prover shows by the extents being equal;
//   2. stitches each reduction with the reductions and maps that read it row by row into one
//      Stitch description (softmax, layer_norm, rms_norm: one kernel, one pass over a row per
//      stage), when the prover shows their extents equal the rows'.
//   3. has such a routine write its product straight into the layout of a map that only
//      permutes its dims (attention's heads into the head-merged layout), when the prover shows
//      the extents equal and the routine can write that layout;
//   4. makes a map that is a product's only reader and covers it exactly the product's
//      epilogue (passes/legalize/Epilogue.h);
//   5. chains a dsc.sgemm product read only by another, as its A, with it into one
//      dsc.sgemm_chain call, a block of rows at a time (attention: QKᵀ, its softmax epilogue,
//      then ·V), when the routine takes both products' layouts and their B and D are per batch
//      element (not weights, which every block would read again).
// A fact that is not proved keeps the ops apart; every decision and refusal, with its facts,
// goes to the FusionLog. Nothing is fused by an op's name: only descriptions are read.
// Fuse.cpp runs the steps, each a file of its own (passes/legalize/Fuser.h names them).

#include <optional>
#include <vector>

#include "ir/IR.h"
#include "passes/FusionLog.h"
#include "passes/legalize/ComputeDesc.h"
#include "passes/legalize/Context.h"

namespace dsc::passes::lowering {

// One binding of the fn being legalized, between the two halves.
struct FnItem {
  ir::Binding binding;               // as written; a stitched group rebinds its outputs
  std::vector<ir::Binding> inserted; // bindings its description inserted before it
  std::optional<ComputeDesc> desc;   // an op call's; none for any other binding (it stays)
  std::vector<FusedOp> ops;          // the op calls its description computes
  std::vector<FusionFact> facts;     // the facts its fusions rest on
  bool absorbed = false;             // inlined into a consumer at least once
  bool dropped = false;              // nothing reads it any more: no code, no binding
};

// Fuses `items` in place. `result` is the fn's result, whose vars stay bound. Refusals go to
// `log` when it is not null, under the fn's name.
void fuse(std::vector<FnItem>& items, const ir::Expr& result, FnContext& ctx, FusionLog* log);

} // namespace dsc::passes::lowering
