#pragma once
// The CUDA block emulator: a Device (Device.h) that runs the CUDA C of a dsc_cuda_module on the
// CPU, for machines without a GPU (DSC_CUDA_EMULATE=1) and for tests.
//
// It is a library of its own, libdsc_cuda_emulator.so, not part of libdsc_runtime.so: the
// runtime loads it with dlopen when DSC_CUDA_EMULATE=1 (from $DSC_CUDA_EMULATOR, else beside
// libdsc_runtime.so) and calls its C entry point dsc_cuda_emulator_create; tests of the
// emulator itself link it.
//
// Device memory is host memory, copies are memcpy, cublas.sgemm is dsc_rt_gemm_f32_strided,
// the cublaslt.sgemm_* routines that and apply_epilogue_loops, and cudnn.conv2d is
// conv2d_loops (each after its library's plan, so that what the library would refuse fails
// here too). On its first launch a module's `source` is compiled by the host C++ compiler
// ($DSC_CUDA_EMULATOR_CXX, else `c++`) with emulator/dsc_cuda_emulator.h, whose text the
// runtime embeds, force-included, and loaded with dlopen; module->loaded then holds it for
// the life of the process. A launch calls the library's dsc_emu_launch, which runs the blocks
// one after another, one fiber per GPU thread, with barriers, warp shuffles and shared memory
// as on a GPU: a missing __syncthreads() gives wrong results here too, and barrier divergence
// is an error (the header says how). Launches of one module run one at a time; different
// modules run in parallel.
//
// The emulator reports a device of one multiprocessor holding 2048 threads (resident_threads),
// as small as GPUs come, so that small test shapes already cross the host's launch rules that
// compare a grid with the device (a row kernel's threads per row, CudaSource.h).
//
// DSC_CUDA_EMULATOR_KEEP=1 keeps each module's source and library in its temporary directory
// (the error of a failed compile names it either way).

#include <memory>
#include <string>

#include "runtime/cuda/Device.h"

namespace dsc::runtime::cuda {

// Never null: the compiler is looked for at the first launch. `error` is for symmetry with the
// GPU's constructor.
std::unique_ptr<Device> make_emulator_device(std::string* error);

} // namespace dsc::runtime::cuda
