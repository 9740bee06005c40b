#include "ir/StructuralEqual.h"

#include <bit>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "ir/Intrinsics.h"
#include "symbolic/Simplify.h"

namespace dsc::ir {

namespace {

// The statements a Stmt stands for, with nested Seqs flattened and an undefined Stmt empty:
// the text cannot tell `Seq([s])` from `s`, nor an absent else from an empty one.
void flatten(const Stmt& s, std::vector<const StmtNode*>& out) {
  if (!s.defined()) return;
  if (const Seq* seq = s.as<Seq>()) {
    for (const Stmt& child : seq->stmts)
      flatten(child, out);
    return;
  }
  out.push_back(s.get());
}

std::vector<const StmtNode*> flatten(const Stmt& s) {
  std::vector<const StmtNode*> out;
  flatten(s, out);
  return out;
}

// A loop reads `for i in min..end`; it is compared by what it prints.
symbolic::Expr loop_end(const For& f) {
  return symbolic::simplify(f.min + f.extent);
}

// The symbolic expression an integer PrimExpr stands for, when it is index arithmetic: an
// Index, an i64 IntImm, or + - * / % min max and neg over such. The text spells both forms
// alike and the front end reads them as one Index, so they compare as that.
std::optional<symbolic::Expr> index_form(const PrimExpr& e) {
  if (!e.defined() || e->dtype != DType::I64) return std::nullopt;
  if (const Index* i = e.as<Index>()) return i->value;
  if (const IntImm* imm = e.as<IntImm>()) return symbolic::Const::make(imm->value);
  if (const Intrinsic* in = e.as<Intrinsic>()) {
    const IntrinsicDef* def = find_intrinsic(in->name);
    if (!def || def->id != IntrinsicId::neg || in->args.size() != 1) return std::nullopt;
    std::optional<symbolic::Expr> x = index_form(in->args[0]);
    if (!x) return std::nullopt;
    return symbolic::Mul::make(symbolic::Const::make(-1), *x);
  }
  const PrimBinary* b = e.as<PrimBinary>();
  if (!b) return std::nullopt;
  std::optional<symbolic::Expr> x = index_form(b->a);
  std::optional<symbolic::Expr> y = x ? index_form(b->b) : std::nullopt;
  if (!y) return std::nullopt;
  switch (b->op) {
  case BinaryOp::Add:
    return symbolic::Add::make(*x, *y);
  case BinaryOp::Sub:
    return symbolic::Sub::make(*x, *y);
  case BinaryOp::Mul:
    return symbolic::Mul::make(*x, *y);
  case BinaryOp::Div:
    return symbolic::FloorDiv::make(*x, *y);
  case BinaryOp::Mod:
    return symbolic::FloorMod::make(*x, *y);
  case BinaryOp::Min:
    return symbolic::Min::make(*x, *y);
  case BinaryOp::Max:
    return symbolic::Max::make(*x, *y);
  default:
    return std::nullopt;
  }
}

bool same_dims(const std::vector<symbolic::Expr>& a, const std::vector<symbolic::Expr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!a[i].same_as(b[i])) return false;
  return true;
}

bool same_where(const std::vector<WhereClause>& a, const std::vector<WhereClause>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!a[i].predicate.same_as(b[i].predicate)) return false;
  return true;
}

bool same_literal(const Literal& a, const Literal& b) {
  if (a.value.index() != b.value.index()) return false;
  if (const double* x = std::get_if<double>(&a.value))
    return std::bit_cast<uint64_t>(*x) == std::bit_cast<uint64_t>(std::get<double>(b.value));
  return a.value == b.value;
}

bool same_buffers(const std::vector<Buffer>& a, const std::vector<Buffer>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].name != b[i].name || a[i].dtype != b[i].dtype || !same_dims(a[i].shape, b[i].shape))
      return false;
  return true;
}

