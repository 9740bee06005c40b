#include "passes/Legalize.h"

#include <set>
#include <unordered_map>

#include "ir/Functor.h"
#include "ir/OpRegistry.h"
#include "ir/Printer.h"
#include "passes/IRUtil.h"
#include "passes/KernelCount.h"
#include "passes/legalize/Context.h"
#include "passes/legalize/Families.h"
#include "passes/legalize/Fuse.h"
#include "passes/legalize/InPlaceUpdates.h"
#include "passes/legalize/Materialize.h"
#include "passes/legalize/TargetSupport.h"
#include "symbolic/Printer.h"

namespace dsc::passes {

namespace {

using lowering::FnContext;

bool is_atom(const ir::Expr& e) {
  return e.is<ir::Var>() || e.is<ir::Literal>();
}

// A copy of a block whose every binding (and loop carry) binds a new var of the same name and
// type: the second variant of a guarded block, so that no var is bound in both.
class FreshVars : public ir::IRMutator {
  std::unordered_map<const ir::Var*, ir::Expr> renamed_;

  ir::VarRef fresh(const ir::VarRef& v) {
    ir::VarRef out = ir::Var::make(v->name, v->type, v->loc);
    renamed_[v.get()] = ir::Expr(out);
    return out;
  }

protected:
  ir::Expr mutate_node(const ir::Var* v, const ir::Expr& self) override {
    auto it = renamed_.find(v);
    return it == renamed_.end() ? self : it->second;
  }
  ir::Expr mutate_node(const ir::Block* b, const ir::Expr&) override {
    std::vector<ir::Binding> out;
    for (const ir::Binding& binding : b->bindings) {
      ir::Expr value = mutate(binding.value);
      std::vector<ir::VarRef> vars;
      for (const ir::VarRef& v : binding.vars)
        vars.push_back(fresh(v));
      out.push_back(ir::Binding{vars, value, binding.has_asserted_type, binding.loc});
    }
    return ir::Block::make(std::move(out), mutate(b->result), b->loc);
  }
  ir::Expr mutate_node(const ir::Loop* l, const ir::Expr&) override {
    ir::Expr hi = mutate(l->hi);
    std::vector<ir::Expr> inits;
    for (const ir::Expr& init : l->inits)
      inits.push_back(mutate(init));
    std::vector<ir::VarRef> carries;
    for (const ir::VarRef& c : l->carries)
      carries.push_back(fresh(c));
    ir::Expr cond = l->cond.defined() ? mutate(l->cond) : l->cond;
    ir::Expr body = mutate(l->body);
    return l->with(l->lo, hi, carries, inits, cond, body, l->trips, l->type);
  }
};

// Whether `e` has a loop anywhere in it: its symbol would be bound twice (once per variant)
// if the block holding it were compiled as two guarded variants.
bool contains_loop(const ir::Expr& e) {
  struct Find : ir::IRVisitor {
    bool found = false;
    void visit_node(const ir::Loop* l) override {
      found = true;
      ir::IRVisitor::visit_node(l);
    }
  } find;
  find.visit(e);
  return find.found;
}

class FnLegalizer {
public:
  FnLegalizer(ir::Module& generated, std::set<std::string>& taken, const ir::Function& f,
              PassContext& pass, const ir::Module& in)
      : ctx_(generated, taken, f, pass), f_(f), pass_(pass), in_(in), generated_(generated) {}

