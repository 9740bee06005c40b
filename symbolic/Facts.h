#pragma once
// What is known about the symbols when a question is asked: `where` clauses, facts that ops
// imply, bindings and divisibility. Facts keeps every predicate as given (the prover hands
// them to Z3 and checks counterexamples against them) and derives from them the tables the
// simplifier and bounds analysis consult:
//   - substitutions from equalities whose one side is a lone symbol (`T == S`, `N == 2*M`),
//   - ranges of canonical expressions (`1 <= S <= 512`, `w + h >= 1`),
//   - divisibility (`S % 8 == 0`, `n % 4 == 1`).
// Any other predicate is still kept and still reaches Z3.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "symbolic/Expr.h"
#include "symbolic/Interval.h"
#include "symbolic/Polynomial.h"

namespace dsc::symbolic {

class Facts {
public:
  // Adds a boolean predicate. `a && b` is split into its conjuncts.
  void add(const Expr& predicate);

  // Every conjunct added, in order, as given.
  const std::vector<Expr>& predicates() const { return predicates_; }
  bool empty() const { return predicates_.empty(); }

  // The symbol's replacement when an equality fixed it, else nullptr.
  const Expr* substitution(const std::string& symbol) const;
  // The recorded range of a canonical expression (only what the facts say; the rule that
  // symbols are >= 0 is applied by bounds analysis). Everything when nothing is recorded.
  Interval range(const Expr& canonical) const;
  // The recorded divisibility of a canonical expression; unknown when nothing is recorded.
  ModRem divisibility(const Expr& canonical) const;
  // The recorded ranges whose key is not a lone symbol (`S - T >= 2` bounds `S - T`), so that
  // bounds analysis can use them inside larger sums whatever the order of terms.
  struct CompoundRange {
    Expr key;
    Polynomial poly; // key as a polynomial, computed once
    Interval range;
  };
  const std::vector<CompoundRange>& compound_ranges() const { return compound_; }
  // True when the predicates are contradictory as far as the derived tables can tell.
  bool inconsistent() const { return inconsistent_; }

  // Order-sensitive hash of the predicates; equal Facts built the same way hash equal.
  size_t fingerprint() const { return fingerprint_; }

  const std::map<std::string, Expr>& substitutions() const { return substitutions_; }

private:
  void derive(const Expr& predicate);
  void record_substitution(const std::string& symbol, const Expr& value);
  void rebuild();
  bool introduces_substitution(const Expr& predicate) const;
  void collect_compound_ranges();

  std::vector<Expr> predicates_;
  std::map<std::string, Expr> substitutions_;
  std::unordered_map<Expr, Interval, ExprHash, ExprSame> ranges_;
  std::unordered_map<Expr, ModRem, ExprHash, ExprSame> divisibility_;
  std::vector<CompoundRange> compound_;
  size_t fingerprint_ = 0;
  bool inconsistent_ = false;
};

} // namespace dsc::symbolic
