// dscc run FILE.dsc|MODEL.so
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>

#include "backends/cpu/CpuBackend.h"
#include "runtime/Matmul.h"
#include "runtime/cuda/Device.h"
#include "runtime/dsc_runtime.h"
#include "symbolic/Eval.h"
#include "symbolic/Parser.h"
#include "tools/dscc/Command.h"
#include "tools/dscc/Compile.h"
#include "tools/run_support/RunInputs.h"
#include "tools/run_support/RunOutputs.h"

namespace dsc::dscc {

namespace {

using run_support::AssembledInputs;
using run_support::InputOptions;

constexpr const char* kRunUsage =
    R"(usage: dscc run FILE.dsc|MODEL.so [options]

Runs an entry function: FILE.dsc is compiled into this process first (LLVM JIT); MODEL.so is
a library from `dscc build`. Every parameter comes from --input, else --weights, else is
synthesized: inputs (parameters with symbolic dims) from --shape or the shapes of the given
inputs, weights (constant dims) only with --random-weights. A function built for CUDA gets
its inputs copied to the GPU, and its results back.

  --entry=NAME                 the function to run (needed when there are several)
)";

constexpr const char* kRunUsageOptions =
    R"(  --output=DIR                 write the results as DIR/output0.npy, DIR/output1.npy, ...
  --bench=N                    time N calls after the warm-up; prints the median latency
  --warmup=N                   untimed calls before the timed ones (default 1, at least 1:
                               the first call, which also makes the results)
  --stats                      print the arena size, the peak of live intermediates, and the
                               inputs updated in place
  --no-constant-weights        pack weights for the GEMM on every call, as other inputs (by
                               default they are declared constant and packed once)
  --threads=N                  the runtime's and OpenBLAS's thread count (default: all
                               hardware threads, or DSC_NUM_THREADS)
  --target=cpu, --cpu=NAME, --vector-width=N
                               as for dscc build (FILE.dsc only)
  --print-after=PASS, --print-after-all, --verify-each, --time-passes
                               as for dscc build (FILE.dsc only)
  -q, --quiet                  no progress lines
)";

void print_usage(FILE* to) {
  std::fputs(kRunUsage, to);
  std::fputs(run_support::kInputOptionsUsage, to);
  std::fputs(kRunUsageOptions, to);
}

// "57.0 MiB (59768832 bytes)", or "192 bytes" below a KiB.
std::string format_bytes(int64_t b) {
  char buf[96];
  const double d = static_cast<double>(b);
  if (b >= 1 << 20)
    std::snprintf(buf, sizeof buf, "%.1f MiB (%lld bytes)", d / (1 << 20), static_cast<long long>(b));
  else if (b >= 1 << 10)
    std::snprintf(buf, sizeof buf, "%.1f KiB (%lld bytes)", d / (1 << 10), static_cast<long long>(b));
  else
    std::snprintf(buf, sizeof buf, "%lld bytes", static_cast<long long>(b));
  return buf;
}

std::string symbols_text(const std::map<std::string, int64_t>& symbols) {
  std::string s;
  for (const auto& [k, v] : symbols) s += (s.empty() ? "" : ", ") + k + "=" + std::to_string(v);
  return s;
}

} // namespace

