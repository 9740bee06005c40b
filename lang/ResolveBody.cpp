// Graph code's bodies: statements, values, dims, calls, `if` and loops (lang/GraphResolver.h).

#include "lang/GraphResolver.h"

namespace dsc::lang::graph {

// ---------------------------------------------------------------- bodies

const VarEntry* GraphResolver::find_var(const std::string& name) const {
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
    auto found = it->find(name);
    if (found != it->end()) return &found->second;
  }
  return nullptr;
}

void GraphResolver::bind_var(const ast::Ident& name, ir::VarRef var, bool int_attr) {
  if (ir::is_discard_name(name.name)) return;
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
    if (ir::is_discard_name(n.name)) continue;
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
  if (ir::is_discard_name(name)) {
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

} // namespace dsc::lang::graph
