// Every pure row of ir/Intrinsics.def, called in a prim at each dtype its domain accepts,
// compiled by the CPU backend and checked against the row's reference implementation. The
// prims are generated from the table, so a new row is tested without touching this file.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "ir/Intrinsics.h"
#include "ir/Type.h"
#include "tests/unit/cpu/KernelTestUtil.h"

namespace dsc::testing {
namespace {

using ir::DType;
using ir::IntrinsicDef;
using ir::IntrinsicDomain;

constexpr int64_t kN = 64;

struct Case {
  const IntrinsicDef* fn;
  std::vector<DType> operands;
  DType result;
  std::string prim; // its name in the module
};

// The signatures to test: each dtype class the row's domain accepts.
std::vector<Case> cases_of(const IntrinsicDef& fn) {
  std::vector<Case> out;
  auto add = [&](std::vector<DType> operands, DType result) {
    std::string name = std::string("p_") + fn.name + "_" + ir::dtype_name(result);
    out.push_back({&fn, std::move(operands), result, name});
  };
  for (DType d : {DType::F32, DType::F64, DType::I64}) {
    switch (fn.domain) {
    case IntrinsicDomain::Float:
      if (ir::is_float(d)) add(std::vector<DType>(static_cast<size_t>(fn.arity), d), d);
      break;
    case IntrinsicDomain::Number:
      add(std::vector<DType>(static_cast<size_t>(fn.arity), d), d);
      break;
    case IntrinsicDomain::Select:
      add({DType::Bool, d, d}, d);
      break;
    default:
      break;
    }
  }
  if (fn.domain == IntrinsicDomain::Bool)
    add(std::vector<DType>(static_cast<size_t>(fn.arity), DType::Bool), DType::Bool);
  return out;
}

std::vector<Case> all_cases() {
  std::vector<Case> out;
  for (const IntrinsicDef& fn : ir::all_intrinsics()) {
    if (!fn.pure()) continue;
    for (Case& c : cases_of(fn))
      out.push_back(std::move(c));
  }
  return out;
}

// prim p_exp_f32(x0: f32[n]) -> (y: f32[n]) { for i in 0..n { y[i] = exp(x0[i]) } }
std::string prim_text(const Case& c) {
  std::string params, args;
  for (size_t k = 0; k < c.operands.size(); ++k) {
    std::string x = "x" + std::to_string(k);
    params += (k ? ", " : "") + x + ": " + ir::dtype_name(c.operands[k]) + "[n]";
    args += (k ? ", " : "") + x + "[i]";
  }
  return "prim " + c.prim + "(" + params + ") -> (y: " + ir::dtype_name(c.result) +
         "[n]) { for i in 0..n { y[i] = " + c.fn->name + "(" + args + ") } }\n";
}

// Operand k's element i: positive floats for the Float domain (log, sqrt), both signs
// otherwise; small integers of both signs; bools that vary independently per operand.
double input(const Case& c, size_t k, int64_t i) {
  DType d = c.operands[k];
  int64_t step = (i * static_cast<int64_t>(2 * k + 7)) % 17;
  if (d == DType::Bool) return static_cast<double>((i >> k) & 1);
  if (!ir::is_float(d)) return static_cast<double>(step % 9 - 4);
  double unit = static_cast<double>(step) / 16.0;
  if (c.fn->domain == IntrinsicDomain::Float) return 0.25 + 2.0 * unit;
  return -2.0 + 4.0 * unit;
}

size_t bytes(DType d) {
  return d == DType::Bool ? 1 : static_cast<size_t>(ir::dtype_bits(d) / 8);
}

void store(std::vector<char>& buf, DType d, int64_t i, double v) {
  char* p = buf.data() + static_cast<size_t>(i) * bytes(d);
  if (d == DType::F32) {
    float f = static_cast<float>(v);
    std::memcpy(p, &f, sizeof f);
  } else if (d == DType::F64) {
    std::memcpy(p, &v, sizeof v);
  } else if (d == DType::I64) {
    int64_t x = static_cast<int64_t>(v);
    std::memcpy(p, &x, sizeof x);
  } else {
    *p = static_cast<char>(v != 0);
  }
}

double load(const std::vector<char>& buf, DType d, int64_t i) {
  const char* p = buf.data() + static_cast<size_t>(i) * bytes(d);
  if (d == DType::F32) {
    float f;
    std::memcpy(&f, p, sizeof f);
    return f;
  }
  if (d == DType::F64) {
    double v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  if (d == DType::I64) {
    int64_t x;
    std::memcpy(&x, p, sizeof x);
    return static_cast<double>(x);
  }
  return *p;
}

// What the row's reference gives for element i, rounded as a store of the result dtype does.
double expected(const Case& c, int64_t i) {
  if (ir::is_float(c.result)) {
    std::vector<double> xs;
    for (size_t k = 0; k < c.operands.size(); ++k)
      xs.push_back(input(c, k, i));
    double v = c.fn->reference(xs.data());
    return c.result == DType::F32 ? static_cast<float>(v) : v;
  }
  std::vector<int64_t> xs;
  for (size_t k = 0; k < c.operands.size(); ++k)
    xs.push_back(static_cast<int64_t>(input(c, k, i)));
  return static_cast<double>(c.fn->reference_int(xs.data()));
}

TEST(Intrinsics, EveryRowCompilesAndMatchesItsReference) {
  std::vector<Case> cases = all_cases();
  std::string text;
  for (const Case& c : cases)
    text += prim_text(c);
  CompiledPrims prims(text);
  ASSERT_TRUE(prims.ok()) << text;
  for (const Case& c : cases) {
    std::vector<std::vector<char>> buffers;
    for (size_t k = 0; k < c.operands.size(); ++k) {
      buffers.emplace_back(kN * bytes(c.operands[k]));
      for (int64_t i = 0; i < kN; ++i)
        store(buffers.back(), c.operands[k], i, input(c, k, i));
    }
    buffers.emplace_back(kN * bytes(c.result));
    std::vector<void*> ptrs;
    for (std::vector<char>& b : buffers)
      ptrs.push_back(b.data());
    prims.run(c.prim, ptrs, {{"n", kN}});
    // f32: a few ulps of the inline polynomials; f64: libm and LLVM's own.
    double tolerance = c.result == DType::F32 ? 1e-6 : c.result == DType::F64 ? 1e-13 : 0.0;
    int failures = 0;
    for (int64_t i = 0; i < kN && failures < 3; ++i) {
      double want = expected(c, i), got = load(buffers.back(), c.result, i);
      bool same = (std::isnan(want) && std::isnan(got)) || want == got ||
                  std::fabs(want - got) <= tolerance * std::max(1.0, std::fabs(want));
      if (same) continue;
      ++failures;
      ADD_FAILURE() << c.prim << " element " << i << ": expected " << want << ", got " << got;
    }
  }
}

} // namespace
} // namespace dsc::testing
