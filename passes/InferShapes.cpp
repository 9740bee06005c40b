#include "passes/InferShapes.h"

#include <map>
#include <set>
#include <unordered_map>

#include "ir/OpRegistry.h"
#include "passes/IRUtil.h"
#include "passes/LinearDim.h"
#include "support/Suggest.h"
#include "symbolic/Eval.h"
#include "symbolic/Printer.h"
#include "symbolic/Simplify.h"

namespace dsc::passes {

namespace {

namespace sym = symbolic;
using namespace ir;

using SymbolMap = std::map<std::string, sym::Expr>;

constexpr size_t kMaxInstantiationDepth = 32;

// A declared return type to check: not left out, and not `tensor` (any tensor).
bool declares_type(const Type& t) {
  return !t.is_unknown() && t.kind != Type::Kind::Any;
}

bool has_unknown(const Type& t) {
  if (t.is_unknown()) return true;
  for (const Type& f : t.fields)
    if (has_unknown(f)) return true;
  return false;
}

sym::Expr canon(const sym::Expr& e) {
  return sym::simplify(e);
}

// Arguments that are not values: dims lists, strings, lists of tensors.
bool is_non_value(const Expr& e) {
  return e.is<ShapeExpr>() || e.is<StringImm>() || e.is<ListExpr>();
}

Type canon(const Type& t) {
  Type out = t;
  for (sym::Expr& d : out.shape)
    d = canon(d);
  for (Type& f : out.fields)
    f = canon(f);
  return out;
}

// bool < int < float: the kinds of literal a weak type stands for.
int kind_rank(DType d) {
  return d == DType::Bool ? 0 : is_int(d) ? 1 : 2;
}

// Whether a value of type `actual` may stand where `dtype` is expected.
bool dtype_fits(const Type& actual, DType dtype) {
  if (!actual.weak) return actual.dtype == dtype;
  switch (kind_rank(actual.dtype)) {
  case 0:
    return dtype == DType::Bool;
  case 1:
    return dtype != DType::Bool;
  default:
    return is_float(dtype);
  }
}

std::string quoted_list(const std::vector<std::string>& names) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i)
    s += (i ? ", " : "") + names[i];
  return s;
}

// A written dim to match against an actual one (a parameter's, an assertion's, a return's).
struct DimPair {
  sym::Expr written;
  sym::Expr actual;
  SourceLoc loc;
  std::string what;
};

enum class Match : uint8_t { Ok, Error, Unknown };

// Per top-level function: the facts known so far, the facts recorded for collect_facts,
// and the ShapeContext every rule uses. Callee bodies instantiated for a call share it, since
// their types are in the caller's symbols.
struct Session {
  explicit Session(PassContext& pc) : pass(pc), ctx(pc.diags, facts, pc.prover, recorded) {}

  // Run-time checks are assumed from where they are recorded on (the host checks them first).
  void absorb() {
    for (; absorbed < recorded.size(); ++absorbed)
      facts.add(recorded[absorbed].predicate);
  }

  PassContext& pass;
  sym::Facts facts;
  std::vector<ShapeFact> recorded;
  size_t absorbed = 0;
  ShapeContext ctx;
  std::vector<std::pair<const Module*, std::string>> instantiating;
};

class ModuleInferrer;

// Infers one function body: the top-level functions of the module (their symbols as written)
// and callee bodies instantiated for a call (their symbols substituted by the caller's dims).
class BodyInferrer {
public:
  BodyInferrer(ModuleInferrer& mi, Session& s, const Module& scope, const Function& f,
               SymbolMap subst, bool instantiation)
      : mi_(mi), s_(s), scope_(scope), fn_(f), subst_(std::move(subst)),
        instantiation_(instantiation) {}

  Ref<Function> run_top_level();
  Type run_instance(const std::vector<Expr>& param_values);

private:
  Expr infer(const Expr& e);
  Expr infer_block(const Block& b);
  Expr infer_if(const If& node);
  Expr infer_loop(const Loop& node);
  // Whether `got` is `want` (dims proved equal); `got`'s weak dtype may fit `want`'s.
  bool proved_same_type(const Type& want, const Type& got);
  Expr infer_get_item(const GetItem& g);
  Expr infer_call(const Call& call);
  Type call_op(const OpDef& op, const Call& call);
  Type call_signature(const Call& call, const std::string& name, const std::vector<VarRef>& params,
                      const std::vector<Expr>& defaults, const Type& ret,
                      const std::vector<WhereClause>& where);
  Type call_instance(const Call& call, const Function& callee, const Module& callee_scope,
                     const std::string& shown_name);
  void unknown_callee(const Call& call);
  // The callee's where clauses in the caller's symbols: proved, or run-time facts.
  bool require_where(const std::vector<WhereClause>& where, const SymbolMap& map, const Call& call,
                     const std::string& name);

  std::optional<std::vector<std::pair<Expr, SourceLoc>>>
  bind_call_args(const Call& call, const std::string& name, const std::vector<VarRef>& params,
                 const std::vector<Expr>& defaults);
  Match collect_pairs(const Type& written, const Type& actual, SourceLoc loc,
                      const std::string& what, std::vector<DimPair>& out);
  // Binds unbound symbols of the written dims (first binding wins) and checks the rest.
  // `map` gets the bindings; `named` binds by recording equalities instead (top level).
  bool bind_pairs(const std::vector<DimPair>& pairs, SymbolMap& map, bool named);
  bool is_bound(const std::string& name, const SymbolMap& map, bool named) const;
  void bind(const std::string& name, const sym::Expr& value, SourceLoc loc, const std::string& what,
            SymbolMap& map, bool named);
  Type check_asserted(const Type& written, const Type& actual, SourceLoc loc,
                      const std::string& what);
  Type unify_branches(const Type& a, const Type& b, SourceLoc loc);

  Diagnostic& error(SourceLoc loc, std::string message) {
    return s_.ctx.error(loc, std::move(message));
  }

