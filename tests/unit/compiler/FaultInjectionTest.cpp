// Every allocation of a model call failed in turn (issue 40): the k-th of the runtime's
// allocations (the arena, the outputs, the GEMM's scratch, a constant's pack) refused, for
// every k over one call, must give a clean error naming what could not be allocated, or, where
// the runtime has a fallback (a constant pack), the right result; and the next call must be
// right again. Cold (fresh threads, whose GEMM scratch is still to be allocated) and warm. The
// thread pool refused threads still computes the same results with fewer. Under
// -DDSC_SANITIZE=address (docs/testing.md) LeakSanitizer checks that nothing leaks.

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <thread>

#include "runtime/FaultInjection.h"
#include "runtime/ThreadPool.h"
#include "runtime/dsc_runtime.h"
#include "tests/unit/compiler/CompileUtil.h"

namespace dsc::testing {
namespace {

using runtime::faults::Site;

// A product with a bias and GELU as its epilogue, then an RMS norm; and attention, whose two
// products chain (each block of scores in a scratch of the pool's thread that computes it).
constexpr const char* kDense = R"(import nn
fn f(x: f32[B, S, 48], w: f32[48, 64], b: f32[64], g: f32[64]) -> f32[B, S, 64]
  where B <= 6, S <= 40
{
  return nn.rms_norm(nn.gelu(matmul(x, w) + b), g) * 2.0
}
)";

constexpr const char* kAttention = R"(import nn
fn f(q: f32[B, S, 32], k: f32[B, S, 32], v: f32[B, S, 32]) -> f32[B, S, 32]
  where B <= 4, S <= 64
{
  let s = matmul(q, permute(k, [0, 2, 1])) * 0.17
  return matmul(nn.softmax(s, axis=-1), v)
}
)";

runtime::CallResult call(runtime::Model& model, std::vector<runtime::Tensor>& inputs) {
  return call_entry(model, inputs);
}

// The call, on a new thread when `fresh` (so that the caller's GEMM scratch starts empty).
runtime::CallResult call_on(bool fresh, runtime::Model& model,
                            std::vector<runtime::Tensor>& inputs) {
  if (!fresh) return call(model, inputs);
  runtime::CallResult out;
  std::thread t([&] { out = call(model, inputs); });
  t.join();
  return out;
}

bool same_bits(const runtime::CallResult& a, const runtime::CallResult& b) {
  if (a.outputs.size() != b.outputs.size()) return false;
  for (size_t i = 0; i < a.outputs.size(); ++i)
    if (a.outputs[i].type_string() != b.outputs[i].type_string() ||
        std::memcmp(a.outputs[i].data(), b.outputs[i].data(), a.outputs[i].nbytes()) != 0)
      return false;
  return true;
}

// Cold: the pool's workers restarted (their scratch freed with them) before each call.
void restart_pool_if(bool cold) {
  if (!cold) return;
  runtime::set_global_num_threads(1);
  runtime::set_global_num_threads(3);
}

