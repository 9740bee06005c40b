#include "passes/InlineCalls.h"

#include <map>
#include <set>
#include <unordered_map>

#include "ir/Functor.h"
#include "ir/OpRegistry.h"
#include "passes/IRUtil.h"
#include "passes/InlineNames.h"
#include "passes/LinearDim.h"
#include "passes/Pipeline.h"
#include "symbolic/Eval.h"
#include "symbolic/Printer.h"
#include "symbolic/Simplify.h"

namespace dsc::passes {

namespace {

namespace sym = symbolic;
using ir::Expr;
using SymbolMap = std::map<std::string, sym::Expr>;

// Calls nest at most this deep below an entry (docs/dscc.md, "Limits"; infer_shapes
// instantiates fns with `tensor` parameters 32 levels deep). Each round inlines one level, and
// one more round finds nothing left to inline.
constexpr int kMaxCallDepth = 40;

// A value while a body is flattened: an atom (a var, a literal, or an attribute such as a
// dims list), or a tuple of values.
struct Value {
  Expr atom;
  std::vector<Value> fields;
  bool is_tuple() const { return !atom.defined(); }
};

// Where the names of a body being flattened resolve.
struct Scope {
  const ir::Module* module = nullptr; // unqualified callees
  std::string prefix;                 // "nn." in an imported module's body, else ""
  SymbolMap symbols;                  // callee symbols (and int attributes) -> caller dims
  std::unordered_map<const ir::Var*, Value> env;
  bool own = false; // the fn's own (typed) body: its calls are inlined this round
};

class Expander {
public:
  Expander(const ir::Module& m, std::vector<ir::Import>& imports, const ir::Function& f,
           PassContext& ctx)
      : m_(m), imports_(imports), f_(f), ctx_(ctx) {
    for (const ir::Module::Decl& d : m.decls)
      names_.reserve(d.name());
    for (const ir::Import& i : imports)
      names_.reserve(i.name);
    for (const ir::OpDef* op : ir::all_ops())
      names_.reserve(op->name);
    std::set<std::string> symbols, own_names;
    for (const ir::VarRef& p : f.params) {
      names_.reserve(p->name);
      add_symbols(p->type, symbols);
    }
    for (const ir::WhereClause& w : f.where)
      add_symbols(w.predicate, symbols);
    for (const ir::ShapeFact& fact : f.facts)
      add_symbols(fact.predicate, symbols);
    add_symbols(f.ret_type, symbols);
    collect_symbols(f.body, true, symbols, &own_names);
    for (const std::string& s : symbols)
      names_.reserve(s);
    for (const std::string& n : own_names)
      names_.claim(n);
  }

  // One round: the fn with its own calls inlined and everything flattened (untyped).
  Ref<ir::Function> run(bool* inlined) {
    Scope scope;
    scope.module = &m_;
    scope.own = true;
    for (const ir::VarRef& p : f_.params)
      scope.env[p.get()] = Value{Expr(p), {}};
    std::vector<ir::Binding> out;
    const ir::Block* body = f_.body.as<ir::Block>();
    Value r = block(*body, scope, out, "result");
    *inlined = inlined_;
    if (failed_) return nullptr;
    return rebuild_function(f_, f_.ret_type,
                            ir::Block::make(std::move(out), materialize(r), body->loc), {});
  }

private:
  // ---------------------------------------------------------------- values

  static Expr materialize(const Value& v) {
    if (!v.is_tuple()) return v.atom;
    std::vector<Expr> fields;
    for (const Value& f : v.fields)
      fields.push_back(materialize(f));
    return ir::Tuple::make(std::move(fields));
  }

  // `let NAME = value`, named after `hint` (destructured into one var per field when `type`
  // is a tuple).
  Value emit(const std::string& hint, Expr value, const ir::Type& type,
             std::vector<ir::Binding>& out, SourceLoc loc) {
    std::string base = hint;
    if (base.empty()) {
      const ir::Call* c = value.as<ir::Call>();
      base = c ? c->callee : "t";
    }
    std::string name = names_.fresh(base);
    if (type.is_tuple()) {
      std::vector<ir::VarRef> vars;
      Value v;
      for (size_t i = 0; i < type.fields.size(); ++i) {
        vars.push_back(
            ir::Var::make(names_.fresh(base + "_" + std::to_string(i)), ir::Type::unknown(), loc));
        v.fields.push_back(Value{Expr(vars.back()), {}});
      }
      out.push_back(ir::Binding{std::move(vars), std::move(value), false, loc});
      return v;
    }
    ir::VarRef var = ir::Var::make(name, ir::Type::unknown(), loc);
    out.push_back(ir::Binding{{var}, std::move(value), false, loc});
    return Value{Expr(var), {}};
  }

  Expr atom(const Value& v) { return materialize(v); }

  sym::Expr subst(const sym::Expr& e, const Scope& s) {
    if (s.symbols.empty()) return e;
    return sym::simplify(ir::substitute(e, s.symbols));
  }

  ir::Type subst(const ir::Type& t, const Scope& s) {
    ir::Type out = ir::substitute(t, s.symbols);
    for (sym::Expr& d : out.shape)
      d = sym::simplify(d);
    for (ir::Type& f : out.fields)
      f = subst(f, s);
    return out;
  }

