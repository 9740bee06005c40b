// Every elementwise op that applies a unary intrinsic (a row of ir/Intrinsics.def that
// ir/Ops.def also lists), at each dtype its domain accepts: the reference interpreter and the
// compiled code both agree with the row's reference implementation. Generated from the
// tables, so a new unary op is tested without touching this file.

#include <gtest/gtest.h>

#include "ir/Intrinsics.h"
#include "ir/OpRegistry.h"
#include "tests/unit/compiler/CompileUtil.h"

namespace dsc::testing {
namespace {

using ir::DType;
using ir::IntrinsicDomain;

constexpr int64_t kN = 37;

std::vector<DType> dtypes_of(IntrinsicDomain d) {
  switch (d) {
  case IntrinsicDomain::Float:
    return {DType::F32, DType::F64};
  case IntrinsicDomain::Number:
    return {DType::F32, DType::F64, DType::I64, DType::I32};
  case IntrinsicDomain::Bool:
    return {DType::Bool};
  default:
    return {};
  }
}

// Element i of the input: positive floats for the Float domain (log, sqrt), both signs
// otherwise.
double input(IntrinsicDomain domain, DType d, int64_t i) {
  if (d == DType::Bool) return static_cast<double>(i % 3 == 0);
  if (!ir::is_float(d)) return static_cast<double>(i % 11 - 5);
  double unit = static_cast<double>(i) / static_cast<double>(kN - 1);
  return domain == IntrinsicDomain::Float ? 0.125 + 3.0 * unit : -3.0 + 6.0 * unit;
}

runtime::Tensor input_tensor(IntrinsicDomain domain, DType d) {
  runtime::Tensor t = runtime::Tensor::zeros(reference::to_dl(d), {kN});
  for (int64_t i = 0; i < kN; ++i) {
    double v = input(domain, d, i);
    switch (d) {
    case DType::F32:
      t.data_as<float>()[i] = static_cast<float>(v);
      break;
    case DType::F64:
      t.data_as<double>()[i] = v;
      break;
    case DType::I64:
      t.data_as<int64_t>()[i] = static_cast<int64_t>(v);
      break;
    case DType::I32:
      t.data_as<int32_t>()[i] = static_cast<int32_t>(v);
      break;
    case DType::Bool:
      t.data_as<uint8_t>()[i] = static_cast<uint8_t>(v != 0);
      break;
    default:
      ADD_FAILURE() << "no inputs of " << ir::dtype_name(d);
    }
  }
  return t;
}

TEST(IntrinsicOps, InterpreterAndCompiledCodeMatchTheTable) {
  int tested = 0;
  for (const ir::IntrinsicDef& fn : ir::all_intrinsics()) {
    if (fn.arity != 1 || !ir::find_op(fn.name)) continue;
    for (DType d : dtypes_of(fn.domain)) {
      ++tested;
      std::string dt = ir::dtype_name(d);
      std::string source = "fn f(a: " + dt + "[N]) { return " + fn.name + "(a) }";
      CompiledProgram p = compile_program(source, "f");
      ASSERT_EQ(p.errors, "") << source;
      std::vector<runtime::Tensor> inputs;
      inputs.push_back(input_tensor(fn.domain, d));
      reference::RunResult interpreted = reference::interpret(p.typed, "f", inputs);
      ASSERT_TRUE(interpreted.ok()) << source << ": " << interpreted.error;
      DLTensor view = inputs[0].dl_view();
      runtime::CallResult compiled = p.model->run("f", {&view});
      ASSERT_TRUE(compiled.ok()) << source << ": " << compiled.error;
      double tolerance = d == DType::F32 ? 1e-6 : d == DType::F64 ? 1e-13 : 0.0;
      for (int64_t i = 0; i < kN; ++i) {
        double x = input(fn.domain, d, i), want;
        if (ir::is_float(d)) {
          want = fn.reference(&x);
          if (d == DType::F32) want = static_cast<float>(want);
        } else {
          int64_t xi = static_cast<int64_t>(x);
          want = static_cast<double>(fn.reference_int(&xi));
          if (d == DType::I32) want = static_cast<int32_t>(want);
        }
        for (const auto& [who, result] : {std::pair{"interpreter", &interpreted.outputs},
                                          std::pair{"compiled", &compiled.outputs}}) {
          double got = element(result->at(0), i);
          EXPECT_LE(std::fabs(got - want), tolerance * std::max(1.0, std::fabs(want)))
              << source << " " << who << " at x = " << x << ": expected " << want << ", got "
              << got;
        }
      }
    }
  }
  EXPECT_GT(tested, 0);
}

} // namespace
} // namespace dsc::testing