  ModuleInferrer& mi_;
  Session& s_;
  const Module& scope_;
  const Function& fn_;
  SymbolMap subst_;
  bool instantiation_;
  std::set<std::string> known_; // top level: symbols bound by parameters and assertions
  std::unordered_map<const ExprNode*, Expr> vars_;
};

class ModuleInferrer {
public:
  ModuleInferrer(const Module& m, PassContext& ctx) : m_(m), ctx_(ctx) {}

  Module run() {
    Module out;
    out.imports = m_.imports;
    for (const Module::Decl& d : m_.decls) {
      if (d.fn && !is_generic(*d.fn)) {
        out.add(infer(*d.fn));
        continue;
      }
      out.decls.push_back(d);
    }
    return out;
  }

  const Module& main() const { return m_; }

  Ref<Function> infer(const Function& f) {
    auto it = done_.find(&f);
    if (it != done_.end()) return it->second;
    in_progress_.insert(&f);
    Session s(ctx_);
    Ref<Function> result = BodyInferrer(*this, s, m_, f, {}, false).run_top_level();
    in_progress_.erase(&f);
    done_[&f] = result;
    return result;
  }

  // The return type of a call to a (non-generic) function of the module: declared, or
  // inferred from its body first. nullopt for a recursive call with none declared.
  std::optional<Type> return_type(const Function& f) {
    if (declares_type(f.ret_type)) return f.ret_type;
    if (in_progress_.count(&f)) return std::nullopt;
    return infer(f)->ret_type;
  }

private:
  const Module& m_;
  PassContext& ctx_;
  std::map<const Function*, Ref<Function>> done_;
  std::set<const Function*> in_progress_;
};

// ---------------------------------------------------------------- functions

Ref<Function> BodyInferrer::run_top_level() {
  std::set<std::string> all;
  for (const VarRef& p : fn_.params)
    add_symbols(p->type, known_);
  all = known_;
  for (const WhereClause& w : fn_.where)
    add_symbols(w.predicate, all);
  add_symbols(fn_.ret_type, all);
  collect_symbols(fn_.body, false, all); // only what was written: other types are inferred
  for (const std::string& name : all)
    s_.ctx.reserve_symbol(name);

  for (const WhereClause& w : fn_.where) {
    s_.recorded.push_back(ShapeFact{w.predicate, w.loc, ShapeFact::Origin::Where,
                                    ShapeFact::Status::Unchecked, "where clause", ""});
  }
  // Every dim of a parameter is >= 0 at run time, which bounds the symbols of `f32[S - 4]`.
  for (const VarRef& p : fn_.params) {
    vars_[p.get()] = Expr(p);
    if (!p->type.is_tensor()) continue;
    for (const sym::Expr& d : p->type.shape)
      if (!d.is<sym::Sym>() && !d.is<sym::Const>()) s_.facts.add(sym::le(sym::Expr(0), d));
  }
  s_.absorb();

  Expr body = infer(fn_.body);
  Type ret = body->type;
  if (declares_type(fn_.ret_type)) {
    SourceLoc loc = argument_loc(body.as<Block>()->result, fn_.loc);
    check_asserted(fn_.ret_type, body->type, loc, "return type of " + fn_.name);
    ret = fn_.ret_type;
  }

  auto* out = new Function();
  out->name = fn_.name;
  out->params = fn_.params;
  out->defaults = fn_.defaults;
  out->ret_type = ret;
  out->where = fn_.where;
  out->body = body;
  out->facts = s_.recorded;
  out->loc = fn_.loc;
  return Ref<Function>(out);
}

Type BodyInferrer::run_instance(const std::vector<Expr>& param_values) {
  for (size_t i = 0; i < fn_.params.size(); ++i)
    vars_[fn_.params[i].get()] = param_values[i];
  Expr body = infer(fn_.body);
  if (!declares_type(fn_.ret_type) || has_unknown(body->type)) return body->type;
  Type checked =
      check_asserted(fn_.ret_type, body->type, argument_loc(body.as<Block>()->result, fn_.loc),
                     "return type of " + fn_.name);
  return checked.is_unknown() ? checked : body->type;
}

// ---------------------------------------------------------------- expressions

Expr BodyInferrer::infer(const Expr& e) {
  switch (e.kind()) {
  case NodeKind::Var: {
    auto it = vars_.find(e.get());
    return it == vars_.end() ? e : it->second;
  }
  case NodeKind::Literal:
  case NodeKind::StringImm:
    return e;
  case NodeKind::ShapeExpr: {
    if (subst_.empty()) return e;
    std::vector<sym::Expr> dims;
    for (const sym::Expr& d : e.as<ShapeExpr>()->dims)
      dims.push_back(canon(substitute(d, subst_)));
    return ShapeExpr::make(std::move(dims), e->loc);
  }
  case NodeKind::ListExpr: {
    std::vector<Expr> items;
    std::vector<Type> types;
    for (const Expr& i : e.as<ListExpr>()->items) {
      items.push_back(infer(i));
      types.push_back(items.back()->type);
    }
    return ListExpr::make(std::move(items), Type::tuple(std::move(types)), e->loc);
  }
  case NodeKind::Tuple: {
    std::vector<Expr> fields;
    std::vector<Type> types;
    for (const Expr& f : e.as<Tuple>()->fields) {
      fields.push_back(infer(f));
      types.push_back(fields.back()->type);
    }
    return Tuple::make(std::move(fields), Type::tuple(std::move(types)), e->loc);
  }
  case NodeKind::GetItem:
    return infer_get_item(*e.as<GetItem>());
  case NodeKind::If:
    return infer_if(*e.as<If>());
  case NodeKind::Loop:
    return infer_loop(*e.as<Loop>());
  case NodeKind::Block:
    return infer_block(*e.as<Block>());
  case NodeKind::Call:
    return infer_call(*e.as<Call>());
  default:
    internal_error << "infer_shapes: " << node_kind_name(e.kind()) << " in graph code";
  }
  return e;
}

