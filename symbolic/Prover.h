#pragma once
// prove(pred, facts): Proved, Disproved with a counterexample, or Unknown.
//
// Stages, cheapest first; the first that decides wins:
//   1. Simplify: the canonical simplifier under the facts (constant folding, substitution,
//      interval and divisibility bounds) reduces the predicate to true or false.
//   2. Test points: evaluation at a few dozen well-chosen points (range ends, small values,
//      values next to the query's constants) finds a counterexample.
//   3. Case split: for the min/max atoms and divisions by constants of the canonical form,
//      each combination of cases (min(a, b) is a or b, x/c is 0 or x >= c) is added to the
//      facts and simplified again; true in every case proves the predicate.
//   4. Z3, with a per-query time limit.
// Every Disproved answer carries a counterexample that was checked by evaluation against the
// original predicate and every fact. Unknown is never reported as Proved, and nothing but
// Proved licenses an optimization. Results are cached per (predicate, facts).

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "symbolic/Eval.h"
#include "symbolic/Expr.h"
#include "symbolic/Facts.h"
#include "symbolic/Verdict.h"
#include "symbolic/Z3Backend.h"

namespace dsc::symbolic {

enum class ProofStage : uint8_t { Simplify, TestPoints, CaseSplit, Z3, Cache };
inline constexpr int kProofStageCount = 5;
const char* stage_name(ProofStage stage);

struct ProofResult {
  Verdict verdict = Verdict::Unknown;
  Bindings counterexample; // Disproved only: every symbol of the predicate and the facts
  ProofStage stage = ProofStage::Simplify;
  std::string reason; // Unknown only: why
};

struct ProverOptions {
  // Z3's budget per query (Z3Backend.h): a deterministic resource count, so that a build does
  // not depend on the machine's load, and a wall-clock backstop no query within it should
  // reach (--time-passes reports any that do).
  uint64_t z3_resources = kDefaultZ3Resources;
  unsigned z3_timeout_ms = 10000;
  bool use_z3 = true;
  bool use_cache = true;
};

struct ProverStats {
  uint64_t queries = 0;
  uint64_t cache_hits = 0;
  uint64_t by_stage[kProofStageCount] = {}; // indexed by ProofStage; cache hits under Cache
  uint64_t z3_calls = 0;
  uint64_t unknown = 0;
  uint64_t z3_resource_limited = 0; // Z3 queries stopped by z3_resources
  uint64_t z3_timeouts = 0;         // Z3 queries stopped by the wall-clock backstop
};

class Prover {
public:
  explicit Prover(ProverOptions options = {}) : options_(options) {}

  ProofResult prove(const Expr& predicate, const Facts& facts);

  const ProverStats& stats() const { return stats_; }
  const ProverOptions& options() const { return options_; }
  void clear_cache() { cache_.clear(); }

private:
  struct CacheKey {
    Expr predicate;
    std::vector<Expr> facts;
    bool operator==(const CacheKey& other) const;
  };
  struct CacheKeyHash {
    size_t operator()(const CacheKey& key) const;
  };

  ProofResult decide(const Expr& predicate, const Facts& facts);

  ProverOptions options_;
  ProverStats stats_;
  std::unordered_map<CacheKey, ProofResult, CacheKeyHash> cache_;
};

// Convenience: one query with a default prover (its cache lives for the process).
ProofResult prove(const Expr& predicate, const Facts& facts = {});

// Formats a result as dscc prints it: `proved`, `disproved: A=1, B=3` or `unknown`.
std::string format_result(const ProofResult& result);

} // namespace dsc::symbolic
