// dsc-run MODEL.so: runs a model built by `dscc build` with the runtime alone.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/Model.h"
#include "runtime/cuda/Device.h"
#include "runtime/dsc_runtime.h"
#include "tools/run_support/RunInputs.h"
#include "tools/run_support/RunOutputs.h"

namespace {

using namespace dsc;

constexpr const char* kUsage =
    R"(usage: dsc-run MODEL.so [options]

Runs an entry function of a model built by `dscc build`, with the runtime alone (no LLVM, no
Z3), on the CPU or, for a model built with --target=cuda, on the GPU. Parameters come from
--input, else --weights, else are synthesized, as for `dscc run`: inputs (symbolic dims) from
--shape or the shapes of the given inputs, weights (constant dims) only with --random-weights.
A CUDA function's inputs are copied to the GPU before the first call, and its results back
after the last.

  --function=NAME              the function to run (needed when there are several; also
                               --entry=NAME)
)";

constexpr const char* kUsageOptions =
    R"(  --output=DIR                 write the results as DIR/output0.npy, DIR/output1.npy, ...
                               (also --save-outputs=DIR)
  --compare-outputs=DIR        compare the results with DIR/output0.npy, ... as numpy.allclose
                               does; exit status 1 when one differs
  --rtol=X, --atol=X           the comparison's tolerances (default 1e-4 and 1e-5)
  --bench=N                    time N calls after the warm-up; prints
                               bench: function=F runs=N warmup=W mean_ms=X min_ms=X median_ms=X max_ms=X
  --warmup=N                   untimed calls before the timed ones (default 1, at least 1:
                               the call that makes the results)
  --threads=N                  the runtime's and OpenBLAS's thread count (default: all
                               hardware threads, or DSC_NUM_THREADS)
  --no-constant-weights        pack weights for the CPU's GEMM on every call (by default they
                               are declared constant and packed once)
  -q, --quiet                  no progress lines on stderr

Environment: DSC_CUDA_SYNC=1 waits after every kernel, so that an error names it;
DSC_CUDA_EMULATE=1 runs CUDA functions on the CPU's block emulator (libdsc_cuda_emulator.so
beside libdsc_runtime.so, or the library DSC_CUDA_EMULATOR names);
DSC_CUDA_RESIDENT_THREADS=N picks the row kernels' launches as if the device held N threads
(1: never the wider launch for few rows).
)";

void print_usage(FILE* to) {
  std::fputs(kUsage, to);
  std::fputs(run_support::kInputOptionsUsage, to);
  std::fputs(kUsageOptions, to);
}

int bad(const std::string& message) {
  std::fflush(stdout); // what was printed comes first
  std::cerr << "dsc-run: error: " << message << "\n";
  return 1;
}

bool parse_tolerance(const std::string& text, double* out) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(v >= 0) || v > 1e9) return false;
  *out = v;
  return true;
}

std::string symbols_text(const std::map<std::string, int64_t>& symbols) {
  std::string s;
  for (const auto& [k, v] : symbols)
    s += (s.empty() ? "" : ", ") + k + "=" + std::to_string(v);
  return s.empty() ? "no symbols" : s;
}

struct Options {
  std::string model, function, output_dir, compare_dir;
  run_support::InputOptions inputs;
  run_support::Tolerance tolerance;
  int64_t bench = 0, warmup = 1, threads = 0;
  bool constant_weights = true, quiet = false;
};

// Nothing to go on, else the exit code (after --help, or an error).
std::optional<int> parse_options(const std::vector<std::string>& args, Options* o) {
  std::string error;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](const std::string& flag) { return run_support::option_value(args, &i, flag); };
    if (a == "--help" || a == "-h") {
      print_usage(stdout);
      return 0;
    }
    if (run_support::parse_input_option(args, &i, &o->inputs, &error)) {
      if (!error.empty()) return bad(error);
    } else if (auto f = value("--function")) {
      o->function = *f;
    } else if (auto e = value("--entry")) {
      o->function = *e;
    } else if (auto d = value("--output")) {
      o->output_dir = *d;
    } else if (auto s = value("--save-outputs")) {
      o->output_dir = *s;
    } else if (auto c = value("--compare-outputs")) {
      o->compare_dir = *c;
    } else if (auto r = value("--rtol")) {
      if (!parse_tolerance(*r, &o->tolerance.rtol))
        return bad("--rtol expects a non-negative number (got '" + *r + "')");
    } else if (auto t = value("--atol")) {
      if (!parse_tolerance(*t, &o->tolerance.atol))
        return bad("--atol expects a non-negative number (got '" + *t + "')");
    } else if (auto b = value("--bench")) {
      if (!run_support::parse_count(*b, &o->bench) || o->bench < 1)
        return bad("--bench expects a positive count (got '" + *b + "')");
    } else if (auto w = value("--warmup")) {
      if (!run_support::parse_count(*w, &o->warmup) || o->warmup < 1)
        return bad("--warmup expects a positive count (got '" + *w + "')");
    } else if (auto n = value("--threads")) {
      if (!run_support::parse_count(*n, &o->threads) || o->threads < 1 || o->threads > 1024)
        return bad("--threads expects a count from 1 to 1024 (got '" + *n + "')");
    } else if (a == "--no-constant-weights") {
      o->constant_weights = false;
    } else if (a == "-q" || a == "--quiet") {
      o->quiet = true;
    } else if (a.size() > 1 && a[0] == '-') {
      std::cerr << "dsc-run: error: unknown option '" << a << "'\n\n";
      print_usage(stderr);
      return 1;
    } else if (o->model.empty()) {
      o->model = a;
    } else {
      return bad("more than one model given ('" + o->model + "' and '" + a + "')");
    }
  }
  if (o->model.empty()) {
    std::cerr << "dsc-run: error: missing MODEL.so\n\n";
    print_usage(stderr);
    return 1;
  }
  return std::nullopt;
}