const Expr& default_of(const Function& f, size_t i) {
  static const Expr kNone;
  return i < f.defaults.size() ? f.defaults[i] : kNone;
}

// ---------------------------------------------------------------- equality

class Equal {
public:
  // One prim expression, outside any prim (no loop variables bound).
  bool element(const PrimExpr& a, const PrimExpr& b) { return prim_expr(a, b); }

  bool function(const Function& a, const Function& b) {
    if (a.name != b.name || a.params.size() != b.params.size()) return false;
    for (size_t i = 0; i < a.params.size(); ++i) {
      if (!param(a.params[i], b.params[i])) return false;
      if (!optional_expr(default_of(a, i), default_of(b, i))) return false;
    }
    return a.ret_type == b.ret_type && same_where(a.where, b.where) && expr(a.body, b.body);
  }

  bool prim(const PrimFunc& a, const PrimFunc& b) {
    return a.name == b.name && same_buffers(a.inputs, b.inputs) &&
           same_buffers(a.outputs, b.outputs) && same_where(a.where, b.where) &&
           stmts(a.body, b.body);
  }

  bool ext(const ExternFunc& a, const ExternFunc& b) {
    if (a.name != b.name || a.symbol != b.symbol || a.epilogue != b.epilogue ||
        a.epilogue_first_row != b.epilogue_first_row || a.attributes != b.attributes ||
        a.params.size() != b.params.size())
      return false;
    for (size_t i = 0; i < a.params.size(); ++i)
      if (!param(a.params[i], b.params[i])) return false;
    if (a.views.size() != b.views.size()) return false;
    for (size_t i = 0; i < a.views.size(); ++i)
      if (!same_view(a.views[i], b.views[i])) return false;
    return same_view(a.result_view, b.result_view) && a.ret_type == b.ret_type &&
           same_where(a.where, b.where);
  }

  bool same_view(const std::optional<StridedView>& x, const std::optional<StridedView>& y) {
    if (x.has_value() != y.has_value()) return false;
    return !x || (same_dims(x->shape, y->shape) && same_dims(x->strides, y->strides) &&
                  same_dims({x->offset}, {y->offset}));
  }

private:
  // Parameter names are the callee's interface (keyword arguments bind by them), so unlike
  // let-bound names they count.
  bool param(const VarRef& a, const VarRef& b) {
    return a->name == b->name && a->type == b->type && bind(a.get(), b.get());
  }

  bool bind(const Var* a, const Var* b) {
    auto [it, inserted] = a_to_b_.emplace(a, b);
    if (!inserted) return it->second == b;
    auto [rit, rinserted] = b_to_a_.emplace(b, a);
    return rinserted || rit->second == a;
  }

  bool var_use(const Var* a, const Var* b) {
    auto it = a_to_b_.find(a);
    if (it != a_to_b_.end()) return it->second == b;
    if (b_to_a_.count(b)) return false;
    // Free on both sides (a verifier error): match by name, consistently from here on.
    return a->name == b->name && bind(a, b);
  }

  bool optional_expr(const Expr& a, const Expr& b) {
    if (!a.defined() || !b.defined()) return a.defined() == b.defined();
    return expr(a, b);
  }

