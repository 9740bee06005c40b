#include "lang/Resolve.h"

#include "lang/GraphResolver.h"

namespace dsc::lang {

namespace graph {

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
    } else if (ir::is_discard_name(p.name.name)) {
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

} // namespace graph

namespace {

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
      if (Ref<ir::Function> f = graph::GraphResolver(diags, imports).function(d)) out.add(f);
      break;
    case ast::DeclKind::Extern:
      if (Ref<ir::ExternFunc> e = graph::GraphResolver(diags, imports).external(d)) out.add(e);
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
