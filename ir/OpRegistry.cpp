#include "ir/OpRegistry.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <set>
#include <sstream>

#include "ir/ops/OpUtil.h"
#include "support/Suggest.h"
#include "symbolic/Eval.h"
#include "symbolic/Printer.h"
#include "symbolic/Simplify.h"

namespace dsc::ir {

namespace sym = symbolic;

// ---------------------------------------------------------------- the registry

namespace {

// The columns of Ops.def per op, in the order of OpId.
struct OpRow {
  const char* name;
  OpFamily family;
  OpPattern pattern;
  OpResult result;
};
constexpr OpRow kOpRows[] = {
#define DSC_OP(name, family, pattern, result)                                                     \
  {#name, OpFamily::family, OpPattern::pattern, OpResult::result},
#include "ir/Ops.def"
};

struct Registry {
  std::vector<OpDef> defs;
  std::vector<const OpDef*> ordered;
  std::vector<const OpDef*> by_id; // indexed by OpId

  Registry() {
    const std::pair<OpFamily, std::vector<OpDef> (*)()> families[] = {
        {OpFamily::Elementwise, ops::elementwise_ops}, {OpFamily::Reduce, ops::reduce_ops},
        {OpFamily::Layout, ops::layout_ops},           {OpFamily::Matmul, ops::matmul_ops},
        {OpFamily::Conv, ops::conv_ops},               {OpFamily::Pool, ops::pool_ops},
        {OpFamily::Creation, ops::creation_ops}};
    for (const auto& [family, rules] : families) {
      for (OpDef& d : rules()) {
        const OpRow* row = std::find_if(std::begin(kOpRows), std::end(kOpRows),
                                        [&](const OpRow& r) { return d.name == std::string(r.name); });
        internal_assert(row != std::end(kOpRows)) << "op '" << d.name << "' is missing from Ops.def";
        internal_assert(row->family == family)
            << "op '" << d.name << "' has its shape rule outside the family Ops.def gives it";
        d.id = static_cast<OpId>(row - std::begin(kOpRows));
        d.family = row->family;
        d.pattern = row->pattern;
        d.result = row->result;
        defs.push_back(std::move(d));
      }
    }
    // Ops.def is the one list; every op in it has exactly one rule and nothing else does.
    by_id.assign(std::size(kOpRows), nullptr);
    for (const OpDef& d : defs) {
      const OpDef*& slot = by_id[static_cast<size_t>(d.id)];
      internal_assert(!slot) << "op '" << d.name << "' defined twice";
      slot = &d;
      ordered.push_back(&d);
    }
    for (const OpRow& r : kOpRows)
      internal_assert(find(r.name)) << "op '" << r.name << "' of Ops.def has no shape rule";
  }

  const OpDef* find(std::string_view name) const {
    for (const OpDef& d : defs)
      if (name == d.name) return &d;
    return nullptr;
  }
};

const Registry& registry() {
  static const Registry r;
  return r;
}

SourceLoc loc_or(SourceLoc loc, SourceLoc fallback) {
  return loc.valid() ? loc : fallback;
}

bool is_neg_of_literal(const Expr& e, const Literal** lit) {
  const Call* c = e.as<Call>();
  if (!c || op_id(c->callee) != OpId::neg || c->args.size() != 1 || !c->kwargs.empty()) return false;
  *lit = c->args[0].as<Literal>();
  return *lit != nullptr && !std::holds_alternative<bool>((*lit)->value);
}

// `[0, 2, 1]` written as a list of integer literals: the ShapeExpr it means; null otherwise.
Expr list_as_shape(const Expr& e) {
  if (e.is<ShapeExpr>()) return e;
  const ListExpr* list = e.as<ListExpr>();
  if (!list) return Expr();
  std::vector<sym::Expr> dims;
  for (const Expr& item : list->items) {
    std::optional<int64_t> v = ops::literal_int(item);
    if (!v) return Expr();
    dims.push_back(sym::Expr(*v));
  }
  return ShapeExpr::make(std::move(dims), e->loc);
}

bool is_non_value(const Expr& e) {
  return e.is<StringImm>() || e.is<ShapeExpr>() || e.is<ListExpr>();
}

const char* kind_description(ParamKind k) {
  switch (k) {
  case ParamKind::Tensor:
    return "a tensor";
  case ParamKind::TensorList:
    return "a list of tensors";
  case ParamKind::Shape:
    return "a list of dims";
  case ParamKind::Int:
    return "an integer";
  case ParamKind::Dim:
    return "an integer or a symbolic dim";
  case ParamKind::IntOrShape:
    return "an integer or a list of integers";
  case ParamKind::Float:
    return "a number";
  case ParamKind::Scalar:
    return "a scalar literal";
  case ParamKind::DType:
    return "a dtype name such as \"f16\"";
  case ParamKind::Bool:
    return "true or false";
  }
  return "?";
}

using ErrorFn = std::function<Diagnostic&(SourceLoc, std::string)>;

// Checks one argument against its parameter's kind and normalizes it (see ops/OpUtil.h).
bool check_kind(const OpDef& op, const ParamSpec& p, Expr& value, Type& type, SourceLoc loc,
                const ErrorFn& error) {
  auto fail = [&]() {
    error(loc,
          std::string(op.name) + " expects " + kind_description(p.kind) + " for '" + p.name + "'");
    return false;
  };
  switch (p.kind) {
  case ParamKind::Tensor:
    if (is_non_value(value)) return fail();
    if (type.is_tuple()) {
      error(loc, std::string(op.name) + " expects a tensor for '" + p.name + "', got a tuple " +
                     to_string(type));
      return false;
    }
    if (!type.is_tensor() && !type.is_unknown()) return fail();
    return true;
  case ParamKind::TensorList: {
    const ListExpr* list = value.as<ListExpr>();
    if (!list) return fail();
    std::vector<Type> fields;
    for (const Expr& item : list->items) {
      if (is_non_value(item) || !(item->type.is_tensor() || item->type.is_unknown())) {
        error(argument_loc(item, loc),
              std::string(op.name) + " expects a list of tensors for '" + p.name + "'");
        return false;
      }
      fields.push_back(item->type);
    }
    type = Type::tuple(std::move(fields));
    return true;
  }
  case ParamKind::Shape: {
    Expr s = list_as_shape(value);
    if (!s.defined()) return fail();
    value = s;
    type = Type::unknown();
    return true;
  }
  case ParamKind::Int: {
    std::optional<int64_t> v = ops::literal_int(value);
    if (!v) return fail();
    value = Literal::make(*v, value->loc);
    type = value->type;
    return true;
  }
  case ParamKind::Dim: {
    if (std::optional<int64_t> v = ops::literal_int(value)) {
      value = ShapeExpr::make({sym::Expr(*v)}, value->loc);
      type = Type::unknown();
      return true;
    }
    const ShapeExpr* s = value.as<ShapeExpr>();
    if (!s || s->dims.size() != 1) return fail();
    type = Type::unknown();
    return true;
  }
  case ParamKind::IntOrShape: {
    if (std::optional<int64_t> v = ops::literal_int(value)) {
      value = Literal::make(*v, value->loc);
      type = value->type;
      return true;
    }
    Expr s = list_as_shape(value);
    if (!s.defined()) return fail();
    value = s;
    type = Type::unknown();
    return true;
  }
  case ParamKind::Float:
  case ParamKind::Scalar: {
    Expr lit = literal_value(value);
    if (!lit.defined()) return fail();
    if (p.kind == ParamKind::Float && std::holds_alternative<bool>(lit.as<Literal>()->value))
      return fail();
    value = lit;
    type = value->type;
    return true;
  }
  case ParamKind::DType: {
    const StringImm* s = value.as<StringImm>();
    if (!s) return fail();
    if (!parse_dtype(s->value)) {
      Diagnostic& d = error(loc, std::string(op.name) + ": unknown dtype '" + s->value + "'");
      suggest(d, s->value, dtype_names(), loc);
      return false;
    }
    type = Type::unknown();
    return true;
  }
  case ParamKind::Bool: {
    const Literal* lit = value.as<Literal>();
    if (!lit || !std::holds_alternative<bool>(lit->value)) return fail();
    return true;
  }
  }
  return fail();
}

std::optional<BoundArgs> bind_impl(const OpDef& op, const Call& call,
                                   const std::vector<Type>& arg_types,
                                   const std::vector<Type>& kwarg_types, const ErrorFn& error) {
  const size_t n = op.params.size();
  BoundArgs out;
  out.values.resize(n);
  out.types.resize(n);
  out.locs.resize(n, call.loc);
  std::vector<bool> given(n, false);
  bool ok = true;

  if (call.args.size() > n) {
    error(argument_loc(call.args[n], call.loc),
          std::string(op.name) + " takes " + std::to_string(n) + " argument" + (n == 1 ? "" : "s") +
              ", got " + std::to_string(call.args.size()));
    return std::nullopt;
  }
  for (size_t i = 0; i < call.args.size(); ++i) {
    out.values[i] = call.args[i];
    out.types[i] = i < arg_types.size() ? arg_types[i] : call.args[i]->type;
    out.locs[i] = argument_loc(call.args[i], call.loc);
    given[i] = true;
  }
  for (size_t k = 0; k < call.kwargs.size(); ++k) {
    const KeywordArg& kw = call.kwargs[k];
    SourceLoc loc = loc_or(kw.loc, argument_loc(kw.value, call.loc));
    size_t i = 0;
    while (i < n && kw.name != op.params[i].name)
      ++i;
    if (i == n) {
      Diagnostic& d = error(loc, std::string(op.name) + " has no parameter '" + kw.name + "'");
      std::vector<std::string> names;
      for (const ParamSpec& p : op.params)
        names.push_back(p.name);
      suggest(d, kw.name, names, loc);
      ok = false;
      continue;
    }
    if (given[i]) {
      error(loc, std::string(op.name) + ": argument '" + kw.name + "' given twice");
      ok = false;
      continue;
    }
    out.values[i] = kw.value;
    out.types[i] = k < kwarg_types.size() ? kwarg_types[k] : kw.value->type;
    out.locs[i] = loc;
    given[i] = true;
  }
  for (size_t i = 0; i < n; ++i) {
    if (given[i]) continue;
    const ParamSpec& p = op.params[i];
    if (!p.has_default) {
      error(call.loc, std::string(op.name) + ": missing argument '" + p.name + "'");
      ok = false;
      continue;
    }
    if (p.make_default) {
      out.values[i] = p.make_default();
      out.types[i] = out.values[i]->type;
    }
  }
  if (!ok) return std::nullopt;
  for (size_t i = 0; i < n; ++i) {
    if (!out.values[i].defined()) continue;
    ok &= check_kind(op, op.params[i], out.values[i], out.types[i], out.locs[i], error);
  }
  if (!ok) return std::nullopt;
  return out;
}

} // namespace

const OpDef* find_op(std::string_view name) {
  return registry().find(name);
}

std::optional<OpId> op_id(std::string_view callee) {
  const OpDef* op = find_op(callee);
  if (!op) return std::nullopt;
  return op->id;
}

const OpDef& op_def(OpId id) {
  return *registry().by_id[static_cast<size_t>(id)];
}

const char* op_name(OpId id) {
  return kOpRows[static_cast<size_t>(id)].name;
}

bool is_view_op(std::string_view callee) {
  const OpDef* op = find_op(callee);
  return op && op->is_view();
}

const char* op_pattern_name(OpPattern p) {
  switch (p) {
  case OpPattern::Elementwise:
    return "elementwise";
  case OpPattern::Broadcast:
    return "broadcast";
  case OpPattern::Injective:
    return "injective";
  case OpPattern::Reduction:
    return "reduction";
  case OpPattern::OutputFusable:
    return "output-fusable";
  case OpPattern::Opaque:
    return "opaque";
  }
  return "?";
}

const std::vector<const OpDef*>& all_ops() {
  return registry().ordered;
}

std::optional<BoundArgs> bind_arguments(const OpDef& op, const Call& call,
                                        const std::vector<Type>& arg_types,
                                        const std::vector<Type>& kwarg_types,
                                        DiagnosticEngine& diags) {
  return bind_impl(op, call, arg_types, kwarg_types,
                   [&](SourceLoc loc, std::string msg) -> Diagnostic& {
                     return diags.error(loc, std::move(msg));
                   });
}

std::optional<BoundArgs> bind_arguments(const OpDef& op, const Call& call,
                                        const std::vector<Type>& arg_types,
                                        const std::vector<Type>& kwarg_types, ShapeContext& ctx) {
  return bind_impl(op, call, arg_types, kwarg_types,
                   [&](SourceLoc loc, std::string msg) -> Diagnostic& {
                     return ctx.error(loc, std::move(msg));
                   });
}

// ---------------------------------------------------------------- ShapeContext

namespace {
bool mentions_symbols(const sym::Expr& e) {
  return !sym::free_symbols(e).empty();
}

// "e.g. S=1 gives 2 vs 1" for a pair of dims at a witness; empty when it cannot evaluate.
std::string witness_values(const sym::Bindings& w, const sym::Expr& a, const sym::Expr& b) {
  std::optional<int64_t> va = sym::eval(a, w), vb = sym::eval(b, w);
  std::string vars = format_bindings(w, sym::eq(a, b));
  if (vars.empty()) return "";
  std::string s = "e.g. " + vars;
  if (va && vb) s += " gives " + std::to_string(*va) + " vs " + std::to_string(*vb);
  return s;
}
} // namespace

sym::Verdict ShapeContext::decide(const sym::Expr& predicate, sym::Bindings* witness) {
  sym::ProofResult r = prover_.prove(predicate, facts_);
  if (r.verdict == sym::Verdict::Proved) return sym::Verdict::Proved;
  sym::ProofResult n = prover_.prove(sym::logical_not(predicate), facts_);
  if (n.verdict != sym::Verdict::Proved) return sym::Verdict::Unknown;
  if (witness) *witness = r.verdict == sym::Verdict::Disproved ? r.counterexample : sym::Bindings{};
  return sym::Verdict::Disproved;
}

void ShapeContext::record(const sym::Expr& predicate, SourceLoc loc, const std::string& what,
                          ShapeFact::Origin origin, ShapeFact::Status status) {
  sym::Expr p = sym::simplify(predicate);
  if (const sym::BoolConst* b = p.as<sym::BoolConst>(); b && b->value) return;
  for (const ShapeFact& f : facts_out_)
    if (sym::simplify(f.predicate).same_as(p)) return;
  ShapeFact f;
  f.predicate = p;
  // Inside a callee instantiated for a call, the user's call site is where the check belongs.
  f.loc =
      context_.empty() || !context_.front().first.loc.valid() ? loc : context_.front().first.loc;
  f.origin = origin;
  f.status = status;
  for (const auto& [note, prefix] : context_)
    f.what += prefix;
  f.what += what;
  facts_out_.push_back(std::move(f));
}

bool ShapeContext::require_equal(const sym::Expr& a, const sym::Expr& b, SourceLoc loc,
                                 const std::string& what) {
  sym::Expr ca = sym::simplify(a), cb = sym::simplify(b);
  if (ca.same_as(cb)) return true;
  sym::Bindings w;
  switch (decide(sym::eq(ca, cb), &w)) {
  case sym::Verdict::Proved:
    // Listed for --emit=facts unless the canonical forms alone settle it.
    record(sym::eq(ca, cb), loc, what, ShapeFact::Origin::Op, ShapeFact::Status::Proved);
    return true;
  case sym::Verdict::Disproved: {
    Diagnostic& d =
        error(loc, what + " differ: " + sym::to_string(ca) + " vs " + sym::to_string(cb));
    if (mentions_symbols(ca) || mentions_symbols(cb)) {
      std::string example = witness_values(w, ca, cb);
      d.notes.push_back(
          {loc, "they can never be equal" + (example.empty() ? "" : " (" + example + ")")});
    }
    return false;
  }
  case sym::Verdict::Unknown:
    record(sym::eq(ca, cb), loc, what);
    return true;
  }
  return true;
}

bool ShapeContext::require(const sym::Expr& predicate, SourceLoc loc, const std::string& what) {
  sym::Bindings w;
  switch (decide(predicate, &w)) {
  case sym::Verdict::Proved:
    record(predicate, loc, what, ShapeFact::Origin::Op, ShapeFact::Status::Proved);
    return true;
  case sym::Verdict::Disproved: {
    Diagnostic& d = error(loc, what);
    sym::Expr p = sym::simplify(predicate);
    if (mentions_symbols(p)) {
      std::string vars = format_bindings(w, p);
      d.notes.push_back({loc, "'" + sym::to_string(p) + "' never holds" +
                                  (vars.empty() ? "" : " (e.g. " + vars + ")")});
    }
    return false;
  }
  case sym::Verdict::Unknown:
    record(predicate, loc, what);
    return true;
  }
  return true;
}

bool ShapeContext::proved(const sym::Expr& predicate) {
  return prover_.prove(predicate, facts_).verdict == sym::Verdict::Proved;
}

sym::Expr ShapeContext::fresh_symbol(std::string_view hint) {
  // The hint's letters: `N` gives N0, N1, ...; `_d3` (an anonymous dim) gives d0, not _d30.
  std::string base;
  for (char c : hint)
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') base += c;
  while (!base.empty() && std::isdigit(static_cast<unsigned char>(base.back())))
    base.pop_back();
  while (!base.empty() && base.front() == '_')
    base.erase(base.begin());
  if (base.empty() || std::isdigit(static_cast<unsigned char>(base[0]))) base = "n" + base;
  for (;;) {
    std::string name = base + std::to_string(fresh_counters_[base]++);
    if (reserved_.insert(name).second) return sym::sym(name);
  }
}

sym::Expr ShapeContext::simplify(const sym::Expr& e) {
  return sym::simplify(e, facts_);
}

Diagnostic& ShapeContext::error(SourceLoc loc, std::string message) {
  Diagnostic& d = diags_.error(loc, std::move(message));
  for (auto it = context_.rbegin(); it != context_.rend(); ++it)
    d.notes.push_back(it->first);
  return d;
}

void ShapeContext::push_context(Diagnostic::Note note, std::string prefix) {
  context_.emplace_back(std::move(note), std::move(prefix));
}

void ShapeContext::pop_context() {
  internal_assert(!context_.empty()) << "pop_context without push_context";
  context_.pop_back();
}

// ---------------------------------------------------------------- helpers

SourceLoc argument_loc(const Expr& arg, SourceLoc fallback) {
  if (arg.is<Var>() || !arg->loc.valid()) return fallback;
  return arg->loc;
}

Expr literal_value(const Expr& e) {
  if (e.is<Literal>()) return e;
  const Literal* lit = nullptr;
  if (!is_neg_of_literal(e, &lit)) return Expr();
  if (const int64_t* i = std::get_if<int64_t>(&lit->value)) {
    if (*i == INT64_MIN) return Expr();
    return Literal::make(-*i, e->loc);
  }
  return Literal::make(-std::get<double>(lit->value), e->loc);
}

std::string format_bindings(const sym::Bindings& bindings, const sym::Expr& of) {
  std::set<std::string> wanted;
  if (of.defined()) wanted = sym::free_symbols(of);
  std::ostringstream os;
  const char* sep = "";
  for (const auto& [name, value] : bindings) {
    if (of.defined() && !wanted.count(name)) continue;
    os << sep << name << "=" << value;
    sep = ", ";
  }
  return os.str();
}

sym::Expr substitute(const sym::Expr& e, const std::map<std::string, sym::Expr>& subst) {
  if (subst.empty()) return e;
  switch (e.kind()) {
  case sym::ExprKind::Const:
  case sym::ExprKind::BoolConst:
    return e;
  case sym::ExprKind::Sym: {
    auto it = subst.find(e.as<sym::Sym>()->name);
    return it == subst.end() ? e : it->second;
  }
  case sym::ExprKind::Not: {
    sym::Expr a = substitute(e.as<sym::Not>()->a, subst);
    return a.same_as(e.as<sym::Not>()->a) ? e : sym::Not::make(a);
  }
  default:
    break;
  }
  const auto* n = static_cast<const sym::BinaryNode*>(e.get());
  sym::Expr a = substitute(n->a, subst), b = substitute(n->b, subst);
  if (a.same_as(n->a) && b.same_as(n->b)) return e;
  switch (e.kind()) {
  case sym::ExprKind::Add:
    return sym::Add::make(a, b);
  case sym::ExprKind::Sub:
    return sym::Sub::make(a, b);
  case sym::ExprKind::Mul:
    return sym::Mul::make(a, b);
  case sym::ExprKind::FloorDiv:
    return sym::FloorDiv::make(a, b);
  case sym::ExprKind::FloorMod:
    return sym::FloorMod::make(a, b);
  case sym::ExprKind::Min:
    return sym::Min::make(a, b);
  case sym::ExprKind::Max:
    return sym::Max::make(a, b);
  case sym::ExprKind::EQ:
    return sym::EQ::make(a, b);
  case sym::ExprKind::NE:
    return sym::NE::make(a, b);
  case sym::ExprKind::LT:
    return sym::LT::make(a, b);
  case sym::ExprKind::LE:
    return sym::LE::make(a, b);
  case sym::ExprKind::And:
    return sym::And::make(a, b);
  case sym::ExprKind::Or:
    return sym::Or::make(a, b);
  default:
    internal_error << "substitute: unexpected kind " << sym::kind_name(e.kind());
  }
  return e;
}

Type substitute(const Type& t, const std::map<std::string, sym::Expr>& subst) {
  if (subst.empty()) return t;
  Type out = t;
  for (sym::Expr& d : out.shape)
    d = substitute(d, subst);
  for (Type& f : out.fields)
    f = substitute(f, subst);
  return out;
}

} // namespace dsc::ir
