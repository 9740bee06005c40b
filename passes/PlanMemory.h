#pragma once
// plan_memory: places each host program's intermediate buffers (HostBuffer::Storage::Arena)
// in one arena per call, filling in their offsets and the program's arena and peak sizes.
//
// A buffer is live from the first step that mentions it (its definition) to the last (an
// alias, a reshape, extends the life of the buffer it aliases). The facts are the program's
// checks (its `where` clauses and run-time shape facts), which hold whenever steps run.
//
// plan_arena, the placement itself. Input: each intermediate's byte size (symbolic) and its lifetime as [first, last] step
// indices (inclusive: a buffer is live while the step that reads it last runs). Buffers are
// placed in definition order. A buffer reuses a block whose previous tenants are all dead
// before its first step when symbolic/ proves, under the function's facts (its `where`
// clauses), that the block is at least as large, or else that it is at most as large (the
// block then grows to the buffer's size); otherwise it opens a new block. Nothing is reused on
// a guess: sizes the prover cannot order get separate blocks.
//
// Output: each buffer's byte offset (a sum of block sizes, so symbolic), the arena size, and
// the peak of live bytes (the largest sum over steps), which is what a perfect allocator
// would need. Blocks are 64-byte aligned.

#include <string>
#include <vector>

#include "ir/HostProgram.h"
#include "passes/PassContext.h"
#include "symbolic/Expr.h"
#include "symbolic/Facts.h"

namespace dsc::passes {

struct BufferLifetime {
  symbolic::Expr bytes;
  int first = 0;
  int last = 0;
};

struct MemoryPlan {
  std::vector<symbolic::Expr> offsets; // per buffer, in input order
  std::vector<int> block_of;           // per buffer: which block it occupies
  std::vector<symbolic::Expr> block_bytes;
  symbolic::Expr arena_bytes;
  symbolic::Expr peak_bytes;
  int reused = 0; // buffers placed in a block another buffer used before
};

MemoryPlan plan_arena(const std::vector<BufferLifetime>& buffers, const symbolic::Facts& facts,
                      PassContext& ctx);

// The pass: plans every program of `hosts` in place.
void plan_memory(std::vector<ir::HostProgram>& hosts, PassContext& ctx);

} // namespace dsc::passes
