#include "backends/cpu/LlvmModuleBuilder.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/OptimizationLevel.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <map>
#include <optional>
#include <set>

#include "backends/cpu/CpuBackend.h"
#include "backends/cpu/HostCodegen.h"
#include "backends/cpu/TargetSelection.h"
#include "backends/llvm/KernelCodegen.h"

namespace dsc::cpu {

namespace {

void set_error(std::string* error, const std::string& message) {
  if (error) *error = message;
}

} // namespace

namespace {
std::atomic<uint64_t> modules_built{0};
} // namespace

uint64_t llvm_modules_built() {
  return modules_built.load();
}

bool build_llvm_module(const ir::Module& m, const std::vector<ir::HostProgram>& hosts,
                       llvm::TargetMachine& tm, const ResolvedTarget& target,
                       const std::string* manifest_json, LlvmModule* out, std::string* error) {
  ++modules_built;
  auto context = std::make_unique<llvm::LLVMContext>();
  auto module = std::make_unique<llvm::Module>("dsc", *context);
  module->setTargetTriple(tm.getTargetTriple().str());
  module->setDataLayout(tm.createDataLayout());

  // The device's code for the prims (HostDevice.h), then the host functions that run it.
  std::unique_ptr<HostDevice> device = make_host_device(target.device, error);
  if (!device) return false;
  std::string name;
  for (const ir::HostProgram& host : hosts) name += (name.empty() ? "" : ",") + host.name;
  if (!device->begin_module(*module, m, name.empty() ? "dsc" : name, error)) return false;

  std::set<std::string> exported;
  for (const ir::HostProgram& host : hosts) {
    llvm::Function* f = emit_host_function(*module, m, host, *device, error);
    if (!f) return false;
    exported.insert(f->getName().str());
  }
  if (manifest_json) {
    llvm::Constant* text = llvm::ConstantDataArray::getString(*context, *manifest_json, true);
    auto* manifest =
        new llvm::GlobalVariable(*module, text->getType(), /*isConstant=*/true,
                                 llvm::GlobalValue::ExternalLinkage, text, "dsc_manifest");
    manifest->setVisibility(llvm::GlobalValue::DefaultVisibility);
    exported.insert("dsc_manifest");
  }

  const std::string cpu = tm.getTargetCPU().str();
  const std::string features = tm.getTargetFeatureString().str();
  for (llvm::Function& f : *module) {
    if (f.isDeclaration()) continue;
    if (!exported.count(f.getName().str())) f.setLinkage(llvm::GlobalValue::InternalLinkage);
    if (!f.hasFnAttribute("target-cpu")) f.addFnAttr("target-cpu", cpu);
    if (!f.hasFnAttribute("target-features") && !features.empty())
      f.addFnAttr("target-features", features);
    if (target.vector_width != 0)
      f.addFnAttr("prefer-vector-width", std::to_string(target.vector_width));
  }
  for (llvm::GlobalVariable& g : module->globals())
    if (!g.isDeclaration() && !g.hasLocalLinkage() && !exported.count(g.getName().str()))
      g.setLinkage(llvm::GlobalValue::InternalLinkage);

  std::string problems;
  llvm::raw_string_ostream os(problems);
  if (llvm::verifyModule(*module, &os)) {
    set_error(error, "the generated LLVM IR is invalid (LLVM verifier): " + os.str());
    return false;
  }
  out->module = std::move(module);
  out->context = std::move(context);
  return true;
}

void optimize_llvm_module(llvm::Module& module, llvm::TargetMachine& tm, int opt_level) {
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = opt_level >= 2;
  tuning.SLPVectorization = opt_level >= 2;
  optimize_llvm_module(module, tm, opt_level, tuning);
}

void optimize_llvm_module(llvm::Module& module, llvm::TargetMachine& tm, int opt_level,
                          const llvm::PipelineTuningOptions& tuning) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder builder(&tm, tuning);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);

  static const llvm::OptimizationLevel* const kLevels[] = {
      &llvm::OptimizationLevel::O0, &llvm::OptimizationLevel::O1, &llvm::OptimizationLevel::O2,
      &llvm::OptimizationLevel::O3};
  const llvm::OptimizationLevel& level = *kLevels[std::clamp(opt_level, 0, 3)];
  llvm::ModulePassManager passes = opt_level <= 0 ? builder.buildO0DefaultPipeline(level)
                                                  : builder.buildPerModuleDefaultPipeline(level);
  passes.run(module, mam);
}

std::string llvm_module_text(const llvm::Module& module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os, nullptr);
  return os.str();
}

} // namespace dsc::cpu
