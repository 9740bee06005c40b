#include "passes/legalize/Context.h"

#include "ir/Printer.h"
#include "ir/StructuralEqual.h"
#include "passes/FusionLog.h"
#include "passes/IRUtil.h"
#include "symbolic/Eval.h"
#include "symbolic/Printer.h"
#include "symbolic/Simplify.h"

namespace dsc::passes::lowering {

namespace sym = symbolic;

FnContext::FnContext(ir::Module& out, std::set<std::string>& taken, const ir::Function& fn,
                     PassContext& pass)
    : out_(out), taken_(taken), fn_(fn), pass_(pass), loc_(fn.loc) {
  for (const ir::VarRef& p : fn.params) {
    var_names_.insert(p->name);
    add_symbols(p->type, param_symbols_);
    if (!p->type.is_tensor()) continue;
    for (const sym::Expr& d : p->type.shape)
      if (!d.is<sym::Sym>() && !d.is<sym::Const>()) facts_.add(sym::le(sym::Expr(0), d));
  }
  symbols_ = param_symbols_;
  for (const ir::WhereClause& w : fn.where) {
    add_symbols(w.predicate, symbols_);
    facts_.add(w.predicate);
  }
  for (const ir::ShapeFact& f : fn.facts) {
    add_symbols(f.predicate, symbols_);
    if (f.status != ir::ShapeFact::Status::Unchecked) facts_.add(f.predicate);
  }
  add_symbols(fn.ret_type, symbols_);
  collect_symbols(fn.body, true, symbols_, &var_names_);
}

Diagnostic& FnContext::unsupported(const std::string& what) {
  return pass_.diags.error(loc_, what + " is not supported by the CPU backend yet");
}

bool FnContext::proved(const sym::Expr& predicate) {
  return decide(predicate).verdict == sym::Verdict::Proved;
}

sym::ProofResult FnContext::decide(const sym::Expr& predicate,
                                   const std::vector<sym::Expr>& assumptions) {
  sym::Expr p = sym::simplify(predicate);
  if (const sym::BoolConst* b = p.as<sym::BoolConst>()) {
    if (b->value) return sym::ProofResult{sym::Verdict::Proved, {}, sym::ProofStage::Simplify, ""};
  }
  return prove(p, assumptions, true);
}

// Under the fn's facts, `assumptions` and (when `guarded`) the facts of the variants that hold.
sym::ProofResult FnContext::prove(const sym::Expr& predicate,
                                  const std::vector<sym::Expr>& assumptions, bool guarded) {
  if (assumptions.empty() && (!guarded || !assumes_a_guard()))
    return pass_.prover.prove(predicate, facts_);
  sym::Facts facts = facts_;
  for (const Variant& v : variants_)
    if (guarded && v.holds) facts.add(v.fact);
  for (const sym::Expr& a : assumptions)
    facts.add(a);
  return pass_.prover.prove(predicate, facts);
}

std::string FnContext::outcome(const sym::Expr& predicate, const sym::ProofResult& result,
                               const std::vector<sym::Expr>& assumptions) {
  if (result.verdict != sym::Verdict::Proved || !assumes_a_guard()) return fusion_outcome(result);
  bool unguarded = prove(sym::simplify(predicate), assumptions, false).verdict ==
                   sym::Verdict::Proved;
  return unguarded ? fusion_outcome(result) : "guarded at run time";
}

void FnContext::want_guard(const sym::Expr& fact) {
  if (!guards_open_ || wanted_guard_) return;
  // A fact no allowed shape satisfies is disproved for good: no variant would ever run.
  if (decide(sym::logical_not(fact)).verdict == sym::Verdict::Proved) return;
  wanted_guard_ = sym::simplify(fact);
}

std::optional<sym::Expr> FnContext::take_wanted_guard() {
  std::optional<sym::Expr> out;
  out.swap(wanted_guard_);
  return out;
}

bool FnContext::assumes_a_guard() const {
  for (const Variant& v : variants_)
    if (v.holds) return true;
  return false;
}

void FnContext::enter_variant(const sym::Expr& fact, bool holds) {
  variants_.push_back(Variant{fact, holds});
}

void FnContext::leave_variant() {
  variants_.pop_back();
}

std::string FnContext::variant() const {
  std::string out;
  for (const Variant& v : variants_)
    out += (out.empty() ? "" : ", ") +
           sym::to_string(v.holds ? v.fact : sym::simplify(sym::logical_not(v.fact)));
  return out;
}

ir::VarRef FnContext::new_var(std::string_view hint, const ir::Type& type) {
  return ir::Var::make(fresh_var_name(hint), type, loc_);
}

FnContext::Checkpoint FnContext::checkpoint() const {
  return Checkpoint{out_.decls.size(), names_taken_.size(), decl_counters_, externs_, carriers_};
}

void FnContext::rollback(const Checkpoint& c) {
  out_.decls.resize(c.decls);
  for (size_t k = c.names; k < names_taken_.size(); ++k)
    taken_.erase(names_taken_[k]);
  names_taken_.resize(c.names);
  decl_counters_ = c.decl_counters;
  externs_ = c.externs;
  carriers_ = c.carriers;
  inserted_.clear();
}

bool FnContext::is_one(const sym::Expr& dim) {
  sym::Expr d = sym::simplify(dim);
  if (const sym::Const* c = d.as<sym::Const>()) return c->value == 1;
  return proved(sym::eq(d, sym::Expr(1)));
}

bool FnContext::equal(const sym::Expr& a, const sym::Expr& b) {
  if (sym::simplify(a).same_as(sym::simplify(b))) return true;
  return proved(sym::eq(a, b));
}

std::string FnContext::new_decl_name(std::string_view op) {
  std::string stem = fn_.name + "_" + std::string(op) + "_";
  for (;;) {
    std::string name = stem + std::to_string(decl_counters_[stem]++);
    if (taken_.insert(name).second) {
      names_taken_.push_back(name);
      return name;
    }
  }
}

void FnContext::add_prim(Ref<ir::PrimFunc> prim) {
  out_.add(std::move(prim));
}

std::string FnContext::library_extern(const std::string& symbol, const std::vector<ir::Type>& args,
                                      const ir::Type& result, const std::string& epilogue,
                                      const std::string& epilogue_first_row,
                                      const std::vector<std::optional<ir::StridedView>>& views,
                                      const std::optional<ir::StridedView>& result_view,
                                      const std::vector<ir::RoutineAttribute>& attributes) {
  auto* e = new ir::ExternFunc();
  const Ref<ir::ExternFunc> made_here(e); // owns e; a same extern found below drops it
  // Parameters a, b, c, ...
  for (size_t k = 0; k < args.size(); ++k)
    e->params.push_back(ir::Var::make(std::string(1, static_cast<char>('a' + k)), args[k]));
  e->ret_type = result;
  e->symbol = symbol;
  e->attributes = attributes;
  e->epilogue = epilogue;
  e->epilogue_first_row = epilogue_first_row;
  e->result_view = result_view;
  bool any_view = false;
  for (const std::optional<ir::StridedView>& v : views) any_view = any_view || v.has_value();
  if (any_view) {
    e->views = views;
    e->views.resize(args.size());
  }
  e->loc = fn_.loc;
  // One extern per signature: the same routine, epilogue, attributes, types and views.
  for (const Ref<ir::ExternFunc>& made : externs_) {
    e->name = made->name;
    if (ir::structural_equal(*e, *made)) return made->name;
  }
  e->name = new_decl_name(symbol.substr(symbol.find('.') + 1));
  out_.add(made_here);
  externs_.push_back(made_here);
  return e->name;
}

std::string FnContext::fresh_var_name(std::string_view hint) {
  std::string base(hint);
  if (!var_names_.count(base) && !symbols_.count(base) && !taken_.count(base)) {
    var_names_.insert(base);
    return base;
  }
  for (int n = 1;; ++n) {
    std::string name = base + "_" + std::to_string(n);
    if (var_names_.count(name) || symbols_.count(name) || taken_.count(name)) continue;
    var_names_.insert(name);
    return name;
  }
}

ir::Expr FnContext::insert_binding(std::string_view hint, ir::Expr value, const ir::Type& type) {
  ir::VarRef v = new_var(hint, type);
  inserted_.push_back(ir::Binding{{v}, std::move(value), false, loc_});
  return ir::Expr(v);
}

std::vector<ir::Binding> FnContext::take_inserted() {
  std::vector<ir::Binding> out;
  out.swap(inserted_);
  return out;
}

ir::Expr FnContext::symbol_carrier(const std::set<std::string>& names) {
  auto it = carriers_.find(names);
  if (it != carriers_.end()) return it->second;
  std::vector<sym::Expr> shape = {sym::Expr(0)};
  std::string hint = "symbols";
  for (const std::string& n : names) {
    shape.push_back(sym::sym(n));
    hint += "_" + n;
  }
  auto* p = new ir::PrimFunc();
  p->name = new_decl_name("symbols");
  p->outputs.push_back(ir::Buffer{"out", ir::DType::I8, shape, fn_.loc});
  for (const std::string& n : names) // `out` must not be one of the symbols' names
    if (n == "out") p->outputs[0].name = "carrier";
  p->body = ir::Seq::make({});
  p->loc = fn_.loc;
  add_prim(Ref<ir::PrimFunc>(p));
  ir::Type t = ir::Type::tensor(ir::DType::I8, shape);
  ir::Expr call = ir::Call::make(p->name, {}, {}, t, loc_);
  ir::Expr v = insert_binding(hint, call, t);
  carriers_[names] = v;
  return v;
}

} // namespace dsc::passes::lowering
