// Shape-bucket variants (passes/BucketKernels.h): the host calls a kernel's variant for rows
// that are a multiple of the vector lanes and the kernel itself for the others. The variant
// tells LLVM its loops need no remainder, so calling it at a row length with a remainder would
// skip or overrun elements: every case runs at lengths on both sides of the guard against the
// reference interpreter.

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "ir/HostProgram.h"
#include "ir/Printer.h"
#include "symbolic/Printer.h"
#include "tests/unit/compiler/CompileUtil.h"

namespace dsc::testing {
namespace {

// The If steps of `h` that choose between a kernel and its variant: {guard, then, else}.
struct Choice {
  std::string guard, variant, kernel;
};

std::vector<Choice> choices(const ir::HostProgram& h) {
  std::vector<Choice> out;
  ir::for_each_step(h.steps, [&](const ir::HostStep& s, int) {
    if (s.kind != ir::HostStep::Kind::If || s.ints.empty() || s.then_steps.size() != 1 ||
        s.else_steps.size() != 1)
      return;
    out.push_back({symbolic::to_string(s.ints[0]), s.then_steps[0].callee, s.else_steps[0].callee});
  });
  return out;
}

std::vector<std::string> kernel_calls(const ir::HostProgram& h) {
  std::vector<std::string> out;
  ir::for_each_step(h.steps, [&](const ir::HostStep& s, int) {
    if (s.kind == ir::HostStep::Kind::Kernel) out.push_back(s.callee);
  });
  return out;
}

ir::Target target_with_vectors(int bits) {
  ir::Target t = ir::cpu_target();
  t.vector_bits = bits;
  return t;
}

// Softmax over rows of C under `where`, on 512-bit vectors.
CompiledProgram softmax_where(const std::string& where) {
  return compile_program("import nn\nfn f(x: f32[R, C]) " + where + " { return nn.softmax(x, axis=-1) }", "f", true,
                         target_with_vectors(512));
}

// The prim of the program's one Kernel step, which no If chooses; null (with a failure) when
// there is not exactly one.
Ref<ir::PrimFunc> only_kernel(const CompiledProgram& p) {
  EXPECT_TRUE(choices(p.host).empty());
  std::vector<std::string> calls = kernel_calls(p.host);
  EXPECT_EQ(calls.size(), 1u);
  return calls.size() == 1 ? p.lowered.prim(calls[0]) : Ref<ir::PrimFunc>();
}

std::vector<std::string> variants(const ir::Module& m) {
  std::vector<std::string> out;
  for (const ir::Module::Decl& d : m.decls)
    if (d.prim && !d.prim->variant_of.empty()) out.push_back(d.prim->name);
  return out;
}

TEST(ShapeBucket, OpenFactGetsAGuardedVariant) {
  CompiledProgram p = softmax_where("");
  ASSERT_EQ(p.errors, "");
  std::vector<Choice> c = choices(p.host);
  ASSERT_EQ(c.size(), 1u) << ir::to_string(p.host);
  EXPECT_EQ(c[0].guard, "C%16 == 0");
  Ref<ir::PrimFunc> variant = p.lowered.prim(c[0].variant);
  ASSERT_TRUE(variant);
  EXPECT_EQ(variant->variant_of, c[0].kernel);
  ASSERT_FALSE(variant->where.empty());
  EXPECT_EQ(symbolic::to_string(variant->where.back().predicate), "C%16 == 0");
  EXPECT_TRUE(p.lowered.prim(c[0].kernel));
  EXPECT_EQ(p.kernels, 1u); // the variant is no kernel of its own
  EXPECT_NE(ir::print_prim(*variant).find("# a shape-bucket variant of " + c[0].kernel), std::string::npos);
}

TEST(ShapeBucket, LanesFollowTheVectorWidthAndTheWidestElement) {
  CompiledProgram f32 = compile_program("fn f(x: f32[R, C]) { return sum(x, axis=-1) }", "f", true,
                                        target_with_vectors(256));
  ASSERT_EQ(f32.errors, "");
  ASSERT_EQ(choices(f32.host).size(), 1u);
  EXPECT_EQ(choices(f32.host)[0].guard, "C%8 == 0");
  CompiledProgram f64 = compile_program("fn f(x: f64[R, C]) { return sum(x, axis=-1) }", "f", true,
                                        target_with_vectors(512));
  ASSERT_EQ(f64.errors, "");
  ASSERT_EQ(choices(f64.host).size(), 1u);
  EXPECT_EQ(choices(f64.host)[0].guard, "C%8 == 0");
}

TEST(ShapeBucket, ProvedFactCallsTheVariantAlone) {
  CompiledProgram p = softmax_where("where C % 32 == 0");
  ASSERT_EQ(p.errors, "");
  Ref<ir::PrimFunc> kernel = only_kernel(p);
  ASSERT_TRUE(kernel);
  // Every call goes to the variant, so the kernel itself takes its where clause instead.
  EXPECT_EQ(kernel->variant_of, "");
  EXPECT_EQ(variants(p.lowered), std::vector<std::string>{});
  EXPECT_EQ(symbolic::to_string(kernel->where.back().predicate), "C%16 == 0");
  EXPECT_EQ(p.kernels, 1u);
}

TEST(ShapeBucket, ProvedFactOnAnEpilogueKeepsItsName) {
  // BERT's attention softmax runs as the chained product's epilogue, which the extern names:
  // where S % 16 == 0 is a where clause, the epilogue takes the fact under its own name (the
  // verifier, after every pass here, checks that the extern's epilogue is a prim).
  std::string text = read_source("examples/bert_layer.dsc");
  const std::string where = "where B >= 1, 1 <= S <= 512";
  ASSERT_NE(text.find(where), std::string::npos);
  text.replace(text.find(where), where.size(), where + ", S % 16 == 0");
  CompiledProgram p = compile_program(text, "layer", true, target_with_vectors(512));
  ASSERT_EQ(p.errors, "");
  EXPECT_EQ(variants(p.lowered), std::vector<std::string>{});
  EXPECT_TRUE(choices(p.host).empty());
  size_t epilogues_with_the_fact = 0;
  ir::for_each_step(p.host.steps, [&](const ir::HostStep& s, int) {
    if (s.epilogue.empty()) return;
    Ref<ir::PrimFunc> e = p.lowered.prim(s.epilogue);
    ASSERT_TRUE(e) << s.epilogue;
    for (const ir::WhereClause& w : e->where)
      epilogues_with_the_fact += symbolic::to_string(w.predicate) == "S%16 == 0";
  });
  EXPECT_EQ(epilogues_with_the_fact, 1u);
}

TEST(ShapeBucket, DisprovedFactKeepsTheKernel) {
  CompiledProgram p = softmax_where("where C % 16 == 5");
  ASSERT_EQ(p.errors, "");
  Ref<ir::PrimFunc> kernel = only_kernel(p);
  ASSERT_TRUE(kernel);
  EXPECT_TRUE(kernel->where.empty());
  EXPECT_EQ(variants(p.lowered), std::vector<std::string>{});
}

TEST(ShapeBucket, ConstantRowsGetNoVariant) {
  CompiledProgram p = compile_program("import nn\nfn f(x: f32[R, 768]) { return nn.softmax(x, axis=-1) }", "f");
  ASSERT_EQ(p.errors, "");
  EXPECT_TRUE(only_kernel(p));
  EXPECT_EQ(variants(p.lowered), std::vector<std::string>{});
}

// Row kernels whose loops run over C, at row lengths around the guard: multiples of 16 (the
// variant) and lengths with a remainder of 1 to 15 (the kernel), against the reference.
std::vector<NumericCase> row_cases() {
  return {
      {"softmax", "import nn\nfn f(x: f32[R, C]) { return nn.softmax(x, axis=-1) }", {"R", "C"}},
      {"layer_norm", "import nn\nfn f(x: f32[R, C], g: f32[C], b: f32[C]) { return nn.layer_norm(x, g, b) }",
       {"R", "C"}},
      {"max_then_scale", "fn f(x: f32[R, C]) { return x * max(x, axis=-1, keepdims=true) }", {"R", "C"}},
      {"sum_f64", "fn f(x: f64[R, C]) { return sum(x * x, axis=-1) }", {"R", "C"}},
      {"rows_of_two_lengths", "fn f(x: f32[R, C], y: f32[R, D]) { return concat([exp(x), y], axis=1) }",
       {"R", "C", "D"}},
  };
}

class ShapeBucketVsReference : public ::testing::TestWithParam<NumericCase> {};

TEST_P(ShapeBucketVsReference, BothSidesOfTheGuardMatch) {
  const NumericCase& c = GetParam();
  CompiledProgram p = compile_program(c.source, "f", true, target_with_vectors(512));
  ASSERT_EQ(p.errors, "");
  std::mt19937_64 rng(std::hash<std::string>{}(c.name));
  for (int64_t cols : {1, 7, 15, 16, 17, 31, 32, 33, 48, 63, 64, 127, 128, 257})
    for (int64_t rows : {1, 5}) {
      symbolic::Bindings at = {{"R", rows}, {"C", cols}, {"D", cols % 3 == 0 ? 32 : cols + 1}};
      EXPECT_EQ(first_mismatch(c, p, at, rng), "");
    }
}

INSTANTIATE_TEST_SUITE_P(Rows, ShapeBucketVsReference, ::testing::ValuesIn(row_cases()),
                         [](const ::testing::TestParamInfo<NumericCase>& param) { return param.param.name; });

} // namespace
} // namespace dsc::testing
