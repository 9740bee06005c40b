// dscc run FILE.dsc|MODEL.so
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>

#include "backends/cpu/CpuBackend.h"
#include "runtime/Matmul.h"
#include "runtime/Npy.h"
#include "runtime/dsc_runtime.h"
#include "symbolic/Eval.h"
#include "symbolic/Parser.h"
#include "tools/dscc/Command.h"
#include "tools/dscc/Compile.h"
#include "tools/dscc/RunInputs.h"

namespace dsc::dscc {

namespace {

constexpr const char* kRunUsage =
    R"(usage: dscc run FILE.dsc|MODEL.so [options]

Runs an entry function: FILE.dsc is compiled into this process first (LLVM JIT); MODEL.so is
a library from `dscc build`. Every parameter comes from --input, else --weights, else is
synthesized: inputs (parameters with symbolic dims) from --shape or the shapes of the given
inputs, weights (constant dims) only with --random-weights.

  --entry=NAME                 the function to run (needed when there are several)
  --input NAME=FILE.npy        a parameter's value (repeatable; also --input=NAME=FILE.npy)
  --weights=FILE.safetensors   parameters by name
  --random-weights             synthesize missing weights (deterministic, see --seed)
  --shape SYM=VAL,...          symbol values for synthesized inputs (also --shape=...)
  --seed=N                     the seed of synthesized values (default 0)
  --output=DIR                 write the results as DIR/output0.npy, DIR/output1.npy, ...
  --bench=N                    time N calls after one warm-up; prints the median latency
  --stats                      print the arena size and the peak of live intermediates
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

// `output0: f32[2, 7, 768]  min -2.91  max 3.02  mean 1.3e-09` (floats) or just the type.
std::string summarize(const std::string& name, const runtime::Tensor& t) {
  std::string s = name + ": " + t.type_string();
  DLDataType d = t.dtype();
  if (d.code != kDLFloat || (d.bits != 32 && d.bits != 64) || t.numel() == 0) return s;
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = d.bits == 32 ? double(t.data_as<float>()[i]) : t.data_as<double>()[i];
    lo = std::min(lo, v), hi = std::max(hi, v), sum += v;
  }
  char buf[128];
  std::snprintf(buf, sizeof buf, "  min %.4g  max %.4g  mean %.4g", lo, hi, sum / double(t.numel()));
  return s + buf;
}

bool parse_count(const std::string& text, int64_t* out) {
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v < 0 || v > 1000000000) return false;
  *out = v;
  return true;
}

} // namespace

int run_run(const Args& args) {
  CompileOptions options;
  InputOptions inputs;
  std::string output_dir, error, entry;
  int64_t bench = 0, threads = 0;
  bool constant_weights = true;
  bool stats = false;
  auto bad = [&](const std::string& message) {
    std::cerr << "dscc run: error: " << message << "\n";
    return 1;
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](const std::string& flag) -> std::optional<std::string> {
      if (a.rfind(flag + "=", 0) == 0) return a.substr(flag.size() + 1);
      if (a == flag && i + 1 < args.size()) return args[++i];
      return std::nullopt;
    };
    if (a == "--help" || a == "-h") {
      std::fputs(kRunUsage, stdout);
      return 0;
    }
    if (auto v = value("--input")) {
      size_t eq = v->find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == v->size())
        return bad("--input expects NAME=FILE.npy (got '" + *v + "')");
      inputs.files.emplace_back(v->substr(0, eq), v->substr(eq + 1));
    } else if (auto w = value("--weights")) {
      inputs.weights = *w;
    } else if (a == "--random-weights") {
      inputs.random_weights = true;
    } else if (auto s = value("--shape")) {
      if (!parse_shape_option(*s, &inputs.shape, &error)) return bad(error);
    } else if (auto seed = value("--seed")) {
      int64_t n = 0;
      if (!parse_count(*seed, &n)) return bad("--seed expects a non-negative integer");
      inputs.seed = static_cast<uint64_t>(n);
    } else if (auto o = value("--output")) {
      output_dir = *o;
    } else if (a == "--no-constant-weights") {
      constant_weights = false;
    } else if (auto b = value("--bench")) {
      if (!parse_count(*b, &bench) || bench < 1) return bad("--bench expects a positive count");
    } else if (auto t = value("--threads")) {
      if (!parse_count(*t, &threads) || threads < 1 || threads > 1024)
        return bad("--threads expects a count from 1 to 1024");
    } else if (a == "--stats") {
      stats = true;
    } else if (auto e = value("--entry")) {
      entry = *e;
    } else if (parse_compile_option(a, &options, &error) == OptionResult::Parsed) {
      if (!error.empty()) return bad(error);
    } else {
      std::cerr << "dscc run: error: unknown option '" << a << "'\n\n" << kRunUsage;
      return 1;
    }
  }
  if (options.file.empty()) {
    std::cerr << "dscc run: error: missing FILE\n\n" << kRunUsage;
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

  std::optional<AssembledInputs> in = assemble_inputs(*fn, inputs, &error);
  if (!in) return bad(error);
  // The weights stay as they are for the whole command: declared constant, each is packed for
  // the GEMM once, on first use (dsc_declare_constant), unless --no-constant-weights.
  struct ConstantWeights {
    std::vector<const void*> declared;
    ~ConstantWeights() {
      for (const void* d : declared) dsc_release_constant(d);
    }
  } constants;
  for (size_t i = 0; i < in->tensors.size() && constant_weights; ++i) {
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

  if (bench > 0) {
    std::vector<double> ms;
    for (int64_t i = 0; i < bench; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      runtime::CallResult r = model->run(fn->name, ptrs);
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      if (!r.ok()) return bad(r.error);
    }
    std::sort(ms.begin(), ms.end());
    double median = ms.size() % 2 ? ms[ms.size() / 2] : (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]) / 2;
    const int pool_threads = dsc_get_num_threads(); // makes the pool, which sets OpenBLAS's
    std::printf("%s at %s: median latency: %.3f ms over %lld runs (min %.3f ms, %d threads, "
                "OpenBLAS %d)\n",
                fn->name.c_str(), symbols_text(in->symbols).c_str(), median,
                static_cast<long long>(bench), ms.front(), pool_threads,
                runtime::blas_num_threads());
  }
  if (stats) {
    symbolic::Bindings b(in->symbols.begin(), in->symbols.end());
    std::optional<int64_t> peak;
    symbolic::ParseResult pe = symbolic::parse_expr(fn->peak_bytes);
    if (pe.ok()) peak = symbolic::eval(pe.expr, b);
    std::printf("memory at %s: arena %s, peak live intermediates %s\n",
                symbols_text(in->symbols).c_str(), format_bytes(result.arena_bytes).c_str(),
                peak ? format_bytes(*peak).c_str() : "unknown");
  }
  if (!output_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(output_dir, ec);
    if (ec) return bad("cannot create '" + output_dir + "': " + ec.message());
    for (size_t i = 0; i < result.outputs.size(); ++i) {
      std::string path = output_dir + "/output" + std::to_string(i) + ".npy";
      if (!runtime::write_npy(path, result.outputs[i], &error)) return bad(error);
    }
  } else if (bench == 0 && !stats) {
    for (size_t i = 0; i < result.outputs.size(); ++i)
      std::cout << summarize("output" + std::to_string(i), result.outputs[i]) << "\n";
  }
  return 0;
}

} // namespace dsc::dscc
