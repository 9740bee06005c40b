#include "passes/legalize/Materialize.h"

#include "ir/Functor.h"
#include "ir/OpRegistry.h"
#include "passes/IRUtil.h"
#include "passes/legalize/Scalar.h"
#include "symbolic/Eval.h"
#include "symbolic/Simplify.h"

namespace dsc::passes::lowering {

namespace sym = symbolic;
using ir::PrimExpr;
using ir::Stmt;

namespace {

// The symbols a statement uses (indices, loop bounds, allocations), less its loop variables.
std::set<std::string> used_symbols(const Stmt& s) {
  StmtNames names = stmt_names(s);
  std::set<std::string> out;
  for (const std::string& n : names.symbols)
    if (!names.loop_vars.count(n)) out.insert(n);
  return out;
}

// Every index with the index variables replaced (and simplified).
class SubstituteIndices : public ir::IRMutator {
public:
  explicit SubstituteIndices(const std::map<std::string, sym::Expr>& subst) : subst_(subst) {}

protected:
  PrimExpr mutate_node(const ir::Index* node, const PrimExpr&) override {
    return index(sym::simplify(ir::substitute(node->value, subst_)));
  }

private:
  const std::map<std::string, sym::Expr>& subst_;
};

// A box of an output's index space: variable v of the description runs over
// [min[a], min[a] + extent[a]).
struct Box {
  std::vector<sym::Expr> vars; // the description's (a Sym, or 0 for no loop)
  std::vector<sym::Expr> min, extent;
};

std::vector<PrimExpr> indices(const std::vector<sym::Expr>& idx) {
  std::vector<PrimExpr> is;
  for (const sym::Expr& i : idx)
    is.push_back(index(i));
  return is;
}

Stmt seq(std::vector<Stmt> stmts) {
  return stmts.size() == 1 ? stmts.front() : ir::Seq::make(std::move(stmts));
}

class Materializer {
public:
  Materializer(ComputeDesc desc, FnContext& ctx) : d_(std::move(desc)), ctx_(ctx) {}

  ir::Expr run() {
    switch (d_.kind) {
    case ComputeDesc::Kind::View:
      return d_.call;
    case ComputeDesc::Kind::Library:
      return library_call();
    case ComputeDesc::Kind::Map: {
      std::vector<Stmt> nests;
      for (size_t k = 0; k < d_.maps.size(); ++k) {
        const MapOutput& m = d_.maps[k];
        Box box{m.space.vars, std::vector<sym::Expr>(m.space.vars.size(), sym::Expr(0)),
                m.space.extents};
        first_box_ = true;
        split(d_.outputs[k], box, m.element, m.element.value, nests);
      }
      return finish(seq(std::move(nests)));
    }
    case ComputeDesc::Kind::Reduce:
      return finish(reduction());
    case ComputeDesc::Kind::Stitch:
      return finish(stitch());
    }
    internal_error << "legalize: a description of unknown kind";
  }

private:
  // With an epilogue, its prim (named after the kernel) is materialized first, and the call
  // passes the prim's inputs after the operands.
  ir::Expr library_call() {
    std::vector<ir::Expr> args = d_.library.args;
    std::string epilogue, first_row;
    if (d_.library.epilogue) {
      first_row = d_.library.epilogue->first_row;
      ComputeDesc e = *d_.library.epilogue;
      e.op = d_.op;
      ir::Expr prim_call = Materializer(std::move(e), ctx_).run();
      const ir::Call* call = prim_call.as<ir::Call>();
      internal_assert(call) << "legalize: an epilogue that is not a prim";
      epilogue = call->callee;
      args.insert(args.end(), call->args.begin(), call->args.end());
    }
    std::vector<ir::Type> types;
    for (const ir::Expr& a : args)
      types.push_back(a->type);
    std::string name =
        ctx_.library_extern(d_.library.routine->symbol, types, d_.type, epilogue, first_row,
                            d_.library.views, d_.library.result_view, d_.library.attributes);
    return ir::Call::make(name, std::move(args), {}, d_.type, ctx_.loc());
  }

  // The nests that store `value` over `box`. A guarding select on `v < c`, with c between the
  // bounds of v's axis, splits the box along that axis instead of testing in every iteration
  // (concat's pieces, shape_of's dims), so that each nest is a plain copy.
  void split(const ir::Buffer& out, const Box& box, const Element& e, const PrimExpr& value,
             std::vector<Stmt>& nests) {
    const ir::Intrinsic* s = value.as<ir::Intrinsic>();
    sym::Expr bound;
    std::optional<size_t> axis;
    if (e.lets.empty() && is_guarding_select(value)) axis = split_axis(s->args[0], box, &bound);
    if (!axis) {
      nests.push_back(emit(out, box, e, value));
      return;
    }
    Box below = box, above = box;
    below.extent[*axis] = sym::simplify(bound - box.min[*axis]);
    above.min[*axis] = bound;
    above.extent[*axis] = sym::simplify(box.min[*axis] + box.extent[*axis] - bound);
    split(out, below, e, s->args[1], nests);
    split(out, above, e, s->args[2], nests);
  }