  // ---------------------------------------------------------------- expressions

  Value expr(const Expr& e, Scope& s, std::vector<ir::Binding>& out, const std::string& hint) {
    switch (e.kind()) {
    case ir::NodeKind::Var: {
      auto it = s.env.find(e.as<ir::Var>());
      if (it != s.env.end()) return it->second;
      fail(e->loc, "'" + e.as<ir::Var>()->name + "' is not bound");
      return Value{e, {}};
    }
    case ir::NodeKind::Literal:
    case ir::NodeKind::StringImm:
      return Value{e, {}};
    case ir::NodeKind::ShapeExpr: {
      if (s.symbols.empty()) return Value{e, {}};
      std::vector<sym::Expr> dims;
      for (const sym::Expr& d : e.as<ir::ShapeExpr>()->dims)
        dims.push_back(subst(d, s));
      return Value{ir::ShapeExpr::make(std::move(dims), e->loc), {}};
    }
    case ir::NodeKind::ListExpr: {
      std::vector<Expr> items;
      for (const Expr& i : e.as<ir::ListExpr>()->items)
        items.push_back(operand(i, s, out));
      return Value{ir::ListExpr::make(std::move(items), ir::Type::unknown(), e->loc), {}};
    }
    case ir::NodeKind::Tuple: {
      Value v;
      for (const Expr& f : e.as<ir::Tuple>()->fields)
        v.fields.push_back(expr(f, s, out, ""));
      return v;
    }
    case ir::NodeKind::GetItem: {
      const ir::GetItem* g = e.as<ir::GetItem>();
      Value t = expr(g->tuple, s, out, hint);
      if (t.is_tuple()) {
        if (static_cast<size_t>(g->index) < t.fields.size())
          return t.fields[static_cast<size_t>(g->index)];
        fail(e->loc, "tuple index out of range");
        return Value{e, {}};
      }
      return emit(hint, ir::GetItem::make(t.atom, g->index, {}, e->loc),
                  s.own ? e->type : ir::Type::unknown(), out, e->loc);
    }
    case ir::NodeKind::Block:
      return block(*e.as<ir::Block>(), s, out, hint);
    case ir::NodeKind::If:
      return if_expr(e, s, out, hint);
    case ir::NodeKind::Loop:
      return loop_expr(e, s, out, hint);
    case ir::NodeKind::Call:
      return call(e, s, out, hint);
    default:
      fail(e->loc, std::string("unexpected ") + ir::node_kind_name(e.kind()));
      return Value{e, {}};
    }
  }

  // An operand that must be a var or a literal (a tensor argument).
  Expr operand(const Expr& e, Scope& s, std::vector<ir::Binding>& out) {
    Expr lit = ir::literal_value(e);
    if (lit.defined()) return lit;
    return atom(expr(e, s, out, ""));
  }

  // An attribute argument (axis, dims, dtype, a fill value): substituted, never flattened.
  Expr attribute(const Expr& e, Scope& s, std::vector<ir::Binding>& out) {
    switch (e.kind()) {
    case ir::NodeKind::Var:
    case ir::NodeKind::Literal:
    case ir::NodeKind::StringImm:
    case ir::NodeKind::ShapeExpr:
      return atom(expr(e, s, out, "t"));
    case ir::NodeKind::ListExpr: {
      std::vector<Expr> items;
      for (const Expr& i : e.as<ir::ListExpr>()->items)
        items.push_back(attribute(i, s, out));
      return ir::ListExpr::make(std::move(items), ir::Type::unknown(), e->loc);
    }
    case ir::NodeKind::Call: {
      const ir::Call* c = e.as<ir::Call>();
      if (ir::op_id(c->callee) == ir::OpId::neg && c->args.size() == 1 && c->kwargs.empty()) {
        Expr inner = attribute(c->args[0], s, out);
        Expr lit = ir::literal_value(ir::Call::make(c->callee, {inner}, {}, {}, e->loc));
        if (lit.defined()) return lit;
      }
      return operand(e, s, out);
    }
    default:
      return operand(e, s, out);
    }
  }

  Value block(const ir::Block& b, Scope& s, std::vector<ir::Binding>& out,
              const std::string& hint) {
    for (const ir::Binding& bind : b.bindings)
      binding(bind, s, out);
    return expr(b.result, s, out, hint);
  }

  void binding(const ir::Binding& b, Scope& s, std::vector<ir::Binding>& out) {
    if (b.vars.size() == 1) {
      const ir::VarRef& v = b.vars[0];
      size_t before = out.size();
      Value r = expr(b.value, s, out, v->name);
      if (b.has_asserted_type)
        r = assert_type(r, subst(v->type, s), v->name, out, before, b.loc, s.own);
      else if (s.own)
        r = rename_last(r, v->name, out, before);
      s.env[v.get()] = r;
      return;
    }
    size_t before = out.size();
    Value r = expr(b.value, s, out, "");
    if (r.is_tuple() && r.fields.size() == b.vars.size()) {
      if (s.own) r = rename_fields(r, b.vars, out, before, s);
      for (size_t i = 0; i < b.vars.size(); ++i)
        s.env[b.vars[i].get()] = r.fields[i];
      return;
    }
    // A tuple-valued var: destructure it here.
    std::vector<ir::VarRef> vars;
    for (const ir::VarRef& v : b.vars) {
      std::string name = s.own ? names_.own(v->name) : names_.fresh(v->name);
      vars.push_back(ir::Var::make(name, ir::Type::unknown(), v->loc));
      s.env[v.get()] = Value{Expr(vars.back()), {}};
    }
    out.push_back(ir::Binding{std::move(vars), atom(r), false, b.loc});
  }

