#pragma once
// Compiles .dsc text through the whole CPU pipeline (front end, passes, LLVM JIT) and runs it
// next to the reference interpreter, for the end-to-end numeric tests.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/CpuBackend.h"
#include "backends/reference/Interpreter.h"
#include "backends/reference/Value.h"
#include "lang/Frontend.h"
#include "passes/Pipeline.h"
#include "symbolic/Eval.h"
#include "tests/unit/FrontendUtil.h"
#include "tests/unit/PipelineUtil.h"

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
  passes::Compilation c;
  bool ok = false;
  if (m && !diags.has_errors()) {
    c.module = std::move(*m);
    c.entries = {entry};
    if (run_pipeline(c, ctx, "infer_shapes", "collect_facts")) {
      out.typed = c.module;
      ok = run_pipeline(c, ctx, "inline_calls", "plan_memory");
    }
  }
  out.errors = diagnostic_lines(diags);
  if (!ok || !out.errors.empty()) {
    if (out.errors.empty()) out.errors = "lowering failed without a diagnostic";
    return out;
  }
  out.host = c.hosts.at(0);
  runtime::Manifest manifest;
  manifest.functions.push_back(cpu::describe_host_program(out.host));
  std::string error;
  out.model = cpu::jit_compile(c.module, c.hosts, manifest, ctx.target, &error);
  if (!out.model) out.errors = "jit: " + error;
  return out;
}

// Element i of t as a double, whatever its dtype.
inline double element(const runtime::Tensor& t, int64_t i) {
  DLDataType d = t.dtype();
  const void* p = t.data();
  if (d.code == kDLFloat && d.bits == 32) return static_cast<const float*>(p)[i];
  if (d.code == kDLFloat && d.bits == 64) return static_cast<const double*>(p)[i];
  if (d.code == kDLFloat && d.bits == 16) return reference::half_to_float(static_cast<const uint16_t*>(p)[i]);
  if (d.code == kDLBfloat) return reference::bf16_to_float(static_cast<const uint16_t*>(p)[i]);
  if (d.code == kDLInt && d.bits == 64) return double(static_cast<const int64_t*>(p)[i]);
  if (d.code == kDLInt && d.bits == 32) return static_cast<const int32_t*>(p)[i];
  if (d.code == kDLInt && d.bits == 8) return static_cast<const int8_t*>(p)[i];
  return static_cast<const uint8_t*>(p)[i];
}

// Random inputs for `host`'s params at `symbols`: floats uniform in [-2, 2] (rounded to the
// dtype), ints uniform in [0, int_bound), bools 0/1.
inline std::vector<runtime::Tensor> random_inputs(const ir::HostProgram& host,
                                                  const symbolic::Bindings& symbols,
                                                  std::mt19937_64& rng, int64_t int_bound) {
  std::vector<runtime::Tensor> out;
  std::uniform_real_distribution<float> uniform(-2.0f, 2.0f);
  for (const ir::Buffer& p : host.params) {
    std::vector<int64_t> shape;
    for (const symbolic::Expr& d : p.shape) shape.push_back(symbolic::eval(d, symbols).value_or(0));
    runtime::Tensor t = runtime::Tensor::zeros(reference::to_dl(p.dtype), shape);
    for (int64_t i = 0; i < t.numel(); ++i) {
      float f = uniform(rng);
      switch (p.dtype) {
      case ir::DType::F32: t.data_as<float>()[i] = f; break;
      case ir::DType::F64: t.data_as<double>()[i] = f; break;
      case ir::DType::BF16: t.data_as<uint16_t>()[i] = reference::float_to_bf16(f); break;
      case ir::DType::F16: t.data_as<uint16_t>()[i] = reference::float_to_half(f); break;
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
