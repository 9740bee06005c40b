// Every op case of OpsVsReferenceTest through the CUDA backend: the GPU schedule, the CUDA C
// (compiled by NVRTC for sm_80 and sm_90 as part of compiling), the host code that launches it
// and cuBLAS's routine, run on the block emulator (runtime/cuda/Emulator.h: the same CUDA C on
// the CPU, one fiber per GPU thread, barriers and shared memory intact) against the reference
// interpreter at the same six shapes. CUDA computes no f16 or bf16 yet (ir/TargetKinds.def):
// those cases must be refused by legalize with that error. Then row kernels at every row length their launch distinguishes,
// random fused graphs, and the guarded fusion variants of GuardedCases.h.

#include <gtest/gtest.h>

#include <cstdlib>

#include "backends/cuda/Nvrtc.h"
#include "tests/unit/compiler/GuardedCases.h"
#include "tests/unit/compiler/OpCases.h"
#include "tests/unit/compiler/RandomGraph.h"

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
    EXPECT_NE(p.errors.find("which the cuda target does not compute"), std::string::npos) << p.errors;
    return;
  }
  ASSERT_EQ(p.errors, "") << c.source;
  expect_matches_reference(c, p);
}

INSTANTIATE_TEST_SUITE_P(AllOps, CudaEmulatorVsReference, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<NumericCase>& param) { return param.param.name; });

// Row kernels at every row length their launch distinguishes (backends/cuda/CudaSource.h):
// a warp per row and eight rows per block, the last block partly past the rows (up to 256);
// one row per block of 2 to 8 warps, still in registers (to 2048); the thread loops beyond
// that. The emulator's device holds 2048 threads, so up to 31 rows of up to 256 (15 of up to
// 512) take the occupancy variant, a thread per element, and 40 rows the packed launch.
const std::vector<std::pair<int64_t, int64_t>> kRowShapes = {
    {1, 1},    {9, 1},    {9, 31},    {40, 31},  {1, 33},    {9, 256},   {40, 256},
    {1, 257},  {9, 257},  {40, 257},  {1, 2048}, {9, 2049}};

TEST(CudaEmulatorRowKernels, MatchTheReferenceAtEveryRowLength) {
  ASSERT_TRUE(kEmulated);
  if (cuda::nvrtc_version().empty()) GTEST_SKIP() << "NVRTC is not installed";
  const std::pair<const char*, const char*> sources[] = {
      {"softmax", "import nn\nfn f(x: f32[R, C]) { return nn.softmax(x, axis=-1) }"},
      {"layer_norm", "import nn\nfn f(x: f32[R, C], g: f32[C], b: f32[C]) { return nn.layer_norm(x, g, b) }"},
      {"row_sum_and_max", "fn f(x: f32[R, C]) { return sum(x, axis=1) + max(x * 2.0, axis=1) }"},
  };
  for (const auto& [name, source] : sources) {
    SCOPED_TRACE(name);
    NumericCase c{name, source, {"R", "C"}};
    c.tolerance = 1e-4; // sums of 2049 elements in another order
    CompiledProgram p = compile_program(c.source, "f", true, ir::cuda_target());
    ASSERT_EQ(p.errors, "") << c.source;
    std::mt19937_64 rng(7);
    for (const auto& [rows, cols] : kRowShapes)
      EXPECT_EQ(first_mismatch(c, p, {{"R", rows}, {"C", cols}}, rng), "");
  }
}

// A row read at another offset than it was written (tests/unit/cuda/inputs/flip_rows.dsc: z
// reads y at m - 1 - j): y stays in memory behind a barrier, and the block holds one row. The
// reference interpreter runs no prims, so the expected z is computed here.
TEST(CudaEmulatorRowKernels, ARowReadAtAnotherOffset) {
  ASSERT_TRUE(kEmulated);
  if (cuda::nvrtc_version().empty()) GTEST_SKIP() << "NVRTC is not installed";
  CompiledProgram p = compile_program(read_source("tests/unit/cuda/inputs/flip_rows.dsc"), "f", true,
                                      ir::cuda_target());
  ASSERT_EQ(p.errors, "");
  std::mt19937_64 rng(11);
  for (const auto& [rows, cols] : kRowShapes) {
    SCOPED_TRACE("R=" + std::to_string(rows) + " C=" + std::to_string(cols));
    std::vector<runtime::Tensor> inputs = random_inputs(p.host, {{"R", rows}, {"C", cols}}, rng, 2);
    std::string error;
    std::optional<runtime::Tensor> x = runtime::cuda::to_device(inputs[0], &error);
    ASSERT_TRUE(x) << error;
    DLTensor view = x->dl_view();
    runtime::CallResult got = p.model->run("f", {&view});
    ASSERT_TRUE(got.ok()) << got.error;
    std::optional<runtime::Tensor> z = runtime::cuda::to_host(got.outputs.at(0), &error);
    ASSERT_TRUE(z) << error;
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        const double want = 2.0 * element(inputs[0], i * cols + cols - 1 - j) + element(inputs[0], i * cols + j);
        ASSERT_FLOAT_EQ(element(*z, i * cols + j), want) << "at " << i << ", " << j;
      }
  }
}

// Random fused graphs (RandomGraph.h: maps, broadcasts, reductions, softmax and norms,
// reshapes, transposes, concat and slice, matmuls) through the CUDA backend against the
// reference interpreter at six shapes: the GPU schedule's forms and the row kernels' register
// path on programs no one wrote by hand.
TEST(CudaEmulatorRandomGraphs, MatchTheReference) {
  ASSERT_TRUE(kEmulated);
  if (cuda::nvrtc_version().empty()) GTEST_SKIP() << "NVRTC is not installed";
  for (int g = 0; g < 24; ++g) {
    SeededChoices choices(2000 + g);
    std::string source = random_graph_program(choices);
    SCOPED_TRACE("graph " + std::to_string(g) + ":\n" + source);
    NumericCase c{"graph" + std::to_string(g), source, {"N", "M"}, 2, 1e-4};
    CompiledProgram p = compile_program(source, "f", true, ir::cuda_target());
    ASSERT_EQ(p.errors, "");
    expect_matches_reference(c, p);
  }
}

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
