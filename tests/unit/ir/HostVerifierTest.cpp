// The host-program verifier that --verify-each runs after lower_host and plan_memory.
#include <gtest/gtest.h>

#include "ir/Verifier.h"
#include "symbolic/Expr.h"

namespace dsc::ir {
namespace {

HostProgram two_steps() {
  HostProgram p;
  p.name = "f";
  for (HostBuffer::Storage s : {HostBuffer::Storage::Param, HostBuffer::Storage::Arena,
                                HostBuffer::Storage::Output}) {
    HostBuffer b;
    b.name = "b" + std::to_string(p.buffers.size());
    b.shape = {symbolic::sym("n")};
    b.storage = s;
    p.buffers.push_back(b);
  }
  p.outputs = {2};
  HostStep lib;
  lib.kind = HostStep::Kind::Library;
  lib.callee = "blas.sgemm";
  lib.buffers = {0, 0, 1};
  lib.ints = {1, 1, 1, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 1}; // 1 x 1 x 1, dense
  HostStep copy;
  copy.kind = HostStep::Kind::Copy;
  copy.buffers = {1, 2};
  p.steps = {lib, copy};
  return p;
}

TEST(HostVerifier, AcceptsAWellFormedProgram) {
  Module m;
  EXPECT_EQ(verify(two_steps(), m, false), std::vector<std::string>{});
}

TEST(HostVerifier, ReportsEachKindOfMistake) {
  Module m;
  HostProgram p = two_steps();
  p.steps[1].buffers = {1, 7};
  p.steps[0].ints.pop_back();
  p.outputs.push_back(9);
  HostStep k;
  k.callee = "missing";
  p.steps.push_back(k);
  std::vector<std::string> e = verify(p, m, true);
  std::vector<std::string> expected = {
      "host f: buffer %1 (b1) has no arena offset after plan_memory",
      "host f: output %9 does not exist",
      "host f: no arena size after plan_memory",
      "host f: step 0 passes 3 buffers and 18 scalars to blas.sgemm",
      "host f: step 1 uses buffer %7, which does not exist",
      "host f: step 2 calls 'missing', which is not a prim of the module",
  };
  EXPECT_EQ(e, expected);
}

} // namespace
} // namespace dsc::ir
