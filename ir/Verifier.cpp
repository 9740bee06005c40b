#include "ir/Verifier.h"

#include <algorithm>

#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "ir/Functor.h"
#include "ir/LibraryRoutine.h"
#include "ir/Printer.h"
#include "symbolic/Eval.h"

namespace dsc::ir {

namespace {

void collect_symbols(const symbolic::Expr& e, std::unordered_set<std::string>& out) {
  if (!e.defined()) return;
  for (const std::string& name : symbolic::free_symbols(e))
    out.insert(name);
}

class Reporter {
public:
  Reporter(std::vector<std::string>& errors, std::string context)
      : errors_(errors), context_(std::move(context)) {}

  void error(const std::string& message) { errors_.push_back(context_ + ": " + message); }

private:
  std::vector<std::string>& errors_;
  std::string context_;
};

// ---------------------------------------------------------------- graph functions

// Every var a function's lets bind, to tell a use before its binding from a free var.
bool is_bool_scalar(const Type& t) {
  return t.is_tensor() && t.dtype == DType::Bool && t.rank() == 0;
}

class BinderCollector : public IRVisitor {
public:
  std::unordered_set<const Var*> binders;

protected:
  void visit_node(const Block* node) override {
    for (const Binding& b : node->bindings)
      for (const VarRef& v : b.vars)
        binders.insert(v.get());
    IRVisitor::visit_node(node);
  }
  void visit_node(const Loop* node) override {
    for (const VarRef& v : node->carries)
      binders.insert(v.get());
    IRVisitor::visit_node(node);
  }
};

class GraphVerifier {
public:
  GraphVerifier(Reporter& r, const VerifyOptions& options) : r_(r), options_(options) {}

  void function(const Function& f) {
    // Generic functions (`tensor` or attribute parameters) are typed per call, never alone.
    typed_ = options_.require_types &&
             std::none_of(f.params.begin(), f.params.end(), [](const VarRef& p) {
               return p.defined() && (p->type.kind == Type::Kind::Any || p->type.is_attribute());
             });
    if (!f.defaults.empty() && f.defaults.size() != f.params.size())
      r_.error(std::to_string(f.defaults.size()) + " defaults for " +
               std::to_string(f.params.size()) + " parameters");
    for (size_t i = 0; i < f.params.size(); ++i) {
      const VarRef& p = f.params[i];
      if (!p.defined()) {
        r_.error("parameter " + std::to_string(i) + " is undefined");
        continue;
      }
      if (p->type.is_unknown()) r_.error("parameter '" + p->name + "' has no type");
      bind(p.get());
      if (i >= f.defaults.size() || !f.defaults[i].defined()) continue;
      const Expr& d = f.defaults[i];
      if (!p->type.is_attribute() && p->type.kind != Type::Kind::Any)
        r_.error("parameter '" + p->name + "' has a default but is neither an attribute nor generic");
      if (!d.is<Literal>() && !d.is<StringImm>())
        r_.error("the default of '" + p->name + "' is not a literal: " + to_string(d));
    }
    if (!f.body.defined()) {
      r_.error("no body");
      return;
    }
    if (!f.body.is<Block>()) r_.error("the body is not a Block");
    BinderCollector collector;
    collector.visit(f.body);
    binders_ = std::move(collector.binders);
    expr(f.body);
  }

private:
  void bind(const Var* v) {
    if (!bound_ever_.insert(v).second) r_.error("var '" + v->name + "' is bound twice");
    in_scope_.insert(v);
  }

  void require_type(const Expr& e) {
    if (!typed_ || !e->type.is_unknown()) return;
    std::string what = std::string(node_kind_name(e.kind())) + " has no type";
    // Blocks and ifs span lines; their parts are reported on their own.
    if (!e.is<Block>() && !e.is<If>() && !e.is<Loop>()) what += ": " + to_string(e);
    r_.error(what);
  }

