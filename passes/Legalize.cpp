#include "passes/Legalize.h"

#include <set>

#include "ir/Functor.h"
#include "ir/OpRegistry.h"
#include "ir/Printer.h"
#include "passes/IRUtil.h"
#include "passes/legalize/Context.h"
#include "passes/legalize/Families.h"
#include "passes/legalize/Materialize.h"

namespace dsc::passes {

namespace {

using lowering::FnContext;

bool is_atom(const ir::Expr& e) {
  return e.is<ir::Var>() || e.is<ir::Literal>();
}

class FnLegalizer {
public:
  FnLegalizer(ir::Module& generated, std::set<std::string>& taken, const ir::Function& f,
              PassContext& pass, const ir::Module& in)
      : ctx_(generated, taken, f, pass), f_(f), pass_(pass), in_(in) {}

  Ref<ir::Function> run() {
    const ir::Block* body = f_.body.as<ir::Block>();
    std::vector<ir::Binding> out;
    for (const ir::Binding& b : body->bindings) {
      ctx_.set_loc(b.loc.valid() ? b.loc : b.value->loc);
      if (!supported(b)) return nullptr;
      ir::Expr value = lower(b.value);
      if (!value.defined()) return nullptr;
      for (ir::Binding& inserted : ctx_.take_inserted())
        out.push_back(std::move(inserted));
      out.push_back(ir::Binding{b.vars, value, b.has_asserted_type, b.loc});
    }
    if (!flat_result(body->result)) {
      pass_.diags.error(body->result->loc, "legalize: the result of '" + f_.name +
                                               "' is not a var or a tuple of vars (run "
                                               "inline_calls first)");
      return nullptr;
    }
    return rebuild_function(f_, f_.ret_type,
                            ir::Block::make(std::move(out), body->result, body->loc), f_.facts);
  }

private:
  static bool flat_result(const ir::Expr& e) {
    if (const ir::Tuple* t = e.as<ir::Tuple>()) {
      for (const ir::Expr& f : t->fields)
        if (!flat_result(f)) return false;
      return true;
    }
    if (const ir::GetItem* g = e.as<ir::GetItem>()) return flat_result(g->tuple);
    return is_atom(e);
  }

  // Values whose size depends on the data, and graph-level if, are beyond the CPU backend.
  bool supported(const ir::Binding& b) {
    if (b.value.is<ir::If>()) {
      ctx_.unsupported("graph-level 'if'");
      return false;
    }
    std::set<std::string> symbols;
    for (const ir::VarRef& v : b.vars)
      add_symbols(v->type, symbols);
    add_symbols(b.value->type, symbols);
    for (const std::string& s : symbols) {
      if (ctx_.param_symbols().count(s)) continue;
      ctx_.unsupported("a value whose size depends on the data ('" + s +
                       "' is bound at run time, not by a parameter)");
      return false;
    }
    return true;
  }

  ir::Expr lower(const ir::Expr& value) {
    const ir::Call* call = value.as<ir::Call>();
    if (!call) return value; // vars, tuples and their fields stay
    const ir::OpDef* op = ir::find_op(call->callee);
    if (!op) {
      const ir::Module::Decl* d = in_.find(call->callee);
      if (d && (d->prim || d->ext)) return value;
      pass_.diags.error(ctx_.loc(), "legalize: the call to '" + call->callee +
                                        "' was not inlined (run inline_calls first)");
      return ir::Expr();
    }
    std::vector<ir::Expr> operands = call->args;
    for (const ir::KeywordArg& k : call->kwargs)
      operands.push_back(k.value);
    for (const ir::Expr& a : operands) {
      bool ok = is_atom(a) || a.is<ir::ShapeExpr>() || a.is<ir::StringImm>();
      if (const ir::ListExpr* l = a.as<ir::ListExpr>()) {
        ok = true;
        for (const ir::Expr& item : l->items)
          ok = ok && (is_atom(item) || ir::literal_value(item).defined());
      }
      if (ok || ir::literal_value(a).defined()) continue;
      pass_.diags.error(ctx_.loc(), "legalize: an operand of '" + call->callee +
                                        "' is not a var or a literal (run inline_calls first)");
      return ir::Expr();
    }
    if (op->is_view() && !call->args.empty() && !call->args[0].is<ir::Var>()) {
      // A view of a literal: a filled tensor.
      ir::Expr fill =
          ir::Call::make(ir::op_name(ir::OpId::cast),
                         {call->args[0], ir::StringImm::make(ir::dtype_name(value->type.dtype))},
                         {}, value->type, call->loc);
      return lower(fill);
    }
    std::optional<lowering::ComputeDesc> desc = lowering::describe(*call, ctx_);
    if (!desc) return ir::Expr();
    return lowering::materialize(std::move(*desc), ctx_);
  }

  FnContext ctx_;
  const ir::Function& f_;
  PassContext& pass_;
  const ir::Module& in_;
};

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

} // namespace

ir::Module legalize(const ir::Module& inlined, PassContext& ctx) {
  ir::Module out;
  out.imports = inlined.imports;
  std::set<std::string> taken;
  for (const ir::Module::Decl& d : inlined.decls)
    taken.insert(d.name());
  for (const ir::Module::Decl& d : inlined.decls) {
    if (d.prim) check_loop_kinds(*d.prim, ctx);
    if (!d.fn) {
      out.decls.push_back(d);
      continue;
    }
    if (is_generic(*d.fn)) continue;
    ir::Module generated;
    Ref<ir::Function> f = FnLegalizer(generated, taken, *d.fn, ctx, inlined).run();
    for (const ir::Module::Decl& g : generated.decls)
      out.decls.push_back(g);
    out.add(f.defined() ? f : d.fn);
  }
  return out;
}

} // namespace dsc::passes
