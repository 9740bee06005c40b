#pragma once
// The steps of fuse (passes/legalize/Fuse.h), one file each, share the Fuser: the items of one
// fn, who defines and who reads each var, and the refusals kept for the log. Fuse.cpp holds
// that bookkeeping and runs the steps in order:
//   0. FuseReadInPlace.cpp   a library call reads an index-mapped operand from its source;
//   1. FuseProducers.cpp     maps and reshapes are inlined into their consumers;
//   2. FuseStitch.cpp        a reduction and the maps and reductions reading it by row, one stitch;
//   3. FuseWriteInPlace.cpp  a library call writes its product in a permuting map's layout;
//   4. FuseEpilogues.cpp     a map or stitch that is a product's only reader, its epilogue;
//   5. FuseChains.cpp        two products, the first the second's A, one chained call.
// Only these files include this header.

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ir/IR.h"
#include "ir/StridedView.h"
#include "passes/legalize/Fuse.h"
#include "passes/legalize/VendorEpilogue.h"
#include "symbolic/Prover.h"

namespace dsc::passes::lowering::fusion {

namespace sym = symbolic;

using VarKey = const ir::ExprNode*;
using Indices = std::vector<sym::Expr>;

// Helpers of more than one step (Fuse.cpp).
ir::StridedView operand_layout(const LibraryCall& call, size_t k);
std::optional<Indices> symbolic_indices(const ir::Load& load);
void for_each_load_in(const Element& e, const std::string& buffer,
                      const std::function<void(const std::optional<Indices>&)>& fn);
void name_inputs_after_values(ComputeDesc& d);

struct Group; // a stitched group being built (FuseStitch.cpp)

class Fuser {
public:
  Fuser(std::vector<FnItem>& items, const ir::Expr& result, FnContext& ctx, FusionLog* log);

  void run();

private:
  // ---- shared by the steps: who defines and who reads each var, refusals (Fuse.cpp) -------------
  void index_vars();
  bool materialized(VarKey v);
  std::set<VarKey> reads(const FnItem& it) const;
  bool used_elsewhere(VarKey v) const;
  void drop_if_unread(FnItem& it);
  void refuse(const FnItem& producer, const FnItem& consumer, std::string why,
              std::vector<FusionFact> facts = {});
  void report_refusals();
  bool reshapes_a_library_result(const FnItem& p) const;
  std::set<size_t> kernels_of(size_t i) const;
  void note_fact(std::vector<FusionFact>& facts, const sym::Expr& a, const sym::Expr& b,
                 const std::string& why, const sym::ProofResult& r);
  void absorb(FnItem& c, FnItem& p, std::vector<FusionFact> facts);
  void take_over(FnItem& c, FnItem& p, std::vector<FusionFact> facts,
                 const std::function<void(LibraryCall&)>& set);

  // ---- 0. operands read in place (FuseReadInPlace.cpp) ----------------------------------------
  void read_in_place(FnItem& c);
  bool step_back(ir::Expr& value, Indices& at, std::vector<size_t>& chain,
                 std::vector<FusionFact>& facts);
  void drop_unread(const FnItem& reader);
  std::vector<size_t> absorbed_from(const FnItem& reader) const;

  // ---- 1. producers into consumers (FuseProducers.cpp) ----------------------------------------
  void pull_producers(size_t c);
  std::optional<std::vector<Indices>> loads_of(const ComputeDesc& d, const std::string& buffer);
  std::string input_for(ComputeDesc& c, const ir::Expr& arg, const ir::Buffer& like);
  void remove_input(FnItem& c, const std::string& buffer);
  bool read_through_view(FnItem& c, size_t k, FnItem& p);
  bool once_per_element(const ComputeDesc& c, const std::vector<Indices>& loads,
                        const std::vector<sym::Expr>& extents, std::vector<FusionFact>& facts,
                        std::string& why);
  bool inline_map(FnItem& c, size_t k, FnItem& p, size_t o);
  Element instantiate(ComputeDesc& c, const ComputeDesc& p, size_t o, const Indices& idx);
  void drop_absorbed();

  // ---- 2. stitching rows (FuseStitch.cpp) -----------------------------------------------------
  void stitch();
  Group start(size_t i);
  bool join(Group& g, size_t i);
  std::set<size_t> write_rows_in_place(Group& g, const std::set<VarKey>& outside);
  void finish(Group& g, const std::set<VarKey>& outside);
  void forget_reads(size_t i);

  // ---- 3. results written in place (FuseWriteInPlace.cpp) -------------------------------------
  void write_in_place();
  void write_through_view(FnItem& c, FnItem& p, const ir::Load& load);

  // ---- 4. epilogues (FuseEpilogues.cpp) -------------------------------------------------------
  void epilogues();
  bool take_as_epilogue(FnItem& c, FnItem& p);
  std::optional<VendorEpilogue> vendor_epilogue(FnItem& c, FnItem& p, const ComputeDesc& epilogue);

  // ---- 5. chained products (FuseChains.cpp) ---------------------------------------------------
  void chains();
  void chain(FnItem& c, FnItem& p, const ir::LibraryRoutine* routine);

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

} // namespace dsc::passes::lowering::fusion