  Ref<ir::Function> run() {
    const ir::Block* body = f_.body.as<ir::Block>();
    summary_ = FusionSummary{f_.name, 0, 0, 0, 0, {}};
    in_place_ = lowering::in_place_updates(*body, f_.params);
    ir::Expr legal = legalize_block(*body);
    if (!legal.defined()) return nullptr;
    const KernelCount kernels = count_kernels(legal, [this](const std::string& name) {
      const ir::Module::Decl* d = generated_.find(name);
      return d ? d : in_.find(name);
    });
    summary_.kernels = kernels.generated;
    summary_.library_calls = kernels.library;
    if (pass_.fusion_log) pass_.fusion_log->summaries.push_back(summary_);
    return rebuild_function(f_, f_.ret_type, legal, f_.facts);
  }

private:
  // One block: the fn's body, a branch of an if, or a loop's condition or body. Its bindings
  // are described, fused among themselves and materialized; nested blocks are legalized on
  // their own, so nothing is fused across their boundaries.
  //
  // A guarded variant: when fusion needs a fact the prover leaves open (true at some shapes
  // the where clauses allow, false at others), the block is compiled twice, fused under the fact
  // and unfused without it, in an if on the fact that the host tests at run time. One fact per
  // block: the variants take no guard of their own. A block with a loop in it is compiled once,
  // unfused where the fact is open: a loop's symbol is bound once per host program.
  ir::Expr legalize_block(const ir::Block& body) {
    if (!pass_.fuse) return legalize_variant(body);
    const FnContext::Checkpoint saved = ctx_.checkpoint();
    const FusionSummary summary = summary_;
    const size_t decisions = pass_.fusion_log ? pass_.fusion_log->decisions.size() : 0;
    ctx_.open_guards();
    std::optional<std::vector<lowering::FnItem>> items = describe_and_fuse(body);
    ctx_.close_guards();
    std::optional<symbolic::Expr> guard = ctx_.take_wanted_guard();
    if (!items) return {};
    if (!guard) return emit(body, *items);
    // Start again from before the block, and compile it once per variant. An update written
    // in place inside a variant would change the caller's buffer while the entry returns a
    // copy of the variant's result: every update is a copy from here on.
    ctx_.rollback(saved);
    in_place_.clear();
    summary_ = summary;
    if (pass_.fusion_log) pass_.fusion_log->decisions.resize(decisions);
    if (contains_loop(ir::Block::make(body.bindings, body.result, body.loc)))
      return legalize_variant(body);
    const ir::Expr copy =
        FreshVars().mutate(ir::Block::make(body.bindings, body.result, body.loc));
    const ir::Block* variants[2] = {&body, copy.as<ir::Block>()};
    ir::Expr branches[2];
    size_t ops = 0;
    for (int k = 0; k < 2; ++k) {
      auto variant_scope = ctx_.open_scope();
      ctx_.enter_variant(*guard, k == 0);
      branches[k] = legalize_variant(*variants[k]);
      ctx_.leave_variant();
      ctx_.close_scope(std::move(variant_scope));
      if (!branches[k].defined()) return {};
      if (k == 0) ops = summary_.ops;
    }
    summary_.ops = ops; // the same op calls, compiled twice
    summary_.guards.push_back(symbolic::to_string(*guard));
    const ir::Type& type = body.result->type;
    std::vector<ir::VarRef> vars;
    std::vector<ir::Expr> fields;
    for (const ir::Type& t : type.is_tuple() ? type.fields : std::vector<ir::Type>{type}) {
      vars.push_back(ctx_.new_var("guarded", t));
      fields.push_back(ir::Expr(vars.back()));
    }
    ir::Expr result = type.is_tuple() ? ir::Tuple::make(fields, type, body.loc) : fields.front();
    ir::Expr guarded = ir::If::make_guarded(*guard, branches[0], branches[1], type, body.loc);
    return ir::Block::make({ir::Binding{vars, guarded, false, body.loc}}, result, body.loc);
  }

  // The block as one variant: described, fused and materialized (no guard of its own).
  ir::Expr legalize_variant(const ir::Block& body) {
    std::optional<std::vector<lowering::FnItem>> items = describe_and_fuse(body);
    if (!items) return {};
    return emit(body, *items);
  }

