#pragma once
// Decides predicates with Z3 over unbounded integers, encoding Expr.h's semantics exactly:
// floordiv rounds toward -inf, floormod has the divisor's sign, x / 0 == 0 and x % 0 == x,
// and every symbol is >= 0.

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
  // Why the answer is Unknown ("timeout", "incomplete", "model out of int64 range").
  std::string reason;
};

// Is `goal` true at every point where all `assumptions` hold? Gives up after `timeout_ms`.
Z3Outcome z3_prove(const std::vector<Expr>& assumptions, const Expr& goal, unsigned timeout_ms);

} // namespace dsc::symbolic
