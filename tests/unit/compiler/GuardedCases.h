#pragma once
// The guarded fusion variants the CPU and CUDA tests run (FusionVsReferenceTest,
// CudaEmulatorVsReferenceTest).

#include <vector>

#include "tests/unit/compiler/CompileUtil.h"

namespace dsc::testing {

// Guarded variants: fusion needs a fact the where clauses leave open, so both the fused and the
// unfused kernels are compiled and the host tests the fact at run time. Each case runs at shapes
// where the fact holds (the fused variant) and where it does not (the other). The reshape's
// fact is one of correctness: its fused kernel, run where B != P, reads the wrong elements (a
// guard tested the wrong way round fails this test). The costly producer's is one of cost.
struct GuardedCase {
  NumericCase numeric;
  size_t kernels;                            // of both variants
  std::vector<symbolic::Bindings> holds, fails;
};

inline void PrintTo(const GuardedCase& c, std::ostream* os) { *os << c.numeric.name; }

inline std::vector<GuardedCase> guarded_cases() {
  return {
      // exp read once per element where M == N; otherwise exp in a kernel of its own.
      {{"costly_slice", "fn f(x: f32[N], m: f32[M]) where M <= N {\n  return slice(exp(x), axis=0, start=0, end=M) + m\n}", {"N", "M"}},
       3,
       {{{"N", 1}, {"M", 1}}, {{"N", 17}, {"M", 17}}, {{"N", 64}, {"M", 64}}},
       {{{"N", 17}, {"M", 16}}, {{"N", 7}, {"M", 1}}, {{"N", 33}, {"M", 0}}}},
      // The reshape's dims correspond (B with P, S with Q) only where B == P; B*S == P*Q is
      // all the host checks.
      {{"reshape_unrelated_dims", "fn f(x: f32[B, S], y: f32[P, Q]) -> f32[P, Q] {\n  return reshape(x * 2.0, [P, Q]) + y\n}", {"B", "S", "P", "Q"}},
       3,
       {{{"B", 3}, {"S", 5}, {"P", 3}, {"Q", 5}}, {{"B", 1}, {"S", 17}, {"P", 1}, {"Q", 17}}},
       {{{"B", 2}, {"S", 6}, {"P", 3}, {"Q", 4}}, {{"B", 1}, {"S", 7}, {"P", 7}, {"Q", 1}},
        {{"B", 6}, {"S", 17}, {"P", 17}, {"Q", 6}}}},
  };
}

// Each case's shapes, where its fact holds and where it does not, against the reference.
inline void expect_each_variant_matches(const GuardedCase& c, const CompiledProgram& p) {
  std::mt19937_64 rng(std::hash<std::string>{}(c.numeric.name));
  for (const auto* shapes : {&c.holds, &c.fails})
    for (const symbolic::Bindings& symbols : *shapes)
      EXPECT_EQ(first_mismatch(c.numeric, p, symbols, rng), "");
}

} // namespace dsc::testing
