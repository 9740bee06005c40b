#include "passes/LowerHost.h"

#include <algorithm>
#include <map>
#include <set>

#include "ir/Printer.h"
#include "ir/LibraryRoutine.h"
#include "ir/OpRegistry.h"
#include "symbolic/Eval.h"
#include "symbolic/Printer.h"
#include "symbolic/Simplify.h"

namespace dsc::passes {

namespace {

using ir::HostBuffer;
using ir::HostStep;
using symbolic::Expr;

std::string location_text(const SourceManager& sources, SourceLoc loc) {
  if (!loc.valid()) return "";
  return sources.name(loc.file) + ":" + std::to_string(loc.line) + ":" + std::to_string(loc.col);
}

// A conjunction's parts, so that a failed check names the exact clause.
void split_conjunction(const Expr& e, std::vector<Expr>& out) {
  if (const auto* a = e.as<symbolic::And>()) {
    split_conjunction(a->a, out);
    split_conjunction(a->b, out);
    return;
  }
  out.push_back(e);
}

class Lowering {
public:
  Lowering(const ir::Module& m, const ir::Function& fn, PassContext& ctx)
      : m_(m), fn_(fn), ctx_(ctx), sources_(ctx.diags.sources()) {}

  std::optional<ir::HostProgram> run() {
    p_.name = fn_.name;
    if (!bind_params() || !add_checks()) return std::nullopt;
    const auto* body = fn_.body.as<ir::Block>();
    if (!body) return fail(fn_.loc, "the body of '" + fn_.name + "' is not a block");
    for (const ir::Binding& b : body->bindings)
      if (!lower_binding(b)) return std::nullopt;
    if (!lower_result(body->result)) return std::nullopt;
    if (!deferred_.empty()) {
      const DeferredCheck& d = deferred_.front();
      return fail(d.loc, d.check.what + " uses '" + d.waits_for +
                             "', which nothing binds where the check could run");
    }
    return std::move(p_);
  }

private:
  std::nullopt_t fail(SourceLoc loc, std::string message) {
    ctx_.diags.error(loc, std::string("cannot compile for the ") +
                              ir::target_device_noun(ctx_.target.kind) + ": " + std::move(message));
    return std::nullopt;
  }

  // A view of buffer `of` (no copy) holding the value `name` of type `type`.
  int add_alias(int of, const ir::Type& type, const std::string& name) {
    HostBuffer b;
    b.name = name;
    b.dtype = type.dtype;
    b.shape = type.shape;
    b.storage = HostBuffer::Storage::Alias;
    b.index = of;
    return add_buffer(std::move(b));
  }

  int add_buffer(HostBuffer b) {
    p_.buffers.push_back(std::move(b));
    return static_cast<int>(p_.buffers.size()) - 1;
  }

  bool bind_params() {
    std::set<std::string> bound;
    for (size_t i = 0; i < fn_.params.size(); ++i) {
      const ir::Var& v = *fn_.params[i];
      if (!v.type.is_tensor()) {
        fail(v.loc, "parameter '" + v.name + "' of the entry function is " + ir::to_string(v.type) +
                        "; an entry function takes tensors only");
        return false;
      }
      p_.params.push_back(ir::Buffer{v.name, v.type.dtype, v.type.shape, v.loc});
      HostBuffer b;
      b.name = v.name;
      b.dtype = v.type.dtype;
      b.shape = v.type.shape;
      b.storage = HostBuffer::Storage::Param;
      b.index = static_cast<int>(i);
      values_[v.name] = {add_buffer(std::move(b))};
      for (size_t axis = 0; axis < v.type.shape.size(); ++axis) {
        const Expr& d = v.type.shape[axis];
        ir::HostDim dim;
        dim.param = static_cast<int>(i);
        dim.axis = static_cast<int>(axis);
        const auto* s = d.as<symbolic::Sym>();
        if (s && !bound.count(s->name)) {
          dim.binds = s->name;
          bound.insert(s->name);
        } else {
          for (const std::string& name : symbolic::free_symbols(d)) {
            if (bound.count(name)) continue;
            fail(v.loc, "dim " + std::to_string(axis) + " of '" + v.name + "' is " +
                            symbolic::to_string(d) + ", and '" + name +
                            "' is not bound by an earlier plain dim");
            return false;
          }
          dim.expected = d;
        }
        p_.dims.push_back(std::move(dim));
      }
    }
    bound_ = std::move(bound);
    return true;
  }

  // A check over the inputs' symbols runs on entry; one that names a run-time symbol becomes a
  // Check step where its symbols are first all bound (flush_checks).
  bool add_check(const Expr& predicate, std::string what, SourceLoc loc) {
    std::set<std::string> names = symbolic::free_symbols(predicate);
    ir::HostCheck c{predicate, std::move(what), location_text(sources_, loc),
                    {names.begin(), names.end()}};
    for (const std::string& n : names)
      if (!bound_.count(n)) {
        deferred_.push_back({std::move(c), loc, n});
        return true;
      }
    p_.checks.push_back(std::move(c));
    return true;
  }

