#include "tools/dscc/Compile.h"

#include <algorithm>
#include <chrono>
#include <ostream>

#include "backends/cpu/CpuBackend.h"
#include "ir/LibraryRoutine.h"
#include "passes/KernelCount.h"
#include "passes/PassContext.h"
#include "tools/dscc/Check.h"

namespace dsc::dscc {

const char* const kInstrumentationUsage =
    R"(  --print-after=PASS           print the IR after PASS (repeatable): a pass of the
                               pipeline, llvm (the optimized LLVM IR), or all
  --print-after-all            print the IR after every pass
  --verify-each                run the IR verifier after every pass (on in debug builds)
  --time-passes                print each pass's wall time to stderr
  --no-fusion                  one kernel per op (to compare with the fused kernels)
  --gemm=dsc|blas|cublas       f32 matmuls call dsc's own GEMM (the CPU's default), OpenBLAS,
                               or cuBLAS (CUDA's default)
  --target=cpu|cuda            the backend: this machine's CPU (default), or NVIDIA GPUs (CUDA
                               kernels compiled by NVRTC; the host code stays on the CPU)
  --cuda-arch=80,90            with --target=cuda: the SM architectures to compile cubins for
                               (default 80,90), plus PTX for the newest, for later GPUs
)";

namespace {

OptionResult parse_instrumentation_option(const std::string& arg, CompileOptions* options,
                                          std::string* error) {
  passes::PipelineOptions& p = options->instrument;
  if (arg == "--print-after-all") {
    p.print_after_all = true;
  } else if (arg == "--verify-each") {
    p.verify_each = true;
  } else if (arg == "--time-passes") {
    p.time_passes = true;
  } else if (arg.rfind("--print-after=", 0) == 0) {
    std::string value = arg.substr(14);
    if (value == "all") {
      p.print_after_all = true;
      options->print_llvm = true;
    } else if (value == "llvm") {
      options->print_llvm = true;
    } else if (passes::find_pass(value)) {
      p.print_after.push_back(value);
    } else {
      *error = "unknown pass '" + value + "' in --print-after; the passes are " +
               passes::pass_names_text() + ", and llvm (the optimized LLVM IR), or all";
    }
  } else {
    return OptionResult::NotMine;
  }
  return OptionResult::Parsed;
}

OptionResult parse_target_option(const std::string& arg, ir::Target* target, std::string* error) {
  if (arg.rfind("--target=", 0) == 0) {
    const std::string name = arg.substr(9);
    if (std::optional<ir::TargetKind> kind = ir::target_kind_named(name)) {
      std::vector<int> archs = target->sm_archs; // --cuda-arch may come first
      *target = ir::default_target(*kind);
      if (!archs.empty() && !target->sm_archs.empty()) target->sm_archs = archs;
    } else {
      *error = "--target must be " + ir::target_kind_names() + " (got '" + name + "')";
    }
  } else if (arg.rfind("--vector-width=", 0) == 0) {
    std::string w = arg.substr(15);
    if (w == "128" || w == "256" || w == "512") target->vector_bits = std::stoi(w);
    else *error = "--vector-width must be 128, 256 or 512 (got '" + w + "')";
  } else if (arg.rfind("--cuda-arch=", 0) == 0) {
    std::vector<int> archs;
    std::string list = arg.substr(12);
    size_t at = 0;
    while (at <= list.size()) {
      size_t comma = list.find(',', at);
      std::string item = list.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
      if (item.rfind("sm_", 0) == 0) item = item.substr(3);
      if (item.size() < 2 || item.size() > 3 || item.find_first_not_of("0123456789") != std::string::npos) {
        *error = "--cuda-arch takes SM architectures such as 80,90 or sm_80,sm_90 (got '" + list + "')";
        return OptionResult::Parsed;
      }
      archs.push_back(std::stoi(item));
      if (comma == std::string::npos) break;
      at = comma + 1;
    }
    target->sm_archs = archs;
  } else if (arg.rfind("--cpu=", 0) == 0) {
    target->cpu = arg.substr(6);
    if (target->cpu.empty()) *error = "--cpu needs a value: native, generic or an LLVM CPU name";
  } else {
    return OptionResult::NotMine;
  }
  return OptionResult::Parsed;
}

} // namespace

OptionResult parse_compile_option(const std::string& arg, CompileOptions* options,
                                  std::string* error) {
  error->clear();
  if (parse_instrumentation_option(arg, options, error) == OptionResult::Parsed ||
      parse_target_option(arg, &options->target, error) == OptionResult::Parsed)
    return OptionResult::Parsed;
  if (arg == "-q" || arg == "--quiet") {
    options->quiet = true;
  } else if (arg == "--no-fusion") {
    options->fuse = false;
  } else if (arg.rfind("--gemm=", 0) == 0) {
    // The providers of the table's f32 matmul routines, per target: "dsc or blas (cpu), ...".
    std::string value = arg.substr(7), known;
    bool found = false;
    for (ir::TargetKind kind : ir::all_target_kinds()) {
      std::string names;
      for (const ir::LibraryRoutine& r : ir::all_library_routines()) {
        if (r.role != ir::RoutineRole::Matmul || r.target != kind || r.dtype != ir::DType::F32)
          continue;
        found |= ir::routine_provider(r) == value;
        names += (names.empty() ? "" : " or ") + std::string(ir::routine_provider(r));
      }
      known += (known.empty() ? "" : ", or ") + names + " (" + ir::target_kind_name(kind) + ")";
    }
    if (!found)
      *error = "--gemm takes " + known + ", not '" + value + "'";
    else
      options->gemm = value;
  } else if (arg.size() > 1 && arg[0] == '-') {
    return OptionResult::NotMine;
  } else if (options->file.empty()) {
    options->file = arg;
  } else {
    *error = "one FILE at a time ('" + options->file + "' and '" + arg + "')";
  }
  return OptionResult::Parsed;
}

