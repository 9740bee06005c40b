#include "lang/Resolve.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

#include "ir/LibraryRoutine.h"
#include "lang/Dims.h"
#include "lang/ResolvePrim.h"
#include "symbolic/Eval.h"
#include "symbolic/Simplify.h"

namespace dsc::lang {

namespace {

using ir::Type;

std::vector<std::string> type_names() {
  std::vector<std::string> names = ir::dtype_names();
  for (const char* name : {"tensor", "int", "float", "str"})
    names.push_back(name);
  return names;
}

// The op (or intrinsic) that an operator is a call of.
const char* callee_of(ast::Op op) {
  switch (op) {
#define DSC_OPERATOR(Name, callee, spelling, arity)                                                \
  case ast::Op::Name:                                                                              \
    return callee;
#include "ir/Operators.def"
  }
  return "?";
}

bool is_arith(ast::Op op) {
  return op == ast::Op::Add || op == ast::Op::Sub || op == ast::Op::Mul || op == ast::Op::Div ||
         op == ast::Op::Mod;
}

// Calls `f(name, loc)` for every name in `e` (not callees).
template <typename F> void for_each_name(const ast::Expr& e, F&& f) {
  if (e.kind == ast::ExprKind::Name) f(e.text, e.loc);
  for (const ast::ExprPtr& x : e.operands)
    if (x) for_each_name(*x, f);
  for (const ast::Arg& a : e.args)
    if (a.value) for_each_name(*a.value, f);
}

template <typename F> void for_each_type_name(const ast::TypeNode& t, F&& f) {
  for (const ast::ExprPtr& d : t.dims)
    for_each_name(*d, f);
  for (const ast::TypeNode& field : t.fields)
    for_each_type_name(field, f);
}

bool mentions_name(const ast::Expr& e) {
  bool found = false;
  for_each_name(e, [&](const std::string&, SourceLoc) { found = true; });
  return found;
}

struct SymbolInfo {
  SourceLoc loc;
  std::string binder; // "parameter 'x'", "the 'let' of 'y'"
};

struct VarEntry {
  ir::VarRef var;
  SourceLoc loc;
  bool int_attr = false; // an `int` parameter, which dim lists may use like a symbol
};

// Resolves one `fn` or `extern fn`: its signature, and a function's body.
class GraphResolver {
public:
  GraphResolver(DiagnosticEngine& diags, const ImportedModules& imports)
      : diags_(diags), imports_(imports) {}

  Ref<ir::Function> function(const ast::Decl& d);
  Ref<ir::ExternFunc> external(const ast::Decl& d);
  bool views(const ast::Decl& d, ir::ExternFunc& ext);
  bool attributes(const ast::Decl& d, ir::ExternFunc& ext);

private:
  enum class TypeUse { Param, Return, Assertion };

  // ---- signature
  bool params(const std::vector<ast::Param>& ps, bool allow_defaults, std::vector<ir::VarRef>& vars,
              std::vector<ir::Expr>& defaults);
  ir::Expr default_value(const ast::Param& p, Type::Kind kind);
  std::optional<Type> type(const ast::TypeNode& t, TypeUse use, const std::string& owner);
  std::optional<std::vector<ir::WhereClause>> where(const std::vector<ast::ExprPtr>& clauses);
  void collect_let_sites(const ast::Block& b);
  void collect_let_sites(const ast::Expr& e);

  // ---- body
  ir::Expr block(const ast::Block& b, bool fn_body, const std::string& fn_name);
  bool let(const ast::Stmt& s, std::vector<ir::Binding>& bindings);
  void bind_var(const ast::Ident& name, ir::VarRef var, bool int_attr = false);
  ir::Expr value(const ast::Expr& e);
  ir::Expr name_value(const ast::Expr& e);
  ir::Expr call(const ast::Expr& e);
  ir::Expr index(const ast::Expr& e);
  ir::Expr list(const ast::Expr& e);
  ir::Expr compare(const ast::Expr& e);
  ir::Expr if_expr(const ast::Expr& e);
  ir::Expr loop_expr(const ast::Expr& e);
  std::optional<symbolic::Expr> loop_bound(const ast::LoopParts& l, const std::string& var);

  // ---- names
  const VarEntry* find_var(const std::string& name) const;
  bool is_dim_like(const ast::Expr& e, bool in_list) const;
  bool name_is_dim(const std::string& name, bool in_list) const;
  std::optional<symbolic::Expr> dim(const ast::Expr& e, bool in_list);
  void unknown_name(const std::string& name, SourceLoc loc);
  std::vector<std::string> names_in_scope() const;

  DiagnosticEngine& diags_;
  const ImportedModules& imports_;
  std::unordered_map<std::string, SymbolInfo> symbols_;
  // Symbols first named in a `let` type assertion, before the let is reached.
  std::unordered_map<std::string, SourceLoc> pending_symbols_;
  std::vector<std::unordered_map<std::string, VarEntry>> scopes_;
  std::unordered_map<std::string, SourceLoc> let_sites_;
  // The vars of the loops being resolved, innermost last: the written name and the symbol
  // it stands for (renamed when an earlier loop or a symbol has the name).
  std::vector<std::pair<std::string, std::string>> loop_vars_;
  std::set<std::string> loop_symbols_; // every loop symbol of the function so far
  int fresh_ = 0;