  std::optional<std::vector<lowering::FnItem>> describe_and_fuse(const ir::Block& body) {
    std::vector<lowering::FnItem> items;
    // Values nothing reads get no kernel.
    for (const ir::Binding& b : live_bindings(body)) {
      ctx_.set_loc(b.loc.valid() ? b.loc : b.value->loc);
      lowering::FnItem item{b, {}, {}, {}, {}, false, false};
      if (!describe(item)) return std::nullopt;
      item.inserted = ctx_.take_inserted();
      items.push_back(std::move(item));
    }
    if (!flat_result(body.result)) {
      pass_.diags.error(body.result->loc, "legalize: the result of '" + f_.name +
                                              "' is not a var or a tuple of vars (run "
                                              "inline_calls first)");
      return std::nullopt;
    }
    for (const lowering::FnItem& item : items)
      summary_.ops += item.desc ? 1 : 0;
    if (pass_.fuse) lowering::fuse(items, body.result, ctx_, pass_.fusion_log);
    return items;
  }

  ir::Expr emit(const ir::Block& body, std::vector<lowering::FnItem>& items) {
    for (const lowering::FnItem& item : items) {
      if (item.dropped) continue;
      using Kind = lowering::ComputeDesc::Kind;
      if (item.desc && item.desc->kind == Kind::View) ++summary_.views;
    }
    std::vector<ir::Binding> out;
    for (lowering::FnItem& item : items) {
      for (ir::Binding& inserted : item.inserted)
        out.push_back(std::move(inserted));
      if (item.dropped) continue;
      const ir::Binding& b = item.binding;
      ctx_.set_loc(b.loc.valid() ? b.loc : b.value->loc);
      ir::Expr value = b.value;
      std::string kind = item.desc ? kernel_kind(item) : "";
      item.ops = distinct(item.ops);
      if (item.desc && item.ops.size() > 1) item.desc->op = kernel_stem(item);
      if (item.desc) value = lowering::materialize(std::move(*item.desc), ctx_);
      if (const ir::If* i = value.as<ir::If>()) value = legalize_if(*i);
      if (const ir::Loop* l = value.as<ir::Loop>()) value = legalize_loop(*l);
      if (!value.defined()) return {};
      for (ir::Binding& inserted : ctx_.take_inserted())
        out.push_back(std::move(inserted));
      out.push_back(ir::Binding{b.vars, value, b.has_asserted_type, b.loc});
      if (item.ops.size() > 1) log_kernel(item, kind, value);
    }
    return ir::Block::make(std::move(out), body.result, body.loc);
  }

  ir::Expr legalize_if(const ir::If& i) {
    if (!is_atom(i.cond)) {
      pass_.diags.error(i.cond->loc, "legalize: the condition of an if is not a var (run "
                                     "inline_calls first)");
      return {};
    }
    ir::Expr branches[2];
    const ir::Expr* written[2] = {&i.then_branch, &i.else_branch};
    for (int k = 0; k < 2; ++k) {
      const ir::Expr& e = *written[k];
      const ir::Block* block = e.as<ir::Block>();
      // A branch is a block; a bare value is a block with no bindings.
      ir::Expr wrapped = block ? e : ir::Block::make({}, e, e->loc);
      auto scope = ctx_.open_scope();
      branches[k] = legalize_block(*wrapped.as<ir::Block>());
      ctx_.close_scope(std::move(scope));
      if (!branches[k].defined()) return {};
    }
    return ir::If::make(i.cond, branches[0], branches[1], i.type, i.loc);
  }

  // A loop's condition and body are blocks of their own, like an if's branches.
  ir::Expr legalize_loop(const ir::Loop& l) {
    bool atoms = l.hi.is<ir::ShapeExpr>() || is_atom(l.hi);
    for (const ir::Expr& init : l.inits)
      atoms = atoms && is_atom(init);
    if (!atoms) {
      pass_.diags.error(l.loc, "legalize: the end or an init of a loop is not a var (run "
                               "inline_calls first)");
      return {};
    }
    auto nested = [&](const ir::Expr& e) -> ir::Expr {
      auto scope = ctx_.open_scope();
      ir::Expr out = legalize_block(*e.as<ir::Block>());
      ctx_.close_scope(std::move(scope));
      return out;
    };
    ir::Expr cond = l.cond.defined() ? nested(l.cond) : l.cond;
    if (l.cond.defined() && !cond.defined()) return {};
    ir::Expr body = nested(l.body);
    if (!body.defined()) return {};
    return l.with(l.lo, l.hi, l.carries, l.inits, cond, body, l.trips, l.type);
  }

public:
  static bool flat_result(const ir::Expr& e) {
    if (const ir::Tuple* t = e.as<ir::Tuple>()) {
      for (const ir::Expr& f : t->fields)
        if (!flat_result(f)) return false;
      return true;
    }
    if (const ir::GetItem* g = e.as<ir::GetItem>()) return flat_result(g->tuple);
    return is_atom(e);
  }