namespace {

// The entries to compile: those named, else every candidate (build) or the only one or `main`.
std::optional<std::vector<std::string>> choose_entries(const CompileOptions& options,
                                                       const ir::Module& typed, std::ostream& err) {
  std::vector<std::string> candidates = passes::entry_candidates(typed);
  std::vector<std::string> entries = options.entries;
  for (const std::string& e : entries) {
    if (std::find(candidates.begin(), candidates.end(), e) != candidates.end()) continue;
    err << "dscc: error: " << options.file << " has no entry function '" << e << "'";
    if (!candidates.empty()) {
      err << " (entry functions:";
      for (const std::string& c : candidates) err << " " << c;
      err << ")";
    }
    err << "\n";
    return std::nullopt;
  }
  if (!entries.empty()) return entries;
  if (candidates.empty()) {
    err << "dscc: error: " << options.file
        << " has no entry function (a fn whose parameters are all tensors with known dims)\n";
    return std::nullopt;
  }
  if (options.all_entries || candidates.size() == 1) return candidates;
  if (std::find(candidates.begin(), candidates.end(), "main") != candidates.end())
    return std::vector<std::string>{"main"};
  err << "dscc: error: " << options.file << " has several entry functions (";
  for (size_t i = 0; i < candidates.size(); ++i) err << (i ? ", " : "") << candidates[i];
  err << "); choose one with --entry=NAME\n";
  return std::nullopt;
}

} // namespace

std::optional<passes::Compilation> compile_file(const CompileOptions& options, std::ostream& out,
                                                std::ostream& err,
                                                const passes::Pipeline* pipeline) {
  auto start = std::chrono::steady_clock::now();
  SourceManager sources;
  DiagnosticEngine diags(sources);
  symbolic::Prover prover;
  passes::PipelineOptions instrument = options.instrument;
  instrument.print_to = &out;
  instrument.report_to = &err;
  passes::PassContext ctx{diags, prover, options.target};
  ctx.fuse = options.fuse;
  if (!options.gemm.empty()) {
    // The target's f32 matmul routine of that provider (ir/LibraryRoutines.def); 16-bit
    // products keep the target's own.
    std::string offered;
    for (const ir::LibraryRoutine& r : ir::all_library_routines()) {
      if (r.role != ir::RoutineRole::Matmul || r.dtype != ir::DType::F32 ||
          !options.target.offers(r))
        continue;
      if (ir::routine_provider(r) == options.gemm) ctx.gemm_routine = &r;
      offered += (offered.empty() ? "" : ", ") + std::string(ir::routine_provider(r));
    }
    if (!ctx.gemm_routine) {
      const ir::LibraryRoutine* preferred =
          options.target.preferred_routine(ir::RoutineRole::Matmul);
      err << "error: --gemm=" << options.gemm << ": the " << ir::target_kind_name(options.target.kind)
          << " target has no such matmul routine (it has " << offered << "; its default is --gemm="
          << (preferred ? ir::routine_provider(*preferred) : "none") << ")\n";
      return std::nullopt;
    }
  }

  std::optional<uint32_t> file = options.source
                                     ? std::optional<uint32_t>(sources.add(options.file, *options.source))
                                     : load_source(options.file, sources, diags);
  std::optional<ir::Module> parsed;
  if (file) parsed = parse_checked(sources, *file, diags, prover);
  if (!parsed) {
    diags.print(err);
    return std::nullopt;
  }
  // The entries are chosen from the parsed fns' signatures, which need no types.
  std::optional<std::vector<std::string>> entries = choose_entries(options, *parsed, err);
  if (!entries) return std::nullopt;
  passes::Compilation c;
  c.module = std::move(*parsed);
  c.entries = std::move(*entries);
  bool ok = pipeline ? pipeline->run(c, ctx, instrument)
                     : passes::build_pipeline(options.target).run(c, ctx, instrument);
  diags.print(err);
  if (!ok) return std::nullopt;

  if (!options.quiet) {
    // Kernels per call, counted as --explain-fusion counts them (passes/KernelCount.h).
    passes::KernelCount kernels;
    for (const std::string& name : c.entries) {
      const ir::Module::Decl* d = c.module.find(name);
      if (!d || !d->fn) continue;
      kernels += passes::count_kernels(
          d->fn->body, [&](const std::string& callee) { return c.module.find(callee); });
    }
    size_t variants = 0, compiled = 0;
    for (const ir::Module::Decl& d : c.module.decls) {
      variants += d.prim && !d.prim->variant_of.empty() ? 1 : 0;
      compiled += d.prim && d.prim->body.defined() && d.prim->variant_of.empty() ? 1 : 0;
    }
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    err << "dscc: " << options.file << ": lowered " << c.entries.size() << " function"
        << (c.entries.size() == 1 ? "" : "s") << " to " << kernels.total() << " kernels per call ("
        << kernels.generated << " generated, " << kernels.library << " library calls"
        << (kernels.with_epilogue ? ", " + std::to_string(kernels.with_epilogue) + " with an epilogue" : "")
        << (variants ? ", " + std::to_string(variants) + " with a shape-bucket variant" : "")
        << (compiled < kernels.generated + kernels.with_epilogue
                ? "; " + std::to_string(compiled) + " distinct prims compiled" : "")
        << ") in "
        << static_cast<int>(ms) << " ms\n";
  }
  return c;
}

runtime::Manifest manifest_of(const passes::Compilation& c) {
  runtime::Manifest manifest;
  for (const ir::HostProgram& h : c.hosts)
    manifest.functions.push_back(cpu::describe_host_program(h));
  return manifest;
}

} // namespace dsc::dscc