  bool exprs(const std::vector<Expr>& a, const std::vector<Expr>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!expr(a[i], b[i])) return false;
    return true;
  }

  bool expr(const Expr& a, const Expr& b) {
    if (!a.defined() || !b.defined()) return a.defined() == b.defined();
    if (a.kind() != b.kind()) return false;
    switch (a.kind()) {
    case NodeKind::Var:
      return var_use(a.as<Var>(), b.as<Var>());
    case NodeKind::Literal:
      return same_literal(*a.as<Literal>(), *b.as<Literal>());
    case NodeKind::StringImm:
      return a.as<StringImm>()->value == b.as<StringImm>()->value;
    case NodeKind::ShapeExpr:
      return same_dims(a.as<ShapeExpr>()->dims, b.as<ShapeExpr>()->dims);
    case NodeKind::ListExpr:
      return exprs(a.as<ListExpr>()->items, b.as<ListExpr>()->items);
    case NodeKind::Call: {
      const Call* x = a.as<Call>();
      const Call* y = b.as<Call>();
      if (x->callee != y->callee || x->kwargs.size() != y->kwargs.size()) return false;
      if (!exprs(x->args, y->args)) return false;
      for (size_t i = 0; i < x->kwargs.size(); ++i)
        if (x->kwargs[i].name != y->kwargs[i].name || !expr(x->kwargs[i].value, y->kwargs[i].value))
          return false;
      return true;
    }
    case NodeKind::Tuple:
      return exprs(a.as<Tuple>()->fields, b.as<Tuple>()->fields);
    case NodeKind::GetItem:
      return a.as<GetItem>()->index == b.as<GetItem>()->index &&
             expr(a.as<GetItem>()->tuple, b.as<GetItem>()->tuple);
    case NodeKind::If: {
      const If* x = a.as<If>();
      const If* y = b.as<If>();
      if (x->guard.defined() != y->guard.defined() ||
          (x->guard.defined() && !same_dims({x->guard}, {y->guard})))
        return false;
      return optional_expr(x->cond, y->cond) && expr(x->then_branch, y->then_branch) &&
             expr(x->else_branch, y->else_branch);
    }
    case NodeKind::Loop:
      return loop(*a.as<Loop>(), *b.as<Loop>());
    case NodeKind::Block:
      return block(*a.as<Block>(), *b.as<Block>());
    default:
      internal_error << "not a graph expression: " << node_kind_name(a.kind());
    }
  }

  bool loop(const Loop& a, const Loop& b) {
    if (a.var != b.var || a.declared != b.declared || a.bound.defined() != b.bound.defined() ||
        a.carries.size() != b.carries.size())
      return false;
    if (!same_dims({a.lo}, {b.lo}) || (a.bound.defined() && !same_dims({a.bound}, {b.bound})))
      return false;
    if (!expr(a.hi, b.hi) || !exprs(a.inits, b.inits)) return false;
    for (size_t i = 0; i < a.carries.size(); ++i) {
      if (a.declared[i] && !(a.carries[i]->type == b.carries[i]->type)) return false;
      if (!bind(a.carries[i].get(), b.carries[i].get())) return false;
    }
    return optional_expr(a.cond, b.cond) && expr(a.body, b.body);
  }

  bool block(const Block& a, const Block& b) {
    if (a.bindings.size() != b.bindings.size()) return false;
    for (size_t i = 0; i < a.bindings.size(); ++i) {
      const Binding& x = a.bindings[i];
      const Binding& y = b.bindings[i];
      if (x.vars.size() != y.vars.size() || x.has_asserted_type != y.has_asserted_type)
        return false;
      // The value is compared before its vars are bound: it cannot refer to them.
      if (!expr(x.value, y.value)) return false;
      for (size_t v = 0; v < x.vars.size(); ++v) {
        if (x.has_asserted_type && !(x.vars[v]->type == y.vars[v]->type)) return false;
        if (!bind(x.vars[v].get(), y.vars[v].get())) return false;
      }
    }
    return expr(a.result, b.result);
  }

  bool prim_exprs(const std::vector<PrimExpr>& a, const std::vector<PrimExpr>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!prim_expr(a[i], b[i])) return false;
    return true;
  }

  bool prim_expr(const PrimExpr& a, const PrimExpr& b) {
    if (!a.defined() || !b.defined()) return a.defined() == b.defined();
    std::optional<symbolic::Expr> ia = index_form(a);
    std::optional<symbolic::Expr> ib = index_form(b);
    if (ia || ib) return ia && ib && ia->same_as(*ib);
    if (a.kind() != b.kind() || a->dtype != b->dtype) return false;
    switch (a.kind()) {
    case NodeKind::IntImm:
      return a.as<IntImm>()->value == b.as<IntImm>()->value;
    case NodeKind::FloatImm:
      return std::bit_cast<uint64_t>(a.as<FloatImm>()->value) ==
             std::bit_cast<uint64_t>(b.as<FloatImm>()->value);
    case NodeKind::Index:
      return a.as<Index>()->value.same_as(b.as<Index>()->value);
    case NodeKind::Load:
      return a.as<Load>()->buffer == b.as<Load>()->buffer &&
             prim_exprs(a.as<Load>()->indices, b.as<Load>()->indices);
    case NodeKind::LocalRef:
      return a.as<LocalRef>()->name == b.as<LocalRef>()->name;
    case NodeKind::PrimBinary: {
      const PrimBinary* x = a.as<PrimBinary>();
      const PrimBinary* y = b.as<PrimBinary>();
      return x->op == y->op && prim_expr(x->a, y->a) && prim_expr(x->b, y->b);
    }
    case NodeKind::Intrinsic:
      return a.as<Intrinsic>()->name == b.as<Intrinsic>()->name &&
             prim_exprs(a.as<Intrinsic>()->args, b.as<Intrinsic>()->args);
    case NodeKind::Cast:
      return prim_expr(a.as<Cast>()->value, b.as<Cast>()->value);
    default:
      internal_error << "not a prim expression: " << node_kind_name(a.kind());
    }
  }

  bool stmts(const Stmt& a, const Stmt& b) {
    std::vector<const StmtNode*> x = flatten(a);
    std::vector<const StmtNode*> y = flatten(b);
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i)
      if (!stmt(x[i], y[i])) return false;
    return true;
  }

  bool stmt(const StmtNode* a, const StmtNode* b) {
    if (a->kind != b->kind) return false;
    switch (a->kind) {
    case NodeKind::For: {
      const auto* x = static_cast<const For*>(a);
      const auto* y = static_cast<const For*>(b);
      if (x->var != y->var || x->for_kind != y->for_kind || !x->min.same_as(y->min)) return false;
      if (!x->extent.same_as(y->extent) && !loop_end(*x).same_as(loop_end(*y))) return false;
      return stmts(x->body, y->body);
    }
    case NodeKind::Store: {
      const auto* x = static_cast<const Store*>(a);
      const auto* y = static_cast<const Store*>(b);
      return x->buffer == y->buffer && prim_exprs(x->indices, y->indices) &&
             prim_expr(x->value, y->value);
    }
    case NodeKind::LocalDecl: {
      const auto* x = static_cast<const LocalDecl*>(a);
      const auto* y = static_cast<const LocalDecl*>(b);
      return x->name == y->name && x->dtype == y->dtype && x->is_mutable == y->is_mutable &&
             prim_expr(x->init, y->init);
    }
    case NodeKind::Assign: {
      const auto* x = static_cast<const Assign*>(a);
      const auto* y = static_cast<const Assign*>(b);
      return x->name == y->name && prim_expr(x->value, y->value);
    }
    case NodeKind::IfStmt: {
      const auto* x = static_cast<const IfStmt*>(a);
      const auto* y = static_cast<const IfStmt*>(b);
      return prim_expr(x->cond, y->cond) && stmts(x->then_body, y->then_body) &&
             stmts(x->else_body, y->else_body);
    }
    case NodeKind::Alloc: {
      const auto* x = static_cast<const Alloc*>(a);
      const auto* y = static_cast<const Alloc*>(b);
      return x->name == y->name && x->dtype == y->dtype && x->scope == y->scope &&
             same_dims(x->shape, y->shape);
    }
    case NodeKind::Evaluate:
      return prim_expr(static_cast<const Evaluate*>(a)->value,
                       static_cast<const Evaluate*>(b)->value);
    default:
      internal_error << "not a statement: " << node_kind_name(a->kind);
    }
  }

  std::unordered_map<const Var*, const Var*> a_to_b_;
  std::unordered_map<const Var*, const Var*> b_to_a_;
};

