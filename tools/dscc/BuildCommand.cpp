// dscc build FILE.dsc -o OUT.so
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>

#include "backends/cpu/CpuBackend.h"
#include "backends/cuda/CudaSource.h"
#include "tools/dscc/Command.h"
#include "tools/dscc/Compile.h"

namespace dsc::dscc {

namespace {

constexpr const char* kBuildUsage =
    R"(usage: dscc build FILE.dsc -o OUT.so [options]

Compiles the entry functions of FILE (every fn whose parameters are tensors with known dims,
or those named by --entry) once, for every shape their `where` clauses allow, into a shared
library that `dscc run OUT.so` and C programs (runtime/dsc_runtime.h) load.

  -o OUT.so, --output=OUT.so   the library to write
  --entry=NAME                 compile only NAME (repeatable)
  --cpu=native|generic|NAME    native (default): this machine's CPU and features, AVX-512
                               where present; generic: portable x86-64; or an LLVM CPU name
  --vector-width=128|256|512   the vector width LLVM's vectorizers aim for (default: 512 on
                               this CPU when it has AVX-512, else the CPU's preference)
  --emit=cuda                  with --target=cuda: print the CUDA C of the kernels
  -q, --quiet                  no progress lines
)";

} // namespace

int run_build(const Args& args) {
  CompileOptions options;
  options.all_entries = true;
  std::string out_path, error;
  bool emit_cuda = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kBuildUsage, stdout);
      std::fputs(kInstrumentationUsage, stdout);
      return 0;
    }
    if (a == "-o" && i + 1 < args.size()) {
      out_path = args[++i];
    } else if (a.rfind("--output=", 0) == 0) {
      out_path = a.substr(9);
    } else if (a == "--emit=cuda") {
      emit_cuda = true;
    } else if (a.rfind("--entry=", 0) == 0) {
      options.entries.push_back(a.substr(8));
    } else if (parse_compile_option(a, &options, &error) == OptionResult::Parsed) {
      if (!error.empty()) {
        std::cerr << "dscc build: error: " << error << "\n";
        return 1;
      }
    } else {
      std::cerr << "dscc build: error: unknown option '" << a << "'\n\n" << kBuildUsage;
      return 1;
    }
  }
  if (options.file.empty() || out_path.empty()) {
    std::cerr << "dscc build: error: " << (options.file.empty() ? "missing FILE" : "missing -o OUT.so")
              << "\n\n" << kBuildUsage;
    return 1;
  }

  auto start = std::chrono::steady_clock::now();
  std::optional<passes::Compilation> c = compile_file(options, std::cout, std::cerr);
  if (!c) return 1;
  runtime::Manifest manifest = manifest_of(*c);
  if (emit_cuda) {
    if (options.target.kind != ir::TargetKind::Cuda) {
      std::cerr << "dscc build: error: --emit=cuda needs --target=cuda\n";
      return 1;
    }
    std::optional<cuda::CudaSource> source = cuda::emit_cuda_source(c->module, &error);
    if (!source) {
      std::cerr << "dscc build: error: " << error << "\n";
      return 1;
    }
    std::cout << source->text;
  }
  if (options.print_llvm) {
    std::string text = cpu::emit_llvm_ir(c->module, c->hosts, manifest, options.target, true, &error);
    if (text.empty()) {
      std::cerr << "dscc build: error: " << error << "\n";
      return 1;
    }
    std::cout << "// ----- after llvm\n" << text;
  }
  if (!cpu::build_shared_library(c->module, c->hosts, manifest, options.target, out_path, &error)) {
    std::cerr << "dscc build: error: " << error << "\n";
    return 1;
  }
  if (!options.quiet) {
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stderr, "dscc: wrote %s in %.2f s (%s)\n", out_path.c_str(), s,
                 options.target.describe().c_str());
  }
  return 0;
}

} // namespace dsc::dscc
