// Graph-level `if` and data-dependent shapes (nonzero, first_rows) compiled through the whole
// CPU pipeline, against the reference interpreter: each `if` with both values of its condition,
// and nonzero on all-zero, all-true and random inputs, at 1, primes and sizes that are not
// multiples of the vector width. The same cases go through the CUDA backend too, run on the
// block emulator (the if's condition and nonzero's count are read back from the device).

#include <gtest/gtest.h>

#include <cstdlib>

#include "backends/cuda/Nvrtc.h"
#include "tests/unit/compiler/CompileUtil.h"

namespace dsc::testing {
namespace {

// Sets fn f's bool[] parameter `flag` (on the host, before the inputs are copied anywhere).
AdjustInputs set_flag(const ir::HostProgram& host, bool flag) {
  return [&host, flag](std::vector<runtime::Tensor>& inputs) {
    for (size_t i = 0; i < host.params.size(); ++i)
      if (host.params[i].name == "flag") inputs[i].data_as<uint8_t>()[0] = flag ? 1 : 0;
    return std::string(flag ? "flag=1 " : "flag=0 ");
  };
}

std::vector<NumericCase> if_cases() {
  return {
      {"same_shapes_fused_branches",
       "import nn\n"
       "fn f(x: f32[B, N], flag: bool[]) -> f32[B, N] {\n"
       "  let y = x * 2.0\n"
       "  let z = if flag { let t = nn.relu(y); t + 1.0 } else { nn.softmax(y, axis=-1) }\n"
       "  return z + x\n"
       "}\n",
       {"B", "N"}},
      {"branch_returns_an_input",
       "fn f(x: f32[N], y: f32[N], flag: bool[]) -> f32[N] {\n"
       "  return if flag { x } else { y * 3.0 }\n"
       "}\n",
       {"N"}},
      {"shapes_differ_then_consumed",
       "fn f(x: f32[N], flag: bool[]) -> tensor {\n"
       "  let z = if flag { x * 2.0 } else { concat([x, x], axis=0) }\n"
       "  return sum(z * 3.0, axis=0)\n"
       "}\n",
       {"N"}},
      {"shapes_differ_returned",
       "fn f(x: f32[B, N], flag: bool[]) -> tensor {\n"
       "  return if flag { slice(x, axis=1, start=1, end=N) } else { concat([x, x], axis=1) }\n"
       "}\n",
       {"B", "N"}},
      {"tuple_branches",
       "fn f(x: f32[N], y: f32[M], flag: bool[]) -> tensor {\n"
       "  let a, b = if flag { (x + 1.0, y) } else { (y * 2.0, x) }\n"
       "  return (a, b)\n"
       "}\n",
       {"N", "M"}},
      {"nested_if",
       "fn f(x: f32[N], flag: bool[]) -> tensor {\n"
       "  let inner = logical_not(flag)\n"
       "  let z = if flag { if inner { x } else { x * 5.0 } } else { if inner { x - 1.0 } else { x } }\n"
       "  return z\n"
       "}\n",
       {"N"}},
      {"nonzero_in_branches",
       "fn f(x: f32[B, N], flag: bool[]) -> tensor {\n"
       "  let idx = if flag { nonzero(x > 0.5) } else { nonzero(x < 0.0) }\n"
       "  return cast(idx, \"f32\") + 1.0\n"
       "}\n",
       {"B", "N"}},
  };
}

// Before any test asks for the CUDA device: the block emulator stands in for it.
const bool kEmulated = [] {
  setenv("DSC_CUDA_EMULATE", "1", 1);
  return true;
}();

enum class On { Cpu, CudaEmulator };
struct TargetCase {
  NumericCase c;
  On on = On::Cpu;
};
void PrintTo(const TargetCase& t, std::ostream* os) { *os << t.c.name; }

std::vector<TargetCase> on_both(const std::vector<NumericCase>& cases) {
  std::vector<TargetCase> out;
  for (On on : {On::Cpu, On::CudaEmulator})
    for (const NumericCase& c : cases) {
      out.push_back({c, on});
      if (on == On::CudaEmulator) out.back().c.name += "_cuda";
    }
  return out;
}

std::string case_name(const ::testing::TestParamInfo<TargetCase>& param) {
  return param.param.c.name;
}

// A CUDA case where NVRTC is missing cannot run.
bool skipped(const TargetCase& t) {
  return kEmulated && t.on == On::CudaEmulator && cuda::nvrtc_version().empty();
}

// Compiled for the case's target.
CompiledProgram compile_for(const TargetCase& t) {
  return compile_program(t.c.source, "f", true,
                         t.on == On::Cpu ? ir::cpu_target() : ir::cuda_target());
}

class IfVsReference : public ::testing::TestWithParam<TargetCase> {};

TEST_P(IfVsReference, BothBranchesMatchAtRandomShapes) {
  if (skipped(GetParam())) GTEST_SKIP() << "NVRTC is not installed";
  const NumericCase& c = GetParam().c;
  CompiledProgram p = compile_for(GetParam());
  ASSERT_EQ(p.errors, "") << c.source;
  std::mt19937_64 rng(std::hash<std::string>{}(c.name));
  for (int trial = 0; trial < 6; ++trial) {
    symbolic::Bindings symbols;
    for (const std::string& s : c.symbols)
      symbols[s] = trial < 3 ? kFixedSizes[trial] : kSizes[rng() % std::size(kSizes)];
    for (bool flag : {true, false})
      EXPECT_EQ(first_mismatch(c, p, symbols, rng, false, set_flag(p.host, flag)), "");
  }
}

INSTANTIATE_TEST_SUITE_P(Ifs, IfVsReference, ::testing::ValuesIn(on_both(if_cases())), case_name);

std::vector<NumericCase> data_dependent_cases() {
  return {
      {"nonzero_random_mask", "fn f(x: f32[B, N]) -> tensor { return nonzero(x > 0.5) }\n",
       {"B", "N"}},
      {"nonzero_all_false", "fn f(x: f32[B, N]) -> tensor { return nonzero(x > 100.0) }\n",
       {"B", "N"}},
      {"nonzero_all_true", "fn f(x: f32[B, N]) -> tensor { return nonzero(x > -100.0) }\n",
       {"B", "N"}},
      {"nonzero_ints_rank3", "fn f(x: i64[A, B, C]) -> tensor { return nonzero(x) }\n",
       {"A", "B", "C"}},
      {"nonzero_rank1_consumed",
       "fn f(x: f32[N]) -> tensor {\n"
       "  let idx = nonzero(x)\n"
       "  let v = cast(idx, \"f32\") * 2.0\n"
       "  return (sum(v, axis=1), v)\n"
       "}\n",
       {"N"}},
      {"nonzero_of_nonzero",
       "fn f(x: f32[B, N]) -> tensor {\n"
       "  let idx = nonzero(x > 0.0)\n"
       "  return nonzero(idx)\n"
       "}\n",
       {"B", "N"}},
      {"first_rows_of_a_count",
       "fn f(x: f32[N, 3]) -> tensor {\n"
       "  let n = shape_of(x)\n"
       "  let half = take(n, arange(1), axis=0)\n"
       "  return first_rows(x * 2.0, reshape(half, []) - 1)\n"
       "}\n",
       {"N"}},
  };
}

class DataDependentVsReference : public ::testing::TestWithParam<TargetCase> {};

TEST_P(DataDependentVsReference, MatchesAtRandomShapes) {
  if (skipped(GetParam())) GTEST_SKIP() << "NVRTC is not installed";
  const NumericCase& c = GetParam().c;
  CompiledProgram p = compile_for(GetParam());
  ASSERT_EQ(p.errors, "") << c.source;
  expect_matches_reference(c, p);
}

INSTANTIATE_TEST_SUITE_P(DataDependent, DataDependentVsReference,
                         ::testing::ValuesIn(on_both(data_dependent_cases())), case_name);

// A count outside [0, rows] is a clean error of the call, naming first_rows and the count.
TEST(DataDependent, FirstRowsCountOutOfRangeFailsTheCall) {
  CompiledProgram p = compile_program(
      "fn f(x: f32[N, 2], n: i64[]) -> tensor { return first_rows(x, n) }\n", "f");
  ASSERT_EQ(p.errors, "");
  for (int64_t count : {int64_t{-1}, int64_t{6}}) {
    runtime::Tensor x = runtime::Tensor::zeros(reference::to_dl(ir::DType::F32), {5, 2});
    runtime::Tensor n = runtime::Tensor::zeros(reference::to_dl(ir::DType::I64), {});
    n.data_as<int64_t>()[0] = count;
    DLTensor xv = x.dl_view(), nv = n.dl_view();
    runtime::CallResult got = p.model->run("f", {&xv, &nv});
    ASSERT_FALSE(got.ok());
    EXPECT_NE(got.error.find("first_rows"), std::string::npos) << got.error;
    EXPECT_NE(got.error.find(std::to_string(count)), std::string::npos) << got.error;
  }
  runtime::Tensor x = runtime::Tensor::zeros(reference::to_dl(ir::DType::F32), {5, 2});
  runtime::Tensor n = runtime::Tensor::zeros(reference::to_dl(ir::DType::I64), {});
  n.data_as<int64_t>()[0] = 5;
  DLTensor xv = x.dl_view(), nv = n.dl_view();
  runtime::CallResult got = p.model->run("f", {&xv, &nv});
  ASSERT_TRUE(got.ok()) << got.error;
  EXPECT_EQ(got.outputs.at(0).type_string(), "f32[5, 2]");
}

} // namespace
} // namespace dsc::testing