// ---------------------------------------------------------------- hashing

// Hashes exactly what Equal compares, so equal modules hash alike: a bound Var by the order in
// which it was bound, a free one by name.
class Hasher {
public:
  size_t value() const { return h_; }

  void module(const Module& m) {
    mix(m.imports.size());
    for (const Import& i : m.imports)
      str(i.name);
    mix(m.decls.size());
    for (const Module::Decl& d : m.decls) {
      var_index_.clear();
      if (d.fn) {
        mix(1);
        function(*d.fn);
      } else if (d.prim) {
        mix(2);
        prim(*d.prim);
      } else if (d.ext) {
        mix(3);
        ext(*d.ext);
      }
    }
  }

private:
  void mix(size_t v) { h_ ^= v + 0x9e3779b97f4a7c15ULL + (h_ << 6) + (h_ >> 2); }
  void str(std::string_view s) { mix(std::hash<std::string_view>()(s)); }
  void sym(const symbolic::Expr& e) { mix(e.hash()); }
  void dims(const std::vector<symbolic::Expr>& ds) {
    mix(ds.size());
    for (const symbolic::Expr& d : ds)
      sym(d);
  }
  void where(const std::vector<WhereClause>& w) {
    mix(w.size());
    for (const WhereClause& c : w)
      sym(c.predicate);
  }

