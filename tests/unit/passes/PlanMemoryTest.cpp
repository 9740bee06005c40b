// plan_memory: reuse only where the prover shows the new buffer fits, never while the old
// tenant is live; offsets, arena and peak checked by evaluation at random symbol values.
#include <gtest/gtest.h>

#include <random>

#include "passes/PlanMemory.h"
#include "symbolic/Eval.h"
#include "symbolic/Parser.h"

namespace dsc::passes {
namespace {

symbolic::Expr e(const char* text) {
  symbolic::ParseResult r = symbolic::parse_expr(text);
  EXPECT_TRUE(r.ok()) << text;
  return r.expr;
}

struct Planner {
  SourceManager sources;
  DiagnosticEngine diags{sources};
  symbolic::Prover prover;
  PassContext ctx{diags, prover};
  symbolic::Facts facts;
  MemoryPlan plan(const std::vector<BufferLifetime>& b) { return plan_arena(b, facts, ctx); }
};

int64_t at(const symbolic::Expr& x, const symbolic::Bindings& b) {
  std::optional<int64_t> v = symbolic::eval(x, b);
  EXPECT_TRUE(v.has_value());
  return v.value_or(-1);
}

// No two buffers whose lifetimes overlap may overlap in memory, and every buffer lies inside
// the arena — at many random symbol values.
void expect_sound(const std::vector<BufferLifetime>& bufs, const MemoryPlan& plan,
                  const std::vector<std::string>& symbols, int64_t lo, int64_t hi) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    symbolic::Bindings b;
    for (const std::string& s : symbols) b[s] = std::uniform_int_distribution<int64_t>(lo, hi)(rng);
    int64_t arena = at(plan.arena_bytes, b);
    for (size_t i = 0; i < bufs.size(); ++i) {
      int64_t oi = at(plan.offsets[i], b), si = at(bufs[i].bytes, b);
      EXPECT_EQ(oi % 64, 0);
      EXPECT_LE(oi + si, arena);
      for (size_t j = 0; j < i; ++j) {
        bool live_together = bufs[i].first <= bufs[j].last && bufs[j].first <= bufs[i].last;
        if (!live_together) continue;
        int64_t oj = at(plan.offsets[j], b), sj = at(bufs[j].bytes, b);
        EXPECT_TRUE(oi + si <= oj || oj + sj <= oi) << "buffers " << i << " and " << j;
      }
    }
    EXPECT_LE(at(plan.peak_bytes, b), arena);
  }
}

TEST(PlanMemory, ChainReusesTheBlockTwoStepsBack) {
  Planner p;
  // a -> b -> c -> d, each read only by the next step: a's block is free for c.
  std::vector<BufferLifetime> bufs = {
      {e("B*S*3072"), 0, 1}, {e("B*S*3072"), 1, 2}, {e("B*S*3072"), 2, 3}, {e("B*S*3072"), 3, 4}};
  MemoryPlan plan = p.plan(bufs);
  EXPECT_EQ(plan.block_bytes.size(), 2u);
  EXPECT_EQ(plan.reused, 2);
  expect_sound(bufs, plan, {"B", "S"}, 0, 40);
}

TEST(PlanMemory, SmallerBufferReusesALargerBlockOnlyWhenProved) {
  Planner p;
  // 4*B*S*768 fits in 4*B*S*3072 always; 4*T does not fit in 4*S without a fact.
  std::vector<BufferLifetime> bufs = {{e("4*B*S*3072"), 0, 0}, {e("4*B*S*768"), 1, 1}};
  EXPECT_EQ(p.plan(bufs).reused, 1);

  std::vector<BufferLifetime> unknown = {{e("4*S*16"), 0, 0}, {e("4*T*16"), 1, 1}};
  MemoryPlan plan = p.plan(unknown);
  EXPECT_EQ(plan.reused, 0);
  expect_sound(unknown, plan, {"S", "T"}, 0, 100);

  Planner q;
  q.facts.add(e("T <= S"));
  EXPECT_EQ(q.plan(unknown).reused, 1);
}

TEST(PlanMemory, AFreeBlockGrowsWhenTheNewBufferIsProvablyLarger) {
  Planner p;
  std::vector<BufferLifetime> bufs = {{e("4*B*S*768"), 0, 0}, {e("4*B*S*3072"), 1, 1}};
  MemoryPlan plan = p.plan(bufs);
  EXPECT_EQ(plan.reused, 1);
  ASSERT_EQ(plan.block_bytes.size(), 1u);
  EXPECT_EQ(at(plan.arena_bytes, {{"B", 2}, {"S", 3}}), 4 * 2 * 3 * 3072);
  expect_sound(bufs, plan, {"B", "S"}, 0, 40);
}

