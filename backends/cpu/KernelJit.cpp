#include "backends/cpu/KernelJit.h"

#include <map>
#include <mutex>

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/DiagnosticPrinter.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include "backends/cpu/CpuKernel.h"
#include "backends/llvm/KernelCodegen.h"
#include "backends/cpu/LlvmModuleBuilder.h"
#include "runtime/HostABI.h"

namespace dsc::cpu {

namespace {

std::string kernel_symbol(const std::string& prim) { return "dsc_kernel_" + prim; }

std::string message(llvm::Error e) {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << e;
  return out;
}

} // namespace

struct KernelJit::Impl {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::map<std::string, KernelFunction> kernels;
  std::string emitted, optimized, diagnostics;
};

KernelJit::KernelJit() : impl_(std::make_unique<Impl>()) {}
KernelJit::~KernelJit() = default;

std::unique_ptr<KernelJit> KernelJit::compile(const std::vector<Ref<ir::PrimFunc>>& prims, std::string& error,
                                              const KernelJitOptions& options) {
  static std::once_flag init;
  std::call_once(init, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  std::unique_ptr<KernelJit> self(new KernelJit());
  Impl& impl = *self->impl_;

  llvm::Expected<llvm::orc::JITTargetMachineBuilder> jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb) {
    error = message(jtmb.takeError());
    return nullptr;
  }
  jtmb->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> tm = jtmb->createTargetMachine();
  if (!tm) {
    error = message(tm.takeError());
    return nullptr;
  }

  auto context = std::make_unique<llvm::LLVMContext>();
  context->setDiagnosticHandlerCallBack(
      [](const llvm::DiagnosticInfo* info, void* out) {
        if (info->getSeverity() != llvm::DS_Warning && info->getSeverity() != llvm::DS_Error) return;
        std::string text;
        llvm::raw_string_ostream os(text);
        llvm::DiagnosticPrinterRawOStream printer(os);
        info->print(printer);
        *static_cast<std::string*>(out) += text + "\n";
      },
      &impl.diagnostics, /*RespectFilters=*/true);
  auto module = std::make_unique<llvm::Module>("dsc_kernels", *context);
  module->setDataLayout((*tm)->createDataLayout());
  module->setTargetTriple((*tm)->getTargetTriple().str());
  for (const Ref<ir::PrimFunc>& p : prims) {
    KernelProblem problem = check_kernel(*p);
    if (!problem.message.empty()) {
      error = problem.message;
      return nullptr;
    }
    llvm::Function* f = emit_cpu_kernel(*module, *p, kernel_symbol(p->name), options.index_bits);
    std::string problems = llvmgen::verify_kernel(*f);
    if (!problems.empty()) {
      error = "kernel '" + p->name + "' does not verify:\n" + problems;
      return nullptr;
    }
  }
  impl.emitted = llvm_module_text(*module);
  optimize_llvm_module(*module, **tm, options.opt_level, llvm::PipelineTuningOptions());
  {
    std::string problems;
    llvm::raw_string_ostream os(problems);
    if (llvm::verifyModule(*module, &os)) {
      error = "optimized module does not verify:\n" + problems;
      return nullptr;
    }
  }
  impl.optimized = llvm_module_text(*module);

  llvm::Expected<std::unique_ptr<llvm::orc::LLJIT>> jit =
      llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(*jtmb)).create();
  if (!jit) {
    error = message(jit.takeError());
    return nullptr;
  }
  impl.jit = std::move(*jit);
  llvm::orc::JITDylib& lib = impl.jit->getMainJITDylib();
  llvm::orc::SymbolMap runtime;
  runtime[impl.jit->mangleAndIntern("dsc_rt_parallel_for")] = {
      llvm::orc::ExecutorAddr::fromPtr(&dsc_rt_parallel_for), llvm::JITSymbolFlags::Exported};
  if (llvm::Error e = lib.define(llvm::orc::absoluteSymbols(std::move(runtime)))) {
    error = message(std::move(e));
    return nullptr;
  }
  auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      impl.jit->getDataLayout().getGlobalPrefix());
  if (!process) {
    error = message(process.takeError());
    return nullptr;
  }
  lib.addGenerator(std::move(*process));
  if (llvm::Error e = impl.jit->addIRModule(llvm::orc::ThreadSafeModule(std::move(module), std::move(context)))) {
    error = message(std::move(e));
    return nullptr;
  }
  for (const Ref<ir::PrimFunc>& p : prims) {
    llvm::Expected<llvm::orc::ExecutorAddr> addr = impl.jit->lookup(kernel_symbol(p->name));
    if (!addr) {
      error = message(addr.takeError());
      return nullptr;
    }
    impl.kernels[p->name] = addr->toPtr<KernelFunction>();
  }
  return self;
}

KernelFunction KernelJit::kernel(const std::string& name) const {
  auto it = impl_->kernels.find(name);
  return it == impl_->kernels.end() ? nullptr : it->second;
}

const std::string& KernelJit::emitted_ir() const { return impl_->emitted; }
const std::string& KernelJit::optimized_ir() const { return impl_->optimized; }
const std::string& KernelJit::diagnostics() const { return impl_->diagnostics; }

} // namespace dsc::cpu
