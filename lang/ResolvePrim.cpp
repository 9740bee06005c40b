#include "lang/ResolvePrim.h"

#include <algorithm>
#include <limits>
#include <unordered_map>

#include "ir/Intrinsics.h"
#include "lang/Dims.h"
#include "symbolic/Simplify.h"

namespace dsc::lang {

namespace {

using ir::DType;
using ir::PrimExpr;
using ir::Stmt;

enum class NameKind : uint8_t { Buffer, Local, LoopVar, Symbol };

struct PrimName {
  NameKind kind = NameKind::Symbol;
  SourceLoc loc;
  DType dtype = DType::I64; // Buffer, Local
  size_t rank = 0;          // Buffer
  bool is_mutable = false;  // Local declared with `var`
};

const char* name_kind_text(NameKind k) {
  switch (k) {
  case NameKind::Buffer:
    return "a buffer";
  case NameKind::Local:
    return "a local";
  case NameKind::LoopVar:
    return "a loop variable";
  case NameKind::Symbol:
    return "a symbol";
  }
  return "a name";
}

// The intrinsics an expression may call (ir/Intrinsics.def), or null.
const ir::IntrinsicDef* pure_intrinsic(const std::string& name) {
  const ir::IntrinsicDef* fn = ir::find_intrinsic(name);
  return fn && fn->pure() ? fn : nullptr;
}

// Every scalar function: min and max (PrimBinary), cast, and the pure intrinsics.
std::vector<std::string> scalar_functions() {
  std::vector<std::string> names = {"max", "min"};
  for (const ir::IntrinsicDef& fn : ir::all_intrinsics())
    if (fn.pure()) names.push_back(fn.name);
  names.push_back("cast");
  return names;
}

std::string dtype_text(DType d) {
  return ir::dtype_name(d);
}

// "an f32", "an i64", "a bool", "a bf16".
std::string with_article(DType d) {
  std::string n = dtype_text(d);
  return (n[0] == 'i' || n[0] == 'f' ? "an " : "a ") + n;
}

std::string plural(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// Literals and arithmetic on them only: their dtype comes from context.
bool literal_only(const ast::Expr& e) {
  switch (e.kind) {
  case ast::ExprKind::Int:
  case ast::ExprKind::Float:
  case ast::ExprKind::Bool:
    return true;
  case ast::ExprKind::Unary:
    return literal_only(*e.operands[0]);
  case ast::ExprKind::Binary:
    return literal_only(*e.operands[0]) && literal_only(*e.operands[1]);
  default:
    return false;
  }
}

bool has_float(const ast::Expr& e) {
  if (e.kind == ast::ExprKind::Float) return true;
  return std::any_of(e.operands.begin(), e.operands.end(),
                     [](const ast::ExprPtr& x) { return x && has_float(*x); });
}

bool has_bool(const ast::Expr& e) {
  if (e.kind == ast::ExprKind::Bool) return true;
  return std::any_of(e.operands.begin(), e.operands.end(),
                     [](const ast::ExprPtr& x) { return x && has_bool(*x); });
}

// The PrimBinary of an infix operator, which has its name (ir/Operators.def); the prefix
// operators are intrinsics.
ir::BinaryOp binary_op(ast::Op op) {
  switch (op) {
#define DSC_INFIX_OPERATOR(Name, callee, spelling)                                                 \
  case ast::Op::Name:                                                                              \
    return ir::BinaryOp::Name;
#define DSC_PREFIX_OPERATOR(Name, callee, spelling)                                                \
  case ast::Op::Name:                                                                              \
    break;
#include "ir/Operators.def"
  }
  internal_error << "'" << ast::op_spelling(op) << "' is not an infix operator";
}

class PrimResolver {
public:
  explicit PrimResolver(DiagnosticEngine& diags) : diags_(diags) {}

  Ref<ir::PrimFunc> prim(const ast::Decl& d, const std::set<std::string>& bound_by_externs);

private:
  // ---- declarations
  bool buffers(const std::vector<ast::Param>& ps, std::vector<ir::Buffer>& out);
  std::optional<std::vector<symbolic::Expr>> dims(const std::vector<ast::ExprPtr>& ds,
                                                  const char* what, bool allow_fresh);
  std::optional<symbolic::Expr> bound(const ast::Expr& e, const char* what);
  // `signature`: the `where` clauses, where only the buffers' symbols are bound.
  DimContext dim_context(const char* what, bool signature = false);
  bool declare(const ast::Ident& name, PrimName entry);
  const PrimName* find(const std::string& name) const;
  std::vector<std::string> names_in_scope() const;
  void unknown_name(const std::string& name, SourceLoc loc);

  // ---- statements
  Stmt block(const ast::Block& b);
  Stmt stmt(const ast::Stmt& s);
  Stmt local(const ast::Stmt& s);
  Stmt assign(const ast::Stmt& s);
  Stmt store(const ast::Stmt& s);
  Stmt loop(const ast::Stmt& s);
  Stmt if_stmt(const ast::Stmt& s);
  Stmt alloc(const ast::Stmt& s);
  // Reports when `value` does not have the dtype its destination `what` needs.
  bool check_dtype(const PrimExpr& value, DType want, SourceLoc loc, const std::string& what);

  // ---- expressions
  PrimExpr expr(const ast::Expr& e, std::optional<DType> hint);
  bool is_index_like(const ast::Expr& e) const;
  PrimExpr index(const ast::Expr& e);
  PrimExpr literal(const ast::Expr& e, bool negated, std::optional<DType> hint);
  PrimExpr name(const ast::Expr& e);
  PrimExpr load(const ast::Expr& e);
  // The indices of `access` (`buf[i, j]`, the operands after the buffer), checking their number
  // against the buffer's rank when the buffer is known; clears *ok on any error.
  std::vector<PrimExpr> indices(const ast::Expr& access, const PrimName* buffer, bool* ok);
  PrimExpr unary(const ast::Expr& e, std::optional<DType> hint);
  PrimExpr binary(const ast::Expr& e, std::optional<DType> hint);
  PrimExpr compare(const ast::Expr& e);
  PrimExpr call(const ast::Expr& e, std::optional<DType> hint, bool statement);
  // A call of a pure intrinsic with the right number of arguments, checked against its domain.
  PrimExpr intrinsic(const ast::Expr& e, const ir::IntrinsicDef& fn, std::optional<DType> hint);
  // Resolves two operands that must agree, giving literals the other operand's dtype.
  bool pair(const ast::Expr& a, const ast::Expr& b, std::optional<DType> hint, PrimExpr& x,
            PrimExpr& y);
  bool same_dtype(const PrimExpr& x, const PrimExpr& y, const char* op, SourceLoc loc);
  std::optional<DType> literal_dtype(const ast::Expr& e, std::optional<DType> hint) const;

  DiagnosticEngine& diags_;
  std::vector<std::unordered_map<std::string, PrimName>> scopes_;
  int fresh_ = 0;
};

// ---------------------------------------------------------------- declarations

const PrimName* PrimResolver::find(const std::string& name) const {
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
    auto found = it->find(name);
    if (found != it->end()) return &found->second;
  }
  return nullptr;
}

std::vector<std::string> PrimResolver::names_in_scope() const {
  std::vector<std::string> out;
  for (const auto& scope : scopes_)
    for (const auto& [n, entry] : scope)
      out.push_back(n);
  std::sort(out.begin(), out.end());
  return out;
}

void PrimResolver::unknown_name(const std::string& name, SourceLoc loc) {
  Diagnostic& d = diags_.error(loc, "unknown name '" + name + "'");
  suggest(d, name, names_in_scope());
}

bool PrimResolver::declare(const ast::Ident& name, PrimName entry) {
  if (const PrimName* prev = find(name.name)) {
    diags_.error(name.loc, "redefinition of '" + name.name + "'")
        .notes.push_back(
            {prev->loc, "'" + name.name + "' is " + name_kind_text(prev->kind) + ", bound here"});
    return false;
  }
  entry.loc = name.loc;
  scopes_.back()[name.name] = entry;
  return true;
}

DimContext PrimResolver::dim_context(const char* what, bool signature) {
  DimContext ctx{diags_, nullptr, nullptr, what};
  ctx.name = [this, what, signature](const std::string& n,
                                     SourceLoc loc) -> std::optional<symbolic::Expr> {
    const PrimName* entry = find(n);
    if (!entry) {
      if (is_anonymous_symbol_name(n)) return symbolic::sym(n);
      if (signature) {
        Diagnostic& d = diags_.error(loc, "symbol '" + n + "' is not bound by any buffer");
        suggest(d, n, names_in_scope());
      } else {
        unknown_name(n, loc);
      }
      return std::nullopt;
    }
    if (entry->kind == NameKind::Symbol || entry->kind == NameKind::LoopVar)
      return symbolic::sym(n);
    diags_
        .error(loc, "'" + n + "' is " + name_kind_text(entry->kind) + "; " + what +
                        " is an integer expression over symbols and loop variables")
        .notes.push_back({entry->loc, "'" + n + "' is bound here"});
    return std::nullopt;
  };
  return ctx;
}

std::optional<std::vector<symbolic::Expr>> PrimResolver::dims(const std::vector<ast::ExprPtr>& ds,
                                                              const char* what, bool allow_fresh) {
  DimContext ctx = dim_context(what);
  if (allow_fresh) ctx.fresh = &fresh_;
  std::vector<symbolic::Expr> out;
  bool ok = true;
  for (const ast::ExprPtr& d : ds) {
    std::optional<symbolic::Expr> x = to_dim(*d, ctx);
    ok = ok && x.has_value();
    if (x) out.push_back(std::move(*x));
  }
  if (!ok) return std::nullopt;
  return out;
}

std::optional<symbolic::Expr> PrimResolver::bound(const ast::Expr& e, const char* what) {
  DimContext ctx = dim_context(what);
  return to_dim(e, ctx);
}

bool PrimResolver::buffers(const std::vector<ast::Param>& ps, std::vector<ir::Buffer>& out) {
  bool ok = true;
  for (const ast::Param& p : ps) {
    if (p.view) {
      diags_.error(p.view->loc, "only an extern function's parameter is read as a strided view");
      ok = false;
    }
    if (p.default_value) {
      diags_.error(p.default_value->loc, "a prim's buffers have no defaults");
      ok = false;
    }
    const ast::TypeNode& t = p.type;
    if (t.kind != ast::TypeNode::Kind::Tensor) {
      if (t.kind != ast::TypeNode::Kind::Error) {
        Diagnostic& d = diags_.error(t.loc, "a prim's parameters and outputs are buffers, such as "
                                            "f32[n]");
        if (t.kind == ast::TypeNode::Kind::Named && ir::parse_dtype(t.name))
          d.notes.push_back({SourceLoc{}, "a scalar is a buffer of rank 0: " + t.name + "[]"});
      }
      ok = false;
      continue;
    }
    std::optional<DType> dtype = ir::parse_dtype(t.name);
    if (!dtype) {
      Diagnostic& d = diags_.error(t.loc, "unknown dtype '" + t.name + "'");
      suggest_dtype(d, t.name);
      ok = false;
      continue;
    }
    std::optional<std::vector<symbolic::Expr>> shape = dims(t.dims, "a dim", true);
    if (!shape) {
      ok = false;
      continue;
    }
    PrimName entry{NameKind::Buffer, p.name.loc, *dtype, shape->size(), false};
    if (!declare(p.name, entry)) {
      ok = false;
      continue;
    }
    out.push_back(ir::Buffer{p.name.name, *dtype, std::move(*shape), p.name.loc});
  }
  return ok;
}

Ref<ir::PrimFunc> PrimResolver::prim(const ast::Decl& d,
                                     const std::set<std::string>& bound_by_externs) {
  auto* p = new ir::PrimFunc();
  Ref<ir::PrimFunc> result(p);
  p->name = d.name.name;
  p->loc = d.loc;
  scopes_.emplace_back();
  // The symbols of every buffer type are bound on entry (the caller allocates the outputs).
  auto collect = [&](const std::vector<ast::Param>& ps) {
    for (const ast::Param& param : ps) {
      for (const ast::ExprPtr& dim : param.type.dims) {
        std::vector<const ast::Expr*> stack{dim.get()};
        while (!stack.empty()) {
          const ast::Expr* e = stack.back();
          stack.pop_back();
          if (e->kind == ast::ExprKind::Name && is_symbol_name(e->text))
            scopes_.back().try_emplace(e->text, PrimName{NameKind::Symbol, e->loc});
          for (const ast::ExprPtr& x : e->operands)
            stack.push_back(x.get());
          for (const ast::Arg& a : e->args)
            stack.push_back(a.value.get());
        }
      }
    }
  };
  collect(d.params);
  collect(d.outputs);
  for (const std::string& s : bound_by_externs)
    scopes_.back().try_emplace(s, PrimName{NameKind::Symbol, d.name.loc});
  bool ok = buffers(d.params, p->inputs);
  ok = buffers(d.outputs, p->outputs) && ok;

  DimContext ctx = dim_context("a 'where' clause", /*signature=*/true);
  for (const ast::ExprPtr& w : d.where) {
    std::optional<symbolic::Expr> pred = to_predicate(*w, ctx);
    ok = ok && pred.has_value();
    if (pred) p->where.push_back(ir::WhereClause{*pred, w->loc});
  }
  if (d.body) {
    p->body = block(*d.body);
    ok = ok && p->body.defined();
  }
  return ok ? result : nullptr;
}

// ---------------------------------------------------------------- statements

Stmt PrimResolver::block(const ast::Block& b) {
  scopes_.emplace_back();
  std::vector<Stmt> stmts;
  bool ok = true;
  for (const ast::StmtPtr& s : b.stmts) {
    Stmt r = stmt(*s);
    ok = ok && r.defined();
    if (r.defined()) stmts.push_back(r);
  }
  scopes_.pop_back();
  if (!ok) return Stmt();
  return ir::Seq::make(std::move(stmts), b.loc);
}

Stmt PrimResolver::stmt(const ast::Stmt& s) {
  switch (s.kind) {
  case ast::StmtKind::Let:
    return local(s);
  case ast::StmtKind::Assign:
    return assign(s);
  case ast::StmtKind::Store:
    return store(s);
  case ast::StmtKind::Eval: {
    PrimExpr v = call(*s.value, std::nullopt, /*statement=*/true);
    return v.defined() ? ir::Evaluate::make(v, s.loc) : Stmt();
  }
  case ast::StmtKind::For:
    return loop(s);
  case ast::StmtKind::If:
    return if_stmt(s);
  case ast::StmtKind::Alloc:
    return alloc(s);
  case ast::StmtKind::Return:
    diags_.error(s.loc, "a prim has no 'return'; it stores its results into its outputs");
    return Stmt();
  }
  return Stmt();
}

bool PrimResolver::check_dtype(const PrimExpr& value, DType want, SourceLoc loc,
                               const std::string& what) {
  if (value->dtype == want) return true;
  diags_.error(loc, "cannot use " + with_article(value->dtype) + " value as " + what)
      .notes.push_back({SourceLoc{}, "convert it with cast(value, \"" + dtype_text(want) + "\")"});
  return false;
}

Stmt PrimResolver::local(const ast::Stmt& s) {
  const char* keyword = s.is_var ? "var" : "let";
  if (s.names.size() != 1) {
    diags_.error(s.names[1].loc, std::string("a '") + keyword + "' in a prim binds one name");
    return Stmt();
  }
  const ast::Ident& n = s.names[0];
  std::optional<DType> declared;
  bool ok = true;
  if (s.has_type) {
    if (s.type.kind == ast::TypeNode::Kind::Named) declared = ir::parse_dtype(s.type.name);
    if (!declared) {
      Diagnostic& d = diags_.error(s.type.loc, "a local's type is a dtype, such as f32");
      if (s.type.kind == ast::TypeNode::Kind::Named) suggest_dtype(d, s.type.name);
      ok = false;
    }
  }
  PrimExpr init = expr(*s.value, declared);
  ok = ok && init.defined();
  if (init.defined() && declared)
    ok = check_dtype(init, *declared, s.value->loc,
                     "the initial value of '" + n.name + "', " + with_article(*declared)) &&
         ok;
  DType dtype = declared ? *declared : init.defined() ? init->dtype : DType::F32;
  // Declared even when something failed, so later uses do not report unknown names.
  ok = declare(n, PrimName{NameKind::Local, n.loc, dtype, 0, s.is_var}) && ok;
  if (!ok) return Stmt();
  return ir::LocalDecl::make(n.name, dtype, s.is_var, init, s.loc);
}

Stmt PrimResolver::assign(const ast::Stmt& s) {
  const ast::Ident& n = s.names[0];
  const PrimName* entry = find(n.name);
  if (!entry) {
    unknown_name(n.name, n.loc);
    expr(*s.value, std::nullopt);
    return Stmt();
  }
  if (entry->kind != NameKind::Local || !entry->is_mutable) {
    Diagnostic& d =
        diags_.error(n.loc, "cannot assign to '" + n.name + "', " + name_kind_text(entry->kind));
    if (entry->kind == NameKind::Local)
      d.notes.push_back(
          {entry->loc, "declared with 'let' here; declare it with 'var' to assign it"});
    else if (entry->kind == NameKind::Buffer)
      d.notes.push_back({SourceLoc{}, "store to an element instead: " + n.name + "[...] = ..."});
    else
      d.notes.push_back({entry->loc, "bound here"});
    return Stmt();
  }
  DType want = entry->dtype;
  PrimExpr v = expr(*s.value, want);
  if (!v.defined()) return Stmt();
  if (!check_dtype(v, want, s.value->loc, "the value of '" + n.name + "', " + with_article(want)))
    return Stmt();
  return ir::Assign::make(n.name, v, s.loc);
}

Stmt PrimResolver::store(const ast::Stmt& s) {
  const ast::Expr& target = *s.target;
  const ast::Expr& base = *target.operands[0];
  const PrimName* entry = find(base.text);
  std::optional<DType> want;
  bool ok = true;
  if (!entry) {
    unknown_name(base.text, base.loc);
    ok = false;
  } else if (entry->kind != NameKind::Buffer) {
    diags_.error(base.loc, "cannot store into '" + base.text + "', " + name_kind_text(entry->kind))
        .notes.push_back({entry->loc, "'" + base.text + "' is bound here"});
    ok = false;
  } else {
    want = entry->dtype;
  }
  bool is_buffer = entry && entry->kind == NameKind::Buffer;
  std::vector<PrimExpr> idx = indices(target, is_buffer ? entry : nullptr, &ok);
  PrimExpr v = expr(*s.value, want);
  ok = ok && v.defined();
  if (!ok) return Stmt();
  if (!check_dtype(v, *want, s.value->loc,
                   "an element of '" + base.text + "', " + with_article(*want) + " buffer"))
    return Stmt();
  return ir::Store::make(base.text, std::move(idx), v, s.loc);
}

Stmt PrimResolver::loop(const ast::Stmt& s) {
  const ast::Ident& var = s.names[0];
  std::optional<symbolic::Expr> lo = bound(*s.lo, "a loop bound");
  std::optional<symbolic::Expr> hi = bound(*s.hi, "a loop bound");
  bool ok = lo.has_value() && hi.has_value();
  scopes_.emplace_back();
  if (!is_symbol_name(var.name)) {
    diags_.error(var.loc, "'" + var.name + "' cannot name a loop variable");
    ok = false;
  } else {
    ok = declare(var, PrimName{NameKind::LoopVar, var.loc}) && ok;
  }
  Stmt body = block(*s.body);
  scopes_.pop_back();
  if (!ok || !body.defined()) return Stmt();
  std::optional<ir::ForKind> kind = ir::for_kind_named(s.loop_kind);
  if (!kind) {
    std::string known;
#define DSC_FOR_KIND(k, spelling, targets)                                                         \
  if (*spelling) known += std::string(known.empty() ? "" : ", ") + spelling;
#include "ir/ForKinds.def"
    diags_.error(s.loop_kind_loc, "unknown loop kind '" + s.loop_kind + "' (the kinds are " +
                                      known + ")");
    return Stmt();
  }
  // `lo..hi` runs hi - lo times; simplified so that `0..n` has extent n.
  symbolic::Expr extent = symbolic::simplify(symbolic::Sub::make(*hi, *lo));
  return ir::For::make(var.name, *lo, extent, *kind, body, s.loc);
}

Stmt PrimResolver::if_stmt(const ast::Stmt& s) {
  PrimExpr cond = expr(*s.cond, DType::Bool);
  bool ok = cond.defined();
  if (cond.defined() && cond->dtype != DType::Bool) {
    diags_.error(s.cond->loc,
                 "an 'if' condition must be a bool; this one is " + dtype_text(cond->dtype));
    ok = false;
  }
  Stmt then_body = block(*s.body);
  Stmt else_body;
  if (s.else_body) {
    else_body = block(*s.else_body);
    ok = ok && else_body.defined();
  }
  if (!ok || !then_body.defined()) return Stmt();
  return ir::IfStmt::make(cond, then_body, else_body, s.loc);
}

Stmt PrimResolver::alloc(const ast::Stmt& s) {
  const ast::Ident& n = s.names[0];
  const ast::TypeNode& t = s.type;
  if (t.kind != ast::TypeNode::Kind::Tensor) {
    if (t.kind != ast::TypeNode::Kind::Error)
      diags_.error(t.loc, "an allocation has a buffer type, such as f32[64]");
    return Stmt();
  }
  std::optional<DType> dtype = ir::parse_dtype(t.name);
  if (!dtype) {
    Diagnostic& d = diags_.error(t.loc, "unknown dtype '" + t.name + "'");
    suggest_dtype(d, t.name);
  }
  std::optional<std::vector<symbolic::Expr>> shape = dims(t.dims, "a dim", false);
  if (!dtype || !shape) return Stmt();
  if (!declare(n, PrimName{NameKind::Buffer, n.loc, *dtype, shape->size(), false})) return Stmt();
  ir::MemoryScope scope = ir::MemoryScope::Local;
  if (s.scope == ast::AllocScope::Shared) scope = ir::MemoryScope::Shared;
  if (s.scope == ast::AllocScope::Global) scope = ir::MemoryScope::Global;
  return ir::Alloc::make(n.name, *dtype, std::move(*shape), scope, s.loc);
}

// ---------------------------------------------------------------- expressions

bool PrimResolver::is_index_like(const ast::Expr& e) const {
  switch (e.kind) {
  case ast::ExprKind::Int:
    return true;
  case ast::ExprKind::Name: {
    if (e.text.find('.') != std::string::npos) return false;
    const PrimName* entry = find(e.text);
    if (!entry) return false;
    return entry->kind == NameKind::LoopVar || entry->kind == NameKind::Symbol;
  }
  case ast::ExprKind::Unary:
    return e.op == ast::Op::Neg && is_index_like(*e.operands[0]);
  case ast::ExprKind::Binary:
    return (e.op == ast::Op::Add || e.op == ast::Op::Sub || e.op == ast::Op::Mul ||
            e.op == ast::Op::Div || e.op == ast::Op::Mod) &&
           is_index_like(*e.operands[0]) && is_index_like(*e.operands[1]);
  case ast::ExprKind::Call:
    if (!symbolic::function(e.text) || e.args.size() != 2) return false;
    return std::all_of(e.args.begin(), e.args.end(), [&](const ast::Arg& a) {
      return a.keyword.empty() && is_index_like(*a.value);
    });
  default:
    return false;
  }
}

PrimExpr PrimResolver::index(const ast::Expr& e) {
  DimContext ctx = dim_context("an index");
  std::optional<symbolic::Expr> x = to_dim(e, ctx);
  if (!x) return PrimExpr();
  return ir::Index::make(*x, e.loc);
}

std::optional<DType> PrimResolver::literal_dtype(const ast::Expr& e,
                                                 std::optional<DType> hint) const {
  if (hint) return hint;
  if (has_bool(e)) return DType::Bool;
  if (has_float(e)) return DType::F32;
  return std::nullopt; // integers: an Index
}

PrimExpr PrimResolver::literal(const ast::Expr& e, bool negated, std::optional<DType> hint) {
  if (e.kind == ast::ExprKind::Bool) {
    if (negated || (hint && *hint != DType::Bool)) {
      diags_.error(e.loc, "expected " + (hint ? with_article(*hint) : std::string("a number")) +
                              " value; found a boolean");
      return PrimExpr();
    }
    return ir::IntImm::make(DType::Bool, e.bool_value ? 1 : 0, e.loc);
  }
  if (e.kind == ast::ExprKind::Float) {
    DType d = hint ? *hint : DType::F32;
    if (!ir::is_float(d)) {
      diags_.error(e.loc, "expected " + with_article(d) + " value; found a number")
          .notes.push_back({SourceLoc{}, "convert it with cast(value, \"" + dtype_text(d) + "\")"});
      return PrimExpr();
    }
    return ir::FloatImm::make(d, negated ? -e.float_value : e.float_value, e.loc);
  }
  std::optional<int64_t> v = int_literal(e, negated, diags_);
  if (!v) return PrimExpr();
  if (!hint || *hint == DType::I64) return ir::Index::make(symbolic::Const::make(*v), e.loc);
  if (ir::is_float(*hint)) return ir::FloatImm::make(*hint, static_cast<double>(*v), e.loc);
  if (*hint == DType::Bool) {
    diags_.error(e.loc, "expected a bool; found an integer")
        .notes.push_back({SourceLoc{}, "the bool literals are true and false"});
    return PrimExpr();
  }
  int bits = ir::dtype_bits(*hint);
  int64_t lo = -(int64_t{1} << (bits - 1));
  int64_t hi = (int64_t{1} << (bits - 1)) - 1;
  if (*v < lo || *v > hi) {
    diags_.error(e.loc,
                 "integer literal " + std::to_string(*v) + " does not fit in " + dtype_text(*hint));
    return PrimExpr();
  }
  return ir::IntImm::make(*hint, *v, e.loc);
}

PrimExpr PrimResolver::name(const ast::Expr& e) {
  if (e.text.find('.') != std::string::npos) {
    diags_.error(e.loc, "'" + e.text + "' is not a value in a prim");
    return PrimExpr();
  }
  const PrimName* entry = find(e.text);
  if (!entry) {
    if (is_anonymous_symbol_name(e.text)) return ir::Index::make(symbolic::sym(e.text), e.loc);
    unknown_name(e.text, e.loc);
    return PrimExpr();
  }
  switch (entry->kind) {
  case NameKind::Local:
    return ir::LocalRef::make(entry->dtype, e.text, e.loc);
  case NameKind::LoopVar:
  case NameKind::Symbol:
    return ir::Index::make(symbolic::sym(e.text), e.loc);
  case NameKind::Buffer:
    break;
  }
  diags_.error(e.loc, "buffer '" + e.text + "' is read one element at a time: " + e.text +
                          (entry->rank == 0 ? "[]" : "[...]"));
  return PrimExpr();
}

PrimExpr PrimResolver::load(const ast::Expr& e) {
  const ast::Expr& base = *e.operands[0];
  const PrimName* entry = nullptr;
  bool ok = true;
  if (base.kind != ast::ExprKind::Name || base.text.find('.') != std::string::npos) {
    diags_.error(base.loc, "only buffers are indexed; this is " + std::string(describe_expr(base)));
    ok = false;
  } else if (!(entry = find(base.text))) {
    unknown_name(base.text, base.loc);
    ok = false;
  } else if (entry->kind != NameKind::Buffer) {
    diags_
        .error(base.loc, "'" + base.text + "' is " + name_kind_text(entry->kind) +
                             ", not a buffer; only buffers are indexed")
        .notes.push_back({entry->loc, "'" + base.text + "' is bound here"});
    ok = false;
  }
  std::vector<PrimExpr> idx = indices(e, ok ? entry : nullptr, &ok);
  if (!ok) return PrimExpr();
  return ir::Load::make(entry->dtype, base.text, std::move(idx), e.loc);
}

std::vector<PrimExpr> PrimResolver::indices(const ast::Expr& access, const PrimName* buffer,
                                            bool* ok) {
  size_t given = access.operands.size() - 1;
  if (buffer && given != buffer->rank) {
    diags_.error(access.loc, "buffer '" + access.operands[0]->text + "' has rank " +
                                 std::to_string(buffer->rank) + ", but " +
                                 plural(given, "index is", "indices are") + " given");
    *ok = false;
  }
  std::vector<PrimExpr> out;
  for (size_t i = 1; i < access.operands.size(); ++i) {
    const ast::Expr& idx = *access.operands[i];
    PrimExpr x = expr(idx, DType::I64);
    if (x.defined() && !ir::is_int(x->dtype)) {
      diags_.error(idx.loc, "an index must be an integer; this one is " + dtype_text(x->dtype))
          .notes.push_back({SourceLoc{}, "convert it with cast(index, \"i64\")"});
      x = PrimExpr();
    }
    *ok = *ok && x.defined();
    out.push_back(x);
  }
  return out;
}

bool PrimResolver::same_dtype(const PrimExpr& x, const PrimExpr& y, const char* op, SourceLoc loc) {
  if (x->dtype == y->dtype) return true;
  diags_
      .error(loc, std::string("the operands of '") + op + "' have different dtypes: " +
                      dtype_text(x->dtype) + " and " + dtype_text(y->dtype))
      .notes.push_back(
          {SourceLoc{}, "convert one with cast(value, \"" + dtype_text(x->dtype) + "\")"});
  return false;
}

bool PrimResolver::pair(const ast::Expr& a, const ast::Expr& b, std::optional<DType> hint,
                        PrimExpr& x, PrimExpr& y) {
  bool la = literal_only(a);
  bool lb = literal_only(b);
  if (la && lb) {
    std::optional<DType> d = literal_dtype(a, hint);
    if (!d) d = literal_dtype(b, hint);
    x = expr(a, d);
    y = expr(b, d);
  } else if (la) {
    y = expr(b, hint);
    x = expr(a, y.defined() ? std::optional<DType>(y->dtype) : hint);
  } else {
    x = expr(a, hint);
    y = expr(b, lb && x.defined() ? std::optional<DType>(x->dtype) : hint);
  }
  return x.defined() && y.defined();
}

PrimExpr PrimResolver::unary(const ast::Expr& e, std::optional<DType> hint) {
  const ast::Expr& operand = *e.operands[0];
  if (e.op == ast::Op::Not) {
    PrimExpr x = expr(operand, DType::Bool);
    if (!x.defined()) return PrimExpr();
    if (x->dtype != DType::Bool) {
      diags_.error(operand.loc, "'!' needs a bool operand; this one is " + dtype_text(x->dtype));
      return PrimExpr();
    }
    return ir::Intrinsic::make(DType::Bool, ir::IntrinsicId::logical_not, {x}, e.loc);
  }
  if (!operand.parenthesized &&
      (operand.kind == ast::ExprKind::Int || operand.kind == ast::ExprKind::Float)) {
    return literal(operand, /*negated=*/true, hint ? hint : literal_dtype(operand, hint));
  }
  PrimExpr x = expr(operand, hint);
  if (!x.defined()) return PrimExpr();
  if (x->dtype == DType::Bool) {
    diags_.error(operand.loc, "unary '-' needs a number; this operand is a bool");
    return PrimExpr();
  }
  return ir::Intrinsic::make(x->dtype, ir::IntrinsicId::neg, {x}, e.loc);
}

PrimExpr PrimResolver::binary(const ast::Expr& e, std::optional<DType> hint) {
  const char* op = ast::op_spelling(e.op);
  PrimExpr x, y;
  if (e.op == ast::Op::And || e.op == ast::Op::Or) {
    x = expr(*e.operands[0], DType::Bool);
    y = expr(*e.operands[1], DType::Bool);
    if (!x.defined() || !y.defined()) return PrimExpr();
    for (const PrimExpr* p : {&x, &y}) {
      if ((*p)->dtype != DType::Bool) {
        diags_.error(e.loc, std::string("'") + op + "' needs bool operands; found " +
                                dtype_text((*p)->dtype));
        return PrimExpr();
      }
    }
    return ir::PrimBinary::make(binary_op(e.op), x, y, e.loc);
  }
  if (!pair(*e.operands[0], *e.operands[1], hint, x, y)) return PrimExpr();
  if (!same_dtype(x, y, op, e.loc)) return PrimExpr();
  if (x->dtype == DType::Bool) {
    diags_.error(e.loc, std::string("'") + op + "' needs numbers; its operands are bools");
    return PrimExpr();
  }
  if (e.op == ast::Op::Mod && !ir::is_int(x->dtype)) {
    diags_.error(e.loc, "'%' needs integer operands; these are " + dtype_text(x->dtype));
    return PrimExpr();
  }
  return ir::PrimBinary::make(binary_op(e.op), x, y, e.loc);
}

// `a < b <= c` is `a < b && b <= c`; each operand is resolved once, a literal taking the dtype
// of a neighbour.
PrimExpr PrimResolver::compare(const ast::Expr& e) {
  size_t n = e.operands.size();
  std::vector<PrimExpr> xs(n);
  bool ok = true;
  for (size_t i = 0; i < n; ++i) {
    if (literal_only(*e.operands[i])) continue;
    xs[i] = expr(*e.operands[i], std::nullopt);
    ok = ok && xs[i].defined();
  }
  for (size_t i = 0; i < n; ++i) {
    if (!literal_only(*e.operands[i])) continue;
    std::optional<DType> d;
    if (i > 0 && xs[i - 1].defined())
      d = xs[i - 1]->dtype;
    else if (i + 1 < n && xs[i + 1].defined() && !literal_only(*e.operands[i + 1]))
      d = xs[i + 1]->dtype;
    else
      d = literal_dtype(*e.operands[i], std::nullopt);
    xs[i] = expr(*e.operands[i], d);
    ok = ok && xs[i].defined();
  }
  if (!ok) return PrimExpr();
  PrimExpr chain;
  for (size_t i = 0; i + 1 < n; ++i) {
    if (!same_dtype(xs[i], xs[i + 1], ast::op_spelling(e.ops[i]), e.op_locs[i])) return PrimExpr();
    PrimExpr link = ir::PrimBinary::make(binary_op(e.ops[i]), xs[i], xs[i + 1], e.op_locs[i]);
    chain =
        chain.defined() ? ir::PrimBinary::make(ir::BinaryOp::And, chain, link, e.op_locs[i]) : link;
  }
  return chain;
}

PrimExpr PrimResolver::call(const ast::Expr& e, std::optional<DType> hint, bool statement) {
  const std::string& fn = e.text;
  auto arity = [&](size_t n) {
    if (e.args.size() == n) return true;
    diags_.error(e.loc, "'" + fn + "' takes " + plural(n, "argument", "arguments") + "; " +
                            std::to_string(e.args.size()) + " given");
    return false;
  };
  bool is_cast = fn == "cast";
  for (const ast::Arg& a : e.args) {
    if (!a.keyword.empty() && !(is_cast && a.keyword == "dtype")) {
      diags_.error(a.keyword_loc, "'" + fn + "' takes no keyword argument '" + a.keyword + "'");
      return PrimExpr();
    }
  }
  auto numeric = [&](const PrimExpr& x, const ast::Expr& at) {
    if (x->dtype != DType::Bool) return true;
    diags_.error(at.loc, "'" + fn + "' needs a number; this argument is a bool");
    return false;
  };

  if (fn == "min" || fn == "max") {
    if (!arity(2)) return PrimExpr();
    PrimExpr x, y;
    if (!pair(*e.args[0].value, *e.args[1].value, hint, x, y)) return PrimExpr();
    if (!same_dtype(x, y, fn.c_str(), e.loc) || !numeric(x, *e.args[0].value)) return PrimExpr();
    return ir::PrimBinary::make(fn == "min" ? ir::BinaryOp::Min : ir::BinaryOp::Max, x, y, e.loc);
  }
  if (const ir::IntrinsicDef* in = pure_intrinsic(fn)) {
    if (!arity(static_cast<size_t>(in->arity))) return PrimExpr();
    return intrinsic(e, *in, hint);
  }
  if (is_cast) {
    if (!arity(2)) return PrimExpr();
    const ast::Expr& target = *e.args[1].value;
    if (target.kind != ast::ExprKind::String) {
      diags_.error(target.loc, "the dtype of a cast is a string, as in cast(x, \"f16\")");
      return PrimExpr();
    }
    std::optional<DType> d = ir::parse_dtype(target.text);
    if (!d) {
      Diagnostic& diag = diags_.error(target.loc, "unknown dtype '" + target.text + "'");
      suggest_dtype(diag, target.text);
      return PrimExpr();
    }
    PrimExpr x = expr(*e.args[0].value, std::nullopt);
    if (!x.defined()) return PrimExpr();
    return ir::Cast::make(*d, x, e.loc);
  }
  if (statement && fn.find('.') == std::string::npos) {
    // An intrinsic called for its effect (a barrier, say): the backends know its name.
    std::vector<PrimExpr> args;
    bool ok = true;
    for (const ast::Arg& a : e.args) {
      args.push_back(expr(*a.value, std::nullopt));
      ok = ok && args.back().defined();
    }
    if (!ok) return PrimExpr();
    return ir::Intrinsic::make(DType::I32, fn, std::move(args), e.loc);
  }
  Diagnostic& d = diags_.error(e.loc, "unknown scalar function '" + fn + "'");
  std::vector<std::string> known = scalar_functions();
  if (closest_name(fn, known).empty()) {
    std::string list;
    for (size_t i = 0; i < known.size(); ++i)
      list += (i == 0 ? "" : i + 1 == known.size() ? " and " : ", ") + known[i];
    d.notes.push_back({SourceLoc{}, "the scalar functions are " + list});
  } else {
    suggest(d, fn, known);
  }
  return PrimExpr();
}

PrimExpr PrimResolver::intrinsic(const ast::Expr& e, const ir::IntrinsicDef& fn,
                                 std::optional<DType> hint) {
  const std::string& name = e.text;
  auto operand = [&](size_t i) -> const ast::Expr& { return *e.args[i].value; };
  auto numeric = [&](const PrimExpr& x, const ast::Expr& at) {
    if (x->dtype != DType::Bool) return true;
    diags_.error(at.loc, "'" + name + "' needs a number; this argument is a bool");
    return false;
  };
  std::vector<PrimExpr> xs;
  switch (fn.domain) {
  case ir::IntrinsicDomain::Bool:
    for (size_t i = 0; i < e.args.size(); ++i) {
      PrimExpr x = expr(operand(i), DType::Bool);
      if (!x.defined()) return PrimExpr();
      if (x->dtype != DType::Bool) {
        diags_.error(operand(i).loc, "'" + name + "' needs a bool argument");
        return PrimExpr();
      }
      xs.push_back(x);
    }
    return ir::Intrinsic::make(DType::Bool, name, std::move(xs), e.loc);
  case ir::IntrinsicDomain::Select: {
    PrimExpr c = expr(operand(0), DType::Bool);
    PrimExpr x, y;
    bool ok = pair(operand(1), operand(2), hint, x, y) && c.defined();
    if (!ok) return PrimExpr();
    if (c->dtype != DType::Bool) {
      diags_.error(operand(0).loc, "the condition of '" + name + "' must be a bool; this one is " +
                                       dtype_text(c->dtype));
      return PrimExpr();
    }
    if (!same_dtype(x, y, name.c_str(), e.loc)) return PrimExpr();
    return ir::Intrinsic::make(x->dtype, name, {c, x, y}, e.loc);
  }
  case ir::IntrinsicDomain::Float:
  case ir::IntrinsicDomain::Number: {
    const bool floats = fn.domain == ir::IntrinsicDomain::Float;
    internal_assert(fn.arity == 1 || fn.arity == 2) << "'" << name << "' has arity " << fn.arity;
    if (fn.arity == 1) {
      std::optional<DType> d = hint;
      if (literal_only(operand(0)) && !(d && ir::is_float(*d)) && floats) d = DType::F32;
      xs.push_back(expr(operand(0), d));
      if (!xs[0].defined()) return PrimExpr();
    } else {
      PrimExpr x, y;
      if (!pair(operand(0), operand(1), hint, x, y)) return PrimExpr();
      if (!same_dtype(x, y, name.c_str(), e.loc)) return PrimExpr();
      xs = {x, y};
    }
    if (!numeric(xs[0], operand(0))) return PrimExpr();
    if (floats && !ir::is_float(xs[0]->dtype)) {
      diags_
          .error(operand(0).loc,
                 "'" + name + "' needs a float argument; this one is " + dtype_text(xs[0]->dtype))
          .notes.push_back({SourceLoc{}, "convert it with cast(value, \"f32\")"});
      return PrimExpr();
    }
    DType d = xs[0]->dtype;
    return ir::Intrinsic::make(d, name, std::move(xs), e.loc);
  }
  case ir::IntrinsicDomain::None:
    break;
  }
  internal_error << "'" << name << "' is pure but takes no operands";
}

PrimExpr PrimResolver::expr(const ast::Expr& e, std::optional<DType> hint) {
  // Integer arithmetic over loop variables and symbols is an Index, so that the bounds
  // machinery of symbolic/ can reason about it.
  if ((!hint || *hint == DType::I64) && is_index_like(e)) return index(e);
  switch (e.kind) {
  case ast::ExprKind::Error:
    return PrimExpr();
  case ast::ExprKind::Int:
  case ast::ExprKind::Float:
  case ast::ExprKind::Bool:
    return literal(e, false, hint);
  case ast::ExprKind::Name:
    return name(e);
  case ast::ExprKind::Index:
    return load(e);
  case ast::ExprKind::Unary:
    return unary(e, hint);
  case ast::ExprKind::Binary:
    return binary(e, hint);
  case ast::ExprKind::Compare:
    return compare(e);
  case ast::ExprKind::Call:
    return call(e, hint, /*statement=*/false);
  case ast::ExprKind::String:
    diags_.error(e.loc, "a string is only allowed as the dtype of cast(x, \"f16\")");
    return PrimExpr();
  default:
    diags_.error(e.loc, std::string(describe_expr(e)) + " is not allowed in a prim");
    return PrimExpr();
  }
}

} // namespace

Ref<ir::PrimFunc> resolve_prim(const ast::Decl& decl, DiagnosticEngine& diags,
                               const std::set<std::string>& bound_by_externs) {
  return PrimResolver(diags).prim(decl, bound_by_externs);
}

} // namespace dsc::lang
