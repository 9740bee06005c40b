#include "passes/legalize/TargetSupport.h"

#include <functional>
#include <optional>
#include <string>

#include "ir/Functor.h"

namespace dsc::passes::lowering {

namespace {

// A prim written by hand may use loop kinds the target does not run (`block_x` on the CPU).
void check_loop_kinds(const ir::PrimFunc& prim, PassContext& ctx) {
  struct Loops : ir::IRVisitor {
    const ir::PrimFunc& prim;
    PassContext& ctx;
    Loops(const ir::PrimFunc& p, PassContext& c) : prim(p), ctx(c) {}
    void visit_node(const ir::For* f) override {
      if (!ctx.target.runs(f->for_kind))
        ctx.diags.error(f->loc, "prim '" + prim.name + "' has a " + ir::for_kind_name(f->for_kind) +
                                    " loop, which the " + ir::target_kind_name(ctx.target.kind) +
                                    " target does not run");
      ir::IRVisitor::visit_node(f);
    }
  } loops(prim, ctx);
  loops.visit(prim.body);
}

// What uses a dtype the target does not compute: the dtype, what has it, and where.
struct Uncomputed {
  ir::DType dtype;
  std::string what;
  SourceLoc loc;
};

// The first buffer, allocation, local or cast of `prim` whose dtype `target` does not compute.
std::optional<Uncomputed> first_uncomputed(const ir::PrimFunc& prim, const ir::Target& target) {
  auto computes = [&](ir::DType d) { return target.arithmetic(d) != ir::Arithmetic::Unsupported; };
  for (const std::vector<ir::Buffer>* buffers : {&prim.inputs, &prim.outputs})
    for (const ir::Buffer& b : *buffers)
      if (!computes(b.dtype)) return Uncomputed{b.dtype, "buffer '" + b.name + "'", b.loc};
  struct Body : ir::IRVisitor {
    std::function<bool(ir::DType)> computes;
    std::optional<Uncomputed> found;

  protected:
    void note(ir::DType d, const std::string& what, SourceLoc loc) {
      if (!found && !computes(d)) found = Uncomputed{d, what, loc};
    }
    void visit_node(const ir::Alloc* a) override {
      note(a->dtype, "allocation '" + a->name + "'", a->loc);
      ir::IRVisitor::visit_node(a);
    }
    void visit_node(const ir::LocalDecl* d) override {
      note(d->dtype, "local '" + d->name + "'", d->loc);
      ir::IRVisitor::visit_node(d);
    }
    void visit_node(const ir::Cast* c) override {
      note(c->dtype, "a cast", c->loc);
      ir::IRVisitor::visit_node(c);
    }
  } body;
  body.computes = computes;
  body.visit(prim.body);
  return body.found;
}

void refuse(const std::string& what, ir::DType dtype, SourceLoc loc, PassContext& ctx) {
  ctx.diags.error(loc, what + " is " + ir::dtype_name(dtype) + ", which the " +
                           ir::target_kind_name(ctx.target.kind) + " target does not compute (it computes " +
                           ctx.target.computed_dtype_names() + ")");
}

} // namespace

void check_target_support(const ir::PrimFunc& prim, PassContext& ctx) {
  check_loop_kinds(prim, ctx);
  if (std::optional<Uncomputed> u = first_uncomputed(prim, ctx.target))
    refuse("prim '" + prim.name + "': " + u->what, u->dtype, u->loc.valid() ? u->loc : prim.loc, ctx);
}

void check_target_dtypes(const ir::Function& f, const ir::Module& generated, PassContext& ctx) {
  for (const ir::Module::Decl& g : generated.decls) {
    if (!g.prim) continue;
    std::optional<Uncomputed> u = first_uncomputed(*g.prim, ctx.target);
    if (!u) continue;
    // At the parameter of that dtype, where there is one; else at the function.
    for (const ir::VarRef& p : f.params)
      if (p->type.kind == ir::Type::Kind::Tensor && p->type.dtype == u->dtype) {
        refuse("'" + p->name + "'", u->dtype, p->loc.valid() ? p->loc : f.loc, ctx);
        return;
      }
    refuse("function '" + f.name + "' (prim '" + g.prim->name + "'): " + u->what, u->dtype, f.loc, ctx);
    return;
  }
}

} // namespace dsc::passes::lowering