Expr BodyInferrer::infer_get_item(const GetItem& g) {
  Expr tuple = infer(g.tuple);
  const Type& t = tuple->type;
  Type result;
  if (t.is_tensor()) {
    error(g.loc, "cannot index " + to_string(t) + " with [" + std::to_string(g.index) +
                     "]: only tuples can be indexed (use slice or take)");
  } else if (t.is_tuple()) {
    if (static_cast<size_t>(g.index) < t.fields.size())
      result = t.fields[static_cast<size_t>(g.index)];
    else
      error(g.loc, "index " + std::to_string(g.index) + " is out of range for a tuple of " +
                       std::to_string(t.fields.size()));
  }
  return GetItem::make(tuple, g.index, result, g.loc);
}

Expr BodyInferrer::infer_block(const Block& b) {
  std::vector<Binding> out;
  for (const Binding& bind : b.bindings) {
    Binding nb;
    nb.value = infer(bind.value);
    nb.loc = bind.loc;
    nb.has_asserted_type = bind.has_asserted_type;
    const Type& t = nb.value->type;
    if (bind.vars.size() == 1) {
      const VarRef& v = bind.vars[0];
      Type vt = t;
      if (bind.has_asserted_type)
        vt = check_asserted(v->type, t, bind.loc.valid() ? bind.loc : v->loc, "let " + v->name);
      VarRef nv = Var::make(v->name, vt, v->loc);
      vars_[v.get()] = Expr(nv);
      nb.vars.push_back(nv);
    } else {
      std::vector<Type> fields(bind.vars.size());
      if (t.is_tuple() && t.fields.size() == bind.vars.size()) {
        fields = t.fields;
      } else if (t.is_tuple()) {
        error(bind.loc, "cannot destructure a tuple of " + std::to_string(t.fields.size()) +
                            " into " + std::to_string(bind.vars.size()) + " names");
      } else if (!t.is_unknown()) {
        error(bind.loc, "cannot destructure " + to_string(t) + " into " +
                            std::to_string(bind.vars.size()) + " names: it is not a tuple");
      }
      for (size_t i = 0; i < bind.vars.size(); ++i) {
        const VarRef& v = bind.vars[i];
        VarRef nv = Var::make(v->name, fields[i], v->loc);
        vars_[v.get()] = Expr(nv);
        nb.vars.push_back(nv);
      }
    }
    out.push_back(std::move(nb));
  }
  Expr result = infer(b.result);
  return Block::make(std::move(out), result, b.loc);
}

Expr BodyInferrer::infer_if(const If& node) {
  internal_assert(node.cond.defined()) << "a guarded if before legalize";
  Expr cond = infer(node.cond);
  const Type& ct = cond->type;
  if (!ct.is_unknown() && !(ct.is_tensor() && ct.dtype == DType::Bool && ct.rank() == 0)) {
    SourceLoc loc = argument_loc(node.cond, node.loc);
    error(loc, "the condition of if must be a bool[] tensor, got " + to_string(ct));
  }
  // What a branch learns (run-time checks, bound symbols) does not hold after the if.
  sym::Facts saved = s_.facts;
  std::set<std::string> saved_known = known_;
  Expr then_branch = infer(node.then_branch);
  s_.facts = saved;
  known_ = saved_known;
  Expr else_branch = infer(node.else_branch);
  s_.facts = saved;
  known_ = saved_known;
  Type t = unify_branches(then_branch->type, else_branch->type, node.loc);
  return If::make(cond, then_branch, else_branch, t, node.loc);
}

bool BodyInferrer::proved_same_type(const Type& want, const Type& got) {
  if (want.kind != got.kind) return false;
  if (want.is_tuple()) {
    if (want.fields.size() != got.fields.size()) return false;
    for (size_t i = 0; i < want.fields.size(); ++i)
      if (!proved_same_type(want.fields[i], got.fields[i])) return false;
    return true;
  }
  if (!want.is_tensor()) return true;
  if (got.weak ? !dtype_fits(got, want.dtype) : got.dtype != want.dtype) return false;
  if (want.rank() != got.rank()) return false;
  for (size_t i = 0; i < want.rank(); ++i) {
    sym::Expr x = canon(want.shape[i]), y = canon(got.shape[i]);
    if (x.same_as(y)) continue;
    if (s_.pass.prover.prove(sym::eq(x, y), s_.facts).verdict != sym::Verdict::Proved) return false;
  }
  return true;
}