  // The destructuring binding that made the fields of `r` takes the fn's own names: when it
  // was made for this binding, or when its names are made up and nothing after it uses them.
  Value rename_fields(const Value& r, const std::vector<ir::VarRef>& names,
                      std::vector<ir::Binding>& out, size_t before, Scope& s) {
    std::set<const ir::Var*> olds;
    for (const Value& f : r.fields) {
      if (f.is_tuple() || !f.atom.is<ir::Var>()) return r;
      olds.insert(f.atom.as<ir::Var>());
    }
    size_t k = out.size();
    while (k-- > 0) {
      const ir::Binding& cand = out[k];
      if (cand.vars.size() != r.fields.size()) continue;
      bool same = true;
      for (size_t i = 0; i < cand.vars.size(); ++i)
        same = same && Expr(cand.vars[i]).same_as(r.fields[i].atom);
      if (same) break;
    }
    if (k >= out.size()) return r;
    if (k < before)
      for (const ir::VarRef& v : out[k].vars)
        if (names_.claimed(v->name)) return r;
    for (size_t later = k + 1; later < out.size(); ++later)
      if (mentions_var(out[later].value, olds)) return r;
    std::unordered_map<const ir::Var*, Value> renamed;
    Value out_r;
    for (size_t i = 0; i < names.size(); ++i) {
      ir::VarRef& old = out[k].vars[i];
      ir::VarRef v = ir::Var::make(names_.own(names[i]->name), old->type, old->loc);
      renamed[old.get()] = Value{Expr(v), {}};
      old = v;
      out_r.fields.push_back(Value{Expr(v), {}});
    }
    for (auto& [var, value] : s.env)
      value = replace_vars(value, renamed);
    return out_r;
  }

  static Value replace_vars(const Value& v,
                            const std::unordered_map<const ir::Var*, Value>& renamed) {
    if (!v.is_tuple()) {
      const ir::Var* var = v.atom.as<ir::Var>();
      auto it = var ? renamed.find(var) : renamed.end();
      return it == renamed.end() ? v : it->second;
    }
    Value out;
    for (const Value& f : v.fields)
      out.fields.push_back(replace_vars(f, renamed));
    return out;
  }

  static bool mentions_var(const Expr& e, const std::set<const ir::Var*>& vars) {
    if (!e.defined()) return false;
    switch (e.kind()) {
    case ir::NodeKind::Var:
      return vars.count(e.as<ir::Var>()) > 0;
    case ir::NodeKind::ListExpr:
      for (const Expr& i : e.as<ir::ListExpr>()->items)
        if (mentions_var(i, vars)) return true;
      return false;
    case ir::NodeKind::Call: {
      const ir::Call* c = e.as<ir::Call>();
      for (const Expr& a : c->args)
        if (mentions_var(a, vars)) return true;
      for (const ir::KeywordArg& kw : c->kwargs)
        if (mentions_var(kw.value, vars)) return true;
      return false;
    }
    case ir::NodeKind::Tuple:
      for (const Expr& f : e.as<ir::Tuple>()->fields)
        if (mentions_var(f, vars)) return true;
      return false;
    case ir::NodeKind::GetItem:
      return mentions_var(e.as<ir::GetItem>()->tuple, vars);
    case ir::NodeKind::If: {
      const ir::If* i = e.as<ir::If>();
      return mentions_var(i->cond, vars) || mentions_var(i->then_branch, vars) ||
             mentions_var(i->else_branch, vars);
    }
    case ir::NodeKind::Loop: {
      const ir::Loop* l = e.as<ir::Loop>();
      for (const Expr& init : l->inits)
        if (mentions_var(init, vars)) return true;
      return mentions_var(l->hi, vars) || mentions_var(l->cond, vars) ||
             mentions_var(l->body, vars);
    }
    case ir::NodeKind::Block: {
      const ir::Block* b = e.as<ir::Block>();
      for (const ir::Binding& bind : b->bindings)
        if (mentions_var(bind.value, vars)) return true;
      return mentions_var(b->result, vars);
    }
    default:
      return false;
    }
  }

  // Whether `r` is the var that the last binding of `out` made, one of those made since
  // `before` (a value bound earlier keeps its var: other bindings may refer to it).
  static bool made_last(const Value& r, const std::vector<ir::Binding>& out, size_t before) {
    return !r.is_tuple() && out.size() > before && out.back().vars.size() == 1 &&
           Expr(out.back().vars[0]).same_as(r.atom);
  }

  // A binding of the fn itself keeps its name: the binding that made its value is renamed.
  Value rename_last(const Value& r, const std::string& name, std::vector<ir::Binding>& out,
                    size_t before) {
    if (!made_last(r, out, before)) return r;
    ir::Binding& last = out.back();
    const ir::VarRef& old = last.vars[0];
    ir::VarRef v = ir::Var::make(names_.own(name), old->type, old->loc);
    last.vars[0] = v;
    return Value{Expr(v), {}};
  }

