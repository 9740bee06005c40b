#include "backends/cpu/Jit.h"

#include <llvm/ExecutionEngine/Orc/Core.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/Shared/ExecutorAddress.h>
#include <llvm/Support/Error.h>

#include <mutex>
#include <unordered_map>
#include <utility>

#include "runtime/HostABI.h"

namespace dsc::cpu {

namespace {

// What ORC reports besides a lookup's own error, such as the names of unresolved symbols.
struct SessionLog {
  std::mutex mutex;
  std::string text;
};

class JitModel final : public runtime::Model {
public:
  JitModel(std::unique_ptr<llvm::orc::LLJIT> jit, runtime::Manifest manifest,
           std::unordered_map<std::string, dsc_host_function> functions)
      : jit_(std::move(jit)), manifest_(std::move(manifest)), functions_(std::move(functions)) {}

  const runtime::Manifest& manifest() const override { return manifest_; }

  dsc_host_function host_function(const std::string& name) const override {
    auto it = functions_.find(name);
    return it == functions_.end() ? nullptr : it->second;
  }

private:
  std::unique_ptr<llvm::orc::LLJIT> jit_; // owns the code the function pointers point into
  runtime::Manifest manifest_;
  std::unordered_map<std::string, dsc_host_function> functions_;
};

template <typename F>
std::pair<const char*, llvm::orc::ExecutorAddr> runtime_symbol(const char* name, F* f) {
  return {name, llvm::orc::ExecutorAddr::fromPtr(f)};
}

// The runtime functions compiled code calls (runtime/HostABIFunctions.def), at their addresses
// here.
llvm::orc::SymbolMap runtime_symbols(llvm::orc::LLJIT& jit) {
  const std::pair<const char*, llvm::orc::ExecutorAddr> symbols[] = {
#define DSC_HOST_ABI_FUNCTION(name) runtime_symbol(#name, &name),
#include "runtime/HostABIFunctions.def"
  };
  llvm::orc::SymbolMap map;
  for (const auto& [name, address] : symbols)
    map[jit.mangleAndIntern(name)] = llvm::orc::ExecutorSymbolDef(
        address, llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable);
  return map;
}

std::string with_log(std::string message, SessionLog& log) {
  std::lock_guard<std::mutex> lock(log.mutex);
  if (!log.text.empty()) message += "\n" + log.text;
  while (!message.empty() && message.back() == '\n')
    message.pop_back();
  return message;
}

} // namespace

std::unique_ptr<runtime::Model> jit_model(llvm::orc::JITTargetMachineBuilder jtmb,
                                          llvm::orc::ThreadSafeModule module,
                                          runtime::Manifest manifest, std::string* error) {
  auto fail = [error](const std::string& message) -> std::unique_ptr<runtime::Model> {
    if (error) *error = message;
    return nullptr;
  };
  llvm::Expected<std::unique_ptr<llvm::orc::LLJIT>> created =
      llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(jtmb)).create();
  if (!created) return fail("could not start the LLVM JIT: " + llvm::toString(created.takeError()));
  std::unique_ptr<llvm::orc::LLJIT> jit = std::move(*created);

  auto log = std::make_shared<SessionLog>();
  jit->getExecutionSession().setErrorReporter([log](llvm::Error e) {
    std::string text = llvm::toString(std::move(e));
    std::lock_guard<std::mutex> lock(log->mutex);
    log->text += text + "\n";
  });

  // The main JITDylib is searched before LLJIT's process-symbols one (a generator over this
  // process's symbol table, for libc and libm), so these definitions win.
  if (llvm::Error e =
          jit->getMainJITDylib().define(llvm::orc::absoluteSymbols(runtime_symbols(*jit))))
    return fail("JIT: could not define the runtime's symbols: " + llvm::toString(std::move(e)));

  if (llvm::Error e = jit->addIRModule(std::move(module)))
    return fail(with_log("JIT: could not add the module: " + llvm::toString(std::move(e)), *log));

  std::unordered_map<std::string, dsc_host_function> functions;
  for (const runtime::FunctionInfo& fn : manifest.functions) {
    llvm::Expected<llvm::orc::ExecutorAddr> address = jit->lookup(fn.host_symbol);
    if (!address)
      return fail(with_log("JIT: could not compile host function " + fn.host_symbol + " of '" +
                               fn.name + "': " + llvm::toString(address.takeError()),
                           *log));
    functions.emplace(fn.name, address->toPtr<dsc_host_function>());
  }
  return std::make_unique<JitModel>(std::move(jit), std::move(manifest), std::move(functions));
}

} // namespace dsc::cpu