  // The axis a condition `v < bound` splits: v is the axis's variable, `bound` uses no
  // variable of the box and is proved within the axis's range.
  std::optional<size_t> split_axis(const PrimExpr& cond, const Box& box, sym::Expr* bound) {
    const ir::PrimBinary* lt = cond.as<ir::PrimBinary>();
    if (!lt || lt->op != ir::BinaryOp::LT || !guards(cond)) return std::nullopt;
    const ir::Index* v = lt->a.as<ir::Index>();
    const ir::Index* c = lt->b.as<ir::Index>();
    if (!v || !c) return std::nullopt;
    std::optional<size_t> axis;
    for (size_t a = 0; a < box.vars.size(); ++a) {
      if (!box.vars[a].is<sym::Sym>()) continue;
      if (sym::compare(v->value, box.vars[a]) == 0) axis = a;
      if (sym::free_symbols(c->value).count(box.vars[a].as<sym::Sym>()->name)) return std::nullopt;
    }
    if (!axis) return std::nullopt;
    const sym::Expr& lo = box.min[*axis];
    sym::Expr hi = lo + box.extent[*axis];
    if (!ctx_.proved(sym::le(lo, c->value)) || !ctx_.proved(sym::le(c->value, hi)))
      return std::nullopt;
    *bound = c->value;
    return axis;
  }

  // The nest over `box`: the first with the description's variables, later ones with fresh
  // variables, each description variable replaced by its box's min plus the loop's variable.
  Stmt emit(const ir::Buffer& out, const Box& box, const Element& e, const PrimExpr& value) {
    IndexSpace space;
    std::map<std::string, sym::Expr> subst;
    bool identity = true;
    for (size_t a = 0; a < box.vars.size(); ++a) {
      sym::Expr extent = sym::simplify(box.extent[a]);
      const sym::Sym* v = box.vars[a].as<sym::Sym>();
      const sym::Const* c = extent.as<sym::Const>();
      sym::Expr var(0);
      if (v && !(c && c->value == 1))
        var = first_box_ ? box.vars[a] : sym::sym(d_.names.fresh("i", /*numbered=*/true));
      space.extents.push_back(extent);
      space.vars.push_back(var);
      if (!v) continue;
      sym::Expr to = sym::simplify(box.min[a] + var);
      identity = identity && sym::compare(to, box.vars[a]) == 0;
      subst[v->name] = to;
    }
    first_box_ = false;
    Stmt body = with_lets(e, store(out, box.vars, value));
    if (!identity) body = SubstituteIndices(subst).mutate(body);
    return nest(space, body);
  }

  // for v0 in 0..e0 { for v1 ... { body } }, without loops for the dims of extent 1.
  static Stmt nest(const IndexSpace& space, Stmt body) {
    for (size_t i = space.vars.size(); i-- > 0;) {
      const sym::Sym* v = space.vars[i].as<sym::Sym>();
      if (!v) continue;
      body = ir::For::make(v->name, sym::Expr(0), space.extents[i], ir::ForKind::Serial, body);
    }
    return body;
  }

  static Stmt with_lets(const Element& e, Stmt last) {
    std::vector<Stmt> stmts;
    for (const LocalLet& l : e.lets)
      stmts.push_back(ir::LocalDecl::make(l.name, l.value->dtype, false, l.value));
    stmts.push_back(std::move(last));
    return seq(std::move(stmts));
  }

  // out[idx] = value, converted to the output's dtype; guarding selects become ifs.
  static Stmt store(const ir::Buffer& out, const std::vector<sym::Expr>& idx, PrimExpr value) {
    const ir::Intrinsic* s = value.as<ir::Intrinsic>();
    if (is_guarding_select(value))
      return ir::IfStmt::make(s->args[0], store(out, idx, s->args[1]), store(out, idx, s->args[2]));
    if (value->dtype != out.dtype) value = convert(value, out.dtype);
    return ir::Store::make(out.name, indices(idx), value);
  }

  Stmt reduction() {
    const Reduction& r = d_.reduction;
    ir::DType acc_dtype = r.identity->dtype;
    PrimExpr acc = ir::LocalRef::make(acc_dtype, r.accumulator);
    Stmt result = store(d_.outputs.front(), r.space.vars, r.finish.defined() ? r.finish : acc);
    std::vector<Stmt> body = reduce(r);
    body.push_back(result);
    return nest(r.space, ir::Seq::make(std::move(body)));
  }