  struct DeferredCheck {
    ir::HostCheck check;
    SourceLoc loc;
    std::string waits_for; // a symbol it names, for the error when none binds it
  };

  // Check steps for the deferred checks whose symbols are all bound now, in `p_.steps`.
  void flush_checks() {
    for (auto it = deferred_.begin(); it != deferred_.end();) {
      bool ready = std::all_of(it->check.symbols.begin(), it->check.symbols.end(),
                               [&](const std::string& s) { return bound_.count(s) > 0; });
      if (!ready) {
        ++it;
        continue;
      }
      HostStep check;
      check.kind = HostStep::Kind::Check;
      check.callee = it->check.what;
      check.ints = {it->check.predicate};
      check.location = it->check.location;
      p_.steps.push_back(std::move(check));
      it = deferred_.erase(it);
    }
  }

  bool add_checks() {
    for (const ir::WhereClause& w : fn_.where) {
      p_.where_clauses.push_back(symbolic::to_string(w.predicate));
      std::vector<Expr> parts;
      split_conjunction(w.predicate, parts);
      for (const Expr& part : parts)
        if (!add_check(part, "where " + symbolic::to_string(part), w.loc)) return false;
    }
    for (const ir::ShapeFact& f : fn_.facts) {
      if (f.status != ir::ShapeFact::Status::RuntimeCheck) continue;
      std::string what = f.what.empty() ? "shape fact" : f.what;
      if (!add_check(f.predicate, what + ": " + symbolic::to_string(f.predicate), f.loc)) return false;
    }
    return true;
  }

  // The buffers holding a value: one for a tensor, one per field for a tuple.
  std::optional<std::vector<int>> buffers_of(const ir::Expr& e) {
    if (const auto* v = e.as<ir::Var>()) {
      auto it = values_.find(v->name);
      if (it != values_.end()) return it->second;
      fail(e->loc, "'" + v->name + "' has no value here");
      return std::nullopt;
    }
    if (const auto* t = e.as<ir::Tuple>()) {
      std::vector<int> all;
      for (const ir::Expr& f : t->fields) {
        auto ids = buffers_of(f);
        if (!ids) return std::nullopt;
        all.insert(all.end(), ids->begin(), ids->end());
      }
      return all;
    }
    if (const auto* g = e.as<ir::GetItem>()) {
      auto ids = buffers_of(g->tuple);
      if (!ids) return std::nullopt;
      if (g->index < 0 || static_cast<size_t>(g->index) >= ids->size()) {
        fail(e->loc, "tuple index out of range");
        return std::nullopt;
      }
      return std::vector<int>{(*ids)[g->index]};
    }
    fail(e->loc, "'" + ir::to_string(e) + "' is not a value the host program can hold");
    return std::nullopt;
  }

  std::vector<int> new_results(const ir::Type& t, const std::string& name) {
    std::vector<ir::Type> fields = t.is_tuple() ? t.fields : std::vector<ir::Type>{t};
    std::vector<int> ids;
    for (size_t i = 0; i < fields.size(); ++i) {
      HostBuffer b;
      b.name = fields.size() == 1 ? name : name + "." + std::to_string(i);
      b.dtype = fields[i].dtype;
      b.shape = fields[i].shape;
      b.storage = HostBuffer::Storage::Arena;
      ids.push_back(add_buffer(std::move(b)));
    }
    return ids;
  }

  bool lower_binding(const ir::Binding& b) {
    if (!lower_value(b)) return false;
    flush_checks();
    return true;
  }

  bool lower_value(const ir::Binding& b) {
    std::string name;
    for (const ir::VarRef& v : b.vars) name += (name.empty() ? "" : ",") + v->name;
    std::optional<std::vector<int>> ids;
    if (const auto* call = b.value.as<ir::Call>()) ids = lower_call(*call, b.value->type, name);
    else if (const auto* i = b.value.as<ir::If>()) ids = lower_if(*i, name);
    else if (const auto* l = b.value.as<ir::Loop>()) ids = lower_loop(*l, name);
    else ids = buffers_of(b.value);
    if (!ids) return false;
    if (b.vars.size() == 1 && ids->size() != 1) {
      values_[b.vars[0]->name] = *ids;
      return true;
    }
    if (b.vars.size() != ids->size()) {
      fail(b.loc, "the binding of " + name + " destructures " + std::to_string(ids->size()) +
                      " values into " + std::to_string(b.vars.size()));
      return false;
    }
    for (size_t i = 0; i < b.vars.size(); ++i) values_[b.vars[i]->name] = {(*ids)[i]};
    return b.vars.size() != 1 || !b.has_asserted_type || bind_asserted_symbols(b, (*ids)[0]);
  }

