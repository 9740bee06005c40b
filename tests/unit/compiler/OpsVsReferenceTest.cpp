// Every primitive op and every stdlib composite, compiled through the whole CPU pipeline
// (inline_calls, legalize, schedule, plan_memory, lower_host, LLVM JIT), against the reference
// interpreter at six shapes each: every symbol 1, then 7, then 17, then three random draws from
// sizes that include 1, primes and sizes that are not multiples of the vector width.

#include <gtest/gtest.h>

#include "tests/unit/compiler/OpCases.h"

namespace dsc::testing {
namespace {

class OpsVsReference : public ::testing::TestWithParam<NumericCase> {};

TEST_P(OpsVsReference, MatchesAtRandomShapes) {
  const NumericCase& c = GetParam();
  CompiledProgram p = compile_program(c.source, "f");
  ASSERT_EQ(p.errors, "") << c.source;
  expect_matches_reference(c, p);
}

INSTANTIATE_TEST_SUITE_P(AllOps, OpsVsReference, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<NumericCase>& param) { return param.param.name; });

} // namespace
} // namespace dsc::testing