  // `r` asserted to have type `t`: the binding that just made it asserts it, else a new one.
  Value assert_type(const Value& r, const ir::Type& t, const std::string& name,
                    std::vector<ir::Binding>& out, size_t before, SourceLoc loc, bool own) {
    if (r.is_tuple() || !t.is_tensor()) return own ? rename_last(r, name, out, before) : r;
    if (made_last(r, out, before) && !out.back().has_asserted_type) {
      ir::Binding& last = out.back();
      const ir::VarRef& old = last.vars[0];
      ir::VarRef v = ir::Var::make(own ? names_.own(name) : old->name, t, old->loc);
      last.vars[0] = v;
      last.has_asserted_type = true;
      return Value{Expr(v), {}};
    }
    ir::VarRef v = ir::Var::make(own ? names_.own(name) : names_.fresh(name), t, loc);
    out.push_back(ir::Binding{{v}, atom(r), true, loc});
    return Value{Expr(v), {}};
  }

  Value if_expr(const Expr& e, Scope& s, std::vector<ir::Binding>& out, const std::string& hint) {
    const ir::If* i = e.as<ir::If>();
    Expr cond = operand(i->cond, s, out);
    auto branch = [&](const Expr& b) {
      Scope inner = s;
      std::vector<ir::Binding> bindings;
      Value r = block(*b.as<ir::Block>(), inner, bindings, hint);
      return ir::Block::make(std::move(bindings), materialize(r), b->loc);
    };
    Expr then_branch = branch(i->then_branch);
    Expr else_branch = branch(i->else_branch);
    Expr value = ir::If::make(cond, then_branch, else_branch, {}, e->loc);
    return emit(hint, value, s.own ? e->type : ir::Type::unknown(), out, e->loc);
  }

  // A loop: its inits and end flattened before it, its cond and body flattened in their own
  // blocks. A callee's loop gets a fresh symbol, so that two calls' loops differ.
  Value loop_expr(const Expr& e, Scope& s, std::vector<ir::Binding>& out, const std::string& hint) {
    const ir::Loop* l = e.as<ir::Loop>();
    Expr hi = l->hi.is<ir::ShapeExpr>() ? atom(expr(l->hi, s, out, "")) : operand(l->hi, s, out);
    std::vector<Expr> inits;
    for (size_t k = 0; k < l->inits.size(); ++k)
      inits.push_back(atom(expr(l->inits[k], s, out, l->carries[k]->name)));
    Scope inner = s;
    std::string var = l->var;
    if (!s.own) {
      var = names_.fresh(l->var);
      inner.symbols[l->var] = sym::sym(var);
    }
    std::vector<ir::VarRef> carries;
    for (size_t k = 0; k < l->carries.size(); ++k) {
      const ir::VarRef& c = l->carries[k];
      ir::Type t = l->declared[k] ? subst(c->type, inner) : ir::Type::unknown();
      carries.push_back(ir::Var::make(s.own ? names_.own(c->name) : names_.fresh(c->name), t, c->loc));
      inner.env[c.get()] = Value{Expr(carries.back()), {}};
    }
    auto nested = [&](const Expr& b) {
      if (!b.defined()) return Expr();
      Scope scope = inner;
      std::vector<ir::Binding> bindings;
      Value r = block(*b.as<ir::Block>(), scope, bindings, "");
      return ir::Block::make(std::move(bindings), materialize(r), b->loc);
    };
    Expr cond = nested(l->cond);
    Expr body = nested(l->body);
    sym::Expr bound = l->bound.defined() ? subst(l->bound, s) : l->bound;
    Expr value = ir::Loop::make(var, subst(l->lo, s), hi, bound, std::move(carries), l->declared,
                                std::move(inits), cond, body, {}, {}, e->loc);
    return emit(hint, value, s.own ? e->type : ir::Type::unknown(), out, e->loc);
  }

  // ---------------------------------------------------------------- calls

  // The fn a callee names from scope `s`, with the module its body resolves in and that
  // module's prefix; null when it is not a fn.
  struct Callee {
    Ref<ir::Function> fn;
    const ir::Module* module = nullptr;
    std::string prefix;
    std::string qualified; // how the fn's own module calls it from here
  };

  Callee resolve(const std::string& name, const Scope& s) {
    Callee c;
    size_t dot = name.find('.');
    if (dot == std::string::npos) {
      c.fn = s.module->function(name);
      c.module = s.module;
      c.prefix = s.prefix;
      c.qualified = s.prefix + name;
      return c;
    }
    std::string prefix = name.substr(0, dot);
    for (const ir::Import& i : s.module->imports) {
      if (i.name != prefix || !i.module) continue;
      c.fn = i.module->function(name.substr(dot + 1));
      c.module = i.module.get();
      c.prefix = prefix + ".";
      c.qualified = name;
      // The fn being inlined must be able to name it too.
      bool known = false;
      for (const ir::Import& own : imports_)
        known |= own.name == prefix;
      if (!known) imports_.push_back(i);
    }
    return c;
  }