  // A symbol a type assertion names first (`let idx: i64[K, 1] = nonzero(...)`) takes the
  // value's dim: a run-time symbol bound here, to the dim's value (the data-dependent count
  // nnz0, or an expression of the inputs' symbols that inline_calls could not resolve), so
  // that a later type naming it (the return type, a reshape's target) can be computed.
  bool bind_asserted_symbols(const ir::Binding& b, int id) {
    const ir::Type& declared = b.vars[0]->type;
    if (!declared.is_tensor()) return true;
    const std::vector<Expr> actual = p_.buffers[id].shape;
    for (size_t a = 0; a < declared.shape.size() && a < actual.size(); ++a) {
      const auto* s = declared.shape[a].as<symbolic::Sym>();
      if (!s || bound_.count(s->name) || actual[a].same_as(declared.shape[a])) continue;
      if (!add_runtime_symbol(declared.shape[a], actual[a],
                              "dim " + std::to_string(a) + " of '" + b.vars[0]->name + "'", b.loc,
                              -1, actual[a]))
        return false;
    }
    return true;
  }

  std::optional<std::vector<int>> lower_call(const ir::Call& call, const ir::Type& type,
                                             const std::string& name) {
    const ir::OpDef* op = ir::find_op(call.callee);
    if (op && op->id == ir::OpId::first_rows) return lower_first_rows(call, type, name);
    // Every update_slice legalize left as an op is written in place (InPlaceUpdates.h).
    if (op && op->id == ir::OpId::update_slice) return lower_update_in_place(call, *op, type, name);
    const bool view = ir::is_view_op(call.callee); // an alias of its operand, no copy
    std::vector<int> args;
    for (const ir::Expr& a : call.args) {
      if (view && !args.empty()) break; // a view's shape operand is in its type
      auto ids = buffers_of(a);
      if (!ids || ids->size() != 1) {
        if (ids) fail(a->loc, "a tuple is passed where a tensor is expected");
        return std::nullopt;
      }
      args.push_back((*ids)[0]);
    }
    if (view) {
      if (!type.is_tensor() || args.size() != 1) return fail(call.loc, "malformed " + call.callee);
      return std::vector<int>{add_alias(args[0], type, name)};
    }
    if (Ref<ir::PrimFunc> prim = m_.prim(call.callee)) return lower_kernel(call, *prim, args, type, name);
    if (Ref<ir::ExternFunc> ext = m_.ext(call.callee)) {
      const ir::LibraryRoutine* routine = ir::find_library_routine(ext->symbol);
      if (!routine || !ctx_.target.offers(ext->symbol))
        return fail(call.loc, "no " + std::string(ir::target_kind_name(ctx_.target.kind)) +
                                  " implementation of extern symbol \"" + ext->symbol + "\"");
      Ref<ir::PrimFunc> epilogue = ext->epilogue.empty() ? nullptr : m_.prim(ext->epilogue);
      if (!ext->epilogue.empty() && !epilogue)
        return fail(call.loc, "the epilogue '" + ext->epilogue + "' of '" + ext->name +
                                  "' is not a prim of the module");
      return lower_library_call(call, *ext, *routine, args, type, name, epilogue.get());
    }
    return fail(call.loc, "'" + call.callee + "' was not legalized (is it a primitive op the CPU "
                                              "backend does not support yet?)");
  }

  // A run-time symbol, bound by a Bind step in `steps`. Its upper bound may use symbols bound
  // before it; plan_memory sizes buffers at the bounds.
  bool add_runtime_symbol(const Expr& dim, Expr upper_bound, std::string what, SourceLoc loc,
                          int from_buffer, const Expr& value) {
    const auto* s = dim.as<symbolic::Sym>();
    if (!s || bound_.count(s->name)) {
      fail(loc, what + " is " + symbolic::to_string(dim) +
                    ", which is not a fresh symbol to bind at run time");
      return false;
    }
    if (!ir::find_runtime_symbol(p_, s->name))
      p_.runtime_symbols.push_back(ir::RuntimeSymbol{s->name, std::move(upper_bound), what});
    HostStep bind;
    bind.kind = HostStep::Kind::Bind;
    bind.callee = s->name;
    if (from_buffer >= 0) bind.buffers = {from_buffer};
    else bind.ints = {value};
    bind.location = location_text(sources_, loc);
    p_.steps.push_back(std::move(bind));
    bound_.insert(s->name);
    return true;
  }

  // first_rows(x, n): the first n rows of x's buffer, no copy; n binds the result's row count.
  std::optional<std::vector<int>> lower_first_rows(const ir::Call& call, const ir::Type& type,
                                                   const std::string& name) {
    std::vector<int> args;
    for (const ir::Expr& a : call.args) {
      auto ids = buffers_of(a);
      if (!ids || ids->size() != 1) {
        if (ids) fail(a->loc, "a tuple is passed where a tensor is expected");
        return std::nullopt;
      }
      args.push_back((*ids)[0]);
    }
    if (args.size() != 2 || !type.is_tensor() || type.shape.empty())
      return fail(call.loc, "malformed " + call.callee);
    const HostBuffer& rows = p_.buffers[args[0]];
    if (!add_runtime_symbol(type.shape[0], rows.shape.at(0),
                            call.callee + ": the rows of '" + name + "'", call.loc, args[1], {}))
      return std::nullopt;
    return std::vector<int>{add_alias(args[0], type, name)};
  }