int run_run(const Args& args) {
  CompileOptions options;
  InputOptions inputs;
  std::string output_dir, error, entry;
  int64_t bench = 0, warmup = 1, threads = 0;
  bool constant_weights = true;
  bool stats = false;
  auto bad = [&](const std::string& message) {
    std::cerr << "dscc run: error: " << message << "\n";
    return 1;
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](const std::string& flag) { return run_support::option_value(args, &i, flag); };
    if (a == "--help" || a == "-h") {
      print_usage(stdout);
      return 0;
    }
    if (run_support::parse_input_option(args, &i, &inputs, &error)) {
      if (!error.empty()) return bad(error);
    } else if (auto o = value("--output")) {
      output_dir = *o;
    } else if (a == "--no-constant-weights") {
      constant_weights = false;
    } else if (auto b = value("--bench")) {
      if (!run_support::parse_count(*b, &bench) || bench < 1)
        return bad("--bench expects a positive count");
    } else if (auto w = value("--warmup")) {
      if (!run_support::parse_count(*w, &warmup) || warmup < 1)
        return bad("--warmup expects a positive count (got '" + *w + "')");
    } else if (auto t = value("--threads")) {
      if (!run_support::parse_count(*t, &threads) || threads < 1 || threads > 1024)
        return bad("--threads expects a count from 1 to 1024");
    } else if (a == "--stats") {
      stats = true;
    } else if (auto e = value("--entry")) {
      entry = *e;
    } else if (parse_compile_option(a, &options, &error) == OptionResult::Parsed) {
      if (!error.empty()) return bad(error);
    } else {
      std::cerr << "dscc run: error: unknown option '" << a << "'\n\n";
      print_usage(stderr);
      return 1;
    }
  }
  if (options.file.empty()) {
    std::cerr << "dscc run: error: missing FILE\n\n";
    print_usage(stderr);
    return 1;
  }
  if (threads > 0) dsc_set_num_threads(static_cast<int>(threads));

  std::unique_ptr<runtime::Model> model;
  bool is_library = options.file.size() > 3 && options.file.substr(options.file.size() - 3) == ".so";
  if (is_library) {
    model = runtime::load_shared_library(options.file, &error);
    if (!model) return bad(error);
  } else {
    if (!entry.empty()) options.entries = {entry};
    auto start = std::chrono::steady_clock::now();
    std::optional<passes::Compilation> c = compile_file(options, std::cout, std::cerr);
    if (!c) return 1;
    model = cpu::jit_compile(c->module, c->hosts, manifest_of(*c), options.target, &error);
    if (!model) return bad(error);
    if (!options.quiet) {
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::fprintf(stderr, "dscc: compiled %s in %.2f s\n", options.file.c_str(), s);
    }
  }

  const runtime::Manifest& manifest = model->manifest();
  const runtime::FunctionInfo* fn = nullptr;
  if (!entry.empty()) {
    fn = manifest.find(entry);
    if (!fn) return bad(options.file + " has no function '" + entry + "'");
  } else if (manifest.functions.size() == 1) {
    fn = &manifest.functions[0];
  } else {
    std::string names;
    for (const runtime::FunctionInfo& f : manifest.functions) names += (names.empty() ? "" : ", ") + f.name;
    return bad(options.file + " has several functions (" + names + "); choose one with --entry=NAME");
  }

  // A CUDA function fails here, before its inputs are made, when there is no device.
  if (!runtime::check_device(*fn, &error)) return bad(error);
  std::optional<AssembledInputs> in = run_support::assemble_inputs(*fn, inputs, &error);
  if (!in) return bad(error);
  // A CUDA function's inputs go to the GPU once; the timed calls include only the call,
  // which waits for the GPU before it returns.
  const bool on_cuda = fn->device == runtime::DeviceKind::Cuda;
  if (!run_support::place_inputs(*fn, &*in, &error)) return bad(error);
  // The weights stay as they are for the whole command: declared constant, each is packed for
  // the GEMM once, on first use (dsc_declare_constant), unless --no-constant-weights.
  struct ConstantWeights {
    std::vector<const void*> declared;
    ~ConstantWeights() {
      for (const void* d : declared) dsc_release_constant(d);
    }
  } constants;
  for (size_t i = 0; i < in->tensors.size() && constant_weights && !on_cuda; ++i) {
    runtime::Tensor& t = in->tensors[i];
    if (in->weights[i] && t.nbytes() > 0 && dsc_declare_constant(t.data(), t.nbytes()) == 0)
      constants.declared.push_back(t.data());
  }
  std::vector<DLTensor> views;
  for (runtime::Tensor& t : in->tensors) views.push_back(t.dl_view());
  std::vector<const DLTensor*> ptrs;
  for (const DLTensor& v : views) ptrs.push_back(&v);

  runtime::CallResult result = model->run(fn->name, ptrs);
  if (!result.ok()) return bad(result.error);
  if (!run_support::outputs_to_host(&result.outputs, &error)) return bad(error);

  if (bench > 0) {
    for (int64_t i = 1; i < warmup; ++i) { // the first call above was the first warm-up
      runtime::CallResult r = model->run(fn->name, ptrs);
      if (!r.ok()) return bad(r.error);
    }
    std::vector<double> ms;
    for (int64_t i = 0; i < bench; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      runtime::CallResult r = model->run(fn->name, ptrs);
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      if (!r.ok()) return bad(r.error);
    }
    const run_support::BenchStats st = run_support::bench_stats(ms);
    if (on_cuda) {
      std::printf("%s at %s: median latency: %.3f ms over %lld runs (min %.3f ms, on %s)\n",
                  fn->name.c_str(), symbols_text(in->symbols).c_str(), st.median,
                  static_cast<long long>(bench), st.min,
                  runtime::cuda::device(nullptr)->describe().c_str());
    } else {
      const int pool_threads = dsc_get_num_threads(); // makes the pool, which sets OpenBLAS's
      std::printf("%s at %s: median latency: %.3f ms over %lld runs (min %.3f ms, %d threads, "
                  "OpenBLAS %d)\n",
                  fn->name.c_str(), symbols_text(in->symbols).c_str(), st.median,
                  static_cast<long long>(bench), st.min, pool_threads,
                  runtime::blas_num_threads());
    }
  }
  if (stats) {
    symbolic::Bindings b(in->symbols.begin(), in->symbols.end());
    std::optional<int64_t> peak;
    symbolic::ParseResult pe = symbolic::parse_expr(fn->peak_bytes);
    if (pe.ok()) peak = symbolic::eval(pe.expr, b);
    std::printf("memory at %s: arena %s, peak live intermediates %s\n",
                symbols_text(in->symbols).c_str(), format_bytes(result.arena_bytes).c_str(),
                peak ? format_bytes(*peak).c_str() : "unknown");
    // Outputs that are inputs updated in place (update_slice): nothing of them was copied.
    for (size_t k = 0; k < fn->outputs.size() && k < result.outputs.size(); ++k) {
      const int p = fn->outputs[k].updates_param;
      if (p < 0) continue;
      std::printf("output%zu is input '%s' updated in place (%s not copied)\n", k,
                  fn->params[static_cast<size_t>(p)].name.c_str(),
                  format_bytes(static_cast<int64_t>(result.outputs[k].nbytes())).c_str());
    }
  }
  if (!output_dir.empty()) {
    if (!run_support::write_outputs(output_dir, result.outputs, &error)) return bad(error);
  } else if (bench == 0 && !stats) {
    for (size_t i = 0; i < result.outputs.size(); ++i)
      std::cout << run_support::summarize("output" + std::to_string(i), result.outputs[i])
                << "\n";
  }
  return 0;
}

} // namespace dsc::dscc
