#pragma once
// Rewrites the scalar parts of compute descriptions (passes/legalize/ComputeDesc.h) as fuse
// merges one description into another: index variables substituted, buffers and locals
// renamed, and loads replaced (by a producer's element, a row value or a remapped load).

#include <functional>
#include <map>
#include <set>
#include <string>

#include "passes/legalize/ComputeDesc.h"

namespace dsc::passes::lowering {

struct ElementRewrite {
  std::map<std::string, symbolic::Expr> indices; // index variable -> its new value
  std::map<std::string, std::string> buffers;    // load buffer renames
  std::map<std::string, std::string> locals;     // local (let, accumulator) renames
  // Called on every load after its indices are rewritten, before its buffer is renamed: a
  // replacement, or an undefined PrimExpr to keep the load.
  std::function<ir::PrimExpr(const ir::Load&)> on_load;
  // The casts that stand for a fused producer's store of a 16-bit float (made by handoff): a
  // widening of one back to f32 is the unrounded value, since a fused chain rounds only where
  // it stores (docs/language.md, "Precision"); any other use (a concat's select between
  // loads) keeps the rounding.
  std::set<const ir::Cast*> handoffs;

  // `value` (a producer's element) as a consumer's load of dtype `stored` reads it: converted
  // as the store and the load would, the rounding to a 16-bit float remembered in `handoffs`.
  ir::PrimExpr handoff(ir::PrimExpr value, ir::DType stored);

  ir::PrimExpr apply(const ir::PrimExpr& e) const;
  // Its lets' names and values, and its value.
  Element apply(const Element& e) const;
  // Every scalar part and local name of a map output, a reduction or a stage; index spaces are
  // substituted too (a variable renamed to another stays a variable).
  void apply_to(MapOutput& m) const;
  void apply_to(Reduction& r) const;
  void apply_to(Stage& s) const;
  IndexSpace apply(const IndexSpace& space) const;
  std::string local(const std::string& name) const;
};

// Every load in the description's scalar parts (its maps, reduction or stages), or in one
// stage's.
void for_each_load(const ComputeDesc& d, const std::function<void(const ir::Load&)>& fn);
void for_each_load(const Stage& s, const std::function<void(const ir::Load&)>& fn);
// Applies `rw` to every scalar part of the description.
void rewrite_desc(ComputeDesc& d, const ElementRewrite& rw);

} // namespace dsc::passes::lowering
