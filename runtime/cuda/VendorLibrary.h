#pragma once
// A vendor library of the CUDA side (cuBLAS, cuDNN) opened with dlopen from the first of its
// candidate names that opens, and its entry points looked up by name, so that nothing links
// it and a machine without it gets a message instead of a loader error.

#include <initializer_list>
#include <string>
#include <type_traits>

namespace dsc::runtime::cuda {

class VendorLibrary {
public:
  // The first of `candidates` that dlopen opens (RTLD_LOCAL, never closed). When none does,
  // error() is "<what> cannot be loaded (<hint>): <each dlerror>".
  VendorLibrary(std::initializer_list<const char*> candidates, const std::string& what,
                const std::string& hint);

  // *slot = the entry point `symbol`, or null; `required` ones missing set error() ("<name>
  // lacks <symbol>", the first one).
  template <typename F> void find(const char* symbol, F* slot, bool required = true) {
    static_assert(std::is_pointer_v<F>, "an entry point is a function pointer");
    void* address = lookup(symbol, required);
    *slot = reinterpret_cast<F>(address);
  }

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  // The candidate that opened ("libcudnn.so.9").
  const std::string& name() const { return name_; }

private:
  void* lookup(const char* symbol, bool required);

  void* handle_ = nullptr;
  std::string name_;
  std::string error_;
};

} // namespace dsc::runtime::cuda
