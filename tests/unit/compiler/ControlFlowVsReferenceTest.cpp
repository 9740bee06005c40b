// Graph-level `if`, loops and data-dependent shapes (nonzero, first_rows) compiled through the
// whole CPU pipeline, against the reference interpreter: each `if` with both values of its
// condition, loops with growing carries, early stops and run-time ends, and nonzero on
// all-zero, all-true and random inputs, at 1, primes and sizes that are not multiples of the
// vector width. The same cases go through the CUDA backend too, run on the block emulator (the
// conditions and counts are read back from the device).

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
      {"mask_select_elements", "fn f(x: f32[B, N]) -> tensor { return x[x > 0.5] * 2.0 }\n",
       {"B", "N"}},
      {"mask_select_rows_all_false",
       "fn f(x: f32[B, N], m: f32[B]) -> tensor { return x[m > 100.0] }\n", {"B", "N"}},
      {"mask_select_rows_of_a_rank3_int",
       "fn f(x: i64[A, B, C], m: f32[A, B]) -> tensor {\n"
       "  let rows = x[m < 0.25]\n"
       "  return (rows, sum(rows, axis=0))\n"
       "}\n",
       {"A", "B", "C"}},
      {"unique_ints_many_repeats",
       "fn f(x: f32[B, N]) -> tensor { return unique(cast(x * 3.0, \"i64\")) }\n", {"B", "N"}},
      {"unique_floats_consumed",
       "fn f(x: f32[N]) -> tensor {\n"
       "  let u = unique(cast(cast(x * 4.0, \"i32\"), \"f32\") * 0.5)\n"
       "  return (u, sum(u, axis=0))\n"
       "}\n",
       {"N"}},
      {"unique_with_nans", "fn f(x: f32[A, B]) -> tensor { return unique(log(x)) }\n",
       {"A", "B"}},
      {"first_rows_of_a_count",
       "fn f(x: f32[N, 3]) -> tensor {\n"
       "  let n = shape_of(x)\n"
       "  let half = take(n, arange(1), axis=0)\n"
       "  return first_rows(x * 2.0, reshape(half, []) - 1)\n"
       "}\n",
       {"N"}},
  };
}

class MatchesReference : public ::testing::TestWithParam<TargetCase> {};

TEST_P(MatchesReference, AtRandomShapes) {
  if (skipped(GetParam())) GTEST_SKIP() << "NVRTC is not installed";
  const NumericCase& c = GetParam().c;
  CompiledProgram p = compile_for(GetParam());
  ASSERT_EQ(p.errors, "") << c.source;
  expect_matches_reference(c, p);
}

INSTANTIATE_TEST_SUITE_P(DataDependent, MatchesReference,
                         ::testing::ValuesIn(on_both(data_dependent_cases())), case_name);

std::vector<NumericCase> loop_cases() {
  return {
      {"growing_cache",
       "fn f(x: f32[T, D], s: f32[N]) -> tensor where T >= 1 {\n"
       "  return for i in 0..N carry (cache: f32[T + i, D] = x) {\n"
       "    let row = slice(cache, axis=0, start=T + i - 1, end=T + i) * 0.5 + 1.0\n"
       "    concat([cache, row], axis=0)\n"
       "  }\n"
       "}\n",
       {"T", "D", "N"}},
      {"runtime_check_in_a_loop", // 1 <= T + i, checked on every iteration
       "fn f(x: f32[T, D], s: f32[N]) -> tensor {\n"
       "  return for i in 0..N carry (cache: f32[T + i, D] = x) {\n"
       "    concat([cache, slice(cache, axis=0, start=T + i - 1, end=T + i) + 1.0], axis=0)\n"
       "  }\n"
       "}\n",
       {"T", "D", "N"}},
      {"two_carries_with_a_matmul",
       "fn f(x: f32[B, D], w: f32[D, D], s: f32[N]) -> tensor {\n"
       "  let h, acc = for i in 0..N carry (h = x, acc = x * 0.0) {\n"
       "    let h2 = tanh(matmul(h, w) * 0.05) + x * 0.5\n"
       "    (h2, acc + h2)\n"
       "  }\n"
       "  return (h, acc * 2.0)\n"
       "}\n",
       {"B", "D", "N"}},
      {"loop_var_as_a_value",
       "fn f(x: f32[T], s: f32[N]) -> tensor {\n"
       "  return for i in 0..N carry (acc: f32[T + i] = x) {\n"
       "    concat([acc, cast(arange(T + i, T + i + 1), \"f32\")], axis=0)\n"
       "  }\n"
       "}\n",
       {"T", "N"}},
      {"early_stop_growing_carry",
       "fn f(x: f32[B, V], s: f32[N]) -> tensor {\n"
       "  let toks, h = for i in 0..N carry (toks: f32[B, i] = zeros([B, 0]), h = x)\n"
       "      while max(sum(h, axis=1), axis=0) < 4.0 {\n"
       "    let h2 = h * 1.25 + 0.125\n"
       "    (concat([toks, sum(h2, axis=1, keepdims=true)], axis=1), h2)\n"
       "  }\n"
       "  return (toks, h)\n"
       "}\n",
       {"B", "V", "N"}},
      {"nested_loops",
       "fn f(x: f32[N], a: f32[M], b: f32[K]) -> tensor {\n"
       "  return for i in 0..M carry (y = x) {\n"
       "    let z = for j in 0..K carry (z = y) { z * 0.5 + 1.0 }\n"
       "    z + y * 0.25\n"
       "  }\n"
       "}\n",
       {"N", "M", "K"}},
      {"swapped_carries",
       "fn f(x: f32[N], y: f32[N], s: f32[M]) -> tensor {\n"
       "  let a, b = for i in 0..M carry (a = x, b = y) { (b, a + 1.0) }\n"
       "  return (a, b)\n"
       "}\n",
       {"N", "M"}},
      {"nonzero_inside_a_loop",
       "fn f(x: f32[N], s: f32[M]) -> tensor {\n"
       "  return for i in 0..M carry (acc = x) {\n"
       "    let idx = nonzero(acc > 0.0)\n"
       "    acc - 0.5 + cast(sum(idx, axis=0), \"f32\") * 0.01\n"
       "  }\n"
       "}\n",
       {"N", "M"}},
      {"loop_starting_past_zero",
       "fn f(x: f32[N, D]) -> tensor {\n"
       "  let first = slice(x, axis=0, start=0, end=1)\n"
       "  return for i in 1..N carry (rows: f32[i, D] = first) {\n"
       "    let r = slice(x, axis=0, start=i, end=i + 1)\n"
       "    concat([rows, r + slice(rows, axis=0, start=i - 1, end=i)], axis=0)\n"
       "  }\n"
       "}\n",
       {"N", "D"}},
  };
}

