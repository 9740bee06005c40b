#include "backends/reference/Interpreter.h"

#include <unordered_map>

#include "backends/reference/Value.h"
#include "ir/OpRegistry.h"
#include "symbolic/Eval.h"
#include "symbolic/Printer.h"

namespace dsc::reference {

using ir::DType;

namespace {

std::string loc_string(SourceLoc loc) {
  return std::to_string(loc.line) + ":" + std::to_string(loc.col);
}

// "S = 600, T = 2": the values of the symbols `e` mentions.
std::string values_of(const symbolic::Expr& e, const symbolic::Bindings& syms) {
  std::string s;
  for (const std::string& name : symbolic::free_symbols(e)) {
    auto it = syms.find(name);
    if (it == syms.end()) continue;
    s += (s.empty() ? "" : ", ") + name + " = " + std::to_string(it->second);
  }
  return s;
}

// One activation of a function.
struct Frame {
  const ir::Module* module = nullptr;
  const ir::Function* fn = nullptr;
  std::unordered_map<const ir::Var*, Value> env;
  symbolic::Bindings syms;
  std::vector<bool> checked; // per fact of fn
};

class Interpreter {
public:
  std::string error;

  Result call_function(const ir::Module& m, const ir::Function& f, std::vector<Value> args) {
    if (++depth_ > 200) return fail("call depth exceeds 200 (recursive call of " + f.name + "?)");
    Frame frame;
    frame.module = &m;
    frame.fn = &f;
    frame.checked.assign(f.facts.size(), false);
    Result r = bind_params(frame, f, std::move(args)) && check_facts(frame) ? eval(frame, f.body)
                                                                            : std::nullopt;
    --depth_;
    if (!r) return r;
    if (r->is_tensor() && r->weak && f.ret_type.is_tensor()) return convert(*r, f.ret_type.dtype);
    return r;
  }

  Result fail(std::string message) {
    if (error.empty()) error = std::move(message);
    return std::nullopt;
  }
  bool fail_bool(std::string message) {
    fail(std::move(message));
    return false;
  }

private:
  int depth_ = 0;

  // ---------------------------------------------------------------- symbols and facts

  std::optional<int64_t> eval_dim(const Frame& frame, const symbolic::Expr& e) {
    std::optional<int64_t> v = symbolic::eval(e, frame.syms);
    if (!v)
      fail("cannot evaluate the dim " + symbolic::to_string(e) + " at " +
           (frame.syms.empty() ? std::string("no bindings") : values_of(e, frame.syms)));
    return v;
  }

  // Checks a value against a declared tensor type, binding each dim that is a symbol not yet
  // bound. `what` names the value in messages.
  bool match_type(Frame& frame, const std::string& what, const ir::Type& t, Value& v) {
    if (!t.is_tensor()) return true;
    if (!v.is_tensor())
      return fail_bool(what + ": expected " + ir::to_string(t) + ", got a non-tensor");
    if (v.weak && v.tensor->rank() == 0 && t.rank() == 0) v = convert(v, t.dtype);
    std::string got = type_string(v.dtype, v.shape());
    if (v.dtype != t.dtype)
      return fail_bool(what + ": expected " + ir::to_string(t) + ", got " + got + " (dtype)");
    if (v.shape().size() != t.rank())
      return fail_bool(what + ": expected " + ir::to_string(t) + ", got " + got + " (rank)");
    for (size_t i = 0; i < t.rank(); ++i)
      if (const auto* s = t.shape[i].as<symbolic::Sym>())
        if (!frame.syms.count(s->name)) frame.syms[s->name] = v.shape()[i];
    for (size_t i = 0; i < t.rank(); ++i) {
      std::optional<int64_t> d = symbolic::eval(t.shape[i], frame.syms);
      if (!d) return fail_bool(what + ": cannot bind the dim " + symbolic::to_string(t.shape[i]));
      if (*d == v.shape()[i]) continue;
      std::string bound = values_of(t.shape[i], frame.syms);
      return fail_bool(what + ": expected " + ir::to_string(t) + ", got " + got + " (dim " +
                       std::to_string(i) + (bound.empty() ? "" : ": " + bound) + ")");
    }
    return true;
  }

