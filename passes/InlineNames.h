#pragma once
// inline_calls (passes/InlineCalls.h) names the bindings it makes from this set, one per round.

#include <map>
#include <set>
#include <string>
#include <string_view>

#include "ir/IR.h"

namespace dsc::passes {

// Names of one round: vars and symbols share one namespace, callees' names are avoided, and
// the fn's own bindings keep their names (callee bindings inlined before them get others).
class InlineNames {
public:
  void reserve(const std::string& n) { taken_.insert(n); }
  void claim(const std::string& n) { claimed_.insert(n); }
  bool claimed(const std::string& n) const { return claimed_.count(n) > 0; }

  // For a binding of the fn itself: its own name when still free.
  std::string own(const std::string& n) {
    if (ir::is_discard_name(n)) return n;
    if (!taken_.count(n)) {
      taken_.insert(n);
      return n;
    }
    return fresh(n);
  }

  std::string fresh(std::string_view hint) {
    std::string base(hint);
    if (ir::is_discard_name(base)) return base;
    if (size_t dot = base.rfind('.'); dot != std::string::npos) base = base.substr(dot + 1);
    if (base.empty()) base = "t";
    if (!taken_.count(base) && !claimed_.count(base)) {
      taken_.insert(base);
      return base;
    }
    // Names are never released, so every number below the last one given for `base` is taken:
    // the search starts after it (a chain of N ops names its N temporaries in linear time).
    for (int& k = next_number_[base];;) {
      std::string n = base + "_" + std::to_string(++k);
      if (taken_.count(n) || claimed_.count(n)) continue;
      taken_.insert(n);
      return n;
    }
  }

private:
  std::set<std::string> taken_;
  std::set<std::string> claimed_;
  std::map<std::string, int> next_number_;
};

} // namespace dsc::passes