  // A call whose result has a symbol none of its operands' types has (nonzero's count).
  static bool data_dependent(const ir::Call& call) {
    std::set<std::string> operands, result;
    for (const ir::Expr& a : call.args) collect_symbols(a, true, operands);
    for (const ir::KeywordArg& k : call.kwargs) collect_symbols(k.value, true, operands);
    add_symbols(call.type, result);
    for (const std::string& s : result)
      if (!operands.count(s)) return true;
    return false;
  }

  // Describes an op call (a fill for a view of a literal); other values stay as they are.
  bool describe(lowering::FnItem& item) {
    ir::Expr value = item.binding.value;
    const ir::Call* call = value.as<ir::Call>();
    if (!call) return true; // vars, tuples and their fields stay
    const ir::OpDef* op = ir::find_op(call->callee);
    if (op && data_dependent(*call)) {
      std::optional<ir::Expr> replaced = lowering::lower_data_dependent(value, ctx_);
      if (!replaced) return false;
      item.binding.value = *replaced;
      return true;
    }
    if (!op) {
      const ir::Module::Decl* d = in_.find(call->callee);
      if (d && (d->prim || d->ext)) return true;
      pass_.diags.error(ctx_.loc(), "legalize: the call to '" + call->callee +
                                        "' was not inlined (run inline_calls first)");
      return false;
    }
    std::vector<ir::Expr> operands = call->args;
    for (const ir::KeywordArg& k : call->kwargs)
      operands.push_back(k.value);
    for (const ir::Expr& a : operands) {
      bool ok = is_atom(a) || a.is<ir::ShapeExpr>() || a.is<ir::StringImm>();
      if (const ir::ListExpr* l = a.as<ir::ListExpr>()) {
        ok = true;
        for (const ir::Expr& x : l->items)
          ok = ok && (is_atom(x) || ir::literal_value(x).defined());
      }
      if (ok || ir::literal_value(a).defined()) continue;
      pass_.diags.error(ctx_.loc(), "legalize: an operand of '" + call->callee +
                                        "' is not a var or a literal (run inline_calls first)");
      return false;
    }
    if (op->is_view() && !call->args.empty() && !call->args[0].is<ir::Var>()) {
      // A view of a literal: a filled tensor.
      value =
          ir::Call::make(ir::op_name(ir::OpId::cast),
                         {call->args[0], ir::StringImm::make(ir::dtype_name(value->type.dtype))},
                         {}, value->type, call->loc);
      call = value.as<ir::Call>();
      item.binding.value = value;
    }
    // An update written in place stays a graph op: lower_host copies the update into the
    // buffer of its operand, whose other elements are already in place.
    if (op->id == ir::OpId::update_slice && in_place_.count(item.binding.vars.front().get()))
      return true;
    item.desc = lowering::describe(*call, ctx_);
    item.ops.push_back(FusedOp{call->callee, ctx_.loc()});
    return item.desc.has_value();
  }

  // A kernel of several ops is named after its first op and its last, views left out, and a
  // stitched one after its first reduction: layer_add_permute_0, layer_max_div_0.
  static std::string kernel_stem(const lowering::FnItem& item) {
    std::vector<std::string> names;
    std::string first;
    for (const FusedOp& op : item.ops) {
      const ir::OpDef* def = ir::find_op(op.op);
      if (def && def->is_view()) continue;
      names.push_back(op.op);
      if (first.empty() && def && def->family == ir::OpFamily::Reduce) first = op.op;
    }
    if (names.empty()) return item.ops.back().op;
    if (item.desc->kind != lowering::ComputeDesc::Kind::Stitch || first.empty())
      first = names.front();
    return first == names.back() ? first : first + "_" + names.back();
  }

