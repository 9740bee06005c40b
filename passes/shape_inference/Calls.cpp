// infer_shapes: calls and the symbols of written types (passes/shape_inference/BodyInferrer.h).

#include "passes/LinearDim.h"
#include "passes/shape_inference/BodyInferrer.h"
#include "support/Suggest.h"
#include "symbolic/Eval.h"
#include "symbolic/Printer.h"

namespace dsc::passes::shape_inference {

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

} // namespace dsc::passes::shape_inference
