// The CPU's HostDevice (HostDevice.h), and the registry of the others: kernels are functions
// of the same LLVM module, called directly; library routines are plain calls; copies are
// memcpy; every buffer is host memory.
#include "backends/cpu/HostDevice.h"

#include <exception>
#include <map>
#include <mutex>

#include "backends/cpu/CpuBackend.h"
#include "backends/cpu/CpuKernel.h"
#include "backends/llvm/KernelCodegen.h"

namespace dsc::cpu {

namespace {

void set_error(std::string* error, const std::string& message) {
  if (error) *error = message;
}

class CpuHostDevice final : public HostDevice {
public:
  explicit CpuHostDevice(int index_bits) : index_bits_(index_bits) {}

  ir::TargetKind kind() const override { return ir::TargetKind::Cpu; }

  // A kernel per prim of `m` (CpuKernel.h), by prim name.
  bool begin_module(llvm::Module& out, const ir::Module& m, const std::string&,
                    std::string* error) override {
    for (const ir::Module::Decl& decl : m.decls) {
      if (!decl.prim) continue;
      const std::string& name = decl.prim->name;
      const std::string symbol = kernel_symbol(name);
      if (out.getNamedValue(symbol)) {
        set_error(error, "prim '" + name + "': its kernel symbol " + symbol +
                             " is taken (by another prim whose name differs only in punctuation)");
        return false;
      }
      llvm::Function* kernel = nullptr;
      try {
        kernel = emit_cpu_kernel(out, *decl.prim, symbol, index_bits_);
      } catch (const std::exception& e) {
        set_error(error, "prim '" + name + "': " + e.what());
        return false;
      }
      if (!kernel) {
        set_error(error, "prim '" + name + "': the CPU backend could not compile it");
        return false;
      }
      std::string problems = llvmgen::verify_kernel(*kernel);
      if (!problems.empty()) {
        set_error(error, "prim '" + name +
                             "': the generated LLVM IR is invalid (LLVM verifier): " + problems);
        return false;
      }
      kernels_.emplace(name, symbol);
    }
    return true;
  }

  void run_kernel(HostBuilder& b, const KernelCall& k) const override {
    llvm::Function* kernel = kernel_function(b, k.step->callee);
    if (!kernel) {
      b.fail(k.what + ": it has no compiled kernel");
      return;
    }
    b.ir().CreateCall(llvm::FunctionCallee(kernel->getFunctionType(), kernel), {k.buffers, k.ints});
  }

  void call_routine(HostBuilder& b, const ir::LibraryRoutine& routine,
                    std::vector<llvm::Value*> args, std::vector<llvm::Type*> types) const override {
    b.ir().CreateCall(b.runtime(routine.runtime_function, b.ir().getVoidTy(), types), args);
  }

  void copy(HostBuilder& b, llvm::Value* dst, llvm::Value* src, llvm::Value* bytes) const override {
    b.ir().CreateMemCpy(dst, llvm::MaybeAlign(1), src, llvm::MaybeAlign(1), bytes);
  }

  llvm::Value* read_scalar(HostBuilder& b, llvm::Value* pointer, unsigned bytes,
                           const std::string& what) const override {
    return b.ir().CreateLoad(b.ir().getIntNTy(bytes * 8), pointer, what);
  }

  llvm::Function* epilogue_kernel(HostBuilder& b, const std::string& name) const override {
    return kernel_function(b, name);
  }

private:
  // The compiled kernel of prim `name`, declared in the module where the host function needs
  // it; null when the module has none.
  llvm::Function* kernel_function(HostBuilder& b, const std::string& name) const {
    auto it = kernels_.find(name);
    if (it == kernels_.end()) return nullptr;
    llvm::PointerType* ptr = llvm::PointerType::getUnqual(b.module().getContext());
    llvm::FunctionType* type = llvm::FunctionType::get(b.ir().getVoidTy(), {ptr, ptr}, false);
    llvm::Function* kernel = b.module().getFunction(it->second);
    if (!kernel)
      kernel = llvm::Function::Create(type, llvm::Function::ExternalLinkage, it->second, b.module());
    return kernel->getFunctionType() == type ? kernel : nullptr;
  }

  int index_bits_;
  std::map<std::string, std::string> kernels_; // prim name -> kernel symbol
};

struct Registry {
  std::mutex mutex;
  std::map<ir::TargetKind, HostDeviceFactory> factories;
};

Registry& registry() {
  static Registry* r = new Registry(); // never destroyed: compiles may run at exit
  return *r;
}

} // namespace

void register_host_device(ir::TargetKind kind, HostDeviceFactory make) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.factories[kind] = make;
}

std::unique_ptr<HostDevice> make_host_device(const ir::Target& target, std::string* error) {
  if (target.kind == ir::TargetKind::Cpu)
    return std::make_unique<CpuHostDevice>(target.index_bits);
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.factories.find(target.kind);
  if (it == r.factories.end()) {
    set_error(error, std::string("no backend for target ") + ir::target_kind_name(target.kind) +
                         " is part of this program (its host device is not registered)");
    return nullptr;
  }
  return it->second(target);
}

} // namespace dsc::cpu