  // The ops without repeats (a cheap producer inlined into several consumers of one kernel),
  // in order of first appearance.
  static std::vector<FusedOp> distinct(const std::vector<FusedOp>& ops) {
    std::vector<FusedOp> out;
    for (const FusedOp& op : ops) {
      bool seen = false;
      for (const FusedOp& o : out)
        seen = seen || (o.op == op.op && o.loc.file == op.loc.file && o.loc.line == op.loc.line &&
                        o.loc.col == op.loc.col);
      if (!seen) out.push_back(op);
    }
    return out;
  }

  void log_kernel(const lowering::FnItem& item, const std::string& kind, const ir::Expr& value) {
    if (!pass_.fusion_log) return;
    const ir::Call* call = value.as<ir::Call>();
    FusionDecision d;
    d.fn = f_.name;
    d.variant = ctx_.variant();
    d.kernel = call ? call->callee : "";
    // A library call with an epilogue is logged as the epilogue's kernel, which the routine runs.
    if (Ref<ir::ExternFunc> ext = call ? ctx_.module().ext(call->callee) : nullptr)
      if (!ext->epilogue.empty()) d.kernel = ext->epilogue;
    d.kind = kind;
    d.ops = item.ops;
    d.facts = item.facts;
    pass_.fusion_log->decisions.push_back(std::move(d));
  }

  // elementwise (elementwise and broadcast ops), injective (with layout ops), reduction (a
  // reduction with its producers), stitched (reductions and maps row by row), epilogue of a
  // routine (a library call that runs a map on the rows it finishes), and for a library call
  // that reads operands through strided views, ", operands read in place", or writes its result
  // through one, ", result written in place".
  static std::string kernel_kind(const lowering::FnItem& item) {
    using Kind = lowering::ComputeDesc::Kind;
    if (item.desc->kind == Kind::Library) {
      const lowering::LibraryCall& call = item.desc->library;
      bool in_place = false;
      for (const std::optional<ir::StridedView>& v : call.views) in_place = in_place || v;
      std::string kind = call.epilogue ? std::string("epilogue of ") + call.routine->symbol
                                       : std::string(call.routine->symbol);
      if (in_place) kind += ", operands read in place";
      if (call.result_view) kind += ", result written in place";
      return kind;
    }
    if (item.desc->kind == Kind::Stitch) return "stitched";
    if (item.desc->kind == Kind::Reduce) return "reduction";
    for (const FusedOp& op : item.ops) {
      const ir::OpDef* def = ir::find_op(op.op);
      if (def && def->pattern != ir::OpPattern::Elementwise &&
          def->pattern != ir::OpPattern::Broadcast)
        return "injective";
    }
    return "elementwise";
  }

  FnContext ctx_;
  const ir::Function& f_;
  std::set<const ir::Var*> in_place_; // update_slices written in place (InPlaceUpdates.h)
  PassContext& pass_;
  const ir::Module& in_;
  const ir::Module& generated_;
  FusionSummary summary_;
};

} // namespace

ir::Module legalize(const ir::Module& inlined, PassContext& ctx) {
  ir::Module out;
  out.imports = inlined.imports;
  std::set<std::string> taken;
  for (const ir::Module::Decl& d : inlined.decls)
    taken.insert(d.name());
  for (const ir::Module::Decl& d : inlined.decls) {
    if (d.prim) {
      lowering::check_target_support(*d.prim, ctx);
    }
    if (!d.fn) {
      out.decls.push_back(d);
      continue;
    }
    if (is_generic(*d.fn)) continue;
    ir::Module generated;
    generated.imports = inlined.imports; // the stdlib functions fusion recognises
    Ref<ir::Function> f = FnLegalizer(generated, taken, *d.fn, ctx, inlined).run();
    lowering::check_target_dtypes(*d.fn, generated, ctx);
    for (const ir::Module::Decl& g : generated.decls)
      out.decls.push_back(g);
    out.add(f.defined() ? f : d.fn);
  }
  return out;
}

} // namespace dsc::passes