  // The accumulator's declaration and the loops over the reduced axes; the body's locals are
  // computed only where the condition holds.
  static std::vector<Stmt> reduce(const Reduction& r) {
    ir::DType acc_dtype = r.identity->dtype;
    PrimExpr acc = ir::LocalRef::make(acc_dtype, r.accumulator);
    Stmt update =
        with_lets(r.body, ir::Assign::make(r.accumulator, binary(r.combiner, acc, r.body.value)));
    if (r.condition.defined()) update = ir::IfStmt::make(r.condition, update, Stmt());
    Stmt decl = ir::LocalDecl::make(r.accumulator, acc_dtype, true, r.identity);
    return {decl, nest(r.reduced, update)};
  }

  // Per row, the stages in order (ComputeDesc.h: Stage).
  Stmt stitch() {
    const Stitch& s = d_.stitch;
    std::vector<Stmt> row;
    for (const Stage& st : s.stages) {
      if (st.kind == Stage::Kind::Map) {
        IndexSpace inner;
        for (size_t a = 0; a < st.space.vars.size(); ++a) {
          if (s.rows.vars[a].is<sym::Sym>()) continue;
          inner.vars.push_back(st.space.vars[a]);
          inner.extents.push_back(st.space.extents[a]);
        }
        const ir::Buffer& out = d_.outputs[*st.output];
        row.push_back(
            nest(inner, with_lets(st.element, store(out, st.space.vars, st.element.value))));
        continue;
      }
      PrimExpr value;
      if (st.kind == Stage::Kind::Reduce) {
        const Reduction& r = st.reduction;
        for (Stmt& part : reduce(r))
          row.push_back(std::move(part));
        value =
            r.finish.defined() ? r.finish : ir::LocalRef::make(r.identity->dtype, r.accumulator);
      } else {
        for (const LocalLet& l : st.element.lets)
          row.push_back(ir::LocalDecl::make(l.name, l.value->dtype, false, l.value));
        value = st.element.value;
      }
      row.push_back(ir::LocalDecl::make(st.local, value->dtype, false, value));
      if (st.output)
        row.push_back(
            store(d_.outputs[*st.output], s.rows.vars, ir::LocalRef::make(value->dtype, st.local)));
    }
    return nest(s.rows, seq(std::move(row)));
  }

  ir::Expr finish(Stmt body) {
    std::vector<ir::Buffer> inputs;
    std::vector<ir::Expr> args;
    for (const ComputeDesc::Input& in : d_.inputs) {
      inputs.push_back(in.buffer);
      args.push_back(in.arg);
    }
    // Every symbol the prim's body uses must appear in a dim of one of its buffers, so that it
    // is part of the prim's signature (ir::prim_signature_symbols) and the printed prim binds
    // it.
    std::set<std::string> in_dims, missing;
    for (const std::vector<ir::Buffer>* bufs : {&inputs, &d_.outputs})
      for (const ir::Buffer& b : *bufs)
        for (const sym::Expr& dim : b.shape)
          for (const std::string& s : sym::free_symbols(dim))
            in_dims.insert(s);
    if (!d_.first_row.empty()) in_dims.insert(d_.first_row); // declared by the where clause
    for (const std::string& s : used_symbols(body))
      if (!in_dims.count(s)) missing.insert(s);
    if (!missing.empty()) {
      // Symbols in no buffer's dims (a slice's symbolic start): an extra zero-byte input,
      // i8[0, P], names them.
      ir::Expr carrier = ctx_.symbol_carrier(missing);
      inputs.push_back(
          ir::Buffer{d_.names.fresh("symbols"), carrier->type.dtype, carrier->type.shape, {}});
      args.push_back(carrier);
    }
    auto* p = new ir::PrimFunc();
    p->name = ctx_.new_decl_name(d_.op);
    p->inputs = std::move(inputs);
    p->outputs = d_.outputs;
    if (!d_.first_row.empty())
      p->where.push_back(ir::WhereClause{sym::le(sym::Expr(0), sym::sym(d_.first_row)), ctx_.loc()});
    p->body = body.is<ir::Seq>() ? body : ir::Seq::make({body});
    p->loc = ctx_.loc();
    ctx_.add_prim(Ref<ir::PrimFunc>(p));
    return ir::Call::make(p->name, args, {}, d_.type, ctx_.loc());
  }

  ComputeDesc d_;
  FnContext& ctx_;
  bool first_box_ = true;
};

} // namespace

ir::Expr materialize(ComputeDesc desc, FnContext& ctx) {
  return Materializer(std::move(desc), ctx).run();
}

} // namespace dsc::passes::lowering