  // Binds symbols of a computed value's inferred type that are still unbound (nonzero's
  // fresh count); nothing else is checked, since the shape rules already were.
  void bind_fresh(Frame& frame, const ir::Type& t, const Value& v) {
    if (!t.is_tensor() || !v.is_tensor() || v.shape().size() != t.rank()) return;
    for (size_t i = 0; i < t.rank(); ++i)
      if (const auto* s = t.shape[i].as<symbolic::Sym>())
        if (!frame.syms.count(s->name)) frame.syms[s->name] = v.shape()[i];
  }

  // Checks the where clauses and run-time-check facts whose symbols are all bound now.
  bool check_facts(Frame& frame) {
    const std::vector<ir::ShapeFact>& facts = frame.fn->facts;
    for (size_t i = 0; i < facts.size(); ++i) {
      const ir::ShapeFact& fact = facts[i];
      if (frame.checked[i]) continue;
      bool is_where = fact.origin == ir::ShapeFact::Origin::Where;
      if (!is_where && fact.status != ir::ShapeFact::Status::RuntimeCheck) continue;
      bool ready = true;
      for (const std::string& s : symbolic::free_symbols(fact.predicate))
        ready = ready && frame.syms.count(s);
      if (!ready) continue;
      frame.checked[i] = true;
      std::optional<int64_t> v = symbolic::eval(fact.predicate, frame.syms);
      if (v && *v) continue;
      std::string pred = symbolic::to_string(fact.predicate);
      std::string head = is_where ? "where " + pred : fact.what + ": " + pred;
      return fail_bool(head + " violated: " + values_of(fact.predicate, frame.syms) + " (" +
                       loc_string(fact.loc) + ")");
    }
    return true;
  }

  bool bind_params(Frame& frame, const ir::Function& f, std::vector<Value> args) {
    for (size_t i = 0; i < f.params.size(); ++i) {
      const ir::Var& p = *f.params[i];
      Value& v = args[i];
      if (v.kind == Value::Kind::None) {
        if (i >= f.defaults.size() || !f.defaults[i].defined())
          return fail_bool(f.name + ": missing argument '" + p.name + "'");
        Result d = eval(frame, f.defaults[i]);
        if (!d) return false;
        v = std::move(*d);
      }
      if (p.type.kind == ir::Type::Kind::Int) {
        std::optional<int64_t> n = as_int(v);
        if (!n) return fail_bool(f.name + ": argument '" + p.name + "' must be an int");
        frame.syms[p.name] = *n;
      }
    }
    // Bare symbols first, so that a dim like `2*S` may follow the parameter that binds S.
    for (size_t i = 0; i < f.params.size(); ++i)
      bind_fresh(frame, f.params[i]->type, args[i]);
    for (size_t i = 0; i < f.params.size(); ++i) {
      const ir::Var& p = *f.params[i];
      if (!match_type(frame, p.name, p.type, args[i])) return false;
      frame.env[&p] = std::move(args[i]);
    }
    return true;
  }

  // ---------------------------------------------------------------- expressions