// A loop: the carries have their declared types (or their inits' types) at var := i, the body
// must give them at i + 1, and the loop's value has them at lo + trips.
Expr BodyInferrer::infer_loop(const Loop& node) {
  // An instantiated callee's loop gets a fresh symbol, so that two calls' loops differ.
  std::string var = node.var;
  if (instantiation_) {
    var = s_.ctx.fresh_symbol(node.var).as<sym::Sym>()->name;
    subst_[node.var] = sym::sym(var);
  }
  const sym::Expr i = sym::sym(var);
  auto at = [&](const Type& t, const sym::Expr& value) {
    return canon(substitute(t, {{var, value}}));
  };
  const std::string what = "the loop over '" + node.var + "'";
  sym::Expr lo = canon(substitute(node.lo, subst_));
  sym::Expr bound = node.bound.defined() ? canon(substitute(node.bound, subst_)) : node.bound;
  Expr hi = infer(node.hi);
  sym::Expr end; // hi as a dim, when it is one
  if (const ShapeExpr* s = hi.as<ShapeExpr>(); s && s->dims.size() == 1) {
    end = s->dims[0];
  } else {
    const Type& ht = hi->type;
    if (!ht.is_unknown() && !(ht.is_tensor() && ht.rank() == 0 && is_int(ht.dtype)))
      error(argument_loc(node.hi, node.loc),
            what + " runs to " + to_string(ht) + "; a loop ends at a dim or an integer scalar");
    if (!bound.defined())
      error(argument_loc(node.hi, node.loc),
            what + " ends at a value known only at run time; declare its bound: for " + node.var +
                " in ... where " + node.var + " < 64");
  }
  std::vector<Expr> inits;
  for (const Expr& init : node.inits)
    inits.push_back(infer(init));

  // Carry types at var := i; a declared one must start as its init.
  std::vector<VarRef> carries;
  std::vector<Type> types;
  bool ok = true;
  for (size_t k = 0; k < node.carries.size(); ++k) {
    const VarRef& c = node.carries[k];
    Type t = inits[k]->type;
    if (t.is_tensor()) t.weak = false;
    if (node.declared[k]) {
      Type declared = instantiation_ ? canon(substitute(c->type, subst_)) : c->type;
      if (!has_unknown(inits[k]->type) && !proved_same_type(at(declared, lo), inits[k]->type)) {
        error(argument_loc(inits[k], c->loc),
              "carry '" + c->name + "' starts as " + to_string(inits[k]->type) + ", not " +
                  to_string(at(declared, lo)) + " (its type at " + node.var + " = " +
                  sym::to_string(lo) + ")");
        ok = false;
      }
      t = declared;
    }
    VarRef nv = Var::make(c->name, t, c->loc);
    vars_[c.get()] = Expr(nv);
    carries.push_back(nv);
    types.push_back(t);
  }

  // Inside: lo <= i < end (and i < bound). What the body learns does not hold after it.
  sym::Facts saved = s_.facts;
  std::set<std::string> saved_known = known_;
  auto assume = [&](const sym::Expr& p, const std::string& why) {
    s_.ctx.record(p, node.loc, why, ShapeFact::Origin::Op, ShapeFact::Status::Assumed);
  };
  assume(sym::le(lo, i), what + ": its var starts at " + sym::to_string(lo));
  if (end.defined()) assume(sym::lt(i, end), what + ": its var stays below its end");
  if (bound.defined()) assume(sym::lt(i, bound), what + ": its declared bound");
  s_.absorb();
  known_.insert(var);
  Expr cond;
  if (node.cond.defined()) {
    cond = infer(node.cond);
    const Type& ct = cond->type;
    if (!ct.is_unknown() && !(ct.is_tensor() && ct.dtype == DType::Bool && ct.rank() == 0))
      error(argument_loc(node.cond, node.loc),
            "the condition of " + what + " must be a bool[] tensor, got " + to_string(ct));
  }
  Expr body = infer(node.body);
  const Type& bt = body->type;
  const SourceLoc result_loc = argument_loc(body.as<Block>()->result, node.loc);
  if (!has_unknown(bt) && ok) {
    std::vector<Type> next = carries.size() == 1 ? std::vector<Type>{bt} : bt.fields;
    if (carries.size() > 1 && (!bt.is_tuple() || bt.fields.size() != carries.size())) {
      error(result_loc, "the body of " + what + " gives " + to_string(bt) + "; it must give the next " +
                std::to_string(carries.size()) + " carries as a tuple");
      next.clear();
      ok = false;
    }
    for (size_t k = 0; k < next.size(); ++k) {
      Type want = at(types[k], canon(i + sym::Expr(1)));
      if (proved_same_type(want, next[k])) continue;
      ok = false;
      const std::string& name = carries[k]->name;
      Diagnostic& d = error(result_loc, "carry '" + name + "' is " + to_string(types[k]) +
                                " when an iteration starts, so the body must give " +
                                to_string(want) + "; it gives " + to_string(next[k]));
      if (!node.declared[k])
        d.notes.push_back({carries[k]->loc, "declare how '" + name + "' changes with '" +
                                                node.var + "': carry (" + name +
                                                ": TYPE = ...), its dims using " + node.var});
    }
  }
  s_.facts = saved;
  known_ = saved_known;

  // How many iterations run: hi - lo, or a fresh symbol bound when the loop ends.
  sym::Expr trips;
  if (end.defined() && !cond.defined() && s_.ctx.proved(sym::le(lo, end))) {
    trips = canon(end - lo);
  } else {
    trips = s_.ctx.fresh_symbol("trips");
    sym::Expr most = end.defined() ? canon(end - lo) : bound.defined() ? canon(bound - lo) : sym::Expr();
    assume(sym::le(sym::Expr(0), trips), what + ": its trip count");
    if (most.defined()) assume(sym::le(trips, sym::max(most, sym::Expr(0))), what + ": its trip count");
    s_.absorb();
  }
  Type type = Type::unknown();
  if (ok && !has_unknown(bt)) {
    std::vector<Type> out;
    for (const Type& t : types)
      out.push_back(at(t, canon(lo + trips)));
    type = out.size() == 1 ? out[0] : Type::tuple(std::move(out));
  }
  return Loop::make(var, lo, hi, bound, std::move(carries), node.declared, std::move(inits), cond,
                    body, trips, type, node.loc);
}

