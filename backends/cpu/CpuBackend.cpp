#include "backends/cpu/CpuBackend.h"

#include <dlfcn.h>
#include <llvm/Support/Error.h>

#include <map>
#include <optional>

#include "backends/cpu/Jit.h"
#include "backends/cpu/LlvmFatalErrors.h"
#include "backends/cpu/LlvmModuleBuilder.h"
#include "backends/cpu/SharedLibraryBuilder.h"
#include "backends/cpu/TargetSelection.h"
#include "runtime/dsc_runtime.h"
#include "symbolic/Printer.h"

namespace dsc::cpu {

namespace {

std::string sanitize(const std::string& name) {
  std::string out = name;
  for (char& c : out) {
    const bool word =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!word) c = '_';
  }
  return out;
}

void set_error(std::string* error, const std::string& message) {
  if (error) *error = message;
}

runtime::TensorInfo tensor_info(std::string name, ir::DType dtype,
                                const std::vector<symbolic::Expr>& shape) {
  runtime::TensorInfo t;
  t.name = std::move(name);
  t.dtype = ir::dtype_name(dtype);
  for (const symbolic::Expr& d : shape)
    t.dims.push_back(d.defined() ? symbolic::to_string(d) : "?");
  return t;
}

// The device a target's compiled functions keep their tensors on: the runtime's device of the
// target kind (ir/TargetKinds.def names both).
bool manifest_device(const ir::Target& target, runtime::DeviceKind* out, std::string* error) {
  std::optional<runtime::DeviceKind> kind =
      runtime::device_kind_named(ir::target_kind_name(target.kind));
  if (!kind) {
    set_error(error, std::string("the runtime has no device for target ") +
                         ir::target_kind_name(target.kind));
    return false;
  }
  *out = *kind;
  return true;
}

// Fills in every host program's host_symbol and the target's device, adds the programs the
// manifest does not list, and checks that the rest agree with their programs.
bool complete_manifest(const std::vector<ir::HostProgram>& hosts, const ir::Target& target,
                       runtime::Manifest* manifest, std::string* error) {
  runtime::DeviceKind device;
  if (!manifest_device(target, &device, error)) return false;
  std::map<std::string, const ir::HostProgram*> by_name;
  for (const ir::HostProgram& h : hosts) {
    if (!by_name.emplace(h.name, &h).second) {
      set_error(error, "two host programs are named '" + h.name + "'");
      return false;
    }
  }
  std::map<std::string, bool> listed;
  for (runtime::FunctionInfo& fn : manifest->functions) {
    auto it = by_name.find(fn.name);
    if (it == by_name.end()) {
      set_error(error,
                "the manifest lists function '" + fn.name + "', but no host program has that name");
      return false;
    }
    const ir::HostProgram& h = *it->second;
    if (fn.params.size() != h.params.size() || fn.outputs.size() != h.outputs.size()) {
      set_error(error, "the manifest's function '" + fn.name + "' has " +
                           std::to_string(fn.params.size()) + " params and " +
                           std::to_string(fn.outputs.size()) + " outputs; its host program has " +
                           std::to_string(h.params.size()) + " and " +
                           std::to_string(h.outputs.size()));
      return false;
    }
    if (listed[fn.name]) {
      set_error(error, "the manifest lists function '" + fn.name + "' twice");
      return false;
    }
    listed[fn.name] = true;
    fn.host_symbol = host_symbol(fn.name);
  }
  for (const ir::HostProgram& h : hosts)
    if (!listed[h.name]) manifest->functions.push_back(describe_host_program(h));
  for (runtime::FunctionInfo& fn : manifest->functions) fn.device = device;
  return true;
}

// What every entry point does first: the target, the completed manifest, and the module built
// (with dsc_manifest when `embed_manifest`) and optimized when `optimize`.
struct Compilation {
  ResolvedTarget target;
  std::unique_ptr<llvm::TargetMachine> tm;
  runtime::Manifest manifest;
  LlvmModule llvm;
};

bool compile(const ir::Module& m, const std::vector<ir::HostProgram>& hosts,
             runtime::Manifest manifest, const ir::Target& options, bool embed_manifest,
             bool optimize, Compilation* out, std::string* error) {
  if (!resolve_target(options, &out->target, error)) return false;
  if (!complete_manifest(hosts, options, &manifest, error)) return false;
  out->tm = create_target_machine(out->target, error);
  if (!out->tm) return false;
  const std::string json = embed_manifest ? runtime::to_json(manifest) : std::string();
  if (!build_llvm_module(m, hosts, *out->tm, out->target, embed_manifest ? &json : nullptr,
                         &out->llvm, error))
    return false;
  if (optimize) optimize_llvm_module(*out->llvm.module, *out->tm, out->target.opt_level);
  out->manifest = std::move(manifest);
  return true;
}

// What a fatal LLVM error names: the entry functions being compiled.
std::string compiled_names(const std::vector<ir::HostProgram>& hosts) {
  std::string names;
  for (const ir::HostProgram& h : hosts)
    names += (names.empty() ? "'" : ", '") + h.name + "'";
  return names.empty() ? "the module's kernels" : names;
}

} // namespace