  // The symbol of loop var `name` when one is in scope.
  std::optional<symbolic::Expr> loop_symbol(const std::string& name) const {
    for (auto it = loop_vars_.rbegin(); it != loop_vars_.rend(); ++it)
      if (it->first == name) return symbolic::sym(it->second);
    return std::nullopt;
  }
};

// ---------------------------------------------------------------- signatures

std::optional<Type> GraphResolver::type(const ast::TypeNode& t, TypeUse use,
                                        const std::string& owner) {
  switch (t.kind) {
  case ast::TypeNode::Kind::Error:
    return std::nullopt;
  case ast::TypeNode::Kind::Tuple: {
    std::vector<Type> fields;
    bool ok = true;
    for (const ast::TypeNode& f : t.fields) {
      std::optional<Type> ft = type(f, use == TypeUse::Param ? TypeUse::Return : use, owner);
      if (ft && !ft->is_tensor() && !ft->is_tuple()) {
        diags_.error(f.loc, "a tuple holds tensors and tuples, not '" + f.name + "'");
        ft.reset();
      }
      ok = ok && ft.has_value();
      if (ft) fields.push_back(std::move(*ft));
    }
    if (!ok) return std::nullopt;
    return Type::tuple(std::move(fields));
  }
  case ast::TypeNode::Kind::Named: {
    if (use == TypeUse::Param) {
      if (t.name == "tensor") return Type::of_kind(Type::Kind::Any);
      if (t.name == "int") return Type::of_kind(Type::Kind::Int);
      if (t.name == "float") return Type::of_kind(Type::Kind::Float);
      if (t.name == "bool") return Type::of_kind(Type::Kind::Bool);
      if (t.name == "str") return Type::of_kind(Type::Kind::Str);
    } else if (use == TypeUse::Return && t.name == "tensor") {
      return Type::of_kind(Type::Kind::Any);
    }
    if (ir::parse_dtype(t.name)) {
      diags_.error(t.loc, "'" + t.name + "' is a dtype; a tensor type lists its dims: " + t.name +
                              "[...] (" + t.name + "[] for a scalar)");
      return std::nullopt;
    }
    if (t.name == "tensor" || t.name == "int" || t.name == "float" || t.name == "str") {
      diags_.error(t.loc, "'" + t.name + "' is only allowed as the type of a parameter");
      return std::nullopt;
    }
    Diagnostic& d = diags_.error(t.loc, "unknown type '" + t.name + "'");
    if (const char* dtype = dtype_alias(t.name)) {
      d.notes.push_back({SourceLoc{}, std::string("did you mean '") + dtype + "[...]'?"});
    } else {
      suggest(d, t.name, type_names());
    }
    return std::nullopt;
  }
  case ast::TypeNode::Kind::Tensor:
    break;
  }
  std::optional<ir::DType> dtype = ir::parse_dtype(t.name);
  if (!dtype) {
    Diagnostic& d = diags_.error(t.loc, "unknown dtype '" + t.name + "'");
    suggest_dtype(d, t.name);
    return std::nullopt;
  }
  DimContext ctx{diags_, nullptr, &fresh_, "a dim"};
  ctx.name = [&](const std::string& name, SourceLoc loc) -> std::optional<symbolic::Expr> {
    if (std::optional<symbolic::Expr> l = loop_symbol(name)) return l;
    if (symbols_.count(name) || is_anonymous_symbol_name(name)) return symbolic::sym(name);
    if (const VarEntry* v = find_var(name)) {
      if (v->int_attr && use == TypeUse::Assertion) return symbolic::sym(name);
      diags_.error(loc, "'" + name + "' is a value, not a symbol")
          .notes.push_back({v->loc, "'" + name + "' is bound here"});
      return std::nullopt;
    }
    if (use == TypeUse::Assertion) {
      // A symbol first named in a type assertion is bound there, from the value's shape.
      symbols_[name] = SymbolInfo{loc, "the 'let' of '" + owner + "'"};
      pending_symbols_.erase(name);
      return symbolic::sym(name);
    }
    if (use == TypeUse::Return && pending_symbols_.count(name)) return symbolic::sym(name);
    Diagnostic& d = diags_.error(loc, "symbol '" + name + "' is not bound by any parameter");
    suggest(d, name, names_in_scope());
    return std::nullopt;
  };
  std::vector<symbolic::Expr> dims;
  bool ok = true;
  for (const ast::ExprPtr& e : t.dims) {
    std::optional<symbolic::Expr> x = to_dim(*e, ctx);
    ok = ok && x.has_value();
    if (x) dims.push_back(std::move(*x));
  }
  if (!ok) return std::nullopt;
  return Type::tensor(*dtype, std::move(dims));
}

ir::Expr GraphResolver::default_value(const ast::Param& p, Type::Kind kind) {
  const ast::Expr& e = *p.default_value;
  const ast::Expr* lit = &e;
  bool negated = false;
  if (e.kind == ast::ExprKind::Unary && e.op == ast::Op::Neg) {
    lit = e.operands[0].get();
    negated = true;
  }
  const char* want = "a literal";
  switch (kind) {
  case Type::Kind::Int:
    want = "an integer";
    if (lit->kind == ast::ExprKind::Int) {
      std::optional<int64_t> v = int_literal(*lit, negated, diags_);
      return v ? ir::Literal::make(*v, e.loc) : ir::Expr();
    }
    break;
  case Type::Kind::Float:
    want = "a number";
    if (lit->kind == ast::ExprKind::Float)
      return ir::Literal::make(negated ? -lit->float_value : lit->float_value, e.loc);
    if (lit->kind == ast::ExprKind::Int) {
      std::optional<int64_t> v = int_literal(*lit, negated, diags_);
      return v ? ir::Literal::make(static_cast<double>(*v), e.loc) : ir::Expr();
    }
    break;
  case Type::Kind::Bool:
    want = "true or false";
    if (e.kind == ast::ExprKind::Bool) return ir::Literal::make(e.bool_value, e.loc);
    break;
  case Type::Kind::Str:
    want = "a string";
    if (e.kind == ast::ExprKind::String) return ir::StringImm::make(e.text, e.loc);
    break;
  case Type::Kind::Any:
    // A generic tensor parameter may default to a scalar literal (`mask: tensor = 0.0`).
    want = "a number or bool";
    if (lit->kind == ast::ExprKind::Float)
      return ir::Literal::make(negated ? -lit->float_value : lit->float_value, e.loc);
    if (lit->kind == ast::ExprKind::Int) {
      std::optional<int64_t> v = int_literal(*lit, negated, diags_);
      return v ? ir::Literal::make(*v, e.loc) : ir::Expr();
    }
    if (lit->kind == ast::ExprKind::Bool && !negated)
      return ir::Literal::make(lit->bool_value, e.loc);
    break;
  default:
    diags_.error(e.loc, "parameter '" + p.name.name + "' cannot have a default")
        .notes.push_back(
            {SourceLoc{},
             "only generic `tensor` and int, float, bool and str parameters have defaults"});
    return ir::Expr();
  }
  diags_.error(e.loc, "the default of '" + p.name.name + "' must be " + want + " literal; found " +
                          describe_expr(e));
  return ir::Expr();
}

bool GraphResolver::params(const std::vector<ast::Param>& ps, bool allow_defaults,
                           std::vector<ir::VarRef>& vars, std::vector<ir::Expr>& defaults) {
  bool ok = true;
  // Every symbol in a parameter type is bound on entry, so the order of parameters does not
  // matter; record each symbol's first appearance for messages.
  for (const ast::Param& p : ps) {
    for_each_type_name(p.type, [&](const std::string& name, SourceLoc loc) {
      if (!is_symbol_name(name) || name.find('.') != std::string::npos) return;
      symbols_.try_emplace(name, SymbolInfo{loc, "parameter '" + p.name.name + "'"});
    });
  }
  const ast::Param* first_default = nullptr;
  scopes_.emplace_back();
  for (const ast::Param& p : ps) {
    std::optional<Type> t = type(p.type, TypeUse::Param, p.name.name);
    ok = ok && t.has_value();
    ir::VarRef var = ir::Var::make(p.name.name, t.value_or(Type()), p.name.loc);
    if (auto it = symbols_.find(p.name.name); it != symbols_.end()) {
      diags_.error(p.name.loc, "parameter '" + p.name.name + "' has the name of a symbol")
          .notes.push_back(
              {it->second.loc, "'" + p.name.name + "' is a symbol, bound by " + it->second.binder});
      ok = false;
    }
    if (const VarEntry* prev = find_var(p.name.name)) {
      diags_.error(p.name.loc, "duplicate parameter '" + p.name.name + "'")
          .notes.push_back({prev->loc, "the first is here"});
      ok = false;
    } else if (p.name.name == "_") {
      diags_.error(p.name.loc, "a parameter needs a name; '_' only discards a 'let' value");
      ok = false;
    } else {
      bind_var(p.name, var, t && t->kind == Type::Kind::Int);
    }
    vars.push_back(var);

    if (p.view && allow_defaults) {
      diags_.error(p.view->loc, "only an extern function's parameter is read as a strided view");
      ok = false;
    }
    ir::Expr def;
    if (p.default_value) {
      if (!allow_defaults) {
        diags_.error(p.default_value->loc, "parameters of an extern function have no defaults");
        ok = false;
      } else if (t) {
        def = default_value(p, t->kind);
        ok = ok && def.defined();
      }
      if (!first_default) first_default = &p;
    } else if (first_default && t && t->is_attribute()) {
      diags_.error(p.name.loc, "parameter '" + p.name.name + "' needs a default")
          .notes.push_back({first_default->name.loc,
                            "it follows '" + first_default->name.name + "', which has one"});
      ok = false;
    }
    defaults.push_back(def);
  }
  return ok;
}

std::optional<std::vector<ir::WhereClause>>
GraphResolver::where(const std::vector<ast::ExprPtr>& clauses) {
  DimContext ctx{diags_, nullptr, nullptr, "a 'where' clause"};
  ctx.name = [&](const std::string& name, SourceLoc loc) -> std::optional<symbolic::Expr> {
    if (std::optional<symbolic::Expr> l = loop_symbol(name)) return l;
    if (symbols_.count(name) || is_anonymous_symbol_name(name)) return symbolic::sym(name);
    Diagnostic& d = diags_.error(loc, "symbol '" + name + "' is not bound by any parameter");
    if (auto it = pending_symbols_.find(name); it != pending_symbols_.end()) {
      d.notes.push_back({it->second, "'" + name +
                                         "' is bound only here, in the body; 'where' "
                                         "clauses are checked on entry"});
    } else if (const VarEntry* v = find_var(name)) {
      d.notes.push_back({v->loc, "'" + name + "' is a parameter, not a symbol"});
    } else {
      suggest(d, name, names_in_scope());
    }
    return std::nullopt;
  };
  std::vector<ir::WhereClause> out;
  bool ok = true;
  for (const ast::ExprPtr& c : clauses) {
    std::optional<symbolic::Expr> p = to_predicate(*c, ctx);
    ok = ok && p.has_value();
    if (p) out.push_back(ir::WhereClause{*p, c->loc});
  }
  if (!ok) return std::nullopt;
  return out;
}

void GraphResolver::collect_let_sites(const ast::Expr& e) {
  if (e.kind == ast::ExprKind::If) {
    if (e.then_block) collect_let_sites(*e.then_block);
    if (e.else_block) collect_let_sites(*e.else_block);
  }
  if (e.kind == ast::ExprKind::For && e.loop) {
    for (const ast::Carry& c : e.loop->carries) {
      let_sites_.try_emplace(c.name.name, c.name.loc);
      if (c.init) collect_let_sites(*c.init);
    }
    if (e.loop->cond) collect_let_sites(*e.loop->cond);
    if (e.loop->body) collect_let_sites(*e.loop->body);
  }
  for (const ast::ExprPtr& x : e.operands)
    if (x) collect_let_sites(*x);
  for (const ast::Arg& a : e.args)
    if (a.value) collect_let_sites(*a.value);
}

void GraphResolver::collect_let_sites(const ast::Block& b) {
  for (const ast::StmtPtr& s : b.stmts) {
    if (s->value) collect_let_sites(*s->value);
    if (s->kind != ast::StmtKind::Let) continue;
    for (const ast::Ident& n : s->names)
      let_sites_.try_emplace(n.name, n.loc);
    if (!s->has_type) continue;
    for_each_type_name(s->type, [&](const std::string& name, SourceLoc loc) {
      if (!symbols_.count(name)) pending_symbols_.try_emplace(name, loc);
    });
  }
  if (b.result) collect_let_sites(*b.result);
}

Ref<ir::Function> GraphResolver::function(const ast::Decl& d) {
  auto* fn = new ir::Function();
  Ref<ir::Function> f(fn);
  fn->name = d.name.name;
  fn->loc = d.loc;
  bool ok = params(d.params, /*allow_defaults=*/true, fn->params, fn->defaults);
  if (d.body) collect_let_sites(*d.body);
  if (d.has_ret) {
    std::optional<Type> ret = type(d.ret, TypeUse::Return, d.name.name);
    if (ret && ret->is_attribute()) {
      diags_.error(d.ret.loc, "a function returns a tensor or a tuple, not '" + d.ret.name + "'");
      ret.reset();
    }
    ok = ok && ret.has_value();
    if (ret) fn->ret_type = std::move(*ret);
  }
  std::optional<std::vector<ir::WhereClause>> w = where(d.where);
  ok = ok && w.has_value();
  if (w) fn->where = std::move(*w);
  if (d.body) {
    fn->body = block(*d.body, /*fn_body=*/true, d.name.name);
    ok = ok && fn->body.defined();
  }
  return ok ? f : nullptr;
}

Ref<ir::ExternFunc> GraphResolver::external(const ast::Decl& d) {
  auto* ext = new ir::ExternFunc();
  Ref<ir::ExternFunc> e(ext);
  ext->name = d.name.name;
  ext->loc = d.loc;
  ext->symbol = d.symbol;
  ext->epilogue = d.epilogue.name;
  ext->epilogue_first_row = d.epilogue_first_row.name;
  std::vector<ir::Expr> defaults;
  bool ok = params(d.params, /*allow_defaults=*/false, ext->params, defaults);
  std::optional<Type> ret = type(d.ret, TypeUse::Return, d.name.name);
  if (ret && ret->is_attribute()) {
    diags_.error(d.ret.loc, "an extern function returns a tensor or a tuple");
    ret.reset();
  }
  ok = ok && ret.has_value();
  if (ret) ext->ret_type = std::move(*ret);
  std::optional<std::vector<ir::WhereClause>> w = where(d.where);
  ok = ok && w.has_value();
  if (w) ext->where = std::move(*w);
  if (d.symbol.empty()) {
    diags_.error(d.symbol_loc, "an extern function needs the name of its routine, such as "
                               "\"blas.sgemm\"");
    ok = false;
  }
  ok = views(d, *ext) && ok;
  ok = attributes(d, *ext) && ok;
  return ok ? e : nullptr;
}

// An extern's routine attributes: exactly the ones its routine's table names, in that order.
bool GraphResolver::attributes(const ast::Decl& d, ir::ExternFunc& ext) {
  const ir::LibraryRoutine* routine = ir::find_library_routine(d.symbol);
  const std::vector<std::string> wanted =
      routine ? ir::routine_attribute_names(*routine) : std::vector<std::string>{};
  const std::string listed = ir::routine_attributes_wanted(wanted);
  bool ok = true;
  if (!routine && !d.attributes.empty()) {
    diags_.error(d.attributes[0].name.loc, "\"" + d.symbol +
                                               "\" is no library routine dsc "
                                               "knows, so nothing takes this attribute "
                                               "(ir/LibraryRoutines.def lists the routines)");
    return false;
  }
  for (size_t i = 0; i < d.attributes.size(); ++i) {
    const ast::RoutineAttribute& a = d.attributes[i];
    if (i >= wanted.size() || a.name.name != wanted[i]) {
      diags_.error(a.name.loc, "routine \"" + d.symbol + "\" takes " + listed + ", not '" +
                                   a.name.name + "' here");
      ok = false;
      continue;
    }
    ext.attributes.push_back({a.name.name, a.values});
  }
  if (ok && d.attributes.size() < wanted.size()) {
    diags_.error(d.symbol_loc, "routine \"" + d.symbol + "\" takes " + listed + "; '" +
                                   wanted[d.attributes.size()] + "' is missing");
    ok = false;
  }
  return ok;
}

// An extern's strided views (ir/StridedView.h), for a routine that reads them: its operands'
// and its result's.
bool GraphResolver::views(const ast::Decl& d, ir::ExternFunc& ext) {
  bool any = d.ret_view != nullptr;
  for (const ast::Param& p : d.params) any = any || p.view;
  if (!any) return true;
  const ir::LibraryRoutine* routine = ir::find_library_routine(d.symbol);
  // The view `v`, or nullopt after an error.
  auto convert_view = [&](const ast::ParamView& v) -> std::optional<ir::StridedView> {
    bool ok = true;
    if (!routine) {
      diags_.error(v.loc, "\"" + d.symbol + "\" is no library routine dsc knows, so nothing "
                          "reads this strided view (ir/LibraryRoutines.def lists the routines)");
      ok = false;
    } else if (!routine->views) {
      diags_.error(v.loc, "routine \"" + d.symbol + "\" reads its operands in place, with no "
                          "strided views");
      ok = false;
    }
    ir::StridedView view;
    auto convert = [&](const std::vector<ast::ExprPtr>& in, std::vector<symbolic::Expr>& out) {
      for (const ast::ExprPtr& e : in) {
        std::optional<symbolic::Expr> x = dim(*e, false);
        if (x) out.push_back(std::move(*x));
        else ok = false;
      }
    };
    convert(v.shape, view.shape);
    convert(v.strides, view.strides);
    if (std::optional<symbolic::Expr> x = dim(*v.offset, false)) view.offset = *x;
    else ok = false;
    if (!ok) return std::nullopt;
    return view;
  };
  for (size_t i = 0; i < d.params.size(); ++i) {
    const std::shared_ptr<ast::ParamView>& v = d.params[i].view;
    if (!v) {
      ext.views.emplace_back();
      continue;
    }
    std::optional<ir::StridedView> view = convert_view(*v);
    if (!view) return false;
    if (i < ext.params.size()) {
      if (std::string why = ir::view_mismatch(*view, ext.params[i]->type); !why.empty()) {
        diags_.error(v->loc, "parameter '" + d.params[i].name.name + "': " + why);
        return false;
      }
    }
    ext.views.push_back(std::move(*view));
  }
  if (!d.ret_view) return true;
  std::optional<ir::StridedView> view = convert_view(*d.ret_view);
  if (!view) return false;
  if (!d.epilogue.name.empty() && (!routine || routine->epilogue_on_result())) {
    diags_.error(d.ret_view->loc, "a result written through a strided view takes no epilogue "
                                  "(an epilogue runs on dense rows of the result)");
    return false;
  }
  if (!ext.ret_type.is_unknown()) {
    if (std::string why = ir::permutation_mismatch(*view, ext.ret_type); !why.empty()) {
      diags_.error(d.ret_view->loc, "the result's view must write every element of the result "
                                    "once, as a permutation of its dims: " + why);
      return false;
    }
  }
  ext.result_view = std::move(*view);
  return true;
}

// ---------------------------------------------------------------- bodies

const VarEntry* GraphResolver::find_var(const std::string& name) const {
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
    auto found = it->find(name);
    if (found != it->end()) return &found->second;
  }
  return nullptr;
}

void GraphResolver::bind_var(const ast::Ident& name, ir::VarRef var, bool int_attr) {
  if (name.name == "_") return; // discarded
  scopes_.back()[name.name] = VarEntry{std::move(var), name.loc, int_attr};
}

std::vector<std::string> GraphResolver::names_in_scope() const {
  std::vector<std::string> out;
  for (const auto& scope : scopes_)
    for (const auto& [name, entry] : scope)
      out.push_back(name);
  for (const auto& [name, info] : symbols_)
    out.push_back(name);
  std::sort(out.begin(), out.end());
  return out;
}

bool GraphResolver::let(const ast::Stmt& s, std::vector<ir::Binding>& bindings) {
  ir::Expr v = value(*s.value);
  bool ok = v.defined();
  std::optional<Type> asserted;
  if (s.has_type) {
    if (s.names.size() > 1) {
      diags_.error(s.type.loc, "a destructuring 'let' cannot assert a type")
          .notes.push_back({SourceLoc{}, "assert each value's type with its own 'let'"});
      ok = false;
    } else {
      asserted = type(s.type, TypeUse::Assertion, s.names[0].name);
      if (asserted && (asserted->kind == Type::Kind::Any || asserted->is_attribute())) {
        diags_.error(s.type.loc, "a 'let' asserts a tensor or tuple type");
        asserted.reset();
      }
      ok = ok && asserted.has_value();
    }
  }
  std::vector<ir::VarRef> vars;
  for (size_t i = 0; i < s.names.size(); ++i) {
    const ast::Ident& n = s.names[i];
    ir::VarRef var = ir::Var::make(n.name, asserted.value_or(Type()), n.loc);
    vars.push_back(var);
    if (n.name == "_") continue;
    bool repeated = std::any_of(s.names.begin(), s.names.begin() + static_cast<long>(i),
                                [&](const ast::Ident& prev) { return prev.name == n.name; });
    if (repeated) {
      diags_.error(n.loc, "'" + n.name + "' is bound twice in one 'let'");
      ok = false;
    } else if (const VarEntry* prev = find_var(n.name)) {
      diags_.error(n.loc, "redefinition of '" + n.name + "'")
          .notes.push_back({prev->loc, "'" + n.name + "' is first bound here"});
      ok = false;
    } else if (auto it = symbols_.find(n.name); it != symbols_.end()) {
      diags_.error(n.loc, "'" + n.name + "' is already a symbol")
          .notes.push_back({it->second.loc, "bound by " + it->second.binder});
      ok = false;
    } else {
      // Bound even when the value failed, so later uses do not report unknown names.
      bind_var(n, var);
    }
  }
  if (ok) bindings.push_back(ir::Binding{std::move(vars), v, s.has_type, s.loc});
  return ok;
}

ir::Expr GraphResolver::block(const ast::Block& b, bool fn_body, const std::string& fn_name) {
  scopes_.emplace_back();
  std::vector<ir::Binding> bindings;
  ir::Expr result;
  bool ok = true;
  const ast::Stmt* ret = nullptr;
  for (const ast::StmtPtr& s : b.stmts) {
    if (ret) {
      diags_.error(s->loc, "statement after 'return'")
          .notes.push_back({ret->loc, "'return' ends the function body"});
      ok = false;
      break;
    }
    if (s->kind == ast::StmtKind::Return) {
      if (!fn_body) {
        diags_.error(s->loc, "'return' inside an if-branch")
            .notes.push_back({SourceLoc{}, "a branch ends with its value, without 'return'"});
        ok = false;
        continue;
      }
      ret = s.get();
      result = value(*s->value);
      ok = ok && result.defined();
      continue;
    }
    ok = let(*s, bindings) && ok;
  }
  if (fn_body && !ret) {
    diags_.error(b.end_loc, "function '" + fn_name + "' does not end with 'return'");
    ok = false;
  }
  if (!fn_body && b.result) {
    result = value(*b.result);
    ok = ok && result.defined();
  } else if (!fn_body && ok) {
    diags_.error(b.end_loc, "an if-branch must end with its value")
        .notes.push_back({SourceLoc{}, "write the value last: { let t = a * 2; t }"});
    ok = false;
  }
  scopes_.pop_back();
  if (!ok || !result.defined()) return ir::Expr();
  return ir::Block::make(std::move(bindings), result, b.loc);
}

bool GraphResolver::name_is_dim(const std::string& name, bool in_list) const {
  if (loop_symbol(name)) return true;
  if (const VarEntry* v = find_var(name)) return in_list && v->int_attr;
  return symbols_.count(name) || pending_symbols_.count(name) || is_anonymous_symbol_name(name);
}

bool GraphResolver::is_dim_like(const ast::Expr& e, bool in_list) const {
  switch (e.kind) {
  case ast::ExprKind::Int:
    return true;
  case ast::ExprKind::Name:
    return e.text.find('.') == std::string::npos && name_is_dim(e.text, in_list);
  case ast::ExprKind::Unary:
    return e.op == ast::Op::Neg && is_dim_like(*e.operands[0], in_list);
  case ast::ExprKind::Binary:
    // The right operand first: down a long chain of values (`x + x + ... + x`, left-deep) the
    // answer comes at once, not from the far end of the chain at every link.
    return is_arith(e.op) && is_dim_like(*e.operands[1], in_list) &&
           is_dim_like(*e.operands[0], in_list);
  case ast::ExprKind::Call:
    if (!symbolic::function(e.text) || e.args.size() != 2) return false;
    return std::all_of(e.args.begin(), e.args.end(), [&](const ast::Arg& a) {
      return a.keyword.empty() && is_dim_like(*a.value, in_list);
    });
  default:
    return false;
  }
}

std::optional<symbolic::Expr> GraphResolver::dim(const ast::Expr& e, bool in_list) {
  DimContext ctx{diags_, nullptr, nullptr, "a dim"};
  ctx.name = [&](const std::string& name, SourceLoc loc) -> std::optional<symbolic::Expr> {
    if (std::optional<symbolic::Expr> l = loop_symbol(name)) return l;
    if (const VarEntry* v = find_var(name)) {
      if (in_list && v->int_attr) return symbolic::sym(name);
      diags_.error(loc, "'" + name + "' is a value, not a symbol");
      return std::nullopt;
    }
    if (symbols_.count(name) || is_anonymous_symbol_name(name)) return symbolic::sym(name);
    if (auto it = pending_symbols_.find(name); it != pending_symbols_.end()) {
      diags_.error(loc, "symbol '" + name + "' is used before it is bound")
          .notes.push_back({it->second, "'" + name + "' is bound here"});
      return std::nullopt;
    }
    unknown_name(name, loc);
    return std::nullopt;
  };
  return to_dim(e, ctx);
}

void GraphResolver::unknown_name(const std::string& name, SourceLoc loc) {
  if (auto it = let_sites_.find(name); it != let_sites_.end()) {
    const SourceLoc& site = it->second;
    bool later = site.line > loc.line || (site.line == loc.line && site.col > loc.col);
    if (later) {
      diags_.error(loc, "'" + name + "' is used before it is bound")
          .notes.push_back({site, "'" + name + "' is bound here"});
    } else {
      diags_.error(loc, "'" + name + "' is not in scope here")
          .notes.push_back({site, "'" + name + "' is bound here, in a block that has ended"});
    }
    return;
  }
  Diagnostic& d = diags_.error(loc, "unknown name '" + name + "'");
  suggest(d, name, names_in_scope());
}

ir::Expr GraphResolver::name_value(const ast::Expr& e) {
  const std::string& name = e.text;
  if (name.find('.') != std::string::npos) {
    diags_.error(e.loc, "'" + name + "' is not a value")
        .notes.push_back(
            {SourceLoc{}, "a function of an imported module is called: " + name + "(...)"});
    return ir::Expr();
  }
  if (name == "_") {
    diags_.error(e.loc, "'_' discards a value; it cannot be read");
    return ir::Expr();
  }
  if (const VarEntry* v = find_var(name)) return ir::Expr(v->var);
  unknown_name(name, e.loc);
  return ir::Expr();
}

ir::Expr GraphResolver::value(const ast::Expr& e) {
  // An integer expression over symbols (`end=S-1`, or a bare `S`) is a dim: it becomes a
  // one-dim ShapeExpr, the only graph form of a symbolic integer.
  if (is_dim_like(e, /*in_list=*/false) && mentions_name(e)) {
    std::optional<symbolic::Expr> d = dim(e, /*in_list=*/false);
    if (!d) return ir::Expr();
    return ir::ShapeExpr::make({*d}, e.loc);
  }
  switch (e.kind) {
  case ast::ExprKind::Error:
    return ir::Expr();
  case ast::ExprKind::Int: {
    std::optional<int64_t> v = int_literal(e, false, diags_);
    return v ? ir::Literal::make(*v, e.loc) : ir::Expr();
  }
  case ast::ExprKind::Float:
    return ir::Literal::make(e.float_value, e.loc);
  case ast::ExprKind::Bool:
    return ir::Literal::make(e.bool_value, e.loc);
  case ast::ExprKind::String:
    return ir::StringImm::make(e.text, e.loc);
  case ast::ExprKind::Question:
    diags_.error(e.loc, "'?' is not a value")
        .notes.push_back({SourceLoc{}, "'?' stands for an anonymous dim in a type"});
    return ir::Expr();
  case ast::ExprKind::Name:
    return name_value(e);
  case ast::ExprKind::Unary: {
    const ast::Expr& x = *e.operands[0];
    if (e.op == ast::Op::Neg && !x.parenthesized) {
      // `-2` and `-0.5` are literals, not neg() calls.
      if (x.kind == ast::ExprKind::Int) {
        std::optional<int64_t> v = int_literal(x, true, diags_);
        return v ? ir::Literal::make(*v, e.loc) : ir::Expr();
      }
      if (x.kind == ast::ExprKind::Float) return ir::Literal::make(-x.float_value, e.loc);
    }
    ir::Expr a = value(x);
    if (!a.defined()) return ir::Expr();
    return ir::Call::make(callee_of(e.op), {a}, {}, Type(), e.loc);
  }
  case ast::ExprKind::Binary: {
    ir::Expr a = value(*e.operands[0]);
    ir::Expr b = value(*e.operands[1]);
    if (!a.defined() || !b.defined()) return ir::Expr();
    return ir::Call::make(callee_of(e.op), {a, b}, {}, Type(), e.loc);
  }
  case ast::ExprKind::Compare:
    return compare(e);
  case ast::ExprKind::Call:
    return call(e);
  case ast::ExprKind::Index:
    return index(e);
  case ast::ExprKind::List:
    return list(e);
  case ast::ExprKind::Tuple: {
    std::vector<ir::Expr> fields;
    bool ok = true;
    for (const ast::ExprPtr& x : e.operands) {
      fields.push_back(value(*x));
      ok = ok && fields.back().defined();
    }
    if (!ok) return ir::Expr();
    return ir::Tuple::make(std::move(fields), Type(), e.loc);
  }
  case ast::ExprKind::If:
    return if_expr(e);
  case ast::ExprKind::For:
    return loop_expr(e);
  }
  return ir::Expr();
}

// `a < b <= c` is `a < b && b <= c`, each operand evaluated once.
ir::Expr GraphResolver::compare(const ast::Expr& e) {
  std::vector<ir::Expr> xs;
  bool ok = true;
  for (const ast::ExprPtr& x : e.operands) {
    xs.push_back(value(*x));
    ok = ok && xs.back().defined();
  }
  if (!ok) return ir::Expr();
  ir::Expr chain;
  for (size_t i = 0; i < e.ops.size(); ++i) {
    ir::Expr link =
        ir::Call::make(callee_of(e.ops[i]), {xs[i], xs[i + 1]}, {}, Type(), e.op_locs[i]);
    chain = chain.defined()
                ? ir::Call::make(callee_of(ast::Op::And), {chain, link}, {}, Type(), e.op_locs[i])
                : link;
  }
  return chain;
}

ir::Expr GraphResolver::call(const ast::Expr& e) {
  bool ok = true;
  size_t dot = e.text.find('.');
  if (dot != std::string::npos) {
    std::string module = e.text.substr(0, dot);
    std::string fn = e.text.substr(dot + 1);
    auto it = imports_.find(module);
    if (it == imports_.end()) {
      Diagnostic& d = diags_.error(e.loc, "unknown module '" + module + "' in '" + e.text + "'");
      std::vector<std::string> names;
      for (const auto& [name, m] : imports_)
        names.push_back(name);
      if (closest_name(module, names).empty()) {
        d.notes.push_back({SourceLoc{}, "import it first: import " + module});
      } else {
        suggest(d, module, names);
      }
      ok = false;
    } else if (it->second && !it->second->function(fn)) {
      Diagnostic& d = diags_.error(e.loc, "module '" + module + "' has no function '" + fn + "'");
      std::vector<std::string> names;
      for (const ir::Module::Decl& decl : it->second->decls)
        if (decl.fn) names.push_back(decl.name());
      suggest(d, fn, names);
      ok = false;
    }
  } else if (const VarEntry* v = find_var(e.text)) {
    diags_.error(e.loc, "'" + e.text + "' is a value, not a function")
        .notes.push_back({v->loc, "'" + e.text + "' is bound here"});
    ok = false;
  }

  std::vector<ir::Expr> args;
  std::vector<ir::KeywordArg> kwargs;
  const ast::Arg* first_keyword = nullptr;
  for (const ast::Arg& a : e.args) {
    ir::Expr v = value(*a.value);
    ok = ok && v.defined();
    if (a.keyword.empty()) {
      if (first_keyword) {
        diags_
            .error(a.value->loc,
                   "positional argument after keyword argument '" + first_keyword->keyword + "'")
            .notes.push_back({SourceLoc{}, "positional arguments come first"});
        ok = false;
      }
      args.push_back(v);
      continue;
    }
    if (!first_keyword) first_keyword = &a;
    for (const ir::KeywordArg& prev : kwargs) {
      if (prev.name == a.keyword) {
        diags_.error(a.keyword_loc, "keyword argument '" + a.keyword + "' is given twice")
            .notes.push_back({prev.loc, "first given here"});
        ok = false;
        break;
      }
    }
    kwargs.push_back(ir::KeywordArg{a.keyword, v, a.keyword_loc});
  }
  if (!ok) return ir::Expr();
  return ir::Call::make(e.text, std::move(args), std::move(kwargs), Type(), e.loc);
}

ir::Expr GraphResolver::index(const ast::Expr& e) {
  ir::Expr base = value(*e.operands[0]);
  if (e.operands.size() != 2) {
    diags_.error(e.loc, "a tuple is indexed with one integer, as in t[0]");
    return ir::Expr();
  }
  const ast::Expr& i = *e.operands[1];
  // `x[mask]`: the elements (or rows) of a tensor where a bool mask holds.
  const bool literal = i.kind == ast::ExprKind::Int || i.kind == ast::ExprKind::Unary ||
                       i.kind == ast::ExprKind::Float || i.kind == ast::ExprKind::String ||
                       i.kind == ast::ExprKind::Bool;
  if (!literal) {
    ir::Expr mask = value(i);
    if (!base.defined() || !mask.defined()) return ir::Expr();
    return ir::Call::make("mask_select", {base, mask}, {}, Type(), e.loc);
  }
  if (i.kind != ast::ExprKind::Int) {
    diags_
        .error(i.loc,
               std::string("a tuple index must be an integer literal; found ") + describe_expr(i))
        .notes.push_back({SourceLoc{}, "tensors are sliced with slice(x, axis=..., start=..., "
                                       "end=...), not indexed"});
    return ir::Expr();
  }
  if (i.int_value > static_cast<uint64_t>(std::numeric_limits<int>::max())) {
    diags_.error(i.loc, "tuple index " + std::to_string(i.int_value) + " is too large");
    return ir::Expr();
  }
  if (!base.defined()) return ir::Expr();
  return ir::GetItem::make(base, static_cast<int>(i.int_value), Type(), e.loc);
}

// `[B, S*12, 64]` (every element an integer expression over symbols) is a ShapeExpr; any
// other list is a list of tensors.
ir::Expr GraphResolver::list(const ast::Expr& e) {
  bool dims = std::all_of(e.operands.begin(), e.operands.end(),
                          [&](const ast::ExprPtr& x) { return is_dim_like(*x, true); });
  bool ok = true;
  if (dims) {
    std::vector<symbolic::Expr> ds;
    for (const ast::ExprPtr& x : e.operands) {
      std::optional<symbolic::Expr> d = dim(*x, /*in_list=*/true);
      ok = ok && d.has_value();
      if (d) ds.push_back(std::move(*d));
    }
    if (!ok) return ir::Expr();
    return ir::ShapeExpr::make(std::move(ds), e.loc);
  }
  std::vector<ir::Expr> items;
  for (const ast::ExprPtr& x : e.operands) {
    items.push_back(value(*x));
    ok = ok && items.back().defined();
  }
  if (!ok) return ir::Expr();
  return ir::ListExpr::make(std::move(items), Type(), e.loc);
}

ir::Expr GraphResolver::if_expr(const ast::Expr& e) {
  ir::Expr cond = value(*e.operands[0]);
  ir::Expr then_branch = block(*e.then_block, /*fn_body=*/false, "");
  ir::Expr else_branch = block(*e.else_block, /*fn_body=*/false, "");
  if (!cond.defined() || !then_branch.defined() || !else_branch.defined()) return ir::Expr();
  return ir::If::make(cond, then_branch, else_branch, Type(), e.loc);
}

// `where i < B` or `where i <= B - 1` on a loop: B, the bound of its var.
std::optional<symbolic::Expr> GraphResolver::loop_bound(const ast::LoopParts& l,
                                                        const std::string& var) {
  std::optional<std::vector<ir::WhereClause>> clauses = where(l.where);
  if (!clauses) return std::nullopt;
  if (clauses->size() == 1) {
    const symbolic::Expr& p = (*clauses)[0].predicate;
    auto is_var = [&](const symbolic::Expr& x) {
      const auto* s = x.as<symbolic::Sym>();
      return s && s->name == var;
    };
    auto mentions_var = [&](const symbolic::Expr& x) { return symbolic::free_symbols(x).count(var); };
    if (const auto* lt = p.as<symbolic::LT>(); lt && is_var(lt->a) && !mentions_var(lt->b))
      return lt->b;
    if (const auto* le = p.as<symbolic::LE>(); le && is_var(le->a) && !mentions_var(le->b))
      return symbolic::simplify(le->b + symbolic::Expr(1));
  }
  diags_.error(l.where[0]->loc, "a loop's 'where' clause bounds its var: where " + l.var.name +
                                    " < 64 (one clause, over the function's symbols)");
  return std::nullopt;
}

// for i in lo..hi [where i < B] carry (c = init, ...) [while cond] { body }
ir::Expr GraphResolver::loop_expr(const ast::Expr& e) {
  const ast::LoopParts& l = *e.loop;
  bool ok = true;
  std::optional<symbolic::Expr> lo;
  if (!is_dim_like(*l.lo, false)) {
    diags_.error(l.lo->loc, std::string("a loop starts at an integer expression over symbols, such as 0 "
                                        "or T; got ") + describe_expr(*l.lo));
    ok = false;
  } else {
    lo = dim(*l.lo, false);
    ok = ok && lo.has_value();
  }
  ir::Expr hi;
  if (is_dim_like(*l.hi, false)) {
    std::optional<symbolic::Expr> d = dim(*l.hi, false);
    if (d) hi = ir::ShapeExpr::make({*d}, l.hi->loc);
  } else {
    hi = value(*l.hi); // a run-time count
  }
  ok = ok && hi.defined();
  std::vector<ir::Expr> inits;
  for (const ast::Carry& c : l.carries) {
    inits.push_back(value(*c.init));
    ok = ok && inits.back().defined();
  }
  // The loop's symbol: its var's name, unless a symbol or an earlier loop has it.
  const std::string& written = l.var.name;
  if (const VarEntry* v = find_var(written)) {
    diags_.error(l.var.loc, "'" + written + "' is a value here; a loop var names a symbol")
        .notes.push_back({v->loc, "'" + written + "' is bound here"});
    ok = false;
  }
  std::string var = written;
  for (int k = 1; symbols_.count(var) || pending_symbols_.count(var) || loop_symbols_.count(var) ||
                  loop_symbol(var);
       ++k)
    var = written + "_" + std::to_string(k);
  loop_symbols_.insert(var);
  loop_vars_.emplace_back(written, var);
  symbolic::Expr bound;
  if (!l.where.empty()) {
    std::optional<symbolic::Expr> b = loop_bound(l, var);
    ok = ok && b.has_value();
    if (b) bound = *b;
  }
  std::vector<ir::VarRef> carries;
  std::vector<bool> declared;
  scopes_.emplace_back();
  for (const ast::Carry& c : l.carries) {
    Type t;
    if (c.has_type) {
      std::optional<Type> ct = type(c.type, TypeUse::Return, c.name.name);
      if (ct && !ct->is_tensor() && !ct->is_tuple()) {
        diags_.error(c.type.loc, "a carry is a tensor or a tuple");
        ct.reset();
      }
      ok = ok && ct.has_value();
      if (ct) t = *ct;
    }
    ir::VarRef var_ref = ir::Var::make(c.name.name, t, c.name.loc);
    if (scopes_.back().count(c.name.name)) {
      diags_.error(c.name.loc, "'" + c.name.name + "' is carried twice");
      ok = false;
    } else if (const VarEntry* prev = find_var(c.name.name)) {
      diags_.error(c.name.loc, "redefinition of '" + c.name.name + "'")
          .notes.push_back({prev->loc, "'" + c.name.name + "' is first bound here"});
      ok = false;
    }
    bind_var(c.name, var_ref);
    carries.push_back(var_ref);
    declared.push_back(c.has_type);
  }
  ir::Expr cond;
  if (l.cond) {
    cond = block(*l.cond, /*fn_body=*/false, "");
    ok = ok && cond.defined();
  }
  ir::Expr body = block(*l.body, /*fn_body=*/false, "");
  ok = ok && body.defined();
  scopes_.pop_back();
  loop_vars_.pop_back();
  if (!ok || !lo) return ir::Expr();
  return ir::Loop::make(var, *lo, hi, bound, std::move(carries), std::move(declared),
                        std::move(inits), cond, body, {}, Type(), e.loc);
}

// ---------------------------------------------------------------- the module

const char* decl_kind_name(const ast::Decl& d) {
  switch (d.kind) {
  case ast::DeclKind::Fn:
    return "function";
  case ast::DeclKind::Prim:
    return "prim";
  case ast::DeclKind::Extern:
    return "extern function";
  case ast::DeclKind::Import:
    return "import";
  }
  return "declaration";
}

} // namespace