  Result eval(Frame& frame, const ir::Expr& e) {
    switch (e.kind()) {
    case ir::NodeKind::Var: {
      auto it = frame.env.find(e.as<ir::Var>());
      if (it == frame.env.end()) return fail("'" + e.as<ir::Var>()->name + "' is not bound");
      return it->second;
    }
    case ir::NodeKind::Literal: {
      const auto& v = e.as<ir::Literal>()->value;
      if (const int64_t* i = std::get_if<int64_t>(&v)) return weak_int(*i);
      if (const double* d = std::get_if<double>(&v)) return weak_float(*d);
      return weak_bool(std::get<bool>(v));
    }
    case ir::NodeKind::StringImm: {
      Value v;
      v.kind = Value::Kind::Str;
      v.str = e.as<ir::StringImm>()->value;
      return v;
    }
    case ir::NodeKind::ShapeExpr: {
      Value v;
      v.kind = Value::Kind::Shape;
      for (const symbolic::Expr& d : e.as<ir::ShapeExpr>()->dims) {
        std::optional<int64_t> n = eval_dim(frame, d);
        if (!n) return std::nullopt;
        v.dims.push_back(*n);
      }
      return v;
    }
    case ir::NodeKind::ListExpr:
    case ir::NodeKind::Tuple: {
      const std::vector<ir::Expr>& xs =
          e.is<ir::ListExpr>() ? e.as<ir::ListExpr>()->items : e.as<ir::Tuple>()->fields;
      std::vector<Value> items;
      for (const ir::Expr& x : xs) {
        Result r = eval(frame, x);
        if (!r) return r;
        items.push_back(std::move(*r));
      }
      Value v = make_tuple(std::move(items));
      if (e.is<ir::ListExpr>()) v.kind = Value::Kind::List;
      return v;
    }
    case ir::NodeKind::GetItem: {
      const ir::GetItem* g = e.as<ir::GetItem>();
      Result t = eval(frame, g->tuple);
      if (!t) return t;
      if (t->kind != Value::Kind::Tuple || g->index < 0 ||
          static_cast<size_t>(g->index) >= t->items.size())
        return fail("tuple index " + std::to_string(g->index) + " out of range at " +
                    loc_string(e->loc));
      return t->items[static_cast<size_t>(g->index)];
    }
    case ir::NodeKind::Block:
      return eval_block(frame, *e.as<ir::Block>());
    case ir::NodeKind::If: {
      const ir::If* i = e.as<ir::If>();
      Result c = eval(frame, i->cond);
      if (!c) return c;
      if (!c->is_tensor() || c->numel() != 1)
        return fail("the condition of an if must be a scalar at " + loc_string(e->loc));
      bool taken = ir::is_float(c->dtype) ? load_f(*c, 0) != 0.0 : load_i(*c, 0) != 0;
      return eval(frame, taken ? i->then_branch : i->else_branch);
    }
    case ir::NodeKind::Loop:
      return eval_loop(frame, *e.as<ir::Loop>());
    case ir::NodeKind::Call:
      return eval_call(frame, *e.as<ir::Call>());
    default:
      return fail(std::string("cannot interpret a ") + ir::node_kind_name(e.kind()) + " node");
    }
  }

  // Each iteration starts from the symbols bound before the loop, with var := i, so that what
  // an iteration binds (a nonzero count) is bound afresh by the next.
  Result eval_loop(Frame& frame, const ir::Loop& l) {
    const std::string where = loc_string(l.loc);
    std::optional<int64_t> lo = eval_dim(frame, l.lo);
    if (!lo) return std::nullopt;
    Result end = eval(frame, l.hi);
    if (!end) return end;
    std::optional<int64_t> hi;
    if (end->kind == Value::Kind::Shape && end->dims.size() == 1) hi = end->dims[0];
    else if (end->is_tensor() && end->numel() == 1) hi = as_int(*end);
    if (!hi) return fail("the end of the loop at " + where + " is not an integer");
    if (l.bound.defined()) {
      std::optional<int64_t> bound = eval_dim(frame, l.bound);
      if (!bound) return std::nullopt;
      // A run-time end lies in [0, bound], as the compiled code checks.
      if (*hi < 0 || *hi > *bound)
        return fail("the end of the loop over '" + l.var + "' at " + where + " is " +
                    std::to_string(*hi) + ", outside its declared bound: 0 <= end <= " +
                    std::to_string(*bound));
    }
    std::vector<Value> carries;
    for (const ir::Expr& init : l.inits) {
      Result r = eval(frame, init);
      if (!r) return r;
      carries.push_back(std::move(*r));
    }
    const symbolic::Bindings before = frame.syms;
    const std::vector<bool> checked = frame.checked;
    int64_t i = *lo;
    for (; i < *hi; ++i) {
      frame.syms = before;
      frame.syms[l.var] = i;
      frame.checked = checked;
      for (size_t k = 0; k < carries.size(); ++k) {
        if (!match_type(frame, "carry '" + l.carries[k]->name + "' at " + l.var + " = " +
                                   std::to_string(i),
                        l.carries[k]->type, carries[k]))
          return std::nullopt;
        frame.env[l.carries[k].get()] = carries[k];
      }
      if (l.cond.defined()) {
        Result c = eval(frame, l.cond);
        if (!c) return c;
        if (!c->is_tensor() || c->numel() != 1)
          return fail("the condition of the loop at " + where + " is not a scalar");
        if ((ir::is_float(c->dtype) ? load_f(*c, 0) != 0.0 : load_i(*c, 0) != 0) == false) break;
      }
      Result next = eval(frame, l.body);
      if (!next) return next;
      if (carries.size() == 1) {
        carries[0] = std::move(*next);
      } else if (next->kind == Value::Kind::Tuple && next->items.size() == carries.size()) {
        carries = std::move(next->items);
      } else {
        return fail("the body of the loop at " + where + " does not give " +
                    std::to_string(carries.size()) + " carries");
      }
    }
    frame.syms = before;
    frame.checked = checked;
    if (const auto* trips = l.trips.as<symbolic::Sym>(); trips && !frame.syms.count(trips->name))
      frame.syms[trips->name] = i - *lo;
    if (carries.size() == 1) return std::move(carries[0]);
    return make_tuple(std::move(carries));
  }

