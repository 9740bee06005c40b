#pragma once
// A module's GPU-scheduled prims (passes/GpuSchedule.h) as one CUDA C translation unit, and
// how the host launches each.
//
// Each prim becomes `extern "C" __global__ void <kernel>(inputs..., outputs..., symbols...)`
// (element pointers, then `long long` symbols in ir::prim_signature_symbols order), read as:
//   - the top `block_x` or `block_rows` loop is blockIdx.x: the grid is its extent;
//   - a `thread_x` loop runs iterations threadIdx.x, threadIdx.x + blockDim.x, ...; the block
//     has clamp(roundup32(E), 32, 256) threads for E the extent of the first `thread_x` loop
//     (256 when E depends on a loop variable);
//   - except in a row kernel: a `block_rows` loop, every `thread_x` loop at the top of its
//     body, all over one range of length E given by the symbols. Its block
//     holds threadIdx.y rows of blockDim.x threads each, T = clamp(roundup32(ceildiv(E, 8)),
//     32, 256) threads per row and 8 rows when that is one warp (else 1); while E <= 8 *
//     blockDim.x each row loop is unrolled 8 times, with the buffers the row's loops share kept
//     in registers (KernelWriter::RowPlan), else the loops run as above. A variant chosen by
//     occupancy (as in TSCompiler): when the R rows would keep fewer than half the device's
//     resident threads busy (2 R T < kResidentThreadsSymbol: a decode step's few rows), a row
//     gets clamp(roundup32(E), 32, 256) threads instead, one element each where E <= 256;
//   - a local declared outside a `thread_x` loop and updated inside it by `t = t op e` (op
//     +, *, min, max) is accumulated per thread from op's identity, then combined over the
//     block (warp shuffles, then one value per warp through shared memory) into t;
//   - statements outside `thread_x` loops run on every thread (all compute the same values),
//     except stores, which thread 0 makes;
//   - a barrier (__syncthreads) comes before any block-level statement that reads or writes a
//     buffer written since the last barrier.
// The same text, compiled with -DDSC_CUDA_EMULATOR and the runtime's emulator header, is what
// the block emulator runs (runtime/cuda/Emulator.h): each kernel also gets an
// `extern "C" void dsc_emu_<kernel>(void* const* buffers, const int64_t* symbols)` there.
//
// f16 and bf16 are not supported yet: a prim that uses them is an error naming it.

#include <map>
#include <optional>
#include <string>

#include "ir/Module.h"
#include "symbolic/Expr.h"

namespace dsc::cuda {

// The symbol launch expressions use for the device's resident threads (multiprocessors times
// threads each; runtime/HostABI.h's dsc_rt_cuda_resident_threads), which the host asks the
// runtime for at each launch that needs it. A prim with a symbol of that name is refused.
inline constexpr const char* kResidentThreadsSymbol = "dsc_resident_threads";

// How the host launches one prim's kernel; the expressions are over the prim's signature
// symbols and kResidentThreadsSymbol.
struct KernelLaunch {
  std::string kernel; // the CUDA symbol
  symbolic::Expr grid_x;
  symbolic::Expr block_x;
  symbolic::Expr block_y = 1;
};

struct CudaSource {
  std::string text;
  std::map<std::string, KernelLaunch> launches; // by prim name
};

// The kernel symbol of a prim: "dsc_" + its name, other characters than [A-Za-z0-9_] as '_'.
std::string kernel_name(const std::string& prim_name);

// Every prim of `m`; nullopt with *error set ("prim 'p': ...") when one cannot be compiled for
// CUDA (not GPU-scheduled, an f16 buffer, a local combined over threads without an
// associative update, a barrier inside a thread loop).
std::optional<CudaSource> emit_cuda_source(const ir::Module& m, std::string* error);

} // namespace dsc::cuda