  void expr(const Expr& e) {
    if (!e.defined()) {
      r_.error("an undefined expression");
      return;
    }
    switch (e.kind()) {
    case NodeKind::Var: {
      const Var* v = e.as<Var>();
      if (in_scope_.count(v)) return;
      if (bound_ever_.count(v)) {
        r_.error("var '" + v->name + "' is used outside the scope that binds it");
      } else if (binders_.count(v)) {
        r_.error("var '" + v->name + "' is used before it is bound");
      } else {
        r_.error("var '" + v->name + "' is used but never bound");
      }
      return;
    }
    case NodeKind::Literal:
      require_type(e);
      return;
    case NodeKind::StringImm:
    case NodeKind::ShapeExpr:
      return;
    case NodeKind::ListExpr:
      for (const Expr& item : e.as<ListExpr>()->items)
        expr(item);
      return;
    case NodeKind::Call: {
      const Call* c = e.as<Call>();
      for (const Expr& a : c->args)
        expr(a);
      std::unordered_set<std::string_view> seen;
      for (const KeywordArg& k : c->kwargs) {
        if (!seen.insert(k.name).second)
          r_.error("keyword '" + k.name + "' is given twice to " + c->callee);
        expr(k.value);
      }
      require_type(e);
      return;
    }
    case NodeKind::Tuple:
      for (const Expr& f : e.as<Tuple>()->fields)
        expr(f);
      require_type(e);
      return;
    case NodeKind::GetItem: {
      const GetItem* g = e.as<GetItem>();
      expr(g->tuple);
      const Type& t = g->tuple->type;
      if (t.is_tuple() && static_cast<size_t>(g->index) >= t.fields.size())
        r_.error("index " + std::to_string(g->index) + " of a tuple of " +
                 std::to_string(t.fields.size()) + ": " + to_string(e));
      if (typed_ && !t.is_unknown() && !t.is_tuple())
        r_.error("GetItem of a non-tuple: " + to_string(e));
      require_type(e);
      return;
    }
    case NodeKind::If: {
      const If* i = e.as<If>();
      if (i->cond.defined() == i->guard.defined())
        r_.error("an if has both a condition and a shape guard, or neither");
      if (i->cond.defined()) {
        expr(i->cond);
        const Type& t = i->cond->type;
        if (typed_ && !t.is_unknown() && !is_bool_scalar(t))
          r_.error("the condition of an if is " + to_string(t) + ", not bool[]");
      }
      expr(i->then_branch);
      expr(i->else_branch);
      require_type(e);
      return;
    }
    case NodeKind::Loop: {
      const Loop* l = e.as<Loop>();
      expr(l->hi);
      for (const Expr& init : l->inits)
        expr(init);
      for (const VarRef& v : l->carries) {
        if (typed_ && v->type.is_unknown()) r_.error("carry '" + v->name + "' has no type");
        bind(v.get());
      }
      if (l->cond.defined()) {
        expr(l->cond);
        const Type& t = l->cond->type;
        if (typed_ && !t.is_unknown() && !is_bool_scalar(t))
          r_.error("the condition of a loop is " + to_string(t) + ", not bool[]");
      }
      expr(l->body);
      for (const VarRef& v : l->carries)
        in_scope_.erase(v.get());
      if (typed_ && !l->trips.defined()) r_.error("a loop over '" + l->var + "' has no trip count");
      require_type(e);
      return;
    }
    case NodeKind::Block:
      block(*e.as<Block>());
      require_type(e);
      return;
    default:
      r_.error(std::string("a ") + node_kind_name(e.kind()) + " among graph expressions");
    }
  }

  void block(const Block& b) {
    std::vector<const Var*> bound_here;
    for (const Binding& binding : b.bindings) {
      expr(binding.value);
      check_arity(binding);
      for (const VarRef& v : binding.vars) {
        if (!v.defined()) {
          r_.error("an undefined var in a binding");
          continue;
        }
        if (typed_ && v->type.is_unknown())
          r_.error("var '" + v->name + "' has no type");
        if (binding.has_asserted_type && !v->type.is_tensor())
          r_.error("the asserted type of '" + v->name + "' is " + to_string(v->type) +
                   ", not a tensor type");
        bind(v.get());
        bound_here.push_back(v.get());
      }
    }
    expr(b.result);
    for (const Var* v : bound_here)
      in_scope_.erase(v);
  }

  void check_arity(const Binding& binding) {
    if (binding.vars.size() < 2) return;
    size_t n = binding.vars.size();
    if (const Tuple* t = binding.value.as<Tuple>()) {
      if (t->fields.size() != n)
        r_.error("binding " + std::to_string(n) + " vars to a tuple of " +
                 std::to_string(t->fields.size()));
      return;
    }
    const Type& t = binding.value->type;
    if (t.is_unknown()) return;
    if (!t.is_tuple()) {
      r_.error("binding " + std::to_string(n) + " vars to a value of type " + to_string(t));
    } else if (t.fields.size() != n) {
      r_.error("binding " + std::to_string(n) + " vars to a tuple of " +
               std::to_string(t.fields.size()) + ": " + to_string(binding.value));
    }
  }

