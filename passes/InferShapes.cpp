#include "passes/InferShapes.h"

#include "passes/LinearDim.h"
#include "passes/shape_inference/BodyInferrer.h"
#include "support/Suggest.h"
#include "symbolic/Eval.h"
#include "symbolic/Printer.h"

namespace dsc::passes {

namespace shape_inference {

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
    out.dtype = literal_kind_rank(a.dtype) >= literal_kind_rank(b.dtype) ? a.dtype : b.dtype;
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

} // namespace shape_inference

ir::Module infer_shapes(const ir::Module& m, PassContext& ctx) {
  return shape_inference::ModuleInferrer(m, ctx).run();
}

} // namespace dsc::passes