  // update_slice(dst, src, axis, start) written in place: the result is dst's memory, and a
  // Copy step writes src into its slice, one block of src's elements per index of the dims
  // before the axis.
  std::optional<std::vector<int>> lower_update_in_place(const ir::Call& call, const ir::OpDef& op,
                                                        const ir::Type& type, const std::string& name) {
    std::vector<ir::Type> arg_types, kwarg_types;
    for (const ir::Expr& a : call.args) arg_types.push_back(a->type);
    for (const ir::KeywordArg& k : call.kwargs) kwarg_types.push_back(k.value->type);
    DiagnosticEngine scratch(ctx_.diags.sources());
    std::optional<ir::BoundArgs> bound = ir::bind_arguments(op, call, arg_types, kwarg_types, scratch);
    if (!bound) return fail(call.loc, "malformed " + call.callee);
    std::vector<int> ids;
    for (size_t i = 0; i < 2; ++i) {
      auto b = buffers_of((*bound)[i]);
      if (!b || b->size() != 1) return fail(call.loc, "malformed " + call.callee);
      ids.push_back((*b)[0]);
    }
    const std::vector<Expr> dst = p_.buffers[ids[0]].shape; // copies: add_alias grows buffers
    const std::vector<Expr> src = p_.buffers[ids[1]].shape;
    int64_t axis = std::get<int64_t>((*bound)[2].as<ir::Literal>()->value);
    if (axis < 0) axis += static_cast<int64_t>(dst.size());
    if (axis < 0 || static_cast<size_t>(axis) >= dst.size() || src.size() != dst.size())
      return fail(call.loc, "malformed " + call.callee);
    const size_t a = static_cast<size_t>(axis);
    Expr rows(1), inner(1);
    for (size_t d = 0; d < a; ++d) rows = rows * dst[d];
    for (size_t d = a + 1; d < dst.size(); ++d) inner = inner * dst[d];
    const Expr start = (*bound)[3].as<ir::ShapeExpr>()->dims.at(0);
    const int result = add_alias(ids[0], type, name);
    p_.buffers[result].updated_in_place = true;
    HostStep copy;
    copy.kind = HostStep::Kind::Copy;
    copy.buffers = {ids[1], result};
    copy.ints = {symbolic::simplify(rows), symbolic::simplify(src[a] * inner),
                 symbolic::simplify(dst[a] * inner), symbolic::simplify(start * inner)};
    p_.steps.push_back(std::move(copy));
    return std::vector<int>{result};
  }

  // The steps of one branch, lowered into `out`; its result's buffers, or nullopt.
  std::optional<std::vector<int>> lower_branch(const ir::Expr& branch, std::vector<HostStep>& out) {
    std::vector<HostStep> outer;
    outer.swap(p_.steps);
    flush_checks(); // those over a symbol bound as the block starts (a loop's var)
    std::optional<std::vector<int>> ids;
    if (const auto* block = branch.as<ir::Block>()) {
      bool ok = true;
      for (const ir::Binding& b : block->bindings) ok = ok && lower_binding(b);
      if (ok) ids = buffers_of(block->result);
    } else {
      ids = buffers_of(branch);
    }
    p_.steps.swap(outer);
    out = std::move(outer);
    return ids;
  }

  // if: both branches lowered into an If step. Each ends by binding the result's dims the two
  // disagree on (fresh symbols from infer_shapes) and copying its value into the result's
  // buffers, which live on after the if.
  // A shape fact as the condition (a guarded fusion's variants) is tested on the symbols.
  std::optional<std::vector<int>> lower_if(const ir::If& i, const std::string& name) {
    HostStep step;
    step.kind = HostStep::Kind::If;
    if (i.guard.defined()) {
      step.ints = {i.guard};
    } else {
      auto cond = buffers_of(i.cond);
      if (!cond) return std::nullopt;
      if (cond->size() != 1) return fail(i.cond->loc, "the condition of an if is a tuple");
      step.buffers = *cond;
    }
    std::vector<int> results = new_results(i.type, name);
    step.location = location_text(sources_, i.loc);
    const std::set<std::string> before = bound_;
    std::map<std::string, std::vector<Expr>> joined; // fresh symbol -> its value per branch
    const ir::Expr* branches[2] = {&i.then_branch, &i.else_branch};
    std::vector<HostStep>* lists[2] = {&step.then_steps, &step.else_steps};
    for (int k = 0; k < 2; ++k) {
      const int first_own = static_cast<int>(p_.buffers.size()); // buffers the branch makes
      std::set<int> placed;
      auto ids = lower_branch(*branches[k], *lists[k]);
      if (!ids) return std::nullopt;
      if (ids->size() != results.size())
        return fail(i.loc, "the branches of the if give " + std::to_string(ids->size()) +
                               " values for " + std::to_string(results.size()) + " results");
      std::vector<HostStep> tail;
      tail.swap(p_.steps);
      for (size_t f = 0; f < results.size(); ++f) {
        const HostBuffer& from = p_.buffers[(*ids)[f]];
        const HostBuffer& to = p_.buffers[results[f]];
        if (from.shape.size() != to.shape.size() || from.dtype != to.dtype)
          return fail(i.loc, std::string("a branch of the if gives ") + ir::dtype_name(from.dtype) +
                                 " of rank " + std::to_string(from.shape.size()) + " for " +
                                 ir::dtype_name(to.dtype) + " of rank " +
                                 std::to_string(to.shape.size()));
        for (size_t a = 0; a < to.shape.size(); ++a) {
          const auto* s = to.shape[a].as<symbolic::Sym>();
          if (!s || before.count(s->name)) continue;
          auto& values = joined[s->name];
          if (values.size() == static_cast<size_t>(k)) {
            values.push_back(from.shape[a]);
            HostStep bind;
            bind.kind = HostStep::Kind::Bind;
            bind.callee = s->name;
            bind.ints = {from.shape[a]};
            bind.location = step.location;
            p_.steps.push_back(std::move(bind));
          }
        }
        // A value the branch computed into the arena is computed into the result instead;
        // anything else (an input, a value from before the if, a view) is copied.
        HostBuffer& own = p_.buffers[(*ids)[f]];
        if (own.storage == HostBuffer::Storage::Arena && (*ids)[f] >= first_own &&
            placed.insert((*ids)[f]).second) {
          own.storage = HostBuffer::Storage::Alias;
          own.index = results[f];
          continue;
        }
        HostStep copy;
        copy.kind = HostStep::Kind::Copy;
        copy.buffers = {(*ids)[f], results[f]};
        p_.steps.push_back(std::move(copy));
      }
      lists[k]->insert(lists[k]->end(), p_.steps.begin(), p_.steps.end());
      p_.steps = std::move(tail);
      bound_ = before; // what a branch binds is not bound after the if
    }
    for (const auto& [symbol, values] : joined) {
      if (values.size() != 2)
        return fail(i.loc, "dim '" + symbol + "' of the if's result is not given by both branches");
      p_.runtime_symbols.push_back(ir::RuntimeSymbol{
          symbol, symbolic::simplify(symbolic::max(ir::at_upper_bounds(p_, values[0]),
                                                   ir::at_upper_bounds(p_, values[1]))),
          "a dim of '" + name + "', " + symbolic::to_string(values[0]) + " or " +
              symbolic::to_string(values[1])});
      bound_.insert(symbol);
    }
    p_.steps.push_back(std::move(step));
    return results;
  }

