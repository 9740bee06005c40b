#pragma once
// Compiles .dsc text through the whole CPU pipeline (front end, passes, LLVM JIT) and runs it
// next to the reference interpreter, for the end-to-end numeric tests.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/CpuBackend.h"
#include "backends/reference/Interpreter.h"
#include "lang/Frontend.h"
#include "passes/CollectFacts.h"
#include "passes/InferShapes.h"
#include "passes/Pipeline.h"
#include "symbolic/Eval.h"
#include "tests/unit/FrontendUtil.h"

namespace dsc::testing {

struct CompiledProgram {
  ir::Module typed;                     // for the reference interpreter
  std::unique_ptr<runtime::Model> model; // the JIT-compiled code
  ir::HostProgram host;
  std::string errors; // diagnostics of any stage; empty on success
};

// `entry` must be a fn of `text`. Never throws; failures land in `errors`.
inline CompiledProgram compile_program(const std::string& text, const std::string& entry) {
  CompiledProgram out;
  SourceManager sources;
  DiagnosticEngine diags(sources);
  symbolic::Prover prover;
  uint32_t file = sources.add("test.dsc", text);
  std::optional<ir::Module> m = lang::parse_module(sources, file, diags, stdlib_options());
  passes::PassContext ctx{diags, prover};
  std::optional<passes::Lowered> lowered;
  if (m && !diags.has_errors()) {
    out.typed = passes::collect_facts(passes::infer_shapes(*m, ctx), ctx);
    if (!diags.has_errors()) lowered = passes::lower_module(out.typed, {entry}, ctx);
  }
  out.errors = diagnostic_lines(diags);
  if (!lowered || !out.errors.empty()) {
    if (out.errors.empty()) out.errors = "lowering failed without a diagnostic";
    return out;
  }
  out.host = lowered->hosts.at(0);
  runtime::Manifest manifest;
  manifest.functions.push_back(cpu::describe_host_program(out.host));
  std::string error;
  out.model = cpu::jit_compile(lowered->module, lowered->hosts, manifest, cpu::TargetOptions{}, &error);
  if (!out.model) out.errors = "jit: " + error;
  return out;
}

inline DLDataType to_dl(ir::DType d) {
  switch (d) {
  case ir::DType::Bool: return runtime::dl_bool();
  case ir::DType::I8: return runtime::dl_int(8);
  case ir::DType::I32: return runtime::dl_int(32);
  case ir::DType::I64: return runtime::dl_int(64);
  case ir::DType::F16: return runtime::dl_float(16);
  case ir::DType::BF16: return runtime::dl_bfloat16();
  case ir::DType::F32: return runtime::dl_float(32);
  case ir::DType::F64: return runtime::dl_float(64);
  }
  return runtime::dl_float(32);
}

inline float half_to_float(uint16_t h) {
  uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  float v;
  if (exp == 0) v = std::ldexp(float(man), -24);
  else if (exp == 31) v = man ? NAN : INFINITY;
  else v = std::ldexp(float(man | 0x400), int(exp) - 25);
  return sign ? -v : v;
}

inline float bf16_to_float(uint16_t h) {
  uint32_t bits = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// Element i of t as a double, whatever its dtype.
inline double element(const runtime::Tensor& t, int64_t i) {
  DLDataType d = t.dtype();
  const void* p = t.data();
  if (d.code == kDLFloat && d.bits == 32) return static_cast<const float*>(p)[i];
  if (d.code == kDLFloat && d.bits == 64) return static_cast<const double*>(p)[i];
  if (d.code == kDLFloat && d.bits == 16) return half_to_float(static_cast<const uint16_t*>(p)[i]);
  if (d.code == kDLBfloat) return bf16_to_float(static_cast<const uint16_t*>(p)[i]);
  if (d.code == kDLInt && d.bits == 64) return double(static_cast<const int64_t*>(p)[i]);
  if (d.code == kDLInt && d.bits == 32) return static_cast<const int32_t*>(p)[i];
  if (d.code == kDLInt && d.bits == 8) return static_cast<const int8_t*>(p)[i];
  return static_cast<const uint8_t*>(p)[i];
}

// Random inputs for `host`'s params at `symbols`: floats uniform in [-2, 2] (exactly
// representable in the dtype), ints uniform in [0, int_bound), bools 0/1.
inline std::vector<runtime::Tensor> random_inputs(const ir::HostProgram& host,
                                                  const symbolic::Bindings& symbols,
                                                  std::mt19937_64& rng, int64_t int_bound) {
  std::vector<runtime::Tensor> out;
  std::uniform_real_distribution<float> uniform(-2.0f, 2.0f);
  for (const ir::Buffer& p : host.params) {
    std::vector<int64_t> shape;
    for (const symbolic::Expr& d : p.shape) shape.push_back(symbolic::eval(d, symbols).value_or(0));
    runtime::Tensor t = runtime::Tensor::zeros(to_dl(p.dtype), shape);
    for (int64_t i = 0; i < t.numel(); ++i) {
      float f = uniform(rng);
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      switch (p.dtype) {
      case ir::DType::F32: t.data_as<float>()[i] = f; break;
      case ir::DType::F64: t.data_as<double>()[i] = f; break;
      case ir::DType::BF16: t.data_as<uint16_t>()[i] = uint16_t(bits >> 16); break;
      case ir::DType::F16: // 2^-3 steps in [-2, 2]: exact in f16
        t.data_as<uint16_t>()[i] = 0;
        {
          float q = std::round(f * 8) / 8;
          uint16_t h = 0;
          if (q != 0) {
            int e;
            float m = std::frexp(std::fabs(q), &e); // q = m * 2^e, m in [0.5, 1)
            h = uint16_t(((q < 0) << 15) | ((e + 14) << 10) | (uint16_t(m * 2048) & 0x3ff));
          }
          t.data_as<uint16_t>()[i] = h;
        }
        break;
      case ir::DType::I64: t.data_as<int64_t>()[i] = int64_t(rng() % uint64_t(int_bound)); break;
      case ir::DType::I32: t.data_as<int32_t>()[i] = int32_t(rng() % uint64_t(int_bound)); break;
      case ir::DType::I8: t.data_as<int8_t>()[i] = int8_t(rng() % uint64_t(int_bound)); break;
      case ir::DType::Bool: t.data_as<uint8_t>()[i] = uint8_t(rng() & 1); break;
      }
    }
    out.push_back(std::move(t));
  }
  return out;
}

} // namespace dsc::testing
