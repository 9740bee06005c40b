#include "ir/Module.h"

namespace dsc::ir {

const std::string& Module::Decl::name() const {
  if (fn) return fn->name;
  if (prim) return prim->name;
  return ext->name;
}

SourceLoc Module::Decl::loc() const {
  if (fn) return fn->loc;
  if (prim) return prim->loc;
  return ext->loc;
}

const Module::Decl* Module::find(std::string_view name) const {
  for (const Decl& d : decls)
    if (d.name() == name) return &d;
  return nullptr;
}

Ref<Function> Module::function(std::string_view name) const {
  const Decl* d = find(name);
  return d ? d->fn : nullptr;
}

Ref<PrimFunc> Module::prim(std::string_view name) const {
  const Decl* d = find(name);
  return d ? d->prim : nullptr;
}

Ref<ExternFunc> Module::ext(std::string_view name) const {
  const Decl* d = find(name);
  return d ? d->ext : nullptr;
}

Ref<Function> Module::imported_function(std::string_view qualified_name) const {
  size_t dot = qualified_name.find('.');
  if (dot == std::string_view::npos) return nullptr;
  std::string_view prefix = qualified_name.substr(0, dot);
  for (const Import& i : imports)
    if (i.name == prefix && i.module) return i.module->function(qualified_name.substr(dot + 1));
  return nullptr;
}

} // namespace dsc::ir
