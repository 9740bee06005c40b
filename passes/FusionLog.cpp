#include "passes/FusionLog.h"

#include <ostream>

namespace dsc::passes {

std::string fusion_outcome(const symbolic::ProofResult& result) {
  switch (result.verdict) {
  case symbolic::Verdict::Proved:
    return "proved";
  case symbolic::Verdict::Disproved: {
    std::string s = "counterexample:";
    const char* sep = " ";
    for (const auto& [name, value] : result.counterexample) {
      s += sep + name + "=" + std::to_string(value);
      sep = ", ";
    }
    return s;
  }
  case symbolic::Verdict::Unknown:
    break;
  }
  return "unknown";
}

namespace {

std::string where(const SourceLoc& loc, const SourceManager& sources) {
  if (!loc.valid()) return "";
  return " " + sources.name(loc.file) + ":" + std::to_string(loc.line) + ":" +
         std::to_string(loc.col);
}

} // namespace

void FusionLog::print(std::ostream& os, const SourceManager& sources, const std::string& fn) const {
  for (const FusionSummary& s : summaries) {
    if (!fn.empty() && s.fn != fn) continue;
    size_t kernels = s.kernels + s.library_calls;
    os << s.fn << ": " << s.ops << (s.ops == 1 ? " op call" : " op calls") << " in " << kernels
       << (kernels == 1 ? " kernel per call (" : " kernels per call (") << s.kernels << " generated, "
       << s.library_calls << (s.library_calls == 1 ? " library call)" : " library calls)");
    if (s.views) os << " and " << s.views << (s.views == 1 ? " view" : " views");
    for (const std::string& g : s.guards)
      os << "; two variants, guarded at run time on " << g;
    os << "\n";
  }
  for (const FusionDecision& d : decisions) {
    if (!fn.empty() && d.fn != fn) continue;
    os << d.fn << (d.variant.empty() ? "" : " [" + d.variant + "]");
    if (d.kernel.empty())
      os << ": not fused: ";
    else
      os << ": kernel " << d.kernel << " (" << d.kind << ", " << d.ops.size() << " ops): ";
    const char* sep = "";
    for (const FusedOp& op : d.ops) {
      os << sep << op.op << where(op.loc, sources);
      sep = d.kernel.empty() && sep[0] == '\0' ? " into " : ", ";
    }
    if (!d.refused.empty()) os << ": " << d.refused;
    os << "\n";
    for (const FusionFact& f : d.facts) {
      os << "    " << (f.fact.empty() ? "" : f.fact + " ") << "(" << f.why << "): " << f.outcome
         << "\n";
    }
  }
}

} // namespace dsc::passes
