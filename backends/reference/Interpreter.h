#pragma once
// The reference interpreter: evaluates graph-level IR directly in plain C++. It is the oracle
// for every numeric test.
//
// `interpret` binds every symbol of the entry function from the inputs' shapes (checking
// dtypes, ranks and that repeated symbols agree), checks the `where` clauses and every
// run-time-check ShapeFact as soon as their symbols are bound, evaluates the body binding by
// binding, and returns the outputs (each field of a tuple result). Calls to module functions
// and to imported generic functions (`nn.softmax`) are interpreted recursively; generic
// bodies are untyped, so every dtype decision is made from the values themselves.
//
// Numerics: floats compute in double and round once on store (f16 and bf16 through f32);
// sums, matmul, conv2d and avg_pool2d accumulate in double. Integer `div` is floor division.
// Errors are returned in RunResult::error, never thrown.

#include <string>
#include <vector>

#include "ir/Module.h"
#include "runtime/Tensor.h"

namespace dsc::reference {

struct RunResult {
  std::vector<runtime::Tensor> outputs;
  std::string error;
  bool ok() const { return error.empty(); }
};

// `typed` is the output of infer_shapes then collect_facts.
RunResult interpret(const ir::Module& typed, const std::string& entry,
                    const std::vector<runtime::Tensor>& inputs);

} // namespace dsc::reference
