#pragma once
// The CUDA backend's HostDevice (backends/cpu/HostDevice.h): the prims become CUDA C compiled
// by NVRTC (DeviceCode.h), embedded in the model as runtime/HostABI.h's dsc_cuda_module; a
// kernel step is a dsc_rt_cuda_launch with the grid and block the CUDA C emitter computed for
// the prim (evaluated from each call's symbols, and from the device's resident threads where
// the launch depends on them), a library step calls the CUDA routine (which takes the call
// first and returns a status), a copy is dsc_rt_cuda_copy and a scalar is read back with
// dsc_rt_cuda_read. Routines run no epilogue prim on the GPU.
//
// register_cuda_host_device() makes CUDA targets compile with it; a program that compiles for
// CUDA (dscc, the tests, the fuzzers) calls it once before compiling.

namespace dsc::cuda {

void register_cuda_host_device();

} // namespace dsc::cuda
