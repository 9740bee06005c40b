#pragma once
// Compiles .dsc text through the whole CPU pipeline (front end, passes, LLVM JIT) and runs it
// next to the reference interpreter, for the end-to-end numeric tests.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/CpuBackend.h"
#include "backends/cuda/CudaHostDevice.h"
#include "backends/reference/Interpreter.h"
#include "backends/reference/Value.h"
#include "lang/Frontend.h"
#include "passes/Pipeline.h"
#include "runtime/cuda/DeviceTensor.h"
#include "symbolic/Eval.h"
#include "tests/unit/FrontendUtil.h"
#include "tests/unit/PipelineUtil.h"

namespace dsc::testing {

struct CompiledProgram {
  ir::Module typed;                     // for the reference interpreter
  std::unique_ptr<runtime::Model> model; // the JIT-compiled code
  ir::HostProgram host;
  ir::Module lowered;  // after the whole pipeline, for building a .so
  size_t kernels = 0; // generated prims (fusion makes fewer), not counting shape-bucket variants
  bool cuda = false;  // compiled for CUDA: its inputs and outputs live on the device
  std::string errors; // diagnostics of any stage; empty on success
};

// `entry` must be a fn of `text`. Never throws; failures land in `errors`. `fuse`: legalize
// fuses ops into kernels (passes/legalize/Fuse.h). For a CUDA target the kernels are compiled
// by NVRTC too, and run wherever runtime::cuda::device() runs them (the block emulator under
// DSC_CUDA_EMULATE=1).
inline CompiledProgram compile_program(const std::string& text, const std::string& entry,
                                       bool fuse = true,
                                       const ir::Target& target = ir::cpu_target()) {
  CompiledProgram out;
  SourceManager sources;
  DiagnosticEngine diags(sources);
  symbolic::Prover prover;
  uint32_t file = sources.add("test.dsc", text);
  std::optional<ir::Module> m = lang::parse_module(sources, file, diags, stdlib_options());
  passes::PassContext ctx{diags, prover, target};
  ctx.fuse = fuse;
  out.cuda = target.kind == ir::TargetKind::Cuda;
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
  out.lowered = c.module;
  for (const ir::Module::Decl& d : c.module.decls)
    out.kernels += d.prim && d.prim->variant_of.empty() ? 1 : 0;
  runtime::Manifest manifest;
  manifest.functions.push_back(cpu::describe_host_program(out.host));
  std::string error;
  cuda::register_cuda_host_device();
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

// One numeric case: fn f of `source`, run compiled and by the reference interpreter.
struct NumericCase {
  std::string name;
  std::string source; // defines fn f
  std::vector<std::string> symbols;
  int64_t int_bound = 2;    // integer inputs are drawn from [0, int_bound); -1: [0, N)
  double tolerance = 2e-5;  // relative to max(1, |expected|); at least the output dtype's
  int64_t min_size = 1;     // every symbol is at least this (for cases with `where` clauses)
};

// So that gtest names a failing case instead of dumping its bytes.
inline void PrintTo(const NumericCase& c, std::ostream* os) { *os << c.name; }

// The first three shapes give every symbol 1, then the prime 7, then 17 (a prime that is not
// a multiple of the vector width); the other three draw each symbol from kSizes.
inline constexpr int64_t kFixedSizes[] = {1, 7, 17};
inline constexpr int64_t kSizes[] = {1, 2, 3, 5, 7, 13, 17, 31, 33, 47, 64};

// Runs `p` (compiled from c.source) and the reference interpreter at `symbols` on the same
// random inputs, and returns the first disagreement as text (empty when every output element
// agrees within c.tolerance, relative to max(1, |expected|); NaN matches NaN). With
// `rejections_agree`, both refusing the call (a violated where clause) is agreement too.
// `adjust`, when given, edits the random inputs first (an if's condition set each way); what
// it returns is added to the text of a mismatch.
using AdjustInputs = std::function<std::string(std::vector<runtime::Tensor>&)>;
inline std::string first_mismatch(const NumericCase& c, const CompiledProgram& p,
                                  const symbolic::Bindings& symbols, std::mt19937_64& rng,
                                  bool rejections_agree = false, const AdjustInputs& adjust = {}) {
  std::string at;
  for (const auto& [k, v] : symbols) at += k + "=" + std::to_string(v) + " ";
  auto n = symbols.find("N");
  int64_t int_bound = c.int_bound > 0 ? c.int_bound : (n != symbols.end() ? n->second : 2);
  std::vector<runtime::Tensor> inputs = random_inputs(p.host, symbols, rng, int_bound);
  if (adjust) at += adjust(inputs);
  reference::RunResult expected = reference::interpret(p.typed, "f", inputs);
  std::vector<runtime::Tensor> device_inputs;
  std::string copy_error;
  if (p.cuda) {
    for (const runtime::Tensor& t : inputs) {
      std::optional<runtime::Tensor> d = runtime::cuda::to_device(t, &copy_error);
      if (!d) return at + "copy to the device: " + copy_error;
      device_inputs.push_back(std::move(*d));
    }
  }
  std::vector<DLTensor> views;
  for (runtime::Tensor& t : p.cuda ? device_inputs : inputs) views.push_back(t.dl_view());
  std::vector<const DLTensor*> ptrs;
  for (const DLTensor& v : views) ptrs.push_back(&v);
  runtime::CallResult got = p.model->run("f", ptrs);
  if (p.cuda && got.ok()) {
    for (runtime::Tensor& t : got.outputs) {
      std::optional<runtime::Tensor> h = runtime::cuda::to_host(t, &copy_error);
      if (!h) return at + "copy to the host: " + copy_error;
      t = std::move(*h);
    }
  }
  if (rejections_agree && !expected.ok() && !got.ok()) return "";
  if (!expected.ok()) return at + "reference: " + expected.error;
  if (!got.ok()) return at + "compiled: " + got.error;
  if (got.outputs.size() != expected.outputs.size())
    return at + std::to_string(got.outputs.size()) + " outputs, the reference has " +
           std::to_string(expected.outputs.size());
  for (size_t o = 0; o < got.outputs.size(); ++o) {
    const runtime::Tensor& g = got.outputs[o];
    const runtime::Tensor& e = expected.outputs[o];
    if (g.type_string() != e.type_string())
      return at + "output " + std::to_string(o) + " is " + g.type_string() + ", the reference's " +
             e.type_string();
    // The case's tolerance, at least the output dtype's (ir/DTypes.def).
    const double tolerance =
        std::max(c.tolerance, ir::dtype_tolerance(*ir::parse_dtype(e.type_string().substr(
                                  0, e.type_string().find('[')))));
    for (int64_t i = 0; i < e.numel(); ++i) {
      double want = element(e, i), have = element(g, i);
      bool same = (std::isnan(want) && std::isnan(have)) || want == have ||
                  std::fabs(want - have) <= tolerance * std::max(1.0, std::fabs(want));
      if (!same)
        return c.name + " at " + at + "output " + std::to_string(o) + " element " +
               std::to_string(i) + ": expected " + std::to_string(want) + ", got " +
               std::to_string(have);
    }
  }
  return "";
}

// first_mismatch at six shapes: every symbol 1, then the prime 7, then 17 (a prime that is not a
// multiple of the vector width), then three draws of each symbol from kSizes.
inline void expect_matches_reference(const NumericCase& c, const CompiledProgram& p) {
  std::mt19937_64 rng(std::hash<std::string>{}(c.name));
  for (int trial = 0; trial < 6; ++trial) {
    symbolic::Bindings symbols;
    for (const std::string& s : c.symbols)
      symbols[s] = std::max(c.min_size, trial < 3 ? kFixedSizes[trial]
                                                  : kSizes[rng() % std::size(kSizes)]);
    std::string mismatch = first_mismatch(c, p, symbols, rng);
    EXPECT_EQ(mismatch, "");
  }
}

// Entry `fn` of a compiled model called on `inputs` (as views).
inline runtime::CallResult call_entry(runtime::Model& model, std::vector<runtime::Tensor>& inputs,
                                      const std::string& fn = "f") {
  std::vector<DLTensor> views;
  for (runtime::Tensor& t : inputs)
    views.push_back(t.dl_view());
  std::vector<const DLTensor*> ptrs;
  for (const DLTensor& v : views)
    ptrs.push_back(&v);
  return model.run(fn, ptrs);
}

} // namespace dsc::testing
