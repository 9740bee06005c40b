#pragma once
// The hand-made model libraries of tests/runtime_fixtures, which that folder's CMakeLists.txt
// builds and points these tests at with DSC_FIXTURE_DIR.

#include <gtest/gtest.h>

#include <string>

namespace dsc::runtime::testing {

// "dsc_fixture_tiny_model" -> ".../libdsc_fixture_tiny_model.so"
inline std::string fixture_path(const std::string& name) {
#ifdef DSC_FIXTURE_DIR
  return std::string(DSC_FIXTURE_DIR) + "/lib" + name + ".so";
#else
  return "/nonexistent/lib" + name + ".so";
#endif
}

inline bool have_fixtures() {
#ifdef DSC_FIXTURE_DIR
  return true;
#else
  return false;
#endif
}

} // namespace dsc::runtime::testing

#define DSC_SKIP_WITHOUT_FIXTURES()                                                                \
  if (!::dsc::runtime::testing::have_fixtures())                                                   \
  GTEST_SKIP() << "tests/runtime_fixtures is not part of this build (no DSC_FIXTURE_DIR)"
