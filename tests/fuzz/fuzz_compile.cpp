// libFuzzer entry point, structure-aware: the bytes choose a random graph of ops
// (tests/unit/compiler/RandomGraph.h: maps, broadcasts, reductions, softmax and norms, reshape
// round trips, transposes, concat and slice, library matmuls), its shape (N, M in 1..24) and
// whether legalize fuses, and a where clause (none, bounds, N == M, ...); the program goes
// through the whole pipeline and the LLVM JIT and runs next to the reference interpreter on the
// same random inputs. A shape that violates the clause must be refused by both. A generated program is always
// valid, so a compile error is a crash; so is any output element that differs beyond the
// tolerance (the program and the difference are printed first). The same program is then lowered
// for CUDA and its kernels written as CUDA C (backends/cuda/CudaSource.h; not compiled: NVRTC
// is too slow for a fuzzer, and CudaSourceTest compiles every form the GPU schedule makes): a
// valid program must lower, and the emitter must take every kernel, else it is a crash too.
//
// Built by tools/scripts/fuzz.sh with the other targets (clang, -DDSC_FUZZ=ON, ASan+UBSan). Each
// input compiles a module with LLVM, so it runs tens of inputs a second, not thousands.

#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "backends/cuda/CudaSource.h"
#include "tests/unit/compiler/CompileUtil.h"
#include "tests/unit/compiler/RandomGraph.h"

namespace {

// Why `source` does not lower for CUDA or write as CUDA C, or "".
std::string cuda_failure(const std::string& source, bool fuse) {
  dsc::SourceManager sources;
  dsc::DiagnosticEngine diags(sources);
  dsc::symbolic::Prover prover;
  const uint32_t file = sources.add("fuzz.dsc", source);
  std::optional<dsc::ir::Module> m =
      dsc::lang::parse_module(sources, file, diags, dsc::testing::stdlib_options());
  dsc::passes::PassContext ctx{diags, prover, dsc::ir::cuda_target()};
  ctx.fuse = fuse;
  dsc::passes::Compilation c;
  bool lowered = false;
  if (m && !diags.has_errors()) {
    c.module = std::move(*m);
    c.entries = {"f"};
    lowered = dsc::testing::run_pipeline(c, ctx, "infer_shapes", "plan_memory");
  }
  const std::string errors = dsc::testing::diagnostic_lines(diags);
  if (!lowered || !errors.empty()) return errors.empty() ? "lowering failed without a diagnostic" : errors;
  std::string error;
  if (!dsc::cuda::emit_cuda_source(c.module, &error)) return "CUDA C: " + error;
  return "";
}

class BytesChoices : public dsc::testing::Choices {
public:
  explicit BytesChoices(FuzzedDataProvider& bytes) : bytes_(bytes) {}
  // Past the end of the bytes every choice is 0, so short inputs give small graphs.
  uint64_t below(uint64_t n) override { return bytes_.ConsumeIntegralInRange<uint64_t>(0, n - 1); }

private:
  FuzzedDataProvider& bytes_;
};

} // namespace

// The programs import nn: the stdlib of this source tree (unless DSC_SOURCE_DIR says otherwise).
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("DSC_SOURCE_DIR", DSC_FUZZ_SOURCE_DIR, 0);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace dsc::testing;
  FuzzedDataProvider bytes(data, size);
  const int64_t n = bytes.ConsumeIntegralInRange<int64_t>(1, 24);
  const int64_t m = bytes.ConsumeIntegralInRange<int64_t>(1, 24);
  const bool fuse = bytes.ConsumeBool();
  const uint64_t seed = bytes.ConsumeIntegral<uint64_t>();
  BytesChoices choices(bytes);
  const std::string source = random_graph_program(choices, /*where=*/true);
  CompiledProgram p = compile_program(source, "f", fuse);
  if (!p.errors.empty()) {
    std::fprintf(stderr, "fuzz_compile: a valid program did not compile:\n%s\n%s\n",
                 source.c_str(), p.errors.c_str());
    __builtin_trap();
  }
  NumericCase c{"fuzz", source, {"N", "M"}, 2, 1e-4};
  const std::string cuda = cuda_failure(source, fuse);
  if (!cuda.empty()) {
    std::fprintf(stderr, "fuzz_compile: a valid program did not compile for CUDA:\n%s\n%s\n",
                 source.c_str(), cuda.c_str());
    __builtin_trap();
  }
  std::mt19937_64 rng(seed);
  std::string mismatch = first_mismatch(c, p, {{"N", n}, {"M", m}}, rng, /*rejections_agree=*/true);
  if (!mismatch.empty()) {
    std::fprintf(stderr, "fuzz_compile: %s (%s):\n%s\n%s\n", fuse ? "fused" : "unfused",
                 ("N=" + std::to_string(n) + ", M=" + std::to_string(m)).c_str(), source.c_str(),
                 mismatch.c_str());
    __builtin_trap();
  }
  return 0;
}