  void type(const Type& t) {
    mix(static_cast<size_t>(t.kind));
    if (t.is_tensor()) {
      mix(static_cast<size_t>(t.dtype));
      mix(t.weak);
      dims(t.shape);
    } else if (t.is_tuple()) {
      mix(t.fields.size());
      for (const Type& f : t.fields)
        type(f);
    }
  }

  void bind(const Var* v) { var_index_.emplace(v, var_index_.size()); }

  void param(const VarRef& p) {
    str(p->name);
    type(p->type);
    bind(p.get());
  }

  void function(const Function& f) {
    str(f.name);
    mix(f.params.size());
    for (size_t i = 0; i < f.params.size(); ++i) {
      param(f.params[i]);
      expr(default_of(f, i));
    }
    type(f.ret_type);
    where(f.where);
    expr(f.body);
  }

  void ext(const ExternFunc& e) {
    str(e.name);
    str(e.symbol);
    str(e.epilogue);
    str(e.epilogue_first_row);
    mix(e.attributes.size());
    for (const RoutineAttribute& a : e.attributes) {
      str(a.name);
      mix(a.values.size());
      for (int64_t v : a.values)
        mix(static_cast<size_t>(v));
    }
    mix(e.params.size());
    for (const VarRef& p : e.params)
      param(p);
    mix(e.views.size());
    for (const std::optional<StridedView>& v : e.views)
      view(v);
    view(e.result_view);
    type(e.ret_type);
    where(e.where);
  }

  void view(const std::optional<StridedView>& v) {
    mix(v.has_value());
    if (!v) return;
    dims(v->shape);
    dims(v->strides);
    sym(v->offset);
  }

  void buffers(const std::vector<Buffer>& bufs) {
    mix(bufs.size());
    for (const Buffer& b : bufs) {
      str(b.name);
      mix(static_cast<size_t>(b.dtype));
      dims(b.shape);
    }
  }

  void prim(const PrimFunc& p) {
    str(p.name);
    buffers(p.inputs);
    buffers(p.outputs);
    where(p.where);
    stmts(p.body);
  }

  void exprs(const std::vector<Expr>& es) {
    mix(es.size());
    for (const Expr& e : es)
      expr(e);
  }