// The weights, declared constant for the CPU's GEMM while they live (dsc_declare_constant).
struct ConstantWeights {
  std::vector<const void*> declared;
  ~ConstantWeights() {
    for (const void* d : declared)
      dsc_release_constant(d);
  }
};

int run(const Options& o) {
  if (o.threads > 0) dsc_set_num_threads(static_cast<int>(o.threads));
  std::string error;
  std::unique_ptr<runtime::Model> model = runtime::load_shared_library(o.model, &error);
  if (!model) return bad(error);
  const runtime::Manifest& manifest = model->manifest();
  const runtime::FunctionInfo* fn = nullptr;
  std::string names;
  for (const runtime::FunctionInfo& f : manifest.functions)
    names += (names.empty() ? "" : ", ") + f.name;
  if (!o.function.empty()) {
    fn = manifest.find(o.function);
    if (!fn) return bad(o.model + " has no function '" + o.function + "' (it has: " + names + ")");
  } else if (manifest.functions.size() == 1) {
    fn = &manifest.functions[0];
  } else {
    return bad(o.model + " has several functions (" + names + "); choose one with --function=NAME");
  }

  if (!runtime::check_device(*fn, &error)) return bad(error);
  std::optional<run_support::AssembledInputs> in =
      run_support::assemble_inputs(*fn, o.inputs, &error);
  if (!in) return bad(error);
  const bool on_cuda = fn->device == runtime::DeviceKind::Cuda;
  if (!run_support::place_inputs(*fn, &*in, &error)) return bad(error);
  ConstantWeights constants;
  for (size_t i = 0; i < in->tensors.size() && o.constant_weights && !on_cuda; ++i) {
    runtime::Tensor& t = in->tensors[i];
    if (in->weights[i] && t.nbytes() > 0 && dsc_declare_constant(t.data(), t.nbytes()) == 0)
      constants.declared.push_back(t.data());
  }
  std::vector<DLTensor> views;
  for (runtime::Tensor& t : in->tensors)
    views.push_back(t.dl_view());
  std::vector<const DLTensor*> ptrs;
  for (const DLTensor& v : views)
    ptrs.push_back(&v);
  if (!o.quiet) {
    const std::string where =
        on_cuda ? runtime::cuda::device(nullptr)->describe()
                : "the CPU (" + std::to_string(dsc_get_num_threads()) + " threads)";
    std::fprintf(stderr, "dsc-run: '%s' at %s on %s\n", fn->name.c_str(),
                 symbols_text(in->symbols).c_str(), where.c_str());
  }

  // The first call makes the results; it and the rest of the warm-up are not timed.
  runtime::CallResult result = model->run(fn->name, ptrs);
  if (!result.ok()) return bad(result.error);
  if (o.bench > 0) {
    for (int64_t i = 1; i < o.warmup; ++i) {
      runtime::CallResult r = model->run(fn->name, ptrs);
      if (!r.ok()) return bad(r.error);
    }
    std::vector<double> ms;
    for (int64_t i = 0; i < o.bench; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      runtime::CallResult r = model->run(fn->name, ptrs); // waits for the GPU
      auto t1 = std::chrono::steady_clock::now();
      if (!r.ok()) return bad(r.error);
      ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    const run_support::BenchStats s = run_support::bench_stats(ms);
    std::printf("bench: function=%s runs=%lld warmup=%lld mean_ms=%.4f min_ms=%.4f "
                "median_ms=%.4f max_ms=%.4f\n",
                fn->name.c_str(), static_cast<long long>(o.bench), static_cast<long long>(o.warmup),
                s.mean, s.min, s.median, s.max);
  }
  if (!run_support::outputs_to_host(&result.outputs, &error)) return bad(error);

  int status = 0;
  if (!o.compare_dir.empty()) {
    std::vector<run_support::Comparison> comparisons;
    if (!run_support::compare_outputs(o.compare_dir, result.outputs, o.tolerance, &comparisons,
                                      &error))
      return bad(error);
    for (const run_support::Comparison& c : comparisons) {
      std::printf("compare %s\n", c.report().c_str());
      if (!c.ok()) status = 1;
    }
    std::fflush(stdout);
    if (status)
      std::fprintf(stderr, "dsc-run: error: results differ from %s (rtol %g, atol %g)\n",
                   o.compare_dir.c_str(), o.tolerance.rtol, o.tolerance.atol);
  }
  if (!o.output_dir.empty() && !run_support::write_outputs(o.output_dir, result.outputs, &error))
    return bad(error);
  if (o.output_dir.empty() && o.compare_dir.empty() && o.bench == 0)
    for (size_t i = 0; i < result.outputs.size(); ++i)
      std::printf("%s\n",
                  run_support::summarize("output" + std::to_string(i), result.outputs[i]).c_str());
  return status;
}

} // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  Options options;
  if (std::optional<int> done = parse_options(args, &options)) return *done;
  return run(options);
}
