// One compiled model called from many threads at once, at random shapes with `where`
// violations mixed in: every call's result equals the same call's result run alone, and every
// violation is an error naming its clause, on its own thread, with half the weights declared
// constant (packed once, on first use, by whichever thread comes first). Under ThreadSanitizer
// (-DDSC_SANITIZE=thread, docs/testing.md) the runtime's side of it is race-checked too.

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>

#include "runtime/dsc_runtime.h"
#include "runtime/gemm/ConstantPacks.h"
#include "tests/unit/compiler/CompileUtil.h"

namespace dsc::testing {
namespace {

constexpr const char* kModel = R"(import nn
fn f(x: f32[B, S, 48], w: f32[48, 48], g: f32[48], b: f32[48]) -> f32[B, S, 48]
  where B <= 6, S <= 40
{
  let h = nn.layer_norm(matmul(x, w) + x, g, b)
  return nn.softmax(h * 2.0, axis=-1)
}
)";

struct Case {
  int64_t b = 0, s = 0;
  std::vector<runtime::Tensor> inputs;
  runtime::CallResult alone; // the result of the call run by itself
  bool violates = false;
};

runtime::CallResult call(runtime::Model& model, std::vector<runtime::Tensor>& inputs) {
  return call_entry(model, inputs);
}

bool same_bits(const runtime::Tensor& a, const runtime::Tensor& b) {
  return a.type_string() == b.type_string() &&
         std::memcmp(a.data(), b.data(), static_cast<size_t>(a.numel()) * sizeof(float)) == 0;
}

TEST(ConcurrencyStress, ManyThreadsMatchSingleThreadedCalls) {
  CompiledProgram p = compile_program(kModel, "f");
  ASSERT_EQ(p.errors, "");
  std::mt19937_64 rng(15);
  // 48 cases: shapes with 1, primes and the bounds, every sixth one outside a where clause.
  std::vector<Case> cases(48);
  for (size_t i = 0; i < cases.size(); ++i) {
    Case& c = cases[i];
    c.violates = i % 6 == 5;
    c.b = c.violates && i % 12 == 5 ? 7 : int64_t(1 + rng() % 6);
    c.s = c.violates && i % 12 == 11 ? 41 : int64_t(1 + rng() % 40);
    c.inputs = random_inputs(p.host, {{"B", c.b}, {"S", c.s}}, rng, 2);
    c.alone = call(*p.model, c.inputs);
    ASSERT_EQ(c.alone.ok(), !c.violates) << "B=" << c.b << ", S=" << c.s << ": " << c.alone.error;
    if (c.violates) {
      EXPECT_NE(c.alone.error.find("where"), std::string::npos) << c.alone.error;
    }
  }
  // The weights of half the cases are declared constant now, after their single-threaded runs:
  // their GEMM then packs each on first use, from whichever threads get there first, and every
  // later call reads the pack (runtime/gemm/ConstantPacks.h); the results must not change.
  std::vector<const void*> constants;
  for (size_t i = 0; i < cases.size(); i += 2) {
    runtime::Tensor& w = cases[i].inputs[1];
    ASSERT_EQ(dsc_declare_constant(w.data(), w.nbytes()), 0) << dsc_last_error();
    constants.push_back(w.data());
  }
  constexpr int kThreads = 8, kCalls = 150;
  std::atomic<int> mismatches{0}, wrong_errors{0}, calls{0};
  std::vector<std::string> first_problem(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 pick(1000 + t);
      for (int k = 0; k < kCalls; ++k) {
        Case& c = cases[pick() % cases.size()];
        // Inputs are only read: every thread may pass the same tensors.
        runtime::CallResult got = call(*p.model, c.inputs);
        ++calls;
        std::string at = "B=" + std::to_string(c.b) + ", S=" + std::to_string(c.s);
        if (c.violates) {
          if (got.ok() || got.error != c.alone.error) {
            ++wrong_errors;
            if (first_problem[t].empty()) first_problem[t] = at + ": error '" + got.error + "'";
          }
        } else if (!got.ok() || !same_bits(got.outputs.at(0), c.alone.outputs.at(0))) {
          ++mismatches;
          if (first_problem[t].empty())
            first_problem[t] = at + ": " + (got.ok() ? "different values" : got.error);
        }
      }
    });
  }
  for (std::thread& th : threads)
    th.join();
  EXPECT_GE(runtime::gemm::constant_pack_count(), 1u); // the packed path did run
  for (const void* w : constants)
    EXPECT_EQ(dsc_release_constant(w), 0);
  EXPECT_EQ(calls.load(), kThreads * kCalls);
  EXPECT_EQ(mismatches.load(), 0);
  EXPECT_EQ(wrong_errors.load(), 0);
  for (const std::string& problem : first_problem)
    EXPECT_EQ(problem, "");
}

} // namespace
} // namespace dsc::testing
