#pragma once
// Access analysis: what the loads and stores of a prim body (or of any statement in it, or of
// a rewrite of it) say about its loops. It knows no statement shapes of any pass: it reads
// indices as symbolic linear forms and asks the prover what it cannot read off them.
//
// Per access (Load or Store) in the analyzed statement:
//   indices   each index in canonical form; undefined where the index is not an Index (an
//             integer loaded from memory).
//   flat      the row-major offset in elements, sum_k index_k * prod_{l>k} shape_l, over the
//             buffer's declared shape (a prim parameter or an Alloc); undefined when an index is.
//   strides   for every loop around the access inside the analyzed statement, the change of
//             `flat` when that loop's variable grows by one: 1 is contiguous along the loop,
//             0 is invariant in it. Undefined when flat is undefined or not affine in the
//             variable (a floordiv of it, a product of two loop variables).
//
// Per loop (every For in the analyzed statement), with the variables of the loops around it
// fixed:
//   independent  Guaranteed: no two distinct iterations touch a common buffer element that
//                either writes, no local declared outside the loop is assigned in it, and it
//                holds no Evaluate (an effect). Its iterations may run in any order or at once.
//   movable      independent, and the written elements are told apart by the loop's own
//                variable alone: two iterations with different values of it touch no common
//                written element whatever the values of all other loop variables of the
//                analyzed statement. Such a loop may trade places with a loop it is perfectly
//                nested in or around (when neither's bounds mention the other's variable),
//                whatever that loop carries.
//   reduction    not independent, and every dependence between its iterations goes through an
//                accumulation: `t = t op e` into a local t declared outside the loop, or
//                `b[I] = b[I] op e` into a buffer (the same indices on both sides), op one of
//                add, mul, min, max (associative and commutative), e reading neither t nor b,
//                and t or b touched nowhere else in the loop. Its iterations may run in any
//                order up to reassociation (of floating point too, as a vectorizer does).
//                `reductions` names each accumulated local or buffer and its combiner.
//
// Conservative: a loop is independent only when, for every pair of a store and an access to the
// same buffer (Allocs inside the loop are private to an iteration and skipped), some dimension
// indexes both as `c*v + g` with the same nonzero c and the same g, g free of v and of the
// variables of loops inside (for `movable`: of every other loop variable). Everything else (an
// index that is no Index, a shifted index as in `y[i] = y[i - 1] + x[i]`, an index not affine
// in v) counts as a dependence. Conditions (`if`) are ignored: every access is taken to
// happen. Indices are assumed in bounds (the verifier and code generator assume it too), so
// distinct indices in one dimension mean distinct elements.

#include <map>
#include <string>
#include <vector>

#include "ir/IR.h"
#include "ir/Module.h"
#include "symbolic/Facts.h"
#include "symbolic/Prover.h"

namespace dsc::passes {

struct Access {
  const ir::Load* load = nullptr;   // the Load, for a load
  const ir::Store* store = nullptr; // the Store, for a store
  std::string buffer;
  std::vector<symbolic::Expr> indices;
  symbolic::Expr flat;
  std::map<std::string, symbolic::Expr> strides; // by loop variable

  bool is_store() const { return store != nullptr; }
};

struct Reduction {
  std::string target; // the local or buffer accumulated into
  bool into_local = false;
  ir::BinaryOp op = ir::BinaryOp::Add;
};

struct LoopInfo {
  const ir::For* loop = nullptr;
  const ir::For* parent = nullptr; // the loop around it in the analyzed statement, if any
  bool innermost = false;          // no loop inside
  bool independent = false;
  bool movable = false;
  bool reduction = false;
  std::vector<Reduction> reductions; // when reduction
  std::vector<size_t> accesses;      // into AccessAnalysis::accesses(): those in the body
};

class AccessAnalysis {
public:
  // Analyzes `body`: the prim's body, a statement in it, or a rewrite of either. Buffers are
  // the prim's parameters and the Allocs in `body`; the prim's `where` clauses are the facts.
  AccessAnalysis(const ir::PrimFunc& prim, const ir::Stmt& body, symbolic::Prover& prover);

  const std::vector<Access>& accesses() const { return accesses_; }
  // Every loop of the analyzed statement, outer before inner.
  const std::vector<LoopInfo>& loops() const { return loops_; }
  // The loop's facts; internal error when it is not in the analyzed statement.
  const LoopInfo& loop(const ir::For* f) const;

  // The stride of `var` in `a`; undefined when not affine or `var` is no loop around `a`.
  symbolic::Expr stride(const Access& a, const std::string& var) const;
  // Proved: the stride of `var` in `a` is 1.
  bool contiguous(const Access& a, const std::string& var) const;
  // Proved: `e` is at least `low`, e.g. a loop extent >= 1.
  bool at_least(const symbolic::Expr& e, int64_t low) const;
  // Proved under the prim's `where` clauses.
  bool proves(const symbolic::Expr& predicate) const;

private:
  void analyze_loop(LoopInfo& info);

  symbolic::Prover& prover_;
  symbolic::Facts facts_;
  std::map<std::string, std::vector<symbolic::Expr>> shapes_;
  std::vector<Access> accesses_;
  std::vector<LoopInfo> loops_;
  std::map<const ir::For*, size_t> index_;
};

} // namespace dsc::passes
