#include "lang/Frontend.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>

#include "lang/Parse.h"
#include "lang/Resolve.h"
#include "support/File.h"

namespace dsc::lang {

namespace {

namespace fs = std::filesystem;

// A stable key for a file, so that a module imported twice is loaded once and a cycle is seen.
std::string file_key(const std::string& path) {
  std::error_code ec;
  fs::path canonical = fs::weakly_canonical(path, ec);
  return ec ? path : canonical.string();
}

class Loader {
public:
  Loader(SourceManager& sources, DiagnosticEngine& diags, std::vector<std::string> dirs,
         std::vector<std::string>* unresolved)
      : sources_(sources), diags_(diags), dirs_(std::move(dirs)), unresolved_(unresolved) {}

  std::optional<ir::Module> load(uint32_t file) {
    std::string key = file_key(sources_.name(file));
    stack_.push_back(key);
    std::optional<ir::Module> m = load_unguarded(file);
    stack_.pop_back();
    return m;
  }

private:
  std::optional<ir::Module> load_unguarded(uint32_t file) {
    std::optional<ast::Module> tree = parse_ast(sources_, file, diags_);
    if (!tree) return std::nullopt;
    ImportedModules imports;
    bool imports_ok = true;
    for (const ast::Decl& d : tree->decls) {
      if (d.kind != ast::DeclKind::Import || imports.count(d.name.name)) continue;
      std::shared_ptr<const ir::Module> m = import(d);
      imports_ok = imports_ok && m != nullptr;
      imports[d.name.name] = std::move(m);
    }
    // Only the top-level file keeps going; an import must resolve completely.
    std::vector<std::string>* unresolved = stack_.size() == 1 ? unresolved_ : nullptr;
    std::optional<ir::Module> m = resolve_module(*tree, imports, diags_, unresolved);
    if (!imports_ok) return std::nullopt;
    return m;
  }

  std::shared_ptr<const ir::Module> import(const ast::Decl& d) {
    const std::string& name = d.name.name;
    std::string path;
    for (const std::string& dir : dirs_) {
      std::string candidate = (fs::path(dir) / (name + ".dsc")).string();
      std::error_code ec;
      if (fs::is_regular_file(candidate, ec)) {
        path = candidate;
        break;
      }
    }
    if (path.empty()) {
      Diagnostic& diag = diags_.error(d.name.loc, "cannot find module '" + name + "'");
      if (dirs_.empty()) {
        diag.notes.push_back({SourceLoc{}, "there is no directory to search; set DSC_STDLIB_PATH"});
      } else {
        std::string searched;
        for (const std::string& dir : dirs_)
          searched += (searched.empty() ? "" : ", ") + dir;
        diag.notes.push_back({SourceLoc{}, "looked for " + name + ".dsc in: " + searched});
      }
      return nullptr;
    }
    std::string key = file_key(path);
    for (size_t i = 0; i < stack_.size(); ++i) {
      if (stack_[i] != key) continue;
      std::string cycle;
      for (size_t j = i; j < stack_.size(); ++j)
        cycle += fs::path(stack_[j]).filename().string() + " -> ";
      diags_.error(d.name.loc, "import cycle: " + cycle + name + ".dsc");
      return nullptr;
    }
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
    std::string error;
    std::optional<std::string> text = read_file(path, &error);
    if (!text) {
      diags_.error(d.name.loc, "cannot read '" + path + "': " + error);
      return nullptr;
    }
    uint32_t file = sources_.add(path, std::move(*text));
    std::optional<ir::Module> m = load(file);
    std::shared_ptr<const ir::Module> shared =
        m ? std::make_shared<const ir::Module>(std::move(*m)) : nullptr;
    cache_[key] = shared;
    return shared;
  }

  SourceManager& sources_;
  DiagnosticEngine& diags_;
  std::vector<std::string> dirs_;
  std::vector<std::string>* unresolved_; // the top-level file keeps going when set
  std::map<std::string, std::shared_ptr<const ir::Module>> cache_; // null: failed to load
  std::vector<std::string> stack_;                                 // files being loaded
};

} // namespace

std::vector<std::string> default_stdlib_dirs() {
  std::vector<std::string> dirs;
  auto add = [&](std::string dir) {
    if (dir.empty()) return;
    for (const std::string& d : dirs)
      if (d == dir) return;
    dirs.push_back(std::move(dir));
  };
  if (const char* env = std::getenv("DSC_STDLIB_PATH")) {
    std::string list = env;
    size_t start = 0;
    while (start <= list.size()) {
      size_t colon = list.find(':', start);
      if (colon == std::string::npos) colon = list.size();
      add(list.substr(start, colon - start));
      start = colon + 1;
    }
  }
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path bin = exe.parent_path();
    add((bin / ".." / "share" / "dsc" / "stdlib").lexically_normal().string());
    add((bin / ".." / "stdlib").lexically_normal().string());
  }
#ifdef DSC_SOURCE_DIR
  add(std::string(DSC_SOURCE_DIR) + "/stdlib");
#endif
  return dirs;
}

std::optional<ir::Module> parse_module(SourceManager& sources, uint32_t file,
                                       DiagnosticEngine& diags, const FrontendOptions& options) {
  std::vector<std::string> dirs =
      options.stdlib_dirs.empty() ? default_stdlib_dirs() : options.stdlib_dirs;
  size_t errors_before = diags.error_count();
  std::optional<ir::Module> m =
      Loader(sources, diags, std::move(dirs), options.unresolved).load(file);
  if (diags.error_count() != errors_before && !options.unresolved) return std::nullopt;
  return m;
}

std::optional<ir::Module> parse_file(const std::string& path, SourceManager& sources,
                                     DiagnosticEngine& diags, const FrontendOptions& options) {
  std::string error;
  std::optional<std::string> text = read_file(path, &error);
  if (!text) {
    diags.error(SourceLoc{}, "cannot read '" + path + "': " + error);
    return std::nullopt;
  }
  uint32_t file = sources.add(path, std::move(*text));
  return parse_module(sources, file, diags, options);
}

} // namespace dsc::lang