Type BodyInferrer::unify_branches(const Type& a, const Type& b, SourceLoc loc) {
  if (has_unknown(a) || has_unknown(b)) return Type::unknown();
  auto differ = [&](const std::string& why) {
    error(loc, "the branches of if have different types: " + to_string(a) + " vs " + to_string(b) +
                   (why.empty() ? "" : " (" + why + ")"));
    return Type::unknown();
  };
  if (a.kind != b.kind) return differ("");
  if (a.is_tuple()) {
    if (a.fields.size() != b.fields.size()) return differ("tuple sizes differ");
    std::vector<Type> fields;
    for (size_t i = 0; i < a.fields.size(); ++i) {
      fields.push_back(unify_branches(a.fields[i], b.fields[i], loc));
      if (fields.back().is_unknown()) return Type::unknown();
    }
    return Type::tuple(std::move(fields));
  }
  if (!a.is_tensor()) return a;
  Type out = a;
  if (a.weak && b.weak) {
    out.dtype = kind_rank(a.dtype) >= kind_rank(b.dtype) ? a.dtype : b.dtype;
  } else if (a.weak || b.weak) {
    const Type& strong = a.weak ? b : a;
    const Type& weak = a.weak ? a : b;
    if (!dtype_fits(weak, strong.dtype)) return differ("dtypes differ");
    out.dtype = strong.dtype;
    out.weak = false;
  } else if (a.dtype != b.dtype) {
    return differ("dtypes differ");
  }
  if (a.rank() != b.rank()) return differ("ranks differ");
  for (size_t i = 0; i < a.rank(); ++i) {
    sym::Expr x = canon(a.shape[i]), y = canon(b.shape[i]);
    if (x.same_as(y)) continue;
    sym::ProofResult r = s_.pass.prover.prove(sym::eq(x, y), s_.facts);
    if (r.verdict == sym::Verdict::Proved) continue;
    // The branches may disagree: the dim is a fresh symbol, bound when the branch taken ends,
    // and known to lie between the two.
    const sym::Sym* named = x.as<sym::Sym>();
    sym::Expr joined = s_.ctx.fresh_symbol(named ? named->name : "d");
    const std::string what = "if: dim " + std::to_string(i) + " of the result is " +
                             sym::to_string(x) + " or " + sym::to_string(y);
    s_.ctx.record(sym::le(sym::min(x, y), joined), loc, what, ShapeFact::Origin::Op,
                  ShapeFact::Status::Assumed);
    s_.ctx.record(sym::le(joined, sym::max(x, y)), loc, what, ShapeFact::Origin::Op,
                  ShapeFact::Status::Assumed);
    s_.absorb();
    out.shape[i] = joined;
  }
  return out;
}

// ---------------------------------------------------------------- types and symbols

Match BodyInferrer::collect_pairs(const Type& written, const Type& actual, SourceLoc loc,
                                  const std::string& what, std::vector<DimPair>& out) {
  if (written.is_unknown() || written.kind == Type::Kind::Any) return Match::Ok;
  if (has_unknown(actual)) return Match::Unknown;
  if (written.is_tuple()) {
    if (!actual.is_tuple() || actual.fields.size() != written.fields.size()) {
      error(loc, what + ": expected " + to_string(written) + ", got " + to_string(actual));
      return Match::Error;
    }
    for (size_t i = 0; i < written.fields.size(); ++i) {
      Match m = collect_pairs(written.fields[i], actual.fields[i], loc,
                              what + " (field " + std::to_string(i) + ")", out);
      if (m != Match::Ok) return m;
    }
    return Match::Ok;
  }
  internal_assert(written.is_tensor())
      << "unexpected type " << to_string(written) << " for " << what;
  if (!actual.is_tensor()) {
    error(loc, what + ": expected a tensor " + to_string(written) + ", got " + to_string(actual));
    return Match::Error;
  }
  if (!dtype_fits(actual, written.dtype)) {
    error(loc,
          what + ": expected dtype " + dtype_name(written.dtype) + ", got " + to_string(actual));
    return Match::Error;
  }
  if (actual.rank() != written.rank()) {
    error(loc, what + ": expected rank " + std::to_string(written.rank()) + " (" +
                   to_string(written) + "), got rank " + std::to_string(actual.rank()) + " (" +
                   to_string(actual) + ")");
    return Match::Error;
  }
  for (size_t i = 0; i < written.rank(); ++i)
    out.push_back(DimPair{written.shape[i], canon(actual.shape[i]), loc,
                          what + ": dims at axis " + std::to_string(i)});
  return Match::Ok;
}

bool BodyInferrer::is_bound(const std::string& name, const SymbolMap& map, bool named) const {
  return map.count(name) || (named && known_.count(name));
}

void BodyInferrer::bind(const std::string& name, const sym::Expr& value, SourceLoc loc,
                        const std::string& what, SymbolMap& map, bool named) {
  if (!named) {
    map[name] = value;
    return;
  }
  // A symbol first named in an assertion takes the value's run-time dim: true by construction.
  sym::Expr eq = sym::eq(sym::sym(name), value);
  s_.ctx.record(eq, loc, name + " is bound by " + what, ShapeFact::Origin::Assertion,
                ShapeFact::Status::Proved);
  s_.absorb();
  s_.facts.add(eq);
  known_.insert(name);
}

// Whether `pattern` is `actual` term by term, each symbol of `vars` standing for one
// subexpression wherever it occurs (`bound` gets them). The operands of +, *, min and max may
// match in either order: both sides are canonical, but their symbols' names, which order the
// operands, differ. Trying both orders at every level is exponential in the depth, so the
// match gives up (false) after `budget` comparisons.
bool match_terms(const sym::Expr& pattern, const sym::Expr& actual,
                 const std::set<std::string>& vars, SymbolMap& bound, int& budget) {
  if (--budget < 0) return false;
  if (const sym::Sym* v = pattern.as<sym::Sym>(); v && vars.count(v->name)) {
    auto [it, fresh] = bound.emplace(v->name, actual);
    return fresh || it->second.same_as(actual);
  }
  if (pattern.kind() != actual.kind()) return false;
  if (pattern.is<sym::Const>() || pattern.is<sym::Sym>() || pattern.is<sym::BoolConst>())
    return pattern.same_as(actual);
  if (const sym::Not* n = pattern.as<sym::Not>())
    return match_terms(n->a, actual.as<sym::Not>()->a, vars, bound, budget);
  const auto* p = static_cast<const sym::BinaryNode*>(pattern.get());
  const auto* a = static_cast<const sym::BinaryNode*>(actual.get());
  SymbolMap tried = bound;
  if (match_terms(p->a, a->a, vars, tried, budget) &&
      match_terms(p->b, a->b, vars, tried, budget)) {
    bound = std::move(tried);
    return true;
  }
  const sym::ExprKind k = pattern.kind();
  if (k != sym::ExprKind::Add && k != sym::ExprKind::Mul && k != sym::ExprKind::Min &&
      k != sym::ExprKind::Max)
    return false;
  tried = bound;
  if (match_terms(p->a, a->b, vars, tried, budget) &&
      match_terms(p->b, a->a, vars, tried, budget)) {
    bound = std::move(tried);
    return true;
  }
  return false;
}