  Result eval_block(Frame& frame, const ir::Block& block) {
    for (const ir::Binding& b : block.bindings) {
      Result r = eval(frame, b.value);
      if (!r) return r;
      if (b.vars.size() == 1) {
        const ir::Var& var = *b.vars[0];
        if (b.has_asserted_type) {
          if (!match_type(frame, var.name, var.type, *r)) return std::nullopt;
        } else {
          bind_fresh(frame, var.type, *r);
        }
        frame.env[&var] = std::move(*r);
      } else {
        if (r->kind != Value::Kind::Tuple || r->items.size() != b.vars.size())
          return fail("cannot destructure the value bound at " + loc_string(b.loc) + " into " +
                      std::to_string(b.vars.size()) + " names");
        for (size_t i = 0; i < b.vars.size(); ++i) {
          bind_fresh(frame, b.vars[i]->type, r->items[i]);
          frame.env[b.vars[i].get()] = r->items[i];
        }
      }
      if (!check_facts(frame)) return std::nullopt;
    }
    return eval(frame, block.result);
  }

  // ---------------------------------------------------------------- calls

  Result eval_call(Frame& frame, const ir::Call& call) {
    if (const ir::OpDef* op = ir::find_op(call.callee)) return eval_op(frame, call, *op);
    const ir::Module* m = frame.module;
    std::string name = call.callee;
    if (size_t dot = name.find('.'); dot != std::string::npos) {
      m = nullptr;
      for (const ir::Import& i : frame.module->imports)
        if (i.name == name.substr(0, dot)) m = i.module.get();
      if (!m) return fail("unknown module in call of '" + call.callee + "'");
      name = name.substr(dot + 1);
    }
    Ref<ir::Function> f = m->function(name);
    if (!f.defined()) {
      if (m->prim(name).defined() || m->ext(name).defined())
        return fail("the reference interpreter cannot run prim or extern '" + call.callee + "'");
      return fail("unknown function '" + call.callee + "' at " + loc_string(call.loc));
    }
    std::vector<Value> args(f->params.size());
    if (call.args.size() > args.size())
      return fail(call.callee + ": too many arguments at " + loc_string(call.loc));
    for (size_t i = 0; i < call.args.size(); ++i) {
      Result r = eval(frame, call.args[i]);
      if (!r) return r;
      args[i] = std::move(*r);
    }
    for (const ir::KeywordArg& k : call.kwargs) {
      size_t at = 0;
      while (at < f->params.size() && f->params[at]->name != k.name)
        ++at;
      if (at == f->params.size())
        return fail(call.callee + ": unknown keyword '" + k.name + "' at " + loc_string(k.loc));
      Result r = eval(frame, k.value);
      if (!r) return r;
      args[at] = std::move(*r);
    }
    Result r = call_function(*m, *f, std::move(args));
    if (!r && error.find("\n  in ") == std::string::npos)
      error += "\n  in " + call.callee + " called at " + loc_string(call.loc);
    return r;
  }

