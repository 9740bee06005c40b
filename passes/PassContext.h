#pragma once
// What every pass gets besides what it transforms: where to report, the shared prover (whose
// cache then serves the whole pipeline), and the target being compiled for.

#include <string>

#include "ir/Target.h"
#include "passes/FusionLog.h"
#include "support/Diagnostics.h"
#include "symbolic/Prover.h"

namespace dsc::passes {

struct PipelineOptions;

struct PassContext {
  DiagnosticEngine& diags;
  symbolic::Prover& prover;
  ir::Target target = ir::cpu_target();
  // legalize fuses ops into kernels (passes/legalize/Fuse.h) unless this is off.
  bool fuse = true;
  // The library routine of ir/LibraryRoutines.def that f32 matmuls call; null for the
  // target's preferred one (dsc's own GEMM on the CPU, cuBLAS on CUDA). `--gemm=blas` picks
  // OpenBLAS's.
  const ir::LibraryRoutine* gemm_routine = nullptr;
  // Where legalize records its fusion decisions, when someone asks (`--explain-fusion`).
  FusionLog* fusion_log = nullptr;
  // The instrumentation of the pipeline running now (Pipeline::run sets it), for a pass that
  // runs other passes (inline_calls runs infer_shapes and collect_facts), so that
  // --print-after and --verify-each see those runs too.
  const PipelineOptions* instrumentation = nullptr;
};

} // namespace dsc::passes