// The written dims are in the callee's symbols and the actual ones in the caller's, which may
// share names: written dims are substituted exactly once, and an unbound callee symbol is
// solved for under a fresh name.
bool BodyInferrer::bind_pairs(const std::vector<DimPair>& pairs, SymbolMap& map, bool named) {
  std::vector<bool> done(pairs.size(), false);
  for (size_t i = 0; i < pairs.size(); ++i) {
    const sym::Sym* s = pairs[i].written.as<sym::Sym>();
    if (!s || is_bound(s->name, map, named)) continue;
    bind(s->name, pairs[i].actual, pairs[i].loc, pairs[i].what, map, named);
    done[i] = true;
  }
  bool ok = true;
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (done[i]) continue;
    const DimPair& p = pairs[i];
    std::vector<std::string> unbound;
    for (const std::string& n : sym::free_symbols(p.written))
      if (!is_bound(n, map, named)) unbound.push_back(n);
    if (unbound.empty()) {
      ok &= s_.ctx.require_equal(canon(substitute(p.written, map)), p.actual, p.loc, p.what);
      continue;
    }
    // One symbol in a linear dim (`2*S + 1`) is solved for: S = (actual - 1) / 2.
    std::optional<int64_t> c;
    sym::Expr w, at0;
    if (unbound.size() == 1) {
      sym::Expr u = s_.ctx.fresh_symbol("solve");
      SymbolMap with_u = map;
      with_u[unbound[0]] = u;
      w = canon(substitute(p.written, with_u));
      if (std::optional<LinearDim> linear = linear_in(w, u.as<sym::Sym>()->name)) {
        c = linear->step;
        at0 = linear->offset;
      }
    }
    if (!c) {
      // A dim that is not linear in one unbound symbol may still have the actual's form term
      // by term: `(H + 1)/2` against the caller's `(X + 1)/2` binds H = X (legalize writes
      // such dims into its prims' parameters). The unbound symbols are renamed first, as
      // above, and the dims' equality is then required like any other.
      std::set<std::string> vars;
      SymbolMap renamed = map, matched;
      for (const std::string& n : unbound) {
        sym::Expr u = s_.ctx.fresh_symbol("match");
        renamed[n] = u;
        vars.insert(u.as<sym::Sym>()->name);
      }
      int budget = 10000;
      if (match_terms(canon(substitute(p.written, renamed)), p.actual, vars, matched, budget) &&
          matched.size() == unbound.size()) {
        for (const std::string& n : unbound)
          bind(n, matched.at(renamed.at(n).as<sym::Sym>()->name), p.loc, p.what, map, named);
        ok &= s_.ctx.require_equal(canon(substitute(p.written, map)), p.actual, p.loc, p.what);
        continue;
      }
      error(p.loc, p.what + ": cannot infer " + quoted_list(unbound) + " from " +
                       sym::to_string(p.written) + " == " + sym::to_string(p.actual));
      ok = false;
      continue;
    }
    sym::Expr rest = canon(p.actual - at0);
    sym::Expr value = canon(sym::floordiv(rest, sym::Expr(*c)));
    if (*c != 1 && *c != -1 &&
        !s_.ctx.require(sym::eq(sym::floormod(rest, sym::Expr(*c)), sym::Expr(0)), p.loc,
                        p.what + ": " + sym::to_string(p.actual) + " must fit " +
                            sym::to_string(p.written))) {
      ok = false;
      continue;
    }
    if (!s_.ctx.require(sym::le(sym::Expr(0), value), p.loc,
                        p.what + ": " + unbound[0] + " = " + sym::to_string(value) +
                            " must be >= 0")) {
      ok = false;
      continue;
    }
    bind(unbound[0], value, p.loc, p.what, map, named);
  }
  s_.absorb();
  return ok;
}

Type BodyInferrer::check_asserted(const Type& written, const Type& actual, SourceLoc loc,
                                  const std::string& what) {
  if (written.is_unknown()) return actual;
  std::vector<DimPair> pairs;
  Match m = collect_pairs(written, actual, loc, what, pairs);
  if (m != Match::Ok) return Type::unknown();
  if (!bind_pairs(pairs, subst_, !instantiation_)) return Type::unknown();
  if (instantiation_) return canon(substitute(written, subst_));
  return written;
}

// ---------------------------------------------------------------- calls

Expr BodyInferrer::infer_call(const Call& call) {
  std::vector<Expr> args;
  for (const Expr& a : call.args)
    args.push_back(infer(a));
  std::vector<KeywordArg> kwargs;
  for (const KeywordArg& k : call.kwargs)
    kwargs.push_back({k.name, infer(k.value), k.loc});
  Expr rebuilt = Call::make(call.callee, args, kwargs, Type::unknown(), call.loc);
  const Call& c = *rebuilt.as<Call>();

  Type t;
  if (const OpDef* op = find_op(call.callee)) {
    t = call_op(*op, c);
  } else if (const Module::Decl* d = scope_.find(call.callee)) {
    if (d->fn && (is_generic(*d->fn) || &scope_ != &mi_.main())) {
      t = call_instance(c, *d->fn, scope_, call.callee);
    } else if (d->fn) {
      std::optional<Type> ret = mi_.return_type(*d->fn);
      if (!ret)
        error(call.loc, "recursive call to '" + call.callee + "' needs a declared return type");
      else
        t = call_signature(c, call.callee, d->fn->params, d->fn->defaults, *ret, d->fn->where);
    } else if (d->ext) {
      t = call_signature(c, call.callee, d->ext->params, {}, d->ext->ret_type, d->ext->where);
    } else {
      // A prim called from graph code: its inputs are the parameters, its outputs the results.
      std::vector<VarRef> params;
      for (const Buffer& b : d->prim->inputs)
        params.push_back(Var::make(b.name, Type::tensor(b.dtype, b.shape), b.loc));
      std::vector<Type> outs;
      for (const Buffer& b : d->prim->outputs)
        outs.push_back(Type::tensor(b.dtype, b.shape));
      Type ret = outs.size() == 1 ? outs[0] : Type::tuple(outs);
      t = call_signature(c, call.callee, params, {}, ret, d->prim->where);
    }
  } else if (Ref<Function> f = scope_.imported_function(call.callee)) {
    std::string_view prefix = std::string_view(call.callee).substr(0, call.callee.find('.'));
    const Module* imported = nullptr;
    for (const Import& i : scope_.imports)
      if (i.name == prefix && i.module) imported = i.module.get();
    t = call_instance(c, *f, *imported, call.callee);
  } else {
    unknown_callee(c);
  }
  s_.absorb();
  return Call::make(c.callee, c.args, c.kwargs, t, c.loc);
}