  Reporter& r_;
  const VerifyOptions& options_;
  std::unordered_set<const Var*> binders_;
  std::unordered_set<const Var*> bound_ever_;
  std::unordered_set<const Var*> in_scope_;
  bool typed_ = false; // require_types, for the function being verified
};

// ---------------------------------------------------------------- prims

class PrimVerifier {
public:
  PrimVerifier(Reporter& r, const Target* target) : r_(r), target_(target) {}

  void prim(const PrimFunc& p) {
    push_scope();
    for (const std::vector<Buffer>* bufs : {&p.inputs, &p.outputs}) {
      for (const Buffer& b : *bufs) {
        declare_buffer(b.name, b.dtype, b.shape.size());
        for (const symbolic::Expr& d : b.shape)
          collect_symbols(d, signature_symbols_);
      }
    }
    for (const WhereClause& w : p.where)
      collect_symbols(w.predicate, signature_symbols_);
    if (!p.body.defined()) {
      r_.error("no body");
    } else {
      stmt(p.body);
    }
    pop_scope();
  }

private:
  struct BufferInfo {
    DType dtype;
    size_t rank;
  };
  struct LocalInfo {
    DType dtype;
    bool is_mutable;
  };
  // What one scope added, to be removed when it ends.
  struct Scope {
    std::vector<std::string> buffers, locals, loop_vars;
  };

  void push_scope() { scopes_.emplace_back(); }
  void pop_scope() {
    Scope& s = scopes_.back();
    for (const std::string& n : s.buffers)
      buffers_.erase(n);
    for (const std::string& n : s.locals)
      locals_.erase(n);
    for (const std::string& n : s.loop_vars)
      loop_vars_.erase(n);
    scopes_.pop_back();
  }

  void declare_buffer(const std::string& name, DType dtype, size_t rank) {
    if (name.empty()) r_.error("a buffer without a name");
    if (buffers_.count(name) || locals_.count(name)) {
      r_.error("buffer '" + name + "' is declared twice");
      return;
    }
    buffers_.emplace(name, BufferInfo{dtype, rank});
    scopes_.back().buffers.push_back(name);
  }

  void stmt(const Stmt& s) {
    if (!s.defined()) return;
    switch (s.kind()) {
    case NodeKind::For: {
      const For* f = s.as<For>();
      if (target_ && !target_->runs(f->for_kind))
        r_.error("a " + std::string(for_kind_name(f->for_kind)) + " loop over '" + f->var +
                 "' on the " + target_kind_name(target_->kind) + " target");
      if (loop_vars_.count(f->var)) {
        r_.error("loop variable '" + f->var + "' shadows an enclosing loop's");
      } else if (signature_symbols_.count(f->var)) {
        r_.error("loop variable '" + f->var + "' shadows a symbol of the signature");
      }
      push_scope();
      if (loop_vars_.insert(f->var).second) scopes_.back().loop_vars.push_back(f->var);
      stmt(f->body);
      pop_scope();
      return;
    }
    case NodeKind::Store: {
      const Store* st = s.as<Store>();
      for (const PrimExpr& i : st->indices)
        expr(i);
      expr(st->value);
      check_access(st->buffer, st->indices.size(), "store to");
      auto it = buffers_.find(st->buffer);
      if (it != buffers_.end() && st->value->dtype != it->second.dtype)
        r_.error("storing " + std::string(dtype_name(st->value->dtype)) + " to " +
                 dtype_name(it->second.dtype) + " buffer '" + st->buffer + "'");
      return;
    }
    case NodeKind::LocalDecl: {
      const LocalDecl* d = s.as<LocalDecl>();
      expr(d->init);
      if (locals_.count(d->name) || buffers_.count(d->name)) {
        r_.error("local '" + d->name + "' is declared twice");
        return;
      }
      locals_.emplace(d->name, LocalInfo{d->dtype, d->is_mutable});
      scopes_.back().locals.push_back(d->name);
      return;
    }
    case NodeKind::Assign: {
      const Assign* a = s.as<Assign>();
      expr(a->value);
      auto it = locals_.find(a->name);
      if (it == locals_.end()) {
        r_.error("assignment to undeclared local '" + a->name + "'");
      } else if (!it->second.is_mutable) {
        r_.error("assignment to '" + a->name + "', which is a `let`, not a `var`");
      } else if (it->second.dtype != a->value->dtype) {
        r_.error("assigning " + std::string(dtype_name(a->value->dtype)) + " to " +
                 dtype_name(it->second.dtype) + " local '" + a->name + "'");
      }
      return;
    }
    case NodeKind::IfStmt: {
      const IfStmt* i = s.as<IfStmt>();
      expr(i->cond);
      push_scope();
      stmt(i->then_body);
      pop_scope();
      push_scope();
      stmt(i->else_body);
      pop_scope();
      return;
    }
    case NodeKind::Alloc: {
      const Alloc* a = s.as<Alloc>();
      declare_buffer(a->name, a->dtype, a->shape.size());
      return;
    }
    case NodeKind::Seq:
      push_scope();
      for (const Stmt& child : s.as<Seq>()->stmts)
        stmt(child);
      pop_scope();
      return;
    case NodeKind::Evaluate: {
      const PrimExpr& v = s.as<Evaluate>()->value;
      expr(v);
      if (!v.is<Intrinsic>()) r_.error("Evaluate of a non-intrinsic: " + to_string(v));
      return;
    }
    default:
      r_.error(std::string("a ") + node_kind_name(s.kind()) + " among statements");
    }
  }