  Value call(const Expr& e, Scope& s, std::vector<ir::Binding>& out, const std::string& hint) {
    const ir::Call& c = *e.as<ir::Call>();
    ir::Type type = s.own ? e->type : ir::Type::unknown();
    if (const ir::OpDef* op = ir::find_op(c.callee)) {
      auto kind = [&](size_t i, const std::string& kw) {
        if (kw.empty()) return i < op->params.size() ? op->params[i].kind : ir::ParamKind::Tensor;
        for (const ir::ParamSpec& p : op->params)
          if (kw == p.name) return p.kind;
        return ir::ParamKind::Tensor;
      };
      auto arg = [&](const Expr& a, ir::ParamKind k) {
        if (k == ir::ParamKind::Tensor) return operand(a, s, out);
        if (k == ir::ParamKind::TensorList && a.is<ir::ListExpr>()) {
          std::vector<Expr> items;
          for (const Expr& item : a.as<ir::ListExpr>()->items)
            items.push_back(operand(item, s, out));
          return ir::ListExpr::make(std::move(items), ir::Type::unknown(), a->loc);
        }
        return attribute(a, s, out);
      };
      std::vector<Expr> args;
      for (size_t i = 0; i < c.args.size(); ++i)
        args.push_back(arg(c.args[i], kind(i, "")));
      std::vector<ir::KeywordArg> kwargs;
      for (const ir::KeywordArg& k : c.kwargs)
        kwargs.push_back({k.name, arg(k.value, kind(0, k.name)), k.loc});
      Expr value = ir::Call::make(c.callee, std::move(args), std::move(kwargs), {}, c.loc);
      return emit(hint, value, type, out, c.loc);
    }

    Callee callee = resolve(c.callee, s);
    if (!callee.fn) {
      // A prim or an extern: only the fn's own module can call it.
      if (!s.prefix.empty() && c.callee.find('.') == std::string::npos)
        fail(c.loc, "'" + s.prefix + c.callee + "' is not a fn, so it cannot be inlined");
      std::vector<Expr> args;
      for (const Expr& a : c.args)
        args.push_back(operand(a, s, out));
      std::vector<ir::KeywordArg> kwargs;
      for (const ir::KeywordArg& k : c.kwargs)
        kwargs.push_back({k.name, operand(k.value, s, out), k.loc});
      Expr value = ir::Call::make(c.callee, std::move(args), std::move(kwargs), {}, c.loc);
      return emit(hint, value, type, out, c.loc);
    }
    if (s.own) return inline_call(c, callee, s, out, hint);

    // A call inside a callee's body: flattened now, inlined next round (once it is typed).
    const ir::Function& g = *callee.fn;
    auto is_attr = [&](size_t i, const std::string& kw) {
      for (size_t p = 0; p < g.params.size(); ++p)
        if ((kw.empty() && p == i) || (!kw.empty() && g.params[p]->name == kw))
          return g.params[p]->type.is_attribute();
      return false;
    };
    std::vector<Expr> args;
    for (size_t i = 0; i < c.args.size(); ++i)
      args.push_back(is_attr(i, "") ? attribute(c.args[i], s, out) : operand(c.args[i], s, out));
    std::vector<ir::KeywordArg> kwargs;
    for (const ir::KeywordArg& k : c.kwargs)
      kwargs.push_back({k.name,
                        is_attr(0, k.name) ? attribute(k.value, s, out) : operand(k.value, s, out),
                        k.loc});
    Expr value = ir::Call::make(callee.qualified, std::move(args), std::move(kwargs), {}, c.loc);
    return emit(hint, value, type, out, c.loc);
  }

  Value inline_call(const ir::Call& c, const Callee& callee, Scope& s,
                    std::vector<ir::Binding>& out, const std::string& hint) {
    const ir::Function& g = *callee.fn;
    inlined_ = true;
    size_t before = out.size();
    // Arguments bound to parameters: positional, keyword, then defaults.
    std::vector<Expr> bound(g.params.size());
    for (size_t i = 0; i < c.args.size() && i < bound.size(); ++i)
      bound[i] = c.args[i];
    for (const ir::KeywordArg& k : c.kwargs)
      for (size_t p = 0; p < g.params.size(); ++p)
        if (g.params[p]->name == k.name) bound[p] = k.value;
    Scope inner;
    inner.module = callee.module;
    inner.prefix = callee.prefix;
    std::vector<std::pair<sym::Expr, sym::Expr>> pairs;
    for (size_t p = 0; p < g.params.size(); ++p) {
      const ir::VarRef& param = g.params[p];
      Expr a = bound[p];
      if (!a.defined()) {
        if (p < g.defaults.size() && g.defaults[p].defined()) {
          a = g.defaults[p];
        } else {
          fail(c.loc, g.name + ": missing argument '" + param->name + "'");
          return Value{Expr(), {}};
        }
      }
      if (param->type.is_attribute()) {
        Expr v = attribute(a, s, out);
        inner.env[param.get()] = Value{v, {}};
        if (const ir::Literal* lit = v.as<ir::Literal>())
          if (const int64_t* iv = std::get_if<int64_t>(&lit->value))
            inner.symbols[param->name] = sym::Expr(*iv);
        continue;
      }
      Value v =
          ir::literal_value(a).defined() ? Value{ir::literal_value(a), {}} : expr(a, s, out, "");
      inner.env[param.get()] = v;
      collect_pairs(param->type, a->type, pairs);
    }
    solve(pairs, inner.symbols);
    // Symbols the body introduces itself (type assertions) get fresh names.
    std::set<std::string> body_symbols;
    collect_symbols(g.body, false, body_symbols);
    for (const std::string& n : body_symbols)
      if (!inner.symbols.count(n)) inner.symbols[n] = sym::sym(names_.fresh(n));
    Value r = block(*g.body.as<ir::Block>(), inner, out, hint);
    return assert_type(r, c.type, hint, out, before, c.loc, false);
  }