namespace {

// Each extern's epilogue names a prim of the module that fits it (ir/LibraryRoutine.h).
void check_epilogues(const ast::Module& module, const ir::Module& out, DiagnosticEngine& diags) {
  for (const ast::Decl& d : module.decls) {
    if (d.kind != ast::DeclKind::Extern || d.epilogue.name.empty()) continue;
    Ref<ir::ExternFunc> ext = out.ext(d.name.name);
    if (!ext) continue; // not resolved: reported already
    Ref<ir::PrimFunc> prim = out.prim(d.epilogue.name);
    if (!prim) {
      diags.error(d.epilogue.loc, "the epilogue '" + d.epilogue.name + "' of extern '" +
                                      d.name.name + "' is not a prim of this module");
      continue;
    }
    if (std::string why = ir::epilogue_mismatch(*ext, *prim); !why.empty())
      diags.error(d.epilogue.loc, "prim '" + d.epilogue.name + "' cannot be the epilogue of '" +
                                      d.name.name + "': " + why);
  }
}

} // namespace

std::optional<ir::Module> resolve_module(const ast::Module& module, const ImportedModules& imports,
                                         DiagnosticEngine& diags,
                                         std::vector<std::string>* unresolved) {
  size_t errors_before = diags.error_count();
  ir::Module out;
  std::unordered_map<std::string, const ast::Decl*> seen_decls;
  std::unordered_map<std::string, const ast::Decl*> seen_imports;
  // Per prim, the symbols externs bind in it: an epilogue's first row.
  std::map<std::string, std::set<std::string>> bound_by_externs;
  for (const ast::Decl& d : module.decls)
    if (d.kind == ast::DeclKind::Extern && !d.epilogue_first_row.name.empty())
      bound_by_externs[d.epilogue.name].insert(d.epilogue_first_row.name);
  for (const ast::Decl& d : module.decls) {
    if (d.kind == ast::DeclKind::Import) {
      auto [it, fresh] = seen_imports.emplace(d.name.name, &d);
      if (!fresh) {
        diags.error(d.name.loc, "module '" + d.name.name + "' is imported twice")
            .notes.push_back({it->second->name.loc, "first imported here"});
        continue;
      }
      auto found = imports.find(d.name.name);
      std::shared_ptr<const ir::Module> m = found == imports.end() ? nullptr : found->second;
      out.imports.push_back(ir::Import{d.name.name, d.name.loc, std::move(m)});
      continue;
    }
    auto [it, fresh] = seen_decls.emplace(d.name.name, &d);
    if (!fresh) {
      diags.error(d.name.loc, "redefinition of '" + d.name.name + "'")
          .notes.push_back({it->second->name.loc, std::string("the first ") +
                                                      decl_kind_name(*it->second) + " named '" +
                                                      d.name.name + "' is here"});
    }
    size_t decls_before = out.decls.size();
    switch (d.kind) {
    case ast::DeclKind::Fn:
      if (Ref<ir::Function> f = GraphResolver(diags, imports).function(d)) out.add(f);
      break;
    case ast::DeclKind::Extern:
      if (Ref<ir::ExternFunc> e = GraphResolver(diags, imports).external(d)) out.add(e);
      break;
    case ast::DeclKind::Prim:
      if (Ref<ir::PrimFunc> p = resolve_prim(d, diags, bound_by_externs[d.name.name])) out.add(p);
      break;
    case ast::DeclKind::Import:
      break;
    }
    if (unresolved && out.decls.size() == decls_before) unresolved->push_back(d.name.name);
  }
  check_epilogues(module, out, diags);
  if (unresolved) {
    unresolved->insert(unresolved->end(), module.dropped.begin(), module.dropped.end());
    return out;
  }
  if (diags.error_count() != errors_before) return std::nullopt;
  return out;
}

} // namespace dsc::lang