  // A run-time symbol named after `hint` that nothing has used yet.
  std::string fresh_runtime_name(const std::string& hint) {
    std::string name = hint;
    for (int k = 1; bound_.count(name) || ir::find_runtime_symbol(p_, name); ++k)
      name = hint + std::to_string(k);
    return name;
  }

  // A copy step from buffer `from` into `to`.
  void add_copy(int from, int to, std::vector<HostStep>& steps) {
    HostStep copy;
    copy.kind = HostStep::Kind::Copy;
    copy.buffers = {from, to};
    steps.push_back(std::move(copy));
  }

  // for var in lo..end carry (...) while cond { body }: one arena slot per carry, sized for the
  // last iteration (var = end). The inits are copied in; each iteration runs the condition
  // and the body and copies the body's results into the slots (never computed into them: the
  // body reads the old values while it makes the new ones). The loop's values are the slots.
  std::optional<std::vector<int>> lower_loop(const ir::Loop& l, const std::string& name) {
    const std::string location = location_text(sources_, l.loc);
    const std::string what = "the loop over '" + l.var + "'";
    const Expr var = symbolic::sym(l.var);
    if (!l.trips.defined()) return fail(l.loc, what + " has no trip count (run infer_shapes)");
    if (bound_.count(l.var) || ir::find_runtime_symbol(p_, l.var))
      return fail(l.loc, what + ": its symbol is bound twice");
    Expr end, most; // the end, and its largest value
    if (const auto* s = l.hi.as<ir::ShapeExpr>()) {
      end = s->dims.at(0);
      most = end;
    } else {
      auto ids = buffers_of(l.hi);
      if (!ids) return std::nullopt;
      if (ids->size() != 1) return fail(l.loc, what + " ends at a tuple");
      end = symbolic::sym(fresh_runtime_name(l.var + "_end"));
      most = l.bound;
      if (!add_runtime_symbol(end, l.bound,
                              "the end of " + what + " (declared " + l.var + " < " +
                                  symbolic::to_string(l.bound) + ")",
                              l.loc, (*ids)[0], {}))
        return std::nullopt;
    }
    p_.runtime_symbols.push_back(ir::RuntimeSymbol{
        l.var, symbolic::simplify(symbolic::max(l.lo, ir::at_upper_bounds(p_, most))),
        "the var of " + what});
    auto at = [&](const ir::Type& t, const Expr& value) {
      ir::Type out = ir::substitute(t, {{l.var, value}});
      for (Expr& d : out.shape) d = symbolic::simplify(d);
      return out;
    };
    std::vector<int> slots;
    for (size_t k = 0; k < l.carries.size(); ++k) {
      const ir::Var& c = *l.carries[k];
      if (!c.type.is_tensor()) return fail(c.loc, "carry '" + c.name + "' is a tuple; carry its tensors one by one");
      // Sizes are planned at the largest var; a dim that shrinks as var grows would not fit.
      for (const Expr& d : c.type.shape) {
        const auto* step = symbolic::simplify(ir::substitute(d, {{l.var, var + Expr(1)}}) - d).as<symbolic::Const>();
        if (!step || step->value < 0)
          return fail(c.loc, "carry '" + c.name + "' has the dim " + symbolic::to_string(d) +
                                 ", which does not grow steadily with '" + l.var +
                                 "'; the arena is planned at the loop's last iteration");
      }
      auto init = buffers_of(l.inits[k]);
      if (!init) return std::nullopt;
      if (init->size() != 1) return fail(l.inits[k]->loc, "the init of carry '" + c.name + "' is a tuple");
      HostBuffer slot;
      slot.name = c.name;
      slot.dtype = c.type.dtype;
      slot.shape = c.type.shape;
      slot.storage = HostBuffer::Storage::Arena;
      slots.push_back(add_buffer(std::move(slot)));
      add_copy((*init)[0], add_alias(slots.back(), at(c.type, l.lo), c.name), p_.steps);
    }
    HostStep step;
    step.kind = HostStep::Kind::Loop;
    step.callee = l.var;
    step.ints = {l.lo, end};
    step.location = location;
    const std::set<std::string> before = bound_;
    bound_.insert(l.var);
    for (size_t k = 0; k < l.carries.size(); ++k) values_[l.carries[k]->name] = {slots[k]};
    if (l.cond.defined()) {
      auto cond = lower_branch(l.cond, step.cond_steps);
      if (!cond) return std::nullopt;
      if (cond->size() != 1) return fail(l.cond->loc, "the condition of " + what + " is a tuple");
      step.buffers = *cond;
    }
    auto next = lower_branch(l.body, step.body_steps);
    if (!next) return std::nullopt;
    if (next->size() != slots.size())
      return fail(l.loc, "the body of " + what + " gives " + std::to_string(next->size()) +
                             " values for " + std::to_string(slots.size()) + " carries");
    // A result that is another carry's slot (a swap) is copied aside first.
    std::vector<int> sources = *next;
    for (size_t k = 0; k < slots.size(); ++k) {
      int root = ir::alias_root(p_, sources[k]);
      bool other_slot = root != slots[k] && std::count(slots.begin(), slots.end(), root);
      if (!other_slot) continue;
      HostBuffer aside = p_.buffers[sources[k]];
      aside.name = l.carries[k]->name + ".next";
      aside.storage = HostBuffer::Storage::Arena;
      int id = add_buffer(std::move(aside));
      add_copy(sources[k], id, step.body_steps);
      sources[k] = id;
    }
    for (size_t k = 0; k < slots.size(); ++k) {
      if (ir::alias_root(p_, sources[k]) == slots[k]) continue; // already in place
      const ir::Var& c = *l.carries[k];
      add_copy(sources[k], add_alias(slots[k], at(c.type, var + Expr(1)), c.name), step.body_steps);
    }
    bound_ = before;
    p_.steps.push_back(std::move(step));
    // The trip count, when the loop may stop early or ends at a run-time value.
    const Expr exit = symbolic::simplify(l.lo + l.trips);
    if (const auto* trips = l.trips.as<symbolic::Sym>(); trips && !bound_.count(trips->name)) {
      Expr bound = symbolic::simplify(symbolic::max(ir::at_upper_bounds(p_, most) - l.lo, Expr(0)));
      if (!add_runtime_symbol(l.trips, bound, "the trip count of " + what, l.loc, -1,
                              symbolic::simplify(var - l.lo)))
        return std::nullopt;
    }
    std::vector<int> results;
    for (size_t k = 0; k < slots.size(); ++k) {
      const ir::Var& c = *l.carries[k];
      results.push_back(add_alias(slots[k], at(c.type, exit),
                                  slots.size() == 1 ? name : name + "." + std::to_string(k)));
    }
    return results;
  }

