#pragma once
// Where the source tree is, for tests that read files of it (examples, the stdlib, tables,
// golden data): DSC_SOURCE_DIR, which ctest sets, else the tree this file is in (a test binary
// run by hand).

#include <cstdlib>
#include <string>

namespace dsc::testing {

inline std::string source_dir() {
  if (const char* root = std::getenv("DSC_SOURCE_DIR"); root && *root) return root;
  const std::string here = __FILE__; // <root>/tests/unit/SourceDir.h
  return here.substr(0, here.rfind("/tests/unit/"));
}

} // namespace dsc::testing