INSTANTIATE_TEST_SUITE_P(Loops, MatchesReference, ::testing::ValuesIn(on_both(loop_cases())),
                         case_name);

// A loop to a run-time count `n` with a declared bound and an early stop: run at every count
// from 0 to the bound against the reference interpreter.
const char* const kCountedLoop =
    "fn f(x: f32[D], n: i64[]) -> tensor {\n"
    "  let v, k = for i in 0..n where i < 12 carry (v = x, k = zeros([], dtype=\"f32\"))\n"
    "      while sum(v, axis=0) < 40.0 {\n"
    "    (v * 1.5 + 1.0, k + 1.0)\n"
    "  }\n"
    "  return (v, k)\n"
    "}\n";

AdjustInputs set_count(const ir::HostProgram& host, int64_t n) {
  return [&host, n](std::vector<runtime::Tensor>& inputs) {
    for (size_t i = 0; i < host.params.size(); ++i)
      if (host.params[i].name == "n") inputs[i].data_as<int64_t>()[0] = n;
    return "n=" + std::to_string(n) + " ";
  };
}

TEST(Loops, RunTimeCountMatchesAtEveryCount) {
  NumericCase c{"counted_loop", kCountedLoop, {"D"}};
  for (On on : {On::Cpu, On::CudaEmulator}) {
    if (skipped({c, on})) continue;
    CompiledProgram p = compile_for({c, on});
    ASSERT_EQ(p.errors, "");
    std::mt19937_64 rng(7);
    for (int64_t d : {1, 3, 17})
      for (int64_t n = 0; n <= 12; ++n)
        EXPECT_EQ(first_mismatch(c, p, {{"D", d}}, rng, false, set_count(p.host, n)), "");
  }
}

// A count past the declared bound (or below zero) is a clean error of the call that names the
// loop, the same as the reference interpreter's.
TEST(Loops, CountPastTheBoundFailsTheCall) {
  CompiledProgram p = compile_program(kCountedLoop, "f");
  ASSERT_EQ(p.errors, "");
  for (int64_t count : {int64_t{13}, int64_t{1000}, int64_t{-1}}) {
    runtime::Tensor x = runtime::Tensor::zeros(reference::to_dl(ir::DType::F32), {4});
    runtime::Tensor n = runtime::Tensor::zeros(reference::to_dl(ir::DType::I64), {});
    n.data_as<int64_t>()[0] = count;
    DLTensor xv = x.dl_view(), nv = n.dl_view();
    runtime::CallResult got = p.model->run("f", {&xv, &nv});
    ASSERT_FALSE(got.ok());
    EXPECT_NE(got.error.find("the loop over 'i'"), std::string::npos) << got.error;
    EXPECT_NE(got.error.find(std::to_string(count)), std::string::npos) << got.error;
    std::vector<runtime::Tensor> inputs;
    inputs.push_back(std::move(x));
    inputs.push_back(std::move(n));
    reference::RunResult want = reference::interpret(p.typed, "f", inputs);
    ASSERT_FALSE(want.ok());
    EXPECT_NE(want.error.find("the loop over 'i'"), std::string::npos) << want.error;
  }
}

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