TEST(PlanMemory, LiveBuffersNeverShare) {
  Planner p;
  // Everything live at once: no reuse at all, arena = sum.
  std::vector<BufferLifetime> bufs = {{e("64*N"), 0, 5}, {e("64*N"), 1, 5}, {e("64*N"), 2, 5}};
  MemoryPlan plan = p.plan(bufs);
  EXPECT_EQ(plan.reused, 0);
  symbolic::Bindings b{{"N", 3}};
  EXPECT_EQ(at(plan.arena_bytes, b), 3 * 64 * 3);
  EXPECT_EQ(at(plan.peak_bytes, b), 3 * 64 * 3);
  expect_sound(bufs, plan, {"N"}, 0, 50);
}

TEST(PlanMemory, OddSizesAreAlignedTo64) {
  Planner p;
  std::vector<BufferLifetime> bufs = {{e("N"), 0, 1}, {e("N + 3"), 1, 2}, {e("2*N + 1"), 2, 3}};
  MemoryPlan plan = p.plan(bufs);
  expect_sound(bufs, plan, {"N"}, 0, 1000);
}

TEST(PlanMemory, RandomProgramsAreSound) {
  std::mt19937 rng(11);
  const char* sizes[] = {"4*B*S", "4*B*S*12", "4*S*S", "B*S + 5", "4*B", "4*S*12*B", "8*S"};
  for (int trial = 0; trial < 30; ++trial) {
    Planner p;
    p.facts.add(e("B >= 1"));
    std::vector<BufferLifetime> bufs;
    int n = 2 + static_cast<int>(rng() % 10);
    for (int i = 0; i < n; ++i) {
      int last = i + static_cast<int>(rng() % 4);
      bufs.push_back({e(sizes[rng() % 7]), i, last});
    }
    MemoryPlan plan = p.plan(bufs);
    expect_sound(bufs, plan, {"B", "S"}, 1, 64);
  }
}

// The pass over a host program: lifetimes come from the steps that mention a buffer, and an
// alias (a reshape) keeps the buffer it aliases alive.
ir::HostProgram program_with_alias(bool alias_used_late) {
  using Storage = ir::HostBuffer::Storage;
  ir::HostProgram p;
  p.name = "f";
  auto buffer = [&](const char* name, Storage storage, int index) {
    ir::HostBuffer b;
    b.name = name;
    b.shape = {e("N")};
    b.storage = storage;
    b.index = index;
    p.buffers.push_back(b);
  };
  buffer("x", Storage::Param, 0);  // %0
  buffer("a", Storage::Arena, 0);  // %1
  buffer("v", Storage::Alias, 1);  // %2, a view of %1
  buffer("b", Storage::Arena, 0);  // %3
  buffer("y", Storage::Output, 0); // %4
  p.outputs = {4};
  auto kernel = [&](std::vector<int> buffers) {
    ir::HostStep s;
    s.callee = "k";
    s.buffers = std::move(buffers);
    p.steps.push_back(s);
  };
  kernel({0, 1});                                 // a = k(x)
  kernel({0, 3});                                 // b = k(x)
  kernel({alias_used_late ? 2 : 3, 3, 4});        // y = k(v or b, b)
  p.checks.push_back(ir::HostCheck{e("N >= 1"), "where N >= 1", "", {"N"}});
  return p;
}

TEST(PlanMemory, PassKeepsAliasedBuffersAlive) {
  Planner p;
  std::vector<ir::HostProgram> hosts = {program_with_alias(true)};
  plan_memory(hosts, p.ctx);
  const ir::HostProgram& h = hosts[0];
  ASSERT_TRUE(h.memory_planned());
  // a is read through its view at the last step, so b cannot take its block.
  EXPECT_EQ(h.arena_blocks, 2);
  EXPECT_EQ(h.reused_buffers, 0);
  symbolic::Bindings n = {{"N", 5}};
  EXPECT_NE(at(h.buffers[1].offset, n), at(h.buffers[3].offset, n));
  EXPECT_EQ(at(h.arena_bytes, n), 2 * 64);
}

TEST(PlanMemory, PassReusesADeadBuffersBlock) {
  Planner p;
  std::vector<ir::HostProgram> hosts = {program_with_alias(false)};
  plan_memory(hosts, p.ctx);
  const ir::HostProgram& h = hosts[0];
  // a is dead after the first step, so b takes its block; the view takes no space.
  EXPECT_EQ(h.arena_blocks, 1);
  EXPECT_EQ(h.reused_buffers, 1);
  symbolic::Bindings n = {{"N", 100}};
  EXPECT_EQ(at(h.buffers[1].offset, n), at(h.buffers[3].offset, n));
  EXPECT_EQ(at(h.arena_bytes, n), 448);
  EXPECT_FALSE(h.buffers[2].offset.defined());
}

} // namespace
} // namespace dsc::passes
