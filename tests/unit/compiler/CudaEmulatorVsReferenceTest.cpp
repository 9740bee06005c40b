// Every op case of OpsVsReferenceTest through the CUDA backend: the GPU schedule, the CUDA C
// (compiled by NVRTC for sm_80 and sm_90 as part of compiling), the host code that launches it
// and cuBLAS's routine, run on the block emulator (runtime/cuda/Emulator.h: the same CUDA C on
// the CPU, one fiber per GPU thread, barriers and shared memory intact) against the reference
// interpreter at the same six shapes. f16 and bf16 are not supported on CUDA yet: those cases
// must fail with that error. Then the guarded fusion variants of GuardedCases.h.

#include <gtest/gtest.h>

#include <cstdlib>

#include "backends/cuda/Nvrtc.h"
#include "tests/unit/compiler/GuardedCases.h"
#include "tests/unit/compiler/OpCases.h"

namespace dsc::testing {
namespace {

// Before any test asks for the device.
const bool kEmulated = [] {
  setenv("DSC_CUDA_EMULATE", "1", 1);
  return true;
}();

class CudaEmulatorVsReference : public ::testing::TestWithParam<NumericCase> {};

TEST_P(CudaEmulatorVsReference, MatchesAtRandomShapes) {
  ASSERT_TRUE(kEmulated);
  if (cuda::nvrtc_version().empty()) GTEST_SKIP() << "NVRTC is not installed";
  const NumericCase& c = GetParam();
  CompiledProgram p = compile_program(c.source, "f", true, ir::cuda_target());
  if (c.source.find("f16") != std::string::npos) {
    EXPECT_NE(p.errors.find("not supported on CUDA yet"), std::string::npos) << p.errors;
    return;
  }
  ASSERT_EQ(p.errors, "") << c.source;
  expect_matches_reference(c, p);
}

INSTANTIATE_TEST_SUITE_P(AllOps, CudaEmulatorVsReference, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<NumericCase>& param) { return param.param.name; });

// Guarded fusion variants: the host code tests the fact on the GPU path too, and each variant's
// kernels run where their fact says.
class CudaGuardedFusionVsReference : public ::testing::TestWithParam<GuardedCase> {};

TEST_P(CudaGuardedFusionVsReference, EachVariantMatchesWhereItRuns) {
  ASSERT_TRUE(kEmulated);
  if (cuda::nvrtc_version().empty()) GTEST_SKIP() << "NVRTC is not installed";
  const GuardedCase& c = GetParam();
  CompiledProgram p = compile_program(c.numeric.source, "f", true, ir::cuda_target());
  ASSERT_EQ(p.errors, "") << c.numeric.source;
  expect_each_variant_matches(c, p);
}

INSTANTIATE_TEST_SUITE_P(Fusion, CudaGuardedFusionVsReference, ::testing::ValuesIn(guarded_cases()),
                         [](const ::testing::TestParamInfo<GuardedCase>& param) {
                           return param.param.numeric.name;
                         });

} // namespace
} // namespace dsc::testing