  void expr(const Expr& e) {
    if (!e.defined()) {
      mix(0xdead);
      return;
    }
    mix(static_cast<size_t>(e.kind()));
    switch (e.kind()) {
    case NodeKind::Var: {
      auto it = var_index_.find(e.as<Var>());
      if (it != var_index_.end()) {
        mix(it->second);
      } else {
        str(e.as<Var>()->name);
      }
      return;
    }
    case NodeKind::Literal: {
      const auto& v = e.as<Literal>()->value;
      mix(v.index());
      if (const int64_t* i = std::get_if<int64_t>(&v)) mix(static_cast<size_t>(*i));
      if (const double* d = std::get_if<double>(&v)) mix(std::bit_cast<uint64_t>(*d));
      if (const bool* b = std::get_if<bool>(&v)) mix(*b);
      return;
    }
    case NodeKind::StringImm:
      str(e.as<StringImm>()->value);
      return;
    case NodeKind::ShapeExpr:
      dims(e.as<ShapeExpr>()->dims);
      return;
    case NodeKind::ListExpr:
      exprs(e.as<ListExpr>()->items);
      return;
    case NodeKind::Call: {
      const Call* c = e.as<Call>();
      str(c->callee);
      exprs(c->args);
      mix(c->kwargs.size());
      for (const KeywordArg& k : c->kwargs) {
        str(k.name);
        expr(k.value);
      }
      return;
    }
    case NodeKind::Tuple:
      exprs(e.as<Tuple>()->fields);
      return;
    case NodeKind::GetItem:
      mix(static_cast<size_t>(e.as<GetItem>()->index));
      expr(e.as<GetItem>()->tuple);
      return;
    case NodeKind::If:
      if (e.as<If>()->cond.defined()) expr(e.as<If>()->cond);
      if (e.as<If>()->guard.defined()) dims({e.as<If>()->guard});
      expr(e.as<If>()->then_branch);
      expr(e.as<If>()->else_branch);
      return;
    case NodeKind::Loop: {
      const Loop* l = e.as<Loop>();
      str(l->var);
      dims({l->lo});
      if (l->bound.defined()) dims({l->bound});
      expr(l->hi);
      exprs(l->inits);
      for (size_t i = 0; i < l->carries.size(); ++i) {
        mix(l->declared[i]);
        if (l->declared[i]) type(l->carries[i]->type);
        bind(l->carries[i].get());
      }
      expr(l->cond);
      expr(l->body);
      return;
    }
    case NodeKind::Block: {
      const Block* b = e.as<Block>();
      mix(b->bindings.size());
      for (const Binding& binding : b->bindings) {
        mix(binding.vars.size());
        mix(binding.has_asserted_type);
        expr(binding.value);
        for (const VarRef& v : binding.vars) {
          if (binding.has_asserted_type) type(v->type);
          bind(v.get());
        }
      }
      expr(b->result);
      return;
    }
    default:
      internal_error << "not a graph expression: " << node_kind_name(e.kind());
    }
  }

  void prim_exprs(const std::vector<PrimExpr>& es) {
    mix(es.size());
    for (const PrimExpr& e : es)
      prim_expr(e);
  }

  void prim_expr(const PrimExpr& e) {
    if (!e.defined()) {
      mix(0xdead);
      return;
    }
    if (std::optional<symbolic::Expr> index = index_form(e)) {
      mix(static_cast<size_t>(NodeKind::Index));
      sym(*index);
      return;
    }
    mix(static_cast<size_t>(e.kind()));
    mix(static_cast<size_t>(e->dtype));
    switch (e.kind()) {
    case NodeKind::IntImm:
      mix(static_cast<size_t>(e.as<IntImm>()->value));
      return;
    case NodeKind::FloatImm:
      mix(std::bit_cast<uint64_t>(e.as<FloatImm>()->value));
      return;
    case NodeKind::Index:
      sym(e.as<Index>()->value);
      return;
    case NodeKind::Load:
      str(e.as<Load>()->buffer);
      prim_exprs(e.as<Load>()->indices);
      return;
    case NodeKind::LocalRef:
      str(e.as<LocalRef>()->name);
      return;
    case NodeKind::PrimBinary:
      mix(static_cast<size_t>(e.as<PrimBinary>()->op));
      prim_expr(e.as<PrimBinary>()->a);
      prim_expr(e.as<PrimBinary>()->b);
      return;
    case NodeKind::Intrinsic:
      str(e.as<Intrinsic>()->name);
      prim_exprs(e.as<Intrinsic>()->args);
      return;
    case NodeKind::Cast:
      prim_expr(e.as<Cast>()->value);
      return;
    default:
      internal_error << "not a prim expression: " << node_kind_name(e.kind());
    }
  }