  void check_access(const std::string& buffer, size_t n_indices, const char* what) {
    auto it = buffers_.find(buffer);
    if (it == buffers_.end()) {
      r_.error(std::string(what) + " undeclared buffer '" + buffer + "'");
      return;
    }
    if (it->second.rank != n_indices)
      r_.error(std::string(what) + " '" + buffer + "' with " + std::to_string(n_indices) +
               " indices; its rank is " + std::to_string(it->second.rank));
  }

  void expr(const PrimExpr& e) {
    if (!e.defined()) {
      r_.error("an undefined expression");
      return;
    }
    switch (e.kind()) {
    case NodeKind::IntImm:
    case NodeKind::FloatImm:
    case NodeKind::Index:
      return;
    case NodeKind::Load: {
      const Load* l = e.as<Load>();
      for (const PrimExpr& i : l->indices)
        expr(i);
      check_access(l->buffer, l->indices.size(), "load from");
      auto it = buffers_.find(l->buffer);
      if (it != buffers_.end() && it->second.dtype != l->dtype)
        r_.error("a " + std::string(dtype_name(l->dtype)) + " load from " +
                 dtype_name(it->second.dtype) + " buffer '" + l->buffer + "'");
      return;
    }
    case NodeKind::LocalRef: {
      const LocalRef* ref = e.as<LocalRef>();
      auto it = locals_.find(ref->name);
      if (it == locals_.end()) {
        r_.error("use of undeclared local '" + ref->name + "'");
      } else if (it->second.dtype != ref->dtype) {
        r_.error("local '" + ref->name + "' is " + dtype_name(it->second.dtype) + " but read as " +
                 dtype_name(ref->dtype));
      }
      return;
    }
    case NodeKind::PrimBinary:
      expr(e.as<PrimBinary>()->a);
      expr(e.as<PrimBinary>()->b);
      return;
    case NodeKind::Intrinsic:
      for (const PrimExpr& a : e.as<Intrinsic>()->args)
        expr(a);
      return;
    case NodeKind::Cast:
      expr(e.as<Cast>()->value);
      return;
    default:
      r_.error(std::string("a ") + node_kind_name(e.kind()) + " among prim expressions");
    }
  }

