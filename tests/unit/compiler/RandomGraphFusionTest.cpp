// A property test of fusion: random graphs (RandomGraph.h) compiled fused and unfused through
// the whole CPU pipeline, each against the reference interpreter at six shapes (1, the primes 7
// and 17, and random sizes). A failure prints the program, which is a complete .dsc file;
// DSC_PRINT_GRAPHS=1 prints every program with its fused kernel count.

#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tests/unit/compiler/CompileUtil.h"
#include "tests/unit/compiler/RandomGraph.h"

namespace dsc::testing {
namespace {

TEST(RandomGraphFusion, FusedAndUnfusedMatchTheReference) {
  const int graphs = 30;
  for (int g = 0; g < graphs; ++g) {
    SeededChoices choices(1000 + g);
    std::string source = random_graph_program(choices);
    SCOPED_TRACE("graph " + std::to_string(g) + ":\n" + source);
    NumericCase c{"graph" + std::to_string(g), source, {"N", "M"}, 2, 1e-4};
    CompiledProgram fused = compile_program(source, "f");
    if (std::getenv("DSC_PRINT_GRAPHS")) std::cerr << source << "fused kernels: " << fused.kernels << "\n";
    ASSERT_EQ(fused.errors, "");
    expect_matches_reference(c, fused);
    CompiledProgram unfused = compile_program(source, "f", /*fuse=*/false);
    ASSERT_EQ(unfused.errors, "");
    EXPECT_GE(unfused.kernels, fused.kernels);
    expect_matches_reference(c, unfused);
  }
}

} // namespace
} // namespace dsc::testing