  static void collect_pairs(const ir::Type& written, const ir::Type& actual,
                            std::vector<std::pair<sym::Expr, sym::Expr>>& out) {
    if (written.is_tuple() && actual.is_tuple() && written.fields.size() == actual.fields.size()) {
      for (size_t i = 0; i < written.fields.size(); ++i)
        collect_pairs(written.fields[i], actual.fields[i], out);
      return;
    }
    if (!written.is_tensor() || !actual.is_tensor() || written.rank() != actual.rank()) return;
    for (size_t i = 0; i < written.rank(); ++i)
      out.emplace_back(written.shape[i], sym::simplify(actual.shape[i]));
  }

  // The callee's symbols from the argument dims, as infer_shapes bound them: plain symbols
  // first (first appearance wins), then one unbound symbol of a linear dim (`2*S + 1`).
  static void solve(const std::vector<std::pair<sym::Expr, sym::Expr>>& pairs, SymbolMap& map) {
    for (const auto& [w, a] : pairs)
      if (const sym::Sym* s = w.as<sym::Sym>(); s && !map.count(s->name)) map[s->name] = a;
    for (const auto& [w, a] : pairs) {
      std::vector<std::string> unbound;
      for (const std::string& n : sym::free_symbols(w))
        if (!map.count(n)) unbound.push_back(n);
      if (unbound.size() != 1) continue;
      const std::string& u = unbound[0];
      std::optional<LinearDim> linear = linear_in(ir::substitute(w, map), u);
      if (!linear) continue;
      map[u] = sym::simplify(sym::floordiv(a - linear->offset, sym::Expr(linear->step)));
    }
  }

  void fail(SourceLoc loc, const std::string& message) {
    if (!failed_) ctx_.diags.error(loc, "inline_calls: in '" + f_.name + "': " + message);
    failed_ = true;
  }

