#include "passes/ShareKernels.h"

#include <map>
#include <string>
#include <vector>

#include "ir/Functor.h"
#include "ir/Printer.h"
#include "ir/StructuralEqual.h"
#include "passes/IRUtil.h"

namespace dsc::passes {

namespace {

// The prim with its buffers named by position and its locals and allocations by first
// appearance, under a fixed name: what two prims must share to be one kernel.
class Canonical : public ir::IRMutator {
public:
  Ref<ir::PrimFunc> of(const ir::PrimFunc& p) {
    auto* out = new ir::PrimFunc();
    out->name = "kernel";
    for (const ir::Buffer& b : p.inputs)
      out->inputs.push_back(renamed(b, "in"));
    for (const ir::Buffer& b : p.outputs)
      out->outputs.push_back(renamed(b, "out"));
    out->where = p.where;
    out->body = mutate(p.body);
    return Ref<ir::PrimFunc>(out);
  }

protected:
  ir::PrimExpr mutate_node(const ir::Load* node, const ir::PrimExpr& self) override {
    ir::PrimExpr e = ir::IRMutator::mutate_node(node, self);
    const auto* load = e.as<ir::Load>();
    return ir::Load::make(load->dtype, name(load->buffer, "local"), load->indices, load->loc);
  }
  ir::PrimExpr mutate_node(const ir::LocalRef* node, const ir::PrimExpr&) override {
    return ir::LocalRef::make(node->dtype, name(node->name, "local"), node->loc);
  }
  ir::Stmt mutate_node(const ir::Store* node, const ir::Stmt& self) override {
    ir::Stmt s = ir::IRMutator::mutate_node(node, self);
    const auto* store = static_cast<const ir::Store*>(s.get());
    return ir::Store::make(name(store->buffer, "local"), store->indices, store->value, store->loc);
  }
  ir::Stmt mutate_node(const ir::LocalDecl* node, const ir::Stmt& self) override {
    ir::Stmt s = ir::IRMutator::mutate_node(node, self);
    const auto* decl = static_cast<const ir::LocalDecl*>(s.get());
    return ir::LocalDecl::make(name(decl->name, "local"), decl->dtype, decl->is_mutable, decl->init,
                               decl->loc);
  }
  ir::Stmt mutate_node(const ir::Assign* node, const ir::Stmt& self) override {
    ir::Stmt s = ir::IRMutator::mutate_node(node, self);
    const auto* assign = static_cast<const ir::Assign*>(s.get());
    return ir::Assign::make(name(assign->name, "local"), assign->value, assign->loc);
  }
  ir::Stmt mutate_node(const ir::Alloc* node, const ir::Stmt&) override {
    return ir::Alloc::make(name(node->name, "local"), node->dtype, node->shape, node->scope, node->loc);
  }

private:
  ir::Buffer renamed(const ir::Buffer& b, const char* prefix) {
    ir::Buffer out = b;
    out.name = name(b.name, prefix);
    return out;
  }
  const std::string& name(const std::string& original, const char* prefix) {
    auto [it, fresh] = names_.emplace(original, std::string());
    if (fresh) it->second = prefix + std::to_string(names_.size() - 1);
    return it->second;
  }
  std::map<std::string, std::string> names_;
};

// The extern's printed form without its name: equal text is equal structure (ir/Printer.h).
std::string extern_key(const ir::ExternFunc& e) {
  const std::string text = ir::print_extern(e);
  const size_t at = text.find(e.name + "(");
  return at == std::string::npos ? text : text.substr(at + e.name.size());
}

// Renames calls in graph code.
class RenameCalls : public ir::IRMutator {
public:
  explicit RenameCalls(const std::map<std::string, std::string>& to) : to_(to) {}

protected:
  ir::Expr mutate_node(const ir::Call* node, const ir::Expr& self) override {
    ir::Expr e = ir::IRMutator::mutate_node(node, self);
    auto it = to_.find(node->callee);
    if (it == to_.end()) return e;
    const auto* call = e.as<ir::Call>();
    return ir::Call::make(it->second, call->args, call->kwargs, call->type, call->loc);
  }

private:
  const std::map<std::string, std::string>& to_;
};

} // namespace

SharedKernels share_kernels(Compilation& c) {
  SharedKernels shared;
  std::map<std::string, std::string> to; // a dropped prim or extern -> the one kept

  // Prims: grouped by their canonical text, confirmed by structural equality.
  std::map<std::string, std::vector<std::pair<std::string, Ref<ir::PrimFunc>>>> prims;
  for (const ir::Module::Decl& d : c.module.decls) {
    if (!d.prim || !d.prim->body.defined()) continue;
    Ref<ir::PrimFunc> canonical = Canonical().of(*d.prim);
    auto& group = prims[ir::print_prim(*canonical)];
    bool merged = false;
    for (const auto& [kept, form] : group) {
      if (!ir::structural_equal(*form, *canonical)) continue;
      to[d.prim->name] = kept;
      merged = true;
      break;
    }
    if (!merged) group.emplace_back(d.prim->name, canonical);
  }
  shared.prims_merged = to.size();

  // Externs: their epilogues renamed first, so that a layer's externs agree.
  std::map<std::string, std::string> externs; // key -> the extern kept
  for (ir::Module::Decl& d : c.module.decls) {
    if (!d.ext) continue;
    if (auto it = to.find(d.ext->epilogue); it != to.end()) {
      auto* ext = new ir::ExternFunc();
      const ir::ExternFunc& old = *d.ext;
      ext->name = old.name;
      ext->params = old.params;
      ext->ret_type = old.ret_type;
      ext->where = old.where;
      ext->symbol = old.symbol;
      ext->attributes = old.attributes;
      ext->views = old.views;
      ext->result_view = old.result_view;
      ext->epilogue = it->second;
      ext->epilogue_first_row = old.epilogue_first_row;
      ext->loc = old.loc;
      d.ext = Ref<ir::ExternFunc>(ext);
    }
    auto [kept, fresh] = externs.emplace(extern_key(*d.ext), d.ext->name);
    if (!fresh) {
      to[d.ext->name] = kept->second;
      ++shared.externs_merged;
    }
  }
  if (to.empty()) return shared;

  std::erase_if(c.module.decls, [&](const ir::Module::Decl& d) {
    return (d.prim || d.ext) && to.count(d.name());
  });
  RenameCalls rename(to);
  for (ir::Module::Decl& d : c.module.decls) {
    if (!d.fn) continue;
    ir::Expr body = rename.mutate(d.fn->body);
    if (body.same_as(d.fn->body)) continue;
    d.fn = rebuild_function(*d.fn, d.fn->ret_type, std::move(body), d.fn->facts);
  }
  return shared;
}

} // namespace dsc::passes
