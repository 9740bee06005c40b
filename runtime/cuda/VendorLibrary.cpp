#include "runtime/cuda/VendorLibrary.h"

#include <dlfcn.h>

namespace dsc::runtime::cuda {

VendorLibrary::VendorLibrary(std::initializer_list<const char*> candidates, const std::string& what,
                             const std::string& hint) {
  std::string tried;
  for (const char* name : candidates) {
    dlerror();
    handle_ = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (handle_) {
      name_ = name;
      return;
    }
    const char* reason = dlerror();
    tried += std::string(tried.empty() ? "" : "; ") + (reason ? reason : name);
  }
  error_ = what + " cannot be loaded (" + hint + "): " + tried;
}

void* VendorLibrary::lookup(const char* symbol, bool required) {
  if (!handle_) return nullptr;
  void* address = dlsym(handle_, symbol);
  if (!address && required && error_.empty()) error_ = name_ + " lacks " + symbol;
  return address;
}

} // namespace dsc::runtime::cuda