  Result eval_op(Frame& frame, const ir::Call& call, const ir::OpDef& op) {
    const std::vector<ir::ParamSpec>& params = op.params;
    std::vector<ir::Expr> exprs(params.size());
    if (call.args.size() > params.size())
      return fail(call.callee + ": too many arguments at " + loc_string(call.loc));
    for (size_t i = 0; i < call.args.size(); ++i)
      exprs[i] = call.args[i];
    for (const ir::KeywordArg& k : call.kwargs) {
      size_t at = 0;
      while (at < params.size() && params[at].name != k.name)
        ++at;
      if (at == params.size())
        return fail(call.callee + ": unknown keyword '" + k.name + "' at " + loc_string(k.loc));
      exprs[at] = k.value;
    }
    std::vector<Value> args(params.size());
    for (size_t i = 0; i < params.size(); ++i) {
      if (!exprs[i].defined()) {
        if (!params[i].has_default)
          return fail(call.callee + ": missing argument '" + params[i].name + "' at " +
                      loc_string(call.loc));
        if (!params[i].make_default) continue; // optional: stays None
        exprs[i] = params[i].make_default();
      }
      Result r = eval(frame, exprs[i]);
      if (!r) return r;
      args[i] = std::move(*r);
    }
    OpError err;
    Result r;
    switch (op.family) {
    case ir::OpFamily::Elementwise:
      r = eval_elementwise(call.callee, args, err);
      break;
    case ir::OpFamily::Reduce:
      r = eval_reduce(call.callee, args, err);
      break;
    case ir::OpFamily::Layout:
      r = eval_layout(call.callee, args, err);
      break;
    case ir::OpFamily::Matmul:
    case ir::OpFamily::Conv:
      r = eval_linalg(call.callee, args, err);
      break;
    case ir::OpFamily::Pool:
      r = eval_pool(call.callee, args, err);
      break;
    case ir::OpFamily::Creation:
      r = eval_creation(call.callee, args, err);
      break;
    }
    if (!r) return fail(err.message + " (" + loc_string(call.loc) + ")");
    return r;
  }
};

void flatten(const Value& v, std::vector<runtime::Tensor>& out) {
  if (v.kind == Value::Kind::Tuple) {
    for (const Value& item : v.items)
      flatten(item, out);
    return;
  }
  if (v.is_tensor()) out.push_back(v.tensor->clone());
}

} // namespace

RunResult interpret(const ir::Module& typed, const std::string& entry,
                    const std::vector<runtime::Tensor>& inputs) {
  RunResult result;
  Ref<ir::Function> f = typed.function(entry);
  if (!f.defined()) {
    result.error = "no function '" + entry + "' in the module";
    return result;
  }
  // Inputs go to the non-attribute parameters in order; attributes take their defaults.
  std::vector<Value> args(f->params.size());
  size_t next = 0;
  for (size_t i = 0; i < f->params.size(); ++i) {
    if (f->params[i]->type.is_attribute()) continue;
    if (next == inputs.size()) {
      result.error = entry + ": expected more than " + std::to_string(inputs.size()) + " inputs";
      return result;
    }
    const runtime::Tensor& t = inputs[next++];
    std::optional<DType> d = from_dl(t.dtype());
    if (!t.defined() || !d) {
      result.error = f->params[i]->name + ": unsupported or undefined input tensor";
      return result;
    }
    Value v;
    v.kind = Value::Kind::Tensor;
    v.dtype = *d;
    v.tensor = std::make_shared<runtime::Tensor>(t.clone());
    args[i] = std::move(v);
  }
  if (next != inputs.size()) {
    result.error = entry + ": expected " + std::to_string(next) + " inputs, got " +
                   std::to_string(inputs.size());
    return result;
  }
  Interpreter interp;
  Result r = interp.call_function(typed, *f, std::move(args));
  if (!r) {
    result.error = interp.error.empty() ? "evaluation failed" : interp.error;
    return result;
  }
  flatten(*r, result.outputs);
  return result;
}

} // namespace dsc::reference