  void stmts(const Stmt& s) {
    std::vector<const StmtNode*> list = flatten(s);
    mix(list.size());
    for (const StmtNode* n : list)
      stmt(n);
  }

  void stmt(const StmtNode* s) {
    mix(static_cast<size_t>(s->kind));
    switch (s->kind) {
    case NodeKind::For: {
      const auto* f = static_cast<const For*>(s);
      str(f->var);
      mix(static_cast<size_t>(f->for_kind));
      sym(f->min);
      sym(loop_end(*f));
      stmts(f->body);
      return;
    }
    case NodeKind::Store: {
      const auto* st = static_cast<const Store*>(s);
      str(st->buffer);
      prim_exprs(st->indices);
      prim_expr(st->value);
      return;
    }
    case NodeKind::LocalDecl: {
      const auto* d = static_cast<const LocalDecl*>(s);
      str(d->name);
      mix(static_cast<size_t>(d->dtype));
      mix(d->is_mutable);
      prim_expr(d->init);
      return;
    }
    case NodeKind::Assign: {
      const auto* a = static_cast<const Assign*>(s);
      str(a->name);
      prim_expr(a->value);
      return;
    }
    case NodeKind::IfStmt: {
      const auto* i = static_cast<const IfStmt*>(s);
      prim_expr(i->cond);
      stmts(i->then_body);
      stmts(i->else_body);
      return;
    }
    case NodeKind::Alloc: {
      const auto* a = static_cast<const Alloc*>(s);
      str(a->name);
      mix(static_cast<size_t>(a->dtype));
      mix(static_cast<size_t>(a->scope));
      dims(a->shape);
      return;
    }
    case NodeKind::Evaluate:
      prim_expr(static_cast<const Evaluate*>(s)->value);
      return;
    default:
      internal_error << "not a statement: " << node_kind_name(s->kind);
    }
  }

  size_t h_ = 0x243f6a8885a308d3ULL;
  std::unordered_map<const Var*, size_t> var_index_;
};

} // namespace

bool structural_equal(const Module& a, const Module& b) {
  if (a.imports.size() != b.imports.size() || a.decls.size() != b.decls.size()) return false;
  for (size_t i = 0; i < a.imports.size(); ++i)
    if (a.imports[i].name != b.imports[i].name) return false;
  for (size_t i = 0; i < a.decls.size(); ++i) {
    const Module::Decl& x = a.decls[i];
    const Module::Decl& y = b.decls[i];
    if (x.fn && y.fn) {
      if (!structural_equal(*x.fn, *y.fn)) return false;
    } else if (x.prim && y.prim) {
      if (!structural_equal(*x.prim, *y.prim)) return false;
    } else if (x.ext && y.ext) {
      if (!structural_equal(*x.ext, *y.ext)) return false;
    } else {
      return false;
    }
  }
  return true;
}

bool structural_equal(const Function& a, const Function& b) {
  return Equal().function(a, b);
}
bool structural_equal(const PrimFunc& a, const PrimFunc& b) {
  return Equal().prim(a, b);
}
bool structural_equal(const ExternFunc& a, const ExternFunc& b) {
  return Equal().ext(a, b);
}
bool structural_equal(const PrimExpr& a, const PrimExpr& b) {
  return Equal().element(a, b);
}

size_t structural_hash(const Module& m) {
  Hasher h;
  h.module(m);
  return h.value();
}

} // namespace dsc::ir
