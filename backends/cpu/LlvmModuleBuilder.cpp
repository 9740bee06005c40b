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
#include "backends/cpu/CpuKernel.h"
#include "backends/cpu/HostCodegen.h"
#include "backends/cpu/TargetSelection.h"
#include "backends/cuda/DeviceCode.h"
#include "backends/llvm/KernelCodegen.h"

namespace dsc::cpu {

namespace {

void set_error(std::string* error, const std::string& message) {
  if (error) *error = message;
}

// Kernels of every prim of `m`: their symbols, by prim name.
bool emit_kernels(const ir::Module& m, llvm::Module& out, int index_bits,
                  std::map<std::string, std::string>* kernels, std::string* error) {
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
      kernel = emit_cpu_kernel(out, *decl.prim, symbol, index_bits);
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
    kernels->emplace(name, symbol);
  }
  return true;
}

// The module's CUDA kernels as runtime/HostABI.h's dsc_cuda_module (internal; the runtime
// fills in `loaded`): its images, its source and its name.
llvm::GlobalVariable* emit_cuda_module(llvm::Module& out, const cuda::DeviceCode& code,
                                       const std::string& name) {
  llvm::LLVMContext& ctx = out.getContext();
  llvm::Type* i32 = llvm::Type::getInt32Ty(ctx);
  llvm::Type* i64 = llvm::Type::getInt64Ty(ctx);
  llvm::PointerType* ptr = llvm::PointerType::getUnqual(ctx);
  auto bytes = [&](const std::string& data, bool terminate, const std::string& symbol) {
    llvm::Constant* init = llvm::ConstantDataArray::getString(ctx, data, terminate);
    auto* g = new llvm::GlobalVariable(out, init->getType(), true, llvm::GlobalValue::InternalLinkage,
                                       init, symbol);
    g->setAlignment(llvm::Align(64));
    return g;
  };
  llvm::StructType* image_type = llvm::StructType::get(ctx, {i32, i32, ptr, i64});
  std::vector<llvm::Constant*> images;
  for (size_t k = 0; k < code.images.size(); ++k) {
    const cuda::DeviceImage& image = code.images[k];
    llvm::GlobalVariable* data =
        bytes(image.data, image.is_ptx, "dsc_cuda_image." + std::to_string(k));
    const uint64_t size = image.data.size() + (image.is_ptx ? 1 : 0);
    images.push_back(llvm::ConstantStruct::get(
        image_type, {llvm::ConstantInt::get(i32, static_cast<uint64_t>(image.arch)),
                     llvm::ConstantInt::get(i32, image.is_ptx ? 1 : 0), data,
                     llvm::ConstantInt::get(i64, size)}));
  }
  llvm::ArrayType* images_type = llvm::ArrayType::get(image_type, images.size());
  auto* table = new llvm::GlobalVariable(out, images_type, true, llvm::GlobalValue::InternalLinkage,
                                         llvm::ConstantArray::get(images_type, images),
                                         "dsc_cuda_images");
  llvm::StructType* module_type = llvm::StructType::get(ctx, {ptr, i32, ptr, ptr, ptr});
  llvm::Constant* init = llvm::ConstantStruct::get(
      module_type, {bytes(name, true, "dsc_cuda_module.name"),
                    llvm::ConstantInt::get(i32, images.size()), table,
                    bytes(code.source, true, "dsc_cuda_source"), llvm::ConstantPointerNull::get(ptr)});
  return new llvm::GlobalVariable(out, module_type, false, llvm::GlobalValue::InternalLinkage, init,
                                  "dsc_cuda_module");
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

  std::map<std::string, std::string> kernels;
  std::optional<cuda::DeviceCode> device;
  GpuLaunches gpu;
  if (target.gpu) {
    std::string name;
    for (const ir::HostProgram& host : hosts) name += (name.empty() ? "" : ",") + host.name;
    device = cuda::compile_device_code(m, *target.gpu, name.empty() ? "dsc" : name, error);
    if (!device) return false;
    gpu.module = emit_cuda_module(*module, *device, name);
    gpu.launches = &device->launches;
  } else if (!emit_kernels(m, *module, target.index_bits, &kernels, error)) {
    return false;
  }

  std::set<std::string> exported;
  KernelLookup lookup = [&kernels](const std::string& prim) -> std::string {
    auto it = kernels.find(prim);
    return it == kernels.end() ? std::string() : it->second;
  };
  for (const ir::HostProgram& host : hosts) {
    llvm::Function* f = emit_host_function(*module, m, host, lookup, error, target.gpu ? &gpu : nullptr);
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
