#include "passes/VerifyAfter.h"

#include <string>
#include <vector>

#include "ir/Verifier.h"
#include "support/Assert.h"

namespace dsc::passes {

void verify_after(const char* step, const ir::Module& m, bool typed) {
#ifndef NDEBUG
  ir::VerifyOptions options;
  options.require_types = typed;
  std::vector<std::string> problems = ir::verify(m, options);
  if (problems.empty()) return;
  std::string all;
  for (const std::string& p : problems)
    all += "\n  " + p;
  internal_error << "the IR after " << step << " is invalid:" << all;
#else
  (void)step, (void)m, (void)typed;
#endif
}

} // namespace dsc::passes