Type BodyInferrer::call_op(const OpDef& op, const Call& call) {
  std::vector<Type> arg_types, kwarg_types;
  for (const Expr& a : call.args)
    arg_types.push_back(a->type);
  for (const KeywordArg& k : call.kwargs)
    kwarg_types.push_back(k.value->type);
  std::optional<BoundArgs> bound = bind_arguments(op, call, arg_types, kwarg_types, s_.ctx);
  if (!bound) return Type::unknown();
  for (size_t i = 0; i < op.params.size(); ++i) {
    ParamKind k = op.params[i].kind;
    if ((k == ParamKind::Tensor || k == ParamKind::TensorList) && bound->values[i].defined() &&
        has_unknown(bound->types[i]))
      return Type::unknown(); // an earlier error; stay quiet
  }
  std::optional<Type> t = op.infer(call, *bound, s_.ctx);
  return t ? *t : Type::unknown();
}

// The spelling of the operator of ir/Operators.def whose call is `callee` when no op stands
// behind it on tensors (`a % b`, the call mod(a, b)), else null.
const char* operator_without_op(std::string_view callee) {
  struct Operator {
    std::string_view callee;
    const char* spelling;
  };
  static constexpr Operator kOperators[] = {
#define DSC_OPERATOR(Name, callee, spelling, arity) {callee, spelling},
#include "ir/Operators.def"
  };
  for (const Operator& o : kOperators)
    if (o.callee == callee && !find_op(callee)) return o.spelling;
  return nullptr;
}

void BodyInferrer::unknown_callee(const Call& call) {
  std::vector<std::string> names;
  for (const OpDef* op : all_ops())
    names.push_back(op->name);
  for (const Module::Decl& d : scope_.decls)
    names.push_back(d.name());
  for (const Import& i : scope_.imports) {
    if (!i.module) continue;
    for (const Module::Decl& d : i.module->decls)
      if (d.fn) names.push_back(i.name + "." + d.name());
  }
  if (const char* spelling = operator_without_op(call.callee)) {
    const std::string op = std::string("'") + spelling + "'";
    error(call.loc, op + " is not defined on tensors")
        .notes.push_back({call.loc, op + " works on dims and in prims; the op set (ir/Ops.def) has no "
                                         "op for it on tensors"});
    return;
  }
  Diagnostic& d = error(call.loc, "unknown op '" + call.callee + "'");
  d.code = DiagnosticCode::UnknownOp;
  d.subject = call.callee;
  suggest(d, call.callee, names, call.loc);
}

std::optional<std::vector<std::pair<Expr, SourceLoc>>>
BodyInferrer::bind_call_args(const Call& call, const std::string& name,
                             const std::vector<VarRef>& params, const std::vector<Expr>& defaults) {
  const size_t n = params.size();
  std::vector<std::pair<Expr, SourceLoc>> out(n, {Expr(), call.loc});
  if (call.args.size() > n) {
    SourceLoc loc = argument_loc(call.args[n], call.loc);
    error(loc, name + " takes " + std::to_string(n) + " argument" + (n == 1 ? "" : "s") + ", got " +
                   std::to_string(call.args.size()));
    return std::nullopt;
  }
  bool ok = true;
  for (size_t i = 0; i < call.args.size(); ++i)
    out[i] = {call.args[i], argument_loc(call.args[i], call.loc)};
  for (const KeywordArg& k : call.kwargs) {
    SourceLoc loc = k.loc.valid() ? k.loc : call.loc;
    size_t i = 0;
    while (i < n && params[i]->name != k.name)
      ++i;
    if (i == n) {
      std::vector<std::string> names;
      for (const VarRef& p : params)
        names.push_back(p->name);
      Diagnostic& d = error(loc, name + " has no parameter '" + k.name + "'");
      suggest(d, k.name, names, loc);
      ok = false;
    } else if (out[i].first.defined()) {
      error(loc, name + ": argument '" + k.name + "' given twice");
      ok = false;
    } else {
      out[i] = {k.value, loc};
    }
  }
  for (size_t i = 0; i < n; ++i) {
    if (out[i].first.defined()) continue;
    if (i < defaults.size() && defaults[i].defined()) {
      out[i].first = defaults[i];
      continue;
    }
    error(call.loc, name + ": missing argument '" + params[i]->name + "'");
    ok = false;
  }
  if (!ok) return std::nullopt;
  return out;
}

