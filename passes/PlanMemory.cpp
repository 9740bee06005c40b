#include "passes/PlanMemory.h"

#include "symbolic/Printer.h"
#include "symbolic/Simplify.h"

namespace dsc::passes {

namespace {

using symbolic::Expr;

bool proved(const Expr& predicate, const symbolic::Facts& facts, PassContext& ctx) {
  return ctx.prover.prove(predicate, facts).verdict == symbolic::Verdict::Proved;
}

// The size rounded up to the arena's 64-byte alignment; sizes already known to be multiples of
// 64 stay as they are, which keeps them comparable by the prover.
Expr aligned(const Expr& bytes, const symbolic::Facts& facts, PassContext& ctx) {
  Expr c64 = symbolic::Expr(64);
  if (proved(symbolic::eq(symbolic::floormod(bytes, c64), symbolic::Expr(0)), facts, ctx))
    return symbolic::simplify(bytes, facts);
  return symbolic::simplify(symbolic::floordiv(bytes + symbolic::Expr(63), c64) * c64, facts);
}

} // namespace

MemoryPlan plan_arena(const std::vector<BufferLifetime>& buffers, const symbolic::Facts& facts,
                       PassContext& ctx) {
  MemoryPlan plan;
  std::vector<int> block_free_after; // the last step of the block's latest tenant
  plan.block_of.assign(buffers.size(), -1);
  std::vector<Expr> sizes; // each buffer's size rounded to the alignment, computed once
  for (const BufferLifetime& b : buffers) sizes.push_back(aligned(b.bytes, facts, ctx));
  for (size_t i = 0; i < buffers.size(); ++i) {
    const BufferLifetime& b = buffers[i];
    const Expr& bytes = sizes[i];
    // A free block that provably holds the buffer; else a free block that is provably no
    // larger, which grows to the buffer's size (offsets are laid out after all placements).
    int chosen = -1;
    for (size_t k = 0; k < plan.block_bytes.size() && chosen < 0; ++k) {
      if (block_free_after[k] >= b.first) continue;
      if (proved(symbolic::le(bytes, plan.block_bytes[k]), facts, ctx)) chosen = static_cast<int>(k);
    }
    for (size_t k = 0; k < plan.block_bytes.size() && chosen < 0; ++k) {
      if (block_free_after[k] >= b.first) continue;
      if (proved(symbolic::le(plan.block_bytes[k], bytes), facts, ctx)) {
        chosen = static_cast<int>(k);
        plan.block_bytes[k] = bytes;
      }
    }
    if (chosen < 0) {
      chosen = static_cast<int>(plan.block_bytes.size());
      plan.block_bytes.push_back(bytes);
      block_free_after.push_back(b.last);
    } else {
      ++plan.reused;
      block_free_after[chosen] = std::max(block_free_after[chosen], b.last);
    }
    plan.block_of[i] = chosen;
  }

  std::vector<Expr> block_offset;
  Expr total = symbolic::Expr(0);
  for (const Expr& size : plan.block_bytes) {
    block_offset.push_back(total);
    total = symbolic::simplify(total + size, facts);
  }
  plan.arena_bytes = total;
  for (size_t i = 0; i < buffers.size(); ++i) plan.offsets.push_back(block_offset[plan.block_of[i]]);

  // Peak: the largest sum of live bytes over the steps where a buffer starts (the sum only
  // grows at a definition). Sums that are provably no larger than another are dropped, so
  // the max stays short.
  std::vector<Expr> sums;
  for (const BufferLifetime& at : buffers) {
    Expr live = symbolic::Expr(0);
    for (size_t i = 0; i < buffers.size(); ++i)
      if (buffers[i].first <= at.first && at.first <= buffers[i].last) live = live + sizes[i];
    live = symbolic::simplify(live, facts);
    bool dominated = false;
    for (const Expr& kept : sums)
      dominated = dominated || proved(symbolic::le(live, kept), facts, ctx);
    if (dominated) continue;
    std::erase_if(sums, [&](const Expr& kept) { return proved(symbolic::le(kept, live), facts, ctx); });
    sums.push_back(live);
  }
  Expr peak = symbolic::Expr(0);
  for (const Expr& live : sums) peak = sums.size() == 1 ? live : symbolic::max(peak, live);
  plan.peak_bytes = symbolic::simplify(peak, facts);
  return plan;
}

namespace {

// At the upper bounds of its run-time symbols: the arena is allocated before they are bound.
Expr byte_size(const ir::HostProgram& p, const ir::HostBuffer& b) {
  Expr elements = 1;
  for (const Expr& d : b.shape) elements = elements * d;
  return ir::at_upper_bounds(p, symbolic::simplify(elements * (ir::dtype_bits(b.dtype) / 8)));
}

void plan_program(ir::HostProgram& p, PassContext& ctx) {
  using Storage = ir::HostBuffer::Storage;
  // Steps in program order, both branches of an if one after the other: only one runs, so
  // a buffer live in one branch never meets one live only in the other, and a buffer that
  // lives across the if spans both.
  // A loop's steps repeat: a buffer from before the loop that the loop uses (a carry's slot,
  // an input of the body) lives until the loop ends.
  std::vector<int> first(p.buffers.size(), -1), last(p.buffers.size(), -1);
  std::vector<std::pair<int, int>> loops; // first and last position of each loop
  int steps = 0;
  ir::for_each_step(p.steps, [&](const ir::HostStep& s, int step) {
    steps = step + 1;
    if (s.kind == ir::HostStep::Kind::Loop) loops.emplace_back(step, step + ir::step_count(s) - 1);
    for (int id : s.buffers) {
      int r = ir::alias_root(p, id);
      if (first[r] < 0) first[r] = step;
      last[r] = step;
    }
  });
  // Outer loops come first, so a buffer extended to an inner loop's end is then extended to
  // the enclosing loop's end when it started before that.
  for (size_t k = loops.size(); k-- > 0;) {
    auto [begin, end] = loops[k];
    for (size_t b = 0; b < p.buffers.size(); ++b)
      if (first[b] >= 0 && first[b] < begin && last[b] >= begin) last[b] = std::max(last[b], end);
  }
  symbolic::Facts facts;
  for (const ir::HostCheck& c : p.checks) facts.add(c.predicate);
  std::vector<int> ids;
  std::vector<BufferLifetime> lifetimes;
  for (size_t i = 0; i < p.buffers.size(); ++i) {
    if (p.buffers[i].storage != Storage::Arena) continue;
    ids.push_back(static_cast<int>(i));
    // A buffer no step mentions still gets a place (at the end), so that it has an offset.
    int at = first[i] < 0 ? steps : first[i];
    lifetimes.push_back({byte_size(p, p.buffers[i]), at, std::max(at, last[i])});
  }
  MemoryPlan plan = plan_arena(lifetimes, facts, ctx);
  for (size_t j = 0; j < ids.size(); ++j) p.buffers[ids[j]].offset = plan.offsets[j];
  p.arena_bytes = plan.arena_bytes;
  p.peak_bytes = plan.peak_bytes;
  p.arena_blocks = static_cast<int>(plan.block_bytes.size());
  p.reused_buffers = plan.reused;
}

} // namespace

void plan_memory(std::vector<ir::HostProgram>& hosts, PassContext& ctx) {
  for (ir::HostProgram& p : hosts) plan_program(p, ctx);
}

} // namespace dsc::passes