  const ir::Module& m_;
  std::vector<ir::Import>& imports_;
  const ir::Function& f_;
  PassContext& ctx_;
  InlineNames names_;
  bool inlined_ = false;
  bool failed_ = false;
};

// The facts of `before`, then those of `after` that are new (by canonical predicate).
std::vector<ir::ShapeFact> merge_facts(const std::vector<ir::ShapeFact>& before,
                                       const std::vector<ir::ShapeFact>& after) {
  std::vector<ir::ShapeFact> out = before;
  std::vector<sym::Expr> seen;
  for (const ir::ShapeFact& f : before)
    seen.push_back(sym::simplify(f.predicate));
  for (const ir::ShapeFact& f : after) {
    sym::Expr p = sym::simplify(f.predicate);
    bool known = false;
    for (const sym::Expr& s : seen)
      known |= s.same_as(p);
    if (known) continue;
    seen.push_back(p);
    out.push_back(f);
  }
  return out;
}

// Symbols bound by type assertions (`let y: f32[M] = ...`, a Proved fact `M == ...`) whose
// value is an expression of the parameters' symbols, with that value.
SymbolMap resolvable_symbols(const ir::Function& f, const std::vector<ir::ShapeFact>& facts) {
  std::set<std::string> known;
  for (const ir::VarRef& p : f.params)
    add_symbols(p->type, known);
  SymbolMap map;
  for (const ir::ShapeFact& fact : facts) {
    if (fact.origin != ir::ShapeFact::Origin::Assertion ||
        fact.status != ir::ShapeFact::Status::Proved)
      continue;
    sym::Expr pred = sym::simplify(ir::substitute(fact.predicate, map));
    const sym::EQ* eq = pred.as<sym::EQ>();
    if (!eq) continue;
    sym::Expr d = sym::simplify(eq->a - eq->b);
    std::vector<std::string> unknown;
    for (const std::string& n : sym::free_symbols(d))
      if (!known.count(n)) unknown.push_back(n);
    if (unknown.size() != 1) continue;
    const std::string& s = unknown[0];
    sym::Expr d0 = sym::simplify(ir::substitute(d, {{s, sym::Expr(0)}}));
    sym::Expr d1 = sym::simplify(ir::substitute(d, {{s, sym::Expr(1)}}));
    sym::Expr step = sym::simplify(d1 - d0);
    const sym::Const* c = step.as<sym::Const>();
    if (!c || (c->value != 1 && c->value != -1)) continue;
    if (!sym::canonically_equal(d, sym::Expr(c->value) * sym::sym(s) + d0)) continue;
    map[s] = sym::simplify(c->value == 1 ? sym::Expr(0) - d0 : d0);
  }
  return map;
}

// The (untyped) fn with `map` applied to its written types and dims lists.
Ref<ir::Function> substitute_symbols(const ir::Function& f, const SymbolMap& map) {
  struct Rewriter {
    const SymbolMap& map;
    std::unordered_map<const ir::Var*, Expr> vars;

    ir::Type type(const ir::Type& t) {
      ir::Type out = ir::substitute(t, map);
      for (sym::Expr& d : out.shape)
        d = sym::simplify(d);
      for (ir::Type& field : out.fields)
        field = type(field);
      return out;
    }

    Expr expr(const Expr& e) {
      switch (e.kind()) {
      case ir::NodeKind::Var: {
        auto it = vars.find(e.as<ir::Var>());
        return it == vars.end() ? e : it->second;
      }
      case ir::NodeKind::ShapeExpr: {
        std::vector<sym::Expr> dims;
        for (const sym::Expr& d : e.as<ir::ShapeExpr>()->dims)
          dims.push_back(sym::simplify(ir::substitute(d, map)));
        return ir::ShapeExpr::make(std::move(dims), e->loc);
      }
      case ir::NodeKind::ListExpr: {
        std::vector<Expr> items;
        for (const Expr& i : e.as<ir::ListExpr>()->items)
          items.push_back(expr(i));
        return ir::ListExpr::make(std::move(items), e->type, e->loc);
      }
      case ir::NodeKind::Call: {
        const ir::Call* c = e.as<ir::Call>();
        std::vector<Expr> args;
        for (const Expr& a : c->args)
          args.push_back(expr(a));
        std::vector<ir::KeywordArg> kwargs;
        for (const ir::KeywordArg& k : c->kwargs)
          kwargs.push_back({k.name, expr(k.value), k.loc});
        return ir::Call::make(c->callee, std::move(args), std::move(kwargs), {}, e->loc);
      }
      case ir::NodeKind::Tuple: {
        std::vector<Expr> fields;
        for (const Expr& x : e.as<ir::Tuple>()->fields)
          fields.push_back(expr(x));
        return ir::Tuple::make(std::move(fields), {}, e->loc);
      }
      case ir::NodeKind::GetItem:
        return ir::GetItem::make(expr(e.as<ir::GetItem>()->tuple), e.as<ir::GetItem>()->index, {},
                                 e->loc);
      case ir::NodeKind::If: {
        const ir::If* i = e.as<ir::If>();
        Expr c = expr(i->cond);
        Expr t = expr(i->then_branch);
        return ir::If::make(c, t, expr(i->else_branch), {}, e->loc);
      }
      case ir::NodeKind::Loop: {
        const ir::Loop* l = e.as<ir::Loop>();
        Expr hi = expr(l->hi);
        std::vector<Expr> inits;
        for (const Expr& init : l->inits)
          inits.push_back(expr(init));
        std::vector<ir::VarRef> carries;
        for (size_t k = 0; k < l->carries.size(); ++k) {
          const ir::VarRef& c = l->carries[k];
          carries.push_back(ir::Var::make(c->name, l->declared[k] ? type(c->type) : c->type, c->loc));
          vars[c.get()] = Expr(carries.back());
        }
        Expr cond = l->cond.defined() ? expr(l->cond) : l->cond;
        Expr body = expr(l->body);
        sym::Expr bound =
            l->bound.defined() ? sym::simplify(ir::substitute(l->bound, map)) : l->bound;
        return ir::Loop::make(l->var, sym::simplify(ir::substitute(l->lo, map)), hi, bound,
                              std::move(carries), l->declared, std::move(inits), cond, body, {},
                              {}, e->loc);
      }
      case ir::NodeKind::Block: {
        const ir::Block* b = e.as<ir::Block>();
        std::vector<ir::Binding> bindings;
        for (const ir::Binding& bind : b->bindings) {
          ir::Binding nb = bind;
          nb.value = expr(bind.value);
          if (bind.has_asserted_type) {
            const ir::VarRef& v = bind.vars[0];
            nb.vars = {ir::Var::make(v->name, type(v->type), v->loc)};
            vars[v.get()] = Expr(nb.vars[0]);
          }
          bindings.push_back(std::move(nb));
        }
        Expr r = expr(b->result);
        return ir::Block::make(std::move(bindings), r, e->loc);
      }
      default:
        return e;
      }
    }
  } rw{map, {}};
  ir::Type ret_type = rw.type(f.ret_type);
  return rebuild_function(f, ret_type, rw.expr(f.body), {});
}

// The facts with `map` applied; those that became trivially true are dropped.
std::vector<ir::ShapeFact> substitute_facts(const std::vector<ir::ShapeFact>& facts,
                                            const SymbolMap& map) {
  std::vector<ir::ShapeFact> out;
  for (ir::ShapeFact f : facts) {
    f.predicate = sym::simplify(ir::substitute(f.predicate, map));
    if (const sym::BoolConst* b = f.predicate.as<sym::BoolConst>(); b && b->value) continue;
    out.push_back(std::move(f));
  }
  return merge_facts({}, out);
}

class Inliner {
public:
  Inliner(const ir::Module& typed, PassContext& ctx) : typed_(typed), ctx_(ctx) {
    imports_ = typed.imports;
  }

