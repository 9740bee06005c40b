#pragma once
// The device seam of the host compiler. Host programs (ir/HostProgram.h) always compile to
// CPU code (HostCodegen.h); what differs with the device their tensors live on is asked of a
// HostDevice, and the host emitter never branches on the target:
//   - begin_module: the device's code for the module's prims, before any host function (the
//     CPU's kernels as LLVM functions of the same module; CUDA's compiled by NVRTC and
//     embedded as a dsc_cuda_module);
//   - run_kernel: a Kernel step (a call of the CPU kernel; a launch on CUDA);
//   - call_routine: a Library step's call of its routine's runtime function;
//   - copy, read_scalar: moving bytes within the device and reading a scalar back to the host;
//   - epilogue_kernel: the host-callable kernel a library routine runs as its epilogue (the
//     CPU's GEMM calls it; a device whose routines take no epilogue prim has none).
// Allocation and synchronization are the runtime's (dsc_rt_arena and dsc_rt_output allocate on
// the manifest's device; a call on CUDA synchronizes after its host function returns).
//
// The CPU's device is built in. Another backend registers its own for its target kind
// (register_host_device; backends/cuda/CudaHostDevice.h), so this library never links it.

#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <memory>
#include <string>
#include <vector>

#include "ir/HostProgram.h"
#include "ir/LibraryRoutine.h"
#include "ir/Module.h"
#include "ir/Target.h"
#include "symbolic/Expr.h"

namespace dsc::cpu {

// What the host emitter offers a device while it emits a step of one host function.
class HostBuilder {
public:
  virtual llvm::IRBuilder<>& ir() = 0;
  virtual llvm::Module& module() = 0;
  // The host function's dsc_call* argument, which the runtime's device functions take first.
  virtual llvm::Value* call() = 0;
  // The runtime function `name` (runtime/HostABI.h), declared in the module.
  virtual llvm::FunctionCallee runtime(const char* name, llvm::Type* result,
                                       llvm::ArrayRef<llvm::Type*> params) = 0;
  // Returns 1 from the host function unless `status` (an i32) is 0; `label` names the blocks.
  virtual void check_status(llvm::Value* status, const std::string& label) = 0;
  // The value of `e` from the symbols bound so far; bind() makes one more visible until
  // unbind() (a launch shape's device-dependent symbol).
  virtual llvm::Value* eval(const symbolic::Expr& e, const std::string& what) = 0;
  virtual void bind(const std::string& symbol, llvm::Value* value) = 0;
  virtual void unbind(const std::string& symbol) = 0;
  // A stack array in the entry block, and a constant C string.
  virtual llvm::Value* stack_array(llvm::Type* element, size_t n, const std::string& name) = 0;
  virtual llvm::Constant* string_constant(const std::string& s) = 0;
  // Records a compile-time error of the host program (the first one wins).
  virtual void fail(const std::string& message) = 0;
  virtual bool ok() const = 0;

protected:
  ~HostBuilder() = default;
};

// A Kernel step as the emitter prepared it: the prim, its signature's symbols with their
// values (the step's), and the arrays of buffer pointers and symbol values the kernel ABI
// (runtime/HostABI.h) takes.
struct KernelCall {
  const ir::HostStep* step;
  std::vector<std::string> symbols;
  llvm::Value* buffers;
  size_t num_buffers;
  llvm::Value* ints;
  std::string what; // "the call of prim 'f_add_0'", for errors
};

class HostDevice {
public:
  virtual ~HostDevice() = default;
  // The target kind whose host code this device serves; the Library steps it calls must be
  // routines of that kind.
  virtual ir::TargetKind kind() const = 0;
  // Emits the device's code for `m`'s prims into `out`; `name` names the module in errors.
  virtual bool begin_module(llvm::Module& out, const ir::Module& m, const std::string& name,
                            std::string* error) = 0;
  virtual void run_kernel(HostBuilder& b, const KernelCall& k) const = 0;
  // runtime_function(buffer pointers..., then the int64 scalars or the address of their
  // descriptor, as the routine's scalars_by says): `args` and `types` in that order.
  virtual void call_routine(HostBuilder& b, const ir::LibraryRoutine& routine,
                            std::vector<llvm::Value*> args,
                            std::vector<llvm::Type*> types) const = 0;
  virtual void copy(HostBuilder& b, llvm::Value* dst, llvm::Value* src,
                    llvm::Value* bytes) const = 0;
  // The value of a scalar buffer of `bytes` bytes (1, 4 or 8), as an integer of that width.
  virtual llvm::Value* read_scalar(HostBuilder& b, llvm::Value* pointer, unsigned bytes,
                                   const std::string& what) const = 0;
  // The kernel of prim `name` that a library routine calls as its epilogue, or null when
  // this device has none (its routines take no epilogue prim).
  virtual llvm::Function* epilogue_kernel(HostBuilder& b, const std::string& name) const = 0;
};

// Makes the device for a target's compilation (one per LLVM module).
using HostDeviceFactory = std::unique_ptr<HostDevice> (*)(const ir::Target& target);

// Makes `kind`'s targets use `make`'s devices (a backend calls it once, before compiling).
void register_host_device(ir::TargetKind kind, HostDeviceFactory make);

// The device for `target`: the CPU's, or the one registered for its kind; null with `*error`
// set when no backend registered one.
std::unique_ptr<HostDevice> make_host_device(const ir::Target& target, std::string* error);

} // namespace dsc::cpu