void fail_each_allocation(const char* source, const symbolic::Bindings& shape, bool constant) {
  CompiledProgram p = compile_program(source, "f");
  ASSERT_EQ(p.errors, "");
  std::mt19937_64 rng(40);
  std::vector<runtime::Tensor> inputs = random_inputs(p.host, shape, rng, 2);
  runtime::set_global_num_threads(3);
  runtime::CallResult want = call(*p.model, inputs);
  ASSERT_TRUE(want.ok()) << want.error;
  if (constant) {
    // The weight declared constant: its pack is one more allocation, whose failure the GEMM
    // survives by packing as it goes.
    ASSERT_EQ(dsc_declare_constant(inputs[1].data(), inputs[1].nbytes()), 0) << dsc_last_error();
  }
  for (bool cold : {true, false}) {
    SCOPED_TRACE(cold ? "cold" : "warm");
    restart_pool_if(cold);
    runtime::faults::arm(Site::Allocation, 0);
    runtime::CallResult counted = call_on(cold, *p.model, inputs);
    const int64_t asks = runtime::faults::asks(Site::Allocation);
    runtime::faults::disarm(Site::Allocation);
    ASSERT_TRUE(counted.ok()) << counted.error;
    EXPECT_TRUE(same_bits(counted, want));
    // Warm, only the output (and the arena, when the call has intermediates in memory);
    // cold, the GEMM's scratch too.
    EXPECT_GE(asks, cold ? 2 : 1);
    // Which threads allocate their scratch depends on scheduling, so a call may ask fewer
    // times than the counted one: a refusal counts where the call asked at least k times.
    int refused = 0, errors = 0;
    for (int64_t k = 1; k <= asks; ++k) {
      SCOPED_TRACE("allocation " + std::to_string(k) + " of " + std::to_string(asks) + " refused");
      restart_pool_if(cold);
      runtime::faults::arm(Site::Allocation, k);
      runtime::CallResult r = call_on(cold, *p.model, inputs);
      const bool fired = runtime::faults::asks(Site::Allocation) >= k;
      runtime::faults::disarm(Site::Allocation);
      refused += fired;
      if (r.ok()) {
        // Only a constant's pack has a fallback (packing as the product goes).
        EXPECT_TRUE(!fired || constant) << "a refused allocation went unnoticed";
        EXPECT_TRUE(same_bits(r, want)) << "a call that survived a refused allocation differs";
      } else {
        ++errors;
        EXPECT_TRUE(fired) << r.error;
        EXPECT_NE(r.error.find("out of memory"), std::string::npos) << r.error;
        EXPECT_NE(r.error.find("cannot allocate"), std::string::npos) << r.error;
      }
      runtime::CallResult again = call_on(cold, *p.model, inputs);
      ASSERT_TRUE(again.ok()) << again.error;
      EXPECT_TRUE(same_bits(again, want)) << "the call after a refused allocation differs";
    }
    EXPECT_GE(errors, 1);
    std::printf("%s: %lld allocations in the counted call, %d refused, %d of them errors\n",
                cold ? "cold" : "warm", static_cast<long long>(asks), refused, errors);
  }
  if (constant) dsc_release_constant(inputs[1].data());
}

TEST(FaultInjection, EveryAllocationOfADenseLayerCall) {
  fail_each_allocation(kDense, {{"B", 2}, {"S", 37}}, /*constant=*/false);
}

TEST(FaultInjection, EveryAllocationWithAConstantWeight) {
  fail_each_allocation(kDense, {{"B", 3}, {"S", 13}}, /*constant=*/true);
}

TEST(FaultInjection, EveryAllocationOfChainedProducts) {
  fail_each_allocation(kAttention, {{"B", 2}, {"S", 61}}, /*constant=*/false);
}

TEST(FaultInjection, APoolRefusedThreadsComputesTheSame) {
  CompiledProgram p = compile_program(kDense, "f");
  ASSERT_EQ(p.errors, "");
  std::mt19937_64 rng(41);
  std::vector<runtime::Tensor> inputs = random_inputs(p.host, {{"B", 4}, {"S", 29}}, rng, 2);
  runtime::set_global_num_threads(1);
  runtime::CallResult want = call(*p.model, inputs);
  ASSERT_TRUE(want.ok()) << want.error;
  for (int64_t k = 1; k <= 3; ++k) {
    SCOPED_TRACE("thread start " + std::to_string(k) + " refused");
    runtime::set_global_num_threads(1);
    runtime::faults::arm(Site::ThreadStart, k);
    runtime::set_global_num_threads(4);
    runtime::faults::disarm(Site::ThreadStart);
    EXPECT_EQ(runtime::global_thread_pool().num_threads(), static_cast<int>(k));
    runtime::CallResult r = call(*p.model, inputs);
    ASSERT_TRUE(r.ok()) << r.error;
    // The same bits at any thread count: each element's sum runs in the same order.
    EXPECT_TRUE(same_bits(r, want));
  }
  runtime::set_global_num_threads(0);
}

} // namespace
} // namespace dsc::testing