bool BodyInferrer::require_where(const std::vector<WhereClause>& where, const SymbolMap& map,
                                 const Call& call, const std::string& name) {
  for (const WhereClause& w : where) {
    bool bound = true;
    for (const std::string& n : sym::free_symbols(w.predicate))
      bound &= map.count(n) > 0;
    if (!bound) continue; // about symbols the call does not determine
    sym::Expr p = substitute(w.predicate, map);
    std::string clause = "where clause '" + sym::to_string(w.predicate) + "'";
    sym::Bindings witness;
    switch (s_.ctx.decide(p, &witness)) {
    case sym::Verdict::Proved:
      break;
    case sym::Verdict::Disproved: {
      Diagnostic& d = error(call.loc, "call to " + name + " violates its " + clause);
      std::string vars = format_bindings(witness, p);
      d.notes.push_back(
          {call.loc, "here it reads '" + sym::to_string(p) + "', which " +
                         (vars.empty() ? "is false" : "never holds (e.g. " + vars + ")")});
      return false;
    }
    case sym::Verdict::Unknown:
      s_.ctx.record(p, call.loc, clause + " of " + name);
      break;
    }
  }
  s_.absorb();
  return true;
}

Type BodyInferrer::call_signature(const Call& call, const std::string& name,
                                  const std::vector<VarRef>& params,
                                  const std::vector<Expr>& defaults, const Type& ret,
                                  const std::vector<WhereClause>& where) {
  auto args = bind_call_args(call, name, params, defaults);
  if (!args) return Type::unknown();
  if (!ret.is_tensor() && !ret.is_tuple()) {
    error(call.loc, "the result type of '" + name + "' is " + to_string(ret) +
                        ", so its calls cannot be typed");
    return Type::unknown();
  }
  std::vector<DimPair> pairs;
  bool unknown = false;
  for (size_t i = 0; i < params.size(); ++i) {
    std::string what = name + ": argument '" + params[i]->name + "'";
    if (is_non_value((*args)[i].first)) {
      error((*args)[i].second, what + " must be a tensor");
      return Type::unknown();
    }
    Match m =
        collect_pairs(params[i]->type, (*args)[i].first->type, (*args)[i].second, what, pairs);
    if (m == Match::Error) return Type::unknown();
    unknown |= m == Match::Unknown;
  }
  if (unknown) return Type::unknown();
  SymbolMap map;
  if (!bind_pairs(pairs, map, false)) return Type::unknown();
  if (!require_where(where, map, call, name)) return Type::unknown();
  // Symbols of the return type that no parameter binds are data-dependent: fresh per call.
  std::set<std::string> ret_symbols;
  add_symbols(ret, ret_symbols);
  for (const std::string& n : ret_symbols)
    if (!map.count(n)) map[n] = s_.ctx.fresh_symbol(n);
  return canon(substitute(ret, map));
}

Type BodyInferrer::call_instance(const Call& call, const Function& callee, const Module& scope,
                                 const std::string& shown_name) {
  for (const auto& [m, n] : s_.instantiating) {
    if (m == &scope && n == callee.name) {
      error(call.loc, "recursive call to '" + shown_name + "' cannot be instantiated");
      return Type::unknown();
    }
  }
  if (s_.instantiating.size() >= kMaxInstantiationDepth) {
    error(call.loc, "calls nest too deeply instantiating '" + shown_name + "'");
    return Type::unknown();
  }
  auto args = bind_call_args(call, shown_name, callee.params, callee.defaults);
  if (!args) return Type::unknown();

  SymbolMap map;
  std::vector<DimPair> pairs;
  std::vector<Expr> values(callee.params.size());
  bool unknown = false;
  for (size_t i = 0; i < callee.params.size(); ++i) {
    const VarRef& p = callee.params[i];
    const auto& [arg, loc] = (*args)[i];
    std::string what = shown_name + ": argument '" + p->name + "'";
    const Type& pt = p->type;
    if (pt.is_attribute()) {
      Expr lit_expr = literal_value(arg);
      const Literal* lit = lit_expr.as<Literal>();
      Expr value;
      const char* expected = "a string";
      switch (pt.kind) {
      case Type::Kind::Int:
        expected = "an integer literal";
        if (lit && std::holds_alternative<int64_t>(lit->value)) {
          value = lit_expr;
          map[p->name] = sym::Expr(std::get<int64_t>(lit->value));
        }
        break;
      case Type::Kind::Float:
        expected = "a number literal";
        if (lit && !std::holds_alternative<bool>(lit->value)) value = lit_expr;
        break;
      case Type::Kind::Bool:
        expected = "true or false";
        if (lit && std::holds_alternative<bool>(lit->value)) value = lit_expr;
        break;
      default:
        if (arg.is<StringImm>()) value = arg;
        break;
      }
      if (!value.defined()) {
        error(loc, what + " must be " + expected);
        return Type::unknown();
      }
      values[i] = value;
      continue;
    }
    const Type& at = arg->type;
    if (is_non_value(arg)) {
      error(loc, what + " must be a tensor");
      return Type::unknown();
    }
    if (has_unknown(at)) {
      unknown = true;
      continue;
    }
    if (pt.kind == Type::Kind::Any && !at.is_tensor()) {
      error(loc, what + " must be a tensor, got " +
                     (at.is_tuple() ? to_string(at) : std::string("a non-tensor value")));
      return Type::unknown();
    }
    Match m = collect_pairs(pt, at, loc, what, pairs);
    if (m == Match::Error) return Type::unknown();
    unknown |= m == Match::Unknown;
    values[i] = Expr(Var::make(p->name, at, p->loc));
  }
  if (unknown) return Type::unknown();
  if (!bind_pairs(pairs, map, false)) return Type::unknown();
  if (!require_where(callee.where, map, call, shown_name)) return Type::unknown();

  s_.instantiating.emplace_back(&scope, callee.name);
  s_.ctx.push_context({call.loc, "in " + shown_name + ", called here"}, "in " + shown_name + ": ");
  Type t = BodyInferrer(mi_, s_, scope, callee, std::move(map), true).run_instance(values);
  s_.ctx.pop_context();
  s_.instantiating.pop_back();
  return t;
}

} // namespace

ir::Module infer_shapes(const ir::Module& m, PassContext& ctx) {
  return ModuleInferrer(m, ctx).run();
}

} // namespace dsc::passes