  Reporter& r_;
  const Target* target_;
  std::unordered_map<std::string, BufferInfo> buffers_;
  std::unordered_map<std::string, LocalInfo> locals_;
  std::unordered_set<std::string> loop_vars_;
  std::unordered_set<std::string> signature_symbols_;
  std::vector<Scope> scopes_;
};

void verify_extern(const ExternFunc& e, const Module& m, Reporter& r) {
  if (e.symbol.empty()) r.error("no library symbol");
  if (!e.epilogue.empty()) {
    Ref<PrimFunc> epilogue = m.prim(e.epilogue);
    if (!epilogue) r.error("epilogue '" + e.epilogue + "' is no prim of the module");
    else if (std::string why = epilogue_mismatch(e, *epilogue); !why.empty())
      r.error("epilogue '" + e.epilogue + "': " + why);
  }
  std::unordered_set<const Var*> seen;
  for (const VarRef& p : e.params) {
    if (!p.defined()) {
      r.error("an undefined parameter");
      continue;
    }
    if (!seen.insert(p.get()).second) r.error("var '" + p->name + "' is bound twice");
    if (p->type.is_unknown()) r.error("parameter '" + p->name + "' has no type");
  }
  if (!e.views.empty() && e.views.size() != e.params.size())
    r.error(std::to_string(e.views.size()) + " views for " + std::to_string(e.params.size()) +
            " parameters");
  const LibraryRoutine* routine = find_library_routine(e.symbol);
  if (routine || !e.attributes.empty()) {
    std::vector<std::string> names;
    for (const RoutineAttribute& a : e.attributes)
      names.push_back(a.name);
    const std::vector<std::string> wanted =
        routine ? routine_attribute_names(*routine) : std::vector<std::string>{};
    if (names != wanted)
      r.error("routine \"" + e.symbol + "\" takes " + routine_attributes_wanted(wanted) +
              ", but the extern gives " + routine_attributes_wanted(names));
  }
  for (size_t i = 0; i < e.views.size() && i < e.params.size(); ++i) {
    if (!e.views[i]) continue;
    if (!routine || !routine->views)
      r.error("parameter '" + e.params[i]->name + "' is a strided view, but routine \"" +
              e.symbol + "\" reads no views");
    else if (std::string why = view_mismatch(*e.views[i], e.params[i]->type); !why.empty())
      r.error("parameter '" + e.params[i]->name + "': " + why);
  }
  if (e.result_view) {
    if (!routine || !routine->views)
      r.error("the result is written through a strided view, but routine \"" + e.symbol +
              "\" writes no views");
    else if (!e.epilogue.empty() && routine->epilogue_on_result())
      r.error("the result is written through a strided view, but an epilogue runs on dense rows");
    else if (std::string why = permutation_mismatch(*e.result_view, e.ret_type); !why.empty())
      r.error("the result's view: " + why);
  }
}

} // namespace

std::vector<std::string> verify(const Module& m, const VerifyOptions& options) {
  std::vector<std::string> errors;
  std::unordered_set<std::string_view> imports;
  for (const Import& i : m.imports)
    if (!imports.insert(i.name).second) errors.push_back("module: 'import " + i.name + "' twice");
  std::unordered_set<std::string_view> names;
  for (const Module::Decl& d : m.decls) {
    int set = (d.fn ? 1 : 0) + (d.prim ? 1 : 0) + (d.ext ? 1 : 0);
    if (set != 1) {
      errors.push_back("module: a declaration with " + std::to_string(set) +
                       " definitions instead of one");
      continue;
    }
    if (!names.insert(d.name()).second)
      errors.push_back("module: '" + d.name() + "' is declared twice");
    if (d.fn) {
      Reporter r(errors, "fn " + d.fn->name);
      GraphVerifier(r, options).function(*d.fn);
    } else if (d.prim) {
      Reporter r(errors, "prim " + d.prim->name);
      PrimVerifier(r, options.target).prim(*d.prim);
    } else {
      Reporter r(errors, "extern " + d.ext->name);
      verify_extern(*d.ext, m, r);
    }
  }
  return errors;
}

std::vector<std::string> verify(const HostProgram& p, const Module& m, bool planned) {
  std::vector<std::string> errors;
  auto error = [&](const std::string& what) { errors.push_back("host " + p.name + ": " + what); };
  auto valid = [&](int id) { return id >= 0 && static_cast<size_t>(id) < p.buffers.size(); };
  for (size_t i = 0; i < p.buffers.size(); ++i) {
    const HostBuffer& b = p.buffers[i];
    std::string which = "buffer %" + std::to_string(i) + " (" + b.name + ")";
    if (b.storage == HostBuffer::Storage::Alias && (b.index < 0 || b.index >= static_cast<int>(i)))
      error(which + " aliases %" + std::to_string(b.index) + ", which is not an earlier buffer");
    if (b.updated_in_place && b.storage != HostBuffer::Storage::Alias)
      error(which + " is updated in place but aliases no buffer");
    if (b.storage == HostBuffer::Storage::Arena && planned && !b.offset.defined())
      error(which + " has no arena offset after plan_memory");
  }
  for (int id : p.outputs)
    if (!valid(id)) error("output %" + std::to_string(id) + " does not exist");
  if (planned && !p.memory_planned()) error("no arena size after plan_memory");
  for_each_step(p.steps, [&](const HostStep& s, int i) {
    std::string which = "step " + std::to_string(i);
    for (int id : s.buffers)
      if (!valid(id)) error(which + " uses buffer %" + std::to_string(id) + ", which does not exist");
    switch (s.kind) {
    case HostStep::Kind::Kernel: {
      Ref<PrimFunc> prim = m.prim(s.callee);
      if (!prim) {
        error(which + " calls '" + s.callee + "', which is not a prim of the module");
      } else if (s.buffers.size() != prim->inputs.size() + prim->outputs.size()) {
        error(which + " passes " + std::to_string(s.buffers.size()) + " buffers to '" + s.callee +
              "'");
      }
      break;
    }
    case HostStep::Kind::Library: {
      const LibraryRoutine* r = find_library_routine(s.callee);
      Ref<PrimFunc> epilogue = s.epilogue.empty() ? nullptr : m.prim(s.epilogue);
      const size_t epilogue_inputs = epilogue ? epilogue->inputs.size() : 0;
      if (!r) error(which + " calls library routine '" + s.callee + "', which does not exist");
      else if (s.buffers.size() != static_cast<size_t>(r->buffers) + epilogue_inputs ||
               static_cast<int>(s.ints.size()) != r->scalars)
        error(which + " passes " + std::to_string(s.buffers.size()) + " buffers and " +
              std::to_string(s.ints.size()) + " scalars to " + s.callee);
      if (!s.epilogue.empty() && !epilogue)
        error(which + " has epilogue '" + s.epilogue + "', which is not a prim of the module");
      else if (epilogue && s.epilogue_ints.size() != prim_signature_symbols(*epilogue).size())
        error(which + " passes " + std::to_string(s.epilogue_ints.size()) +
              " symbols to epilogue '" + s.epilogue + "'");
      if (epilogue && !s.epilogue_first_row.empty()) {
        const std::vector<std::string> symbols = prim_signature_symbols(*epilogue);
        if (s.epilogue_first_row == epilogue_rows_symbol(*epilogue) ||
            std::find(symbols.begin(), symbols.end(), s.epilogue_first_row) == symbols.end())
          error(which + " gives epilogue '" + s.epilogue + "' its first row in '" +
                s.epilogue_first_row + "', which is not one of its symbols other than its rows");
      }
      break;
    }
    case HostStep::Kind::Copy:
      if (s.buffers.size() != 2) error(which + " copies " + std::to_string(s.buffers.size()) + " buffers");
      if (!s.ints.empty() && s.ints.size() != 4)
        error(which + " copies with " + std::to_string(s.ints.size()) + " scalars, not 0 or 4");
      if (s.ints.size() == 4 && s.buffers.size() == 2 && valid(s.buffers[1]) &&
          !p.buffers[s.buffers[1]].updated_in_place)
        error(which + " copies an update into %" + std::to_string(s.buffers[1]) +
              ", which is no buffer updated in place");
      break;
    case HostStep::Kind::If:
      if (s.buffers.empty() && s.ints.size() == 1) break; // a shape predicate
      if (s.buffers.size() != 1 || !s.ints.empty() ||
          (valid(s.buffers[0]) && (p.buffers[s.buffers[0]].dtype != DType::Bool ||
                                   !p.buffers[s.buffers[0]].shape.empty())))
        error(which + " (an if) does not test one bool[] buffer or one shape predicate");
      break;
    case HostStep::Kind::Bind:
      if (!find_runtime_symbol(p, s.callee))
        error(which + " binds '" + s.callee + "', which is not a run-time symbol");
      if (s.buffers.size() + s.ints.size() != 1)
        error(which + " binds '" + s.callee + "' from " +
              std::to_string(s.buffers.size() + s.ints.size()) + " values, not one");
      break;
    case HostStep::Kind::Check:
      if (s.ints.size() != 1 || !s.buffers.empty()) error(which + " (a check) has no single predicate");
      break;
    case HostStep::Kind::Loop:
      if (!find_runtime_symbol(p, s.callee))
        error(which + " loops over '" + s.callee + "', which is not a run-time symbol");
      if (s.ints.size() != 2) error(which + " (a loop) has no start and end");
      if (s.buffers.size() > 1 ||
          (s.buffers.size() == 1 && valid(s.buffers[0]) &&
           (p.buffers[s.buffers[0]].dtype != DType::Bool || !p.buffers[s.buffers[0]].shape.empty())))
        error(which + " (a loop) does not test one bool[] buffer");
      break;
    }
  });
  for (const RuntimeSymbol& r : p.runtime_symbols)
    if (!r.upper_bound.defined()) error("run-time symbol '" + r.name + "' has no upper bound");
  return errors;
}

} // namespace dsc::ir