  std::optional<std::vector<int>> lower_kernel(const ir::Call& call, const ir::PrimFunc& prim,
                                               const std::vector<int>& args, const ir::Type& type,
                                               const std::string& name) {
    if (args.size() != prim.inputs.size())
      return fail(call.loc, "'" + prim.name + "' takes " + std::to_string(prim.inputs.size()) +
                                " inputs; " + std::to_string(args.size()) + " given");
    std::vector<int> outs = new_results(type, name);
    if (outs.size() != prim.outputs.size())
      return fail(call.loc, "'" + prim.name + "' has " + std::to_string(prim.outputs.size()) +
                                " outputs; the call's type has " + std::to_string(outs.size()));
    // The prim's symbols, from the first plain appearance of each in its buffers.
    std::map<std::string, Expr> subst;
    auto match = [&](const ir::Buffer& formal, int actual) {
      const HostBuffer& b = p_.buffers[actual];
      for (size_t i = 0; i < formal.shape.size() && i < b.shape.size(); ++i)
        if (const auto* s = formal.shape[i].as<symbolic::Sym>()) subst.emplace(s->name, b.shape[i]);
    };
    for (size_t i = 0; i < args.size(); ++i) match(prim.inputs[i], args[i]);
    for (size_t i = 0; i < outs.size(); ++i) match(prim.outputs[i], outs[i]);
    std::optional<std::vector<Expr>> ints = signature_values(call, prim, std::move(subst));
    if (!ints) return std::nullopt;
    HostStep step;
    step.kind = HostStep::Kind::Kernel;
    step.callee = prim.name;
    step.ints = std::move(*ints);
    step.buffers = args;
    step.buffers.insert(step.buffers.end(), outs.begin(), outs.end());
    p_.steps.push_back(std::move(step));
    return outs;
  }

