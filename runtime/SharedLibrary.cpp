// load_shared_library (Model.h): a `.so` built by `dscc build`, opened with dlopen.
#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <map>

#include "runtime/Model.h"

namespace dsc::runtime {

namespace {

bool fail(std::string* error, std::string message) {
  if (error) *error = std::move(message);
  return false;
}

std::string dl_error() {
  const char* e = dlerror();
  return e ? e : "unknown error";
}

class SharedLibraryModel : public Model {
public:
  ~SharedLibraryModel() override {
    if (handle_) dlclose(handle_);
  }

  const Manifest& manifest() const override { return manifest_; }
  dsc_host_function host_function(const std::string& name) const override {
    auto it = functions_.find(name);
    return it == functions_.end() ? nullptr : it->second;
  }

  bool load(const std::string& path, std::string* error) {
    struct stat st {};
    if (stat(path.c_str(), &st) != 0)
      return fail(error, "cannot load model '" + path + "': " + std::strerror(errno));
    if (!S_ISREG(st.st_mode))
      return fail(error, "cannot load model '" + path + "': not a regular file");
    // Without a slash dlopen searches the library path instead of opening the file.
    std::string file = path.find('/') == std::string::npos ? "./" + path : path;
    dlerror();
    handle_ = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_)
      return fail(error, "cannot load model '" + path + "' as a shared library: " + dl_error());
    dlerror();
    void* symbol = dlsym(handle_, "dsc_manifest");
    if (!symbol)
      return fail(error, "'" + path + "' is not a dsc model: it has no dsc_manifest symbol");
    std::string text;
    if (!read_manifest_text(symbol, &text))
      return fail(error, "'" + path +
                             "' has an invalid manifest: dsc_manifest is not a "
                             "NUL-terminated string");
    std::string reason;
    if (!from_json(text, &manifest_, &reason))
      return fail(error, "'" + path + "' has an invalid manifest: " + reason);
    for (const FunctionInfo& f : manifest_.functions) {
      dlerror();
      void* fn = dlsym(handle_, f.host_symbol.c_str());
      if (!fn)
        return fail(error, "'" + path + "' has no host function '" + f.host_symbol +
                               "' for its function '" + f.name + "'");
      functions_[f.name] = reinterpret_cast<dsc_host_function>(fn);
    }
    return true;
  }

private:
  // dsc_manifest is a `const char[]`; its ELF symbol size bounds the read, so that a symbol
  // that is not NUL-terminated cannot make us read past it.
  static bool read_manifest_text(const void* symbol, std::string* out) {
    Dl_info info{};
    void* entry = nullptr;
    size_t limit = 0;
    if (dladdr1(symbol, &info, &entry, RTLD_DL_SYMENT) && entry)
      limit = static_cast<const ElfW(Sym)*>(entry)->st_size;
    const char* text = static_cast<const char*>(symbol);
    if (limit == 0) { // no size known: trust the terminator
      *out = text;
      return true;
    }
    const void* nul = std::memchr(text, '\0', limit);
    if (!nul) return false;
    out->assign(text, static_cast<const char*>(nul));
    return true;
  }

  void* handle_ = nullptr;
  Manifest manifest_;
  std::map<std::string, dsc_host_function> functions_;
};

} // namespace

std::unique_ptr<Model> load_shared_library(const std::string& path, std::string* error) {
  auto model = std::make_unique<SharedLibraryModel>();
  if (!model->load(path, error)) return nullptr;
  return model;
}

} // namespace dsc::runtime
