#pragma once
// What fuse decided, for `dscc check --explain-fusion` and the REPL's `:fusion`: one entry per
// kernel that computes more than one op, and one per fusion it refused, each with the shape
// facts the decision rests on and what the prover said of them.

#include <iosfwd>
#include <string>
#include <vector>

#include "support/Diagnostics.h"
#include "symbolic/Prover.h"

namespace dsc::passes {

struct FusedOp {
  std::string op; // the op's name (`exp`, `matmul`)
  SourceLoc loc;  // the binding it came from
};

struct FusionFact {
  std::string fact;    // `S == S` (symbolic, in the fn's symbols)
  std::string why;     // what it is needed for: "row extent of exp"
  std::string outcome; // `proved`, `counterexample: S=1, T=2`, or `unknown`
};

struct FusionDecision {
  std::string fn;
  std::string variant;           // a guarded variant's fact (`B == P`, `not B == P`), or empty
  std::string kernel;            // the prim it became; empty for a refusal
  std::string kind;              // elementwise, injective, reduction, stitched
  std::vector<FusedOp> ops;      // a kernel's ops, or the producer, then the consumers refused
  std::vector<FusionFact> facts; // the facts it needed
  std::string refused;           // why not fused, for a refusal
};

// What one fn became: its op calls, and the kernels, library calls and views that compute
// them (kernels counted per call as passes/KernelCount.h says, as `dscc build` counts them).
struct FusionSummary {
  std::string fn;
  size_t ops = 0;
  size_t kernels = 0;
  size_t library_calls = 0;
  size_t views = 0;
  std::vector<std::string> guards; // facts tested at run time to pick a guarded variant; the
                                   // kernels of every variant are counted
};

struct FusionLog {
  std::vector<FusionDecision> decisions;
  std::vector<FusionSummary> summaries;

  // Per fn, its summary, then one line per decision (`kernel NAME (KIND, N ops): op
  // file:line:col, ...` or `not fused: ...`, after `[FACT]` in a guarded variant) and a line
  // per fact. `fn`, when not empty, keeps only that fn's.
  void print(std::ostream& os, const SourceManager& sources, const std::string& fn = "") const;
};

// A fact's outcome as the log prints it: `proved`, `counterexample: S=1, T=2` or `unknown`.
std::string fusion_outcome(const symbolic::ProofResult& result);

} // namespace dsc::passes
