#include "passes/Compilation.h"

namespace dsc::passes {

const char* invariant_name(Invariant i) {
  switch (i) {
#define DSC_INVARIANT(kind, name, meaning)                                                         \
  case Invariant::kind:                                                                            \
    return name;
#include "passes/Invariants.def"
  }
  return "?";
}

std::string Invariants::to_string() const {
  std::string s;
#define DSC_INVARIANT(kind, name, meaning)                                                         \
  if (has(Invariant::kind)) s += std::string(s.empty() ? "" : ", ") + name;
#include "passes/Invariants.def"
  return s;
}

} // namespace dsc::passes