  ir::Module run() {
    std::vector<ir::Module::Decl> decls;
    for (const ir::Module::Decl& d : typed_.decls) {
      if (d.fn && is_generic(*d.fn)) continue;
      if (!d.fn) {
        decls.push_back(d);
        continue;
      }
      Ref<ir::Function> f = inline_function(d.fn);
      decls.push_back(ir::Module::Decl{f, nullptr, nullptr});
    }
    ir::Module out;
    out.imports = imports_;
    out.decls = std::move(decls);
    return out;
  }

private:
  // `f` with every call inlined; `f` itself after an error.
  Ref<ir::Function> inline_function(const Ref<ir::Function>& f) {
    Ref<ir::Function> current = f, last_flat;
    std::vector<ir::ShapeFact> facts = f->facts;
    for (int round = 0;; ++round) {
      if (round > kMaxCallDepth) {
        ctx_.diags.error(f->loc, "inline_calls: calls nest more than " +
                                     std::to_string(kMaxCallDepth) + " deep in '" + f->name +
                                     "' (is a fn recursive?)");
        return f;
      }
      bool inlined = false;
      // Callees come from the module as given (never a body being inlined into).
      Ref<ir::Function> flat = Expander(typed_, imports_, *current, ctx_).run(&inlined);
      if (!flat) return f;
      Ref<ir::Function> typed = infer(flat, f);
      if (!typed) return f;
      facts = merge_facts(facts, typed->facts);
      current = typed;
      last_flat = flat;
      if (!inlined) break; // this round only flattened (and destructured typed tuples)
    }
    // Symbols that type assertions bound (a callee's, renamed) and whose value the facts give
    // in the parameters' symbols are replaced by it, so that no value's type names a symbol
    // the host cannot compute.
    SymbolMap resolved = resolvable_symbols(*f, facts);
    if (!resolved.empty()) {
      Ref<ir::Function> typed = infer(substitute_symbols(*last_flat, resolved), f);
      if (!typed) return f;
      facts = merge_facts(substitute_facts(facts, resolved), typed->facts);
      current = typed;
    }
    // Each round re-infers the body, which names data-dependent dims afresh (nonzero's count is
    // nnz0, then nnz1): a fact naming a symbol the final fn no longer has is stale, and the
    // final round's facts restate it in the new names.
    std::set<std::string> live;
    for (const ir::VarRef& p : current->params) add_symbols(p->type, live);
    for (const ir::WhereClause& w : current->where) add_symbols(w.predicate, live);
    collect_symbols(current->body, true, live);
    std::erase_if(facts, [&](const ir::ShapeFact& fact) {
      for (const std::string& s : sym::free_symbols(fact.predicate))
        if (!live.count(s)) return true;
      return false;
    });
    Compilation one;
    one.module.imports = imports_;
    one.module.add(rebuild_function(*current, current->ret_type, current->body, facts));
    one.holds = {Invariant::Typed};
    run_within("inline_calls", "collect_facts", one, ctx_);
    return one.module.decls.front().fn;
  }

  // The module `f` is typed in: `f`, in place of the fn of the same name, and the fns it calls
  // (transitively), prims and externs. Not the other fns: typing each of F fns once per round
  // in a module of all F would take time quadratic in F.
  ir::Module module_with(const Ref<ir::Function>& f) {
    std::set<std::string> called;
    std::vector<const ir::Function*> work{f.get()};
    while (!work.empty()) {
      const ir::Function* g = work.back();
      work.pop_back();
      for (const std::string& callee : callees(g->body)) {
        if (callee == f->name || !called.insert(callee).second) continue;
        if (Ref<ir::Function> h = typed_.function(callee)) work.push_back(h.get());
      }
    }
    ir::Module m;
    m.imports = imports_;
    for (const ir::Module::Decl& d : typed_.decls) {
      if (d.fn && d.fn->name == f->name)
        m.add(f);
      else if (!d.fn || called.count(d.fn->name))
        m.decls.push_back(d);
    }
    return m;
  }

  static std::set<std::string> callees(const Expr& body) {
    struct Calls : ir::IRVisitor {
      std::set<std::string> names;
      void visit_node(const ir::Call* c) override {
        names.insert(c->callee);
        ir::IRVisitor::visit_node(c);
      }
    } calls;
    calls.visit(body);
    return std::move(calls.names);
  }

  // infer_shapes on the flattened fn; null (after an error naming `original`) on failure.
  Ref<ir::Function> infer(const Ref<ir::Function>& flat, const Ref<ir::Function>& original) {
    DiagnosticEngine scratch(ctx_.diags.sources());
    PassContext sctx{scratch, ctx_.prover, ctx_.target};
    sctx.instrumentation = ctx_.instrumentation;
    Compilation c;
    c.module = module_with(flat);
    run_within("inline_calls", "infer_shapes", c, sctx);
    const ir::Module& typed = c.module;
    if (scratch.has_errors()) {
      const Diagnostic& d = scratch.diagnostics().front();
      ctx_.diags.error(d.loc, "inline_calls: the inlined body of '" + original->name +
                                  "' does not type: " + d.message);
      return nullptr;
    }
    return typed.function(original->name);
  }

  const ir::Module& typed_;
  PassContext& ctx_;
  std::vector<ir::Import> imports_;
};

} // namespace

ir::Module inline_calls(const ir::Module& typed, PassContext& ctx) {
  return Inliner(typed, ctx).run();
}

} // namespace dsc::passes