std::string host_symbol(const std::string& fn_name) {
  return "dsc_host_" + sanitize(fn_name);
}

std::string kernel_symbol(const std::string& prim_name) {
  return "dsc_kernel_" + sanitize(prim_name);
}

runtime::FunctionInfo describe_host_program(const ir::HostProgram& program) {
  runtime::FunctionInfo info;
  info.name = program.name;
  info.host_symbol = host_symbol(program.name);
  // The device is the target's; complete_manifest sets it.
  for (const ir::Buffer& p : program.params)
    info.params.push_back(tensor_info(p.name, p.dtype, p.shape));
  for (size_t k = 0; k < program.outputs.size(); ++k) {
    // The Output buffer with index k is what the caller gets; fall back on the listed buffer.
    const ir::HostBuffer* out = nullptr;
    for (const ir::HostBuffer& b : program.buffers)
      if (b.storage == ir::HostBuffer::Storage::Output && b.index == static_cast<int>(k)) out = &b;
    const int id = program.outputs[k];
    if (!out && id >= 0 && static_cast<size_t>(id) < program.buffers.size())
      out = &program.buffers[static_cast<size_t>(id)];
    std::string name = "output" + std::to_string(k);
    info.outputs.push_back(out ? tensor_info(name, out->dtype, out->shape)
                               : tensor_info(name, ir::DType::F32, {}));
    if (out && out->updated_in_place) {
      const ir::HostBuffer& root = program.buffers[static_cast<size_t>(ir::alias_root(program, id))];
      if (root.storage == ir::HostBuffer::Storage::Param) info.outputs.back().updates_param = root.index;
    }
  }
  info.where_clauses = program.where_clauses;
  info.arena_bytes = program.arena_bytes.defined() ? symbolic::to_string(program.arena_bytes) : "0";
  info.peak_bytes = program.peak_bytes.defined() ? symbolic::to_string(program.peak_bytes) : "0";
  return info;
}

std::unique_ptr<runtime::Model> jit_compile(const ir::Module& m,
                                            const std::vector<ir::HostProgram>& hosts,
                                            runtime::Manifest manifest,
                                            const ir::Target& options, std::string* error) {
  ResolvedTarget target;
  if (!resolve_target(options, &target, error)) return nullptr;
  if (!complete_manifest(hosts, options, &manifest, error)) return nullptr;
  std::unique_ptr<runtime::Model> model;
  guard_llvm_fatal_errors(
      compiled_names(hosts),
      [&] {
        // The optimizer and ORC's code generator use the same machine description.
        llvm::orc::JITTargetMachineBuilder jtmb = jit_target_machine_builder(target);
        llvm::Expected<std::unique_ptr<llvm::TargetMachine>> tm = jtmb.createTargetMachine();
        if (!tm) {
          set_error(error, "LLVM could not create a target machine for " + target.cpu + ": " +
                               llvm::toString(tm.takeError()));
          return false;
        }
        LlvmModule built;
        if (!build_llvm_module(m, hosts, **tm, target, nullptr, &built, error)) return false;
        optimize_llvm_module(*built.module, **tm, target.opt_level);
        // The ThreadSafeModule takes the module and its context in the order it destroys them.
        llvm::orc::ThreadSafeModule module(std::move(built.module), std::move(built.context));
        model = jit_model(std::move(jtmb), std::move(module), std::move(manifest), error);
        return model != nullptr;
      },
      error);
  return model;
}

bool build_shared_library(const ir::Module& m, const std::vector<ir::HostProgram>& hosts,
                          runtime::Manifest manifest, const ir::Target& options,
                          const std::string& out_path, std::string* error) {
  return guard_llvm_fatal_errors(
      compiled_names(hosts),
      [&] {
        Compilation c;
        if (!compile(m, hosts, std::move(manifest), options, true, true, &c, error)) return false;
        return emit_shared_library(*c.llvm.module, *c.tm, out_path, runtime_library_dir(), error);
      },
      error);
}

std::string emit_llvm_ir(const ir::Module& m, const std::vector<ir::HostProgram>& hosts,
                         runtime::Manifest manifest, const ir::Target& options, bool optimized,
                         std::string* error) {
  std::string text;
  guard_llvm_fatal_errors(
      compiled_names(hosts),
      [&] {
        Compilation c;
        if (!compile(m, hosts, std::move(manifest), options, true, optimized, &c, error))
          return false;
        text = llvm_module_text(*c.llvm.module);
        return true;
      },
      error);
  return text;
}

uint64_t models_compiled() {
  return llvm_modules_built();
}

std::string runtime_library_dir() {
  // Where the libdsc_runtime.so this process loaded lies (the build tree's, or an installed
  // Python package's), else where the build put it.
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&dsc_last_error), &info) && info.dli_fname) {
    std::string path = info.dli_fname;
    size_t slash = path.rfind('/');
    if (slash != std::string::npos && slash > 0) return path.substr(0, slash);
  }
  return DSC_RUNTIME_LIBRARY_DIR;
}

std::string runtime_include_dir() {
  return DSC_RUNTIME_INCLUDE_DIR;
}

} // namespace dsc::cpu
