#pragma once
// A reshape read as an index map: the element of the view at index v is the element of the
// source at remap(v), in row-major order. Fusion reads a producer through a reshape this way
// instead of materializing the view's source.
//
// The dims of the two shapes are matched in groups of equal product (proved under the fn's
// facts), left to right, skipping dims of extent 1: [B, S, 768] and [B, S, 12, 64] group as
// {B}{S}{768 | 12, 64}. Within a group the view's index is linearized and delinearized into the
// source's dims, so a split of one dim costs a multiply-add and only a merge needs a division.

#include <optional>
#include <vector>

#include "passes/FusionLog.h"
#include "passes/legalize/Context.h"

namespace dsc::passes::lowering {

class ReshapeRemap {
public:
  // The remap from `view` to `source` indices, or nullopt when the grouping cannot be proved;
  // `fact` then holds the comparison that was not decided, and `undecided` (when there is one)
  // its predicate.
  static std::optional<ReshapeRemap> make(const std::vector<symbolic::Expr>& source,
                                          const std::vector<symbolic::Expr>& view, FnContext& ctx,
                                          FusionFact* fact, symbolic::Expr* undecided = nullptr);

  std::vector<symbolic::Expr> operator()(const std::vector<symbolic::Expr>& view_index) const;

  // The equal products the remap rests on, for the fusion log: one per group that splits or
  // merges dims (`768 == 12*64`) or matches two dims not equal by their form (`B == P`).
  std::vector<FusionFact> facts() const;

private:
  struct Group {
    std::vector<size_t> source, view; // dims of extent other than 1, in order
    std::string outcome;              // of the equal products, for the log
  };
  std::vector<symbolic::Expr> source_, view_;
  std::vector<Group> groups_;
};

} // namespace dsc::passes::lowering
