#pragma once
// Decides predicates with Z3 over unbounded integers, encoding Expr.h's semantics exactly:
// floordiv rounds toward -inf, floormod has the divisor's sign, x / 0 == 0 and x % 0 == x,
// and every symbol is >= 0.

#include <cstdint>
#include <string>
#include <vector>

#include "symbolic/Eval.h"
#include "symbolic/Expr.h"
#include "symbolic/Verdict.h"

namespace dsc::symbolic {

struct Z3Outcome {
  Verdict verdict = Verdict::Unknown;
  // For Disproved: a value for every symbol of the goal and the assumptions, satisfying all
  // assumptions and falsifying the goal. Empty otherwise.
  Bindings counterexample;
  // Why the answer is Unknown ("resource limit", "timeout", "incomplete: ...", "model out of
  // int64 range").
  std::string reason;
  // What stopped an Unknown early: Z3's resource count, or the wall-clock backstop.
  enum class Limit : uint8_t { None, Resources, Time } limit = Limit::None;
  // Z3's resource count for the query (its "rlimit count" statistic), when it finished.
  uint64_t resources_used = 0;
};

// How much a query may spend. `resources` is Z3's deterministic resource count (its `rlimit`
// parameter: the same query stops at the same point on any machine, under any load, so the
// compiler's decisions do not depend on the machine's load); `timeout_ms` is a wall-clock
// backstop that no query within `resources` should reach, kept because Z3 checks its resource
// count only between steps.
// The default resource count. The prover benchmark's corpus (bench/symbolic/README.md) needs at
// most 559 per query; 20,000 stops a hopeless nonlinear query (Fermat's cubes) after about 1.4 s
// on the development machines, where linear queries count about 1,000 per ms and nonlinear ones
// about 15.
inline constexpr uint64_t kDefaultZ3Resources = 20'000;

struct Z3Budget {
  uint64_t resources = 0; // 0: unlimited
  unsigned timeout_ms = 0; // 0: no backstop
};

// Is `goal` true at every point where all `assumptions` hold? Gives up when `budget` runs out.
Z3Outcome z3_prove(const std::vector<Expr>& assumptions, const Expr& goal, Z3Budget budget);

} // namespace dsc::symbolic