  // With an epilogue, the extern's parameters after the operands are the epilogue's inputs:
  // the step's buffers are the operands, those inputs, then the result, and the routine's
  // scalars come from the operands and the result alone.
  std::optional<std::vector<int>> lower_library_call(const ir::Call& call,
                                                     const ir::ExternFunc& ext,
                                                     const ir::LibraryRoutine& routine,
                                                     const std::vector<int>& args,
                                                     const ir::Type& type, const std::string& name,
                                                     const ir::PrimFunc* epilogue) {
    std::vector<int> outs = new_results(type, name);
    std::vector<int> buffers = args;
    buffers.insert(buffers.end(), outs.begin(), outs.end());
    const size_t epilogue_inputs = epilogue ? epilogue->inputs.size() : 0;
    if (buffers.size() != static_cast<size_t>(routine.buffers) + epilogue_inputs)
      return fail(call.loc, std::string(routine.symbol) + " takes " +
                                std::to_string(routine.buffers + epilogue_inputs) +
                                " operands, epilogue inputs and results; '" + call.callee +
                                "' has " + std::to_string(buffers.size()));
    // How the routine reads each operand and result: through the extern's view of it, or as
    // it is.
    std::vector<ir::StridedView> layouts;
    for (size_t j = 0; j < buffers.size(); ++j) {
      if (j >= static_cast<size_t>(routine.operands()) && j + outs.size() < buffers.size())
        continue; // an epilogue's input
      if (j + outs.size() >= buffers.size() && ext.result_view) {
        // A permutation of the result's dims (the verifier's check): inside by construction.
        layouts.push_back(*ext.result_view);
      } else if (j < ext.views.size() && ext.views[j]) {
        if (!check_view_inside(call, ext, j, p_.buffers[buffers[j]])) return std::nullopt;
        layouts.push_back(*ext.views[j]);
      } else {
        layouts.push_back(ir::dense_view(p_.buffers[buffers[j]].shape));
      }
    }
    std::string error;
    std::optional<std::vector<Expr>> ints = routine.scalar_args(layouts, ext.attributes, &error);
    if (!ints) return fail(call.loc, error);
    HostStep step;
    step.kind = HostStep::Kind::Library;
    step.callee = routine.symbol;
    if (epilogue) {
      // The epilogue runs on A @ B: its rows are A's (all its dims but the last, as the
      // routine reads it), its columns B's last dim.
      Expr rows = 1;
      const std::vector<Expr>& a = layouts.at(0).shape;
      for (size_t d = 0; d + 1 < a.size(); ++d) rows = rows * a[d];
      std::optional<std::vector<Expr>> symbols =
          epilogue_symbols(call, *epilogue, routine, ext.epilogue_first_row, buffers,
                           symbolic::simplify(rows), layouts.at(1).shape.back());
      if (!symbols) return std::nullopt;
      step.epilogue = epilogue->name;
      step.epilogue_ints = std::move(*symbols);
      step.epilogue_first_row = ext.epilogue_first_row;
    }
    step.buffers = std::move(buffers);
    step.ints = std::move(*ints);
    p_.steps.push_back(std::move(step));
    return outs;
  }

  // A strided view must stay inside the buffer passed: its offset and strides not negative,
  // its last element below the buffer's element count; each proved here or checked on entry
  // like a `where` clause.
  bool check_view_inside(const ir::Call& call, const ir::ExternFunc& ext, size_t j,
                         const HostBuffer& buffer) {
    const ir::StridedView& view = *ext.views[j];
    Expr elements = 1;
    for (const Expr& d : buffer.shape) elements = elements * d;
    std::vector<Expr> facts = {symbolic::le(Expr(0), view.offset)};
    for (const Expr& s : view.strides) facts.push_back(symbolic::le(Expr(0), s));
    facts.push_back(symbolic::lt(ir::last_element(view), symbolic::simplify(elements)));
    const std::string what = "the strided view of '" + ext.params[j]->name + "' in '" +
                             ext.name + "' stays inside the buffer";
    for (const Expr& fact : facts) {
      Expr decided = symbolic::simplify(fact);
      if (const auto* c = decided.as<symbolic::BoolConst>()) {
        if (c->value) continue;
        fail(call.loc, "the strided view of '" + ext.params[j]->name + "' in '" + ext.name +
                           "' reads outside the buffer passed (" + symbolic::to_string(fact) +
                           " is false)");
        return false;
      }
      if (!add_check(fact, what + ": " + symbolic::to_string(fact), call.loc)) return false;
    }
    return true;
  }

