#include "backends/cpu/TargetSelection.h"

#include <llvm/ADT/StringMap.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetOptions.h>
#include <llvm/TargetParser/Host.h>

#include <algorithm>
#include <mutex>
#include <set>
#include <vector>

namespace dsc::cpu {

namespace {

std::vector<std::string> split_features(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    std::string item = list.substr(start, comma - start);
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (!item.empty()) out.push_back(item);
    start = comma + 1;
  }
  return out;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) {
    if (!out.empty()) out += ',';
    out += s;
  }
  return out;
}

} // namespace

void initialize_native_target() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
}

bool resolve_target(const ir::Target& options, ResolvedTarget* out, std::string* error) {
  initialize_native_target();
  if (options.kind != ir::TargetKind::Cpu) {
    // The host code runs on this machine's CPU; the kernels are the device's (HostDevice.h).
    ir::Target host = ir::cpu_target();
    host.opt_level = options.opt_level;
    if (!resolve_target(host, out, error)) return false;
    out->device = options;
    return true;
  }
  if (options.opt_level < 0 || options.opt_level > 3) {
    if (error) *error = "opt_level must be 0 to 3, not " + std::to_string(options.opt_level);
    return false;
  }
  const int width = options.vector_bits;
  if (width != 0 && width != 128 && width != 256 && width != 512) {
    if (error) *error = "vector_width must be 0, 128, 256 or 512, not " + std::to_string(width);
    return false;
  }
  if (options.index_bits != 32 && options.index_bits != 64) {
    if (error) *error = "index_bits must be 32 or 64, not " + std::to_string(options.index_bits);
    return false;
  }
  ResolvedTarget t;
  t.device = options;
  t.vector_width = width;
  t.index_bits = options.index_bits;
  t.triple = llvm::sys::getProcessTriple();
  t.opt_level = options.opt_level;
  constexpr llvm::CodeGenOptLevel kLevels[] = {
      llvm::CodeGenOptLevel::None, llvm::CodeGenOptLevel::Less, llvm::CodeGenOptLevel::Default,
      llvm::CodeGenOptLevel::Aggressive};
  t.codegen_level = kLevels[options.opt_level];

  std::string lookup_error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(t.triple, lookup_error);
  if (!target) {
    if (error) *error = "no LLVM target for " + t.triple + ": " + lookup_error;
    return false;
  }
  // An MCSubtargetInfo for the bare triple knows the CPU and feature names, without the
  // warnings LLVM prints for unknown ones.
  std::unique_ptr<llvm::MCSubtargetInfo> info(target->createMCSubtargetInfo(t.triple, "", ""));
  if (!info) {
    if (error) *error = "LLVM has no subtarget information for " + t.triple;
    return false;
  }
  std::set<std::string> known_features;
  for (const llvm::SubtargetFeatureKV& kv : info->getAllProcessorFeatures())
    known_features.insert(kv.Key);

  std::vector<std::string> features;
  if (options.cpu == "native") {
    t.cpu = llvm::sys::getHostCPUName().str();
    const llvm::StringMap<bool> host = llvm::sys::getHostCPUFeatures();
    for (const auto& entry : host)
      if (known_features.count(entry.getKey().str()))
        features.push_back((entry.getValue() ? "+" : "-") + entry.getKey().str());
    // With AVX-512 here, dsc's GEMM runs 512-bit multiply-adds in every model that multiplies
    // matrices, so the core's AVX-512 clock is paid anyway; kernels vectorized 512 wide then
    // cost nothing more, and exp-bound ones (softmax) run faster. LLVM's own preference on
    // recent Xeons is 256. Measured in bench/cpu/README.md.
    auto avx512 = host.find("avx512f");
    if (width == 0 && avx512 != host.end() && avx512->second) t.vector_width = 512;
    std::sort(features.begin(), features.end(),
              [](const std::string& a, const std::string& b) { return a.substr(1) < b.substr(1); });
  } else if (options.cpu == "generic") {
    t.cpu = "x86-64";
  } else {
    t.cpu = options.cpu;
  }
  if (!info->isCPUStringValid(t.cpu)) {
    if (error) *error = "unknown CPU '" + t.cpu + "' for " + t.triple;
    return false;
  }
  for (const std::string& f : split_features(options.features)) {
    if ((f[0] != '+' && f[0] != '-') || !known_features.count(f.substr(1))) {
      if (error) *error = "unknown CPU feature '" + f + "' (features are written +name or -name)";
      return false;
    }
    features.push_back(f);
  }
  t.features = join(features);
  *out = std::move(t);
  return true;
}

std::unique_ptr<llvm::TargetMachine> create_target_machine(const ResolvedTarget& target,
                                                           std::string* error) {
  initialize_native_target();
  std::string lookup_error;
  const llvm::Target* llvm_target = llvm::TargetRegistry::lookupTarget(target.triple, lookup_error);
  if (!llvm_target) {
    if (error) *error = "no LLVM target for " + target.triple + ": " + lookup_error;
    return nullptr;
  }
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> tm(
      llvm_target->createTargetMachine(target.triple, target.cpu, target.features, options,
                                       llvm::Reloc::PIC_, std::nullopt, target.codegen_level));
  if (!tm && error) *error = "LLVM could not create a target machine for " + target.cpu;
  return tm;
}

llvm::orc::JITTargetMachineBuilder jit_target_machine_builder(const ResolvedTarget& target) {
  llvm::orc::JITTargetMachineBuilder jtmb{llvm::Triple(target.triple)};
  jtmb.setCPU(target.cpu);
  jtmb.setFeatures(target.features);
  jtmb.setRelocationModel(llvm::Reloc::PIC_);
  jtmb.setCodeGenOptLevel(target.codegen_level);
  // Compiled code has no thread-locals; ORC's default of emulated TLS only costs.
  jtmb.getOptions().EmulatedTLS = false;
  return jtmb;
}

} // namespace dsc::cpu