  // The values of an epilogue's symbols (ir::prim_signature_symbols): its row count is all
  // the rows and its first row (`first_row`, when it has one) 0 (the routine passes each
  // block's own), its output's column count `columns`, and every other symbol is matched in
  // its inputs' dims aligned from the last (they view the values passed as matrices and rows),
  // or is one of the fn's.
  std::optional<std::vector<Expr>> epilogue_symbols(const ir::Call& call,
                                                    const ir::PrimFunc& epilogue,
                                                    const ir::LibraryRoutine& routine,
                                                    const std::string& first_row,
                                                    const std::vector<int>& buffers,
                                                    const Expr& rows, const Expr& columns) {
    std::map<std::string, Expr> subst;
    subst.emplace(ir::epilogue_rows_symbol(epilogue), rows);
    if (!first_row.empty()) subst.emplace(first_row, Expr(0));
    if (const auto* s = epilogue.outputs[0].shape[1].as<symbolic::Sym>())
      subst.emplace(s->name, columns);
    auto match = [&](const ir::Buffer& formal, int actual) {
      const std::vector<Expr>& shape = p_.buffers[actual].shape;
      for (size_t i = 1; i <= formal.shape.size() && i <= shape.size(); ++i)
        if (const auto* s = formal.shape[formal.shape.size() - i].as<symbolic::Sym>())
          subst.emplace(s->name, shape[shape.size() - i]);
    };
    for (size_t k = 0; k < epilogue.inputs.size(); ++k)
      match(epilogue.inputs[k], buffers[static_cast<size_t>(routine.operands()) + k]);
    return signature_values(call, epilogue, std::move(subst));
  }

  // The values of ir::prim_signature_symbols(prim), in order: from `matched` (a symbol's value
  // read off the buffers passed), else the fn's own symbol of that name (prims made by legalize
  // name the fn's symbols).
  std::optional<std::vector<Expr>> signature_values(const ir::Call& call, const ir::PrimFunc& prim,
                                                    std::map<std::string, Expr> matched) {
    std::vector<Expr> values;
    for (const std::string& s : ir::prim_signature_symbols(prim)) {
      auto it = matched.find(s);
      if (it == matched.end() && bound_.count(s)) it = matched.emplace(s, symbolic::sym(s)).first;
      if (it == matched.end())
        return fail(call.loc, "symbol '" + s + "' of prim '" + prim.name +
                                  "' is neither a dim of the buffers passed to it nor a symbol "
                                  "of '" + fn_.name + "'");
      values.push_back(it->second);
    }
    return values;
  }

  bool lower_result(const ir::Expr& result) {
    auto ids = buffers_of(result);
    if (!ids) return false;
    // An output shaped by a run-time symbol is allocated where it is first written, after the
    // symbol is bound; inside an if or a loop that would be on one path only (or repeated), so
    // one written there is copied out afterwards instead.
    std::set<int> in_branches;
    for (const HostStep& s : p_.steps) {
      if (s.kind != HostStep::Kind::If && s.kind != HostStep::Kind::Loop) continue;
      ir::for_each_step({s}, [&](const HostStep& t, int) {
        for (int id : t.buffers) in_branches.insert(ir::alias_root(p_, id));
      });
    }
    std::set<int> taken;
    for (size_t i = 0; i < ids->size(); ++i) {
      int id = (*ids)[i];
      HostBuffer& b = p_.buffers[id];
      // A parameter updated in place is returned as itself (the manifest's updates_param).
      if (b.updated_in_place &&
          p_.buffers[ir::alias_root(p_, id)].storage == HostBuffer::Storage::Param &&
          taken.insert(id).second) {
        p_.outputs.push_back(id);
        continue;
      }
      if (b.storage == HostBuffer::Storage::Arena && !taken.count(id) &&
          (!ir::has_runtime_dims(p_, b.shape) || !in_branches.count(id))) {
        b.storage = HostBuffer::Storage::Output;
        b.index = static_cast<int>(i);
        taken.insert(id);
        p_.outputs.push_back(id);
        continue;
      }
      HostBuffer out;
      out.name = "output" + std::to_string(i);
      out.dtype = b.dtype;
      out.shape = b.shape;
      out.storage = HostBuffer::Storage::Output;
      out.index = static_cast<int>(i);
      int out_id = add_buffer(std::move(out));
      HostStep copy;
      copy.kind = HostStep::Kind::Copy;
      copy.buffers = {id, out_id};
      p_.steps.push_back(std::move(copy));
      p_.outputs.push_back(out_id);
    }
    return true;
  }

  const ir::Module& m_;
  const ir::Function& fn_;
  PassContext& ctx_;
  const SourceManager& sources_;
  ir::HostProgram p_;
  std::set<std::string> bound_;
  std::map<std::string, std::vector<int>> values_;
  std::vector<DeferredCheck> deferred_;
};

} // namespace

std::optional<ir::HostProgram> lower_host(const ir::Module& scheduled, const std::string& entry,
                                          PassContext& ctx) {
  Ref<ir::Function> fn = scheduled.function(entry);
  if (!fn) {
    ctx.diags.error(SourceLoc{}, "no function '" + entry + "' to compile");
    return std::nullopt;
  }
  return Lowering(scheduled, *fn, ctx).run();
}

} // namespace dsc::passes
