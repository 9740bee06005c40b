#include "ir/Printer.h"

#include <charconv>
#include <cmath>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "ir/Functor.h"
#include "support/Precedence.h"
#include "symbolic/Eval.h"
#include "symbolic/Printer.h"
#include "symbolic/Simplify.h"

namespace dsc::ir {

namespace {

// Binding strength on the one scale of graph code, prim code and dims (symbolic::precedence()
// gives a dim's).
using enum dsc::precedence::Level;

// The ops that graph code spells as infix operators (ir/Operators.def); their levels come from
// the shared precedence table.
struct InfixOp {
  std::string_view callee;
  const char* text;
};
constexpr InfixOp kInfixOps[] = {
#define DSC_INFIX_OPERATOR(Name, callee, spelling) {callee, spelling},
#define DSC_PREFIX_OPERATOR(Name, callee, spelling)
#include "ir/Operators.def"
};

const InfixOp* infix_op(const Call& call) {
  if (call.args.size() != 2 || !call.kwargs.empty()) return nullptr;
  for (const InfixOp& op : kInfixOps)
    if (op.callee == call.callee) return &op;
  return nullptr;
}

// The ops written as prefix operators, as the parser reads them.
constexpr InfixOp kPrefixOps[] = {
#define DSC_INFIX_OPERATOR(Name, callee, spelling)
#define DSC_PREFIX_OPERATOR(Name, callee, spelling) {callee, spelling},
#include "ir/Operators.def"
};

// `-x` or `!x`, or null.
const char* prefix_op(const Call& call) {
  if (call.args.size() != 1 || !call.kwargs.empty()) return nullptr;
  for (const InfixOp& op : kPrefixOps)
    if (op.callee == call.callee) return op.text;
  return nullptr;
}

// Shortest text that reads back as exactly `v` and always lexes as a float. .dsc has no
// spelling for infinities and NaNs: printing a module that holds one is a bug (`strict`),
// while the single-node to_string used in messages and dumps spells them `inf` and `nan`.
std::string format_float(double v, bool strict) {
  if (!std::isfinite(v)) {
    internal_assert(!strict) << "a non-finite float (" << v << ") cannot be written in .dsc text";
    if (std::isnan(v)) return "nan";
    return v < 0 ? "-inf" : "inf";
  }
  // Shortest round-trip digits; positional notation where it reads naturally (`100000.0`
  // rather than `1e+05`), exponent notation for very large and very small magnitudes.
  double magnitude = std::fabs(v);
  std::chars_format format = magnitude == 0.0 || (magnitude >= 1e-4 && magnitude < 1e16)
                                 ? std::chars_format::fixed
                                 : std::chars_format::scientific;
  char buf[400];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v, format);
  internal_assert(ec == std::errc()) << "to_chars failed";
  std::string s(buf, end);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
  return out;
}

std::string literal_text(const Literal& lit, bool strict) {
  if (const int64_t* i = std::get_if<int64_t>(&lit.value)) return std::to_string(*i);
  if (const double* d = std::get_if<double>(&lit.value)) return format_float(*d, strict);
  return std::get<bool>(lit.value) ? "true" : "false";
}

bool is_nonnegative_number(const Literal& lit) {
  if (const int64_t* i = std::get_if<int64_t>(&lit.value)) return *i >= 0;
  if (const double* d = std::get_if<double>(&lit.value)) return !std::signbit(*d);
  return false;
}


// `_d0`, `_d17`: the symbols the front end makes for `?` dims.
bool is_anonymous_symbol(const symbolic::Expr& e) {
  const symbolic::Sym* s = e.as<symbolic::Sym>();
  if (!s || s->name.size() < 3 || s->name.compare(0, 2, "_d") != 0) return false;
  for (size_t i = 2; i < s->name.size(); ++i)
    if (s->name[i] < '0' || s->name[i] > '9') return false;
  return true;
}

bool is_reserved_word(std::string_view name) {
  static const std::unordered_set<std::string_view> kReserved = {
      "import", "fn",   "prim",  "extern",   "let",       "var",    "return", "if",    "else",
      "for",    "in",   "where", "parallel", "vectorize", "unroll", "alloc",  "local", "shared",
      "global", "true", "false", "carry",    "while",     "tensor", "int",   "float", "str"};
  return kReserved.count(name) != 0 || parse_dtype(name).has_value();
}

// Makes `name` an identifier that is no keyword; the result is only ever used for printing.
std::string sanitize_identifier(const std::string& name) {
  std::string s;
  for (char c : name) {
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    s += ok ? c : '_';
  }
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) s.insert(0, "_");
  if (is_reserved_word(s)) s += '_';
  return s;
}

std::string pad(int indent) {
  return std::string(static_cast<size_t>(indent) * 2, ' ');
}

// Prints types and dims. The front end names the `?` dims of a signature `_d0`, `_d1`, ... in
// the order it reads them, so in a signature an anonymous symbol prints as `?` exactly when it
// is the next name that reading gives out; any other (and any later use) keeps its name, which
// reads back as the same symbol.
class TypePrinter {
public:
  explicit TypePrinter(bool signature) : signature_(signature) {}

  std::string dim(const symbolic::Expr& d) {
    if (signature_ && is_anonymous_symbol(d) &&
        d.as<symbolic::Sym>()->name == "_d" + std::to_string(next_anonymous_) &&
        seen_anonymous_.insert(d.get()).second) {
      ++next_anonymous_;
      return "?";
    }
    return symbolic::to_string(d);
  }

  std::string dims(const std::vector<symbolic::Expr>& ds) {
    std::string s = "[";
    for (size_t i = 0; i < ds.size(); ++i) {
      if (i) s += ", ";
      s += dim(ds[i]);
    }
    return s + "]";
  }

  std::string type(const Type& t) {
    switch (t.kind) {
    case Type::Kind::Tensor:
      return dtype_name(t.dtype) + dims(t.shape);
    case Type::Kind::Tuple: {
      std::string s = "(";
      for (size_t i = 0; i < t.fields.size(); ++i) {
        if (i) s += ", ";
        s += type(t.fields[i]);
      }
      if (t.fields.size() == 1) s += ",";
      return s + ")";
    }
    default:
      return to_string(t);
    }
  }

private:
  bool signature_;
  int next_anonymous_ = 0;
  std::unordered_set<const symbolic::ExprNode*> seen_anonymous_;
};

std::string where_text(const std::vector<WhereClause>& where) {
  std::string s;
  for (size_t i = 0; i < where.size(); ++i) {
    if (i) s += ", ";
    s += symbolic::to_string(where[i].predicate);
  }
  return s;
}

// Wraps the text appended to `out` since `start` in parentheses when it begins with a minus,
// so an operand after an arithmetic operator reads `a - (-1)` rather than `a - -1`, as in
// symbolic/Printer.h.
void parenthesize_leading_minus(std::string& out, size_t start) {
  if (start >= out.size() || out[start] != '-') return;
  out.insert(start, 1, '(');
  out += ')';
}

// ---------------------------------------------------------------- graph level

void collect_symbols(const symbolic::Expr& e, std::unordered_set<std::string>& out) {
  if (!e.defined()) return;
  for (const std::string& name : symbolic::free_symbols(e))
    out.insert(name);
}

void collect_symbols(const Type& t, std::unordered_set<std::string>& out) {
  for (const symbolic::Expr& d : t.shape)
    collect_symbols(d, out);
  for (const Type& f : t.fields)
    collect_symbols(f, out);
}

// The names a let-bound var must not take, because the front end would read them as
// something else: symbols, and the callees of the function's calls.
class ReservedNames : public IRVisitor {
public:
  std::unordered_set<std::string> names;

protected:
  void visit_node(const Call* node) override {
    names.insert(node->callee);
    IRVisitor::visit_node(node);
  }
  void visit_node(const ShapeExpr* node) override {
    for (const symbolic::Expr& d : node->dims)
      collect_symbols(d, names);
  }
  void visit_node(const Block* node) override {
    for (const Binding& b : node->bindings)
      for (const VarRef& v : b.vars)
        collect_symbols(v->type, names);
    IRVisitor::visit_node(node);
  }
  void visit_node(const Loop* node) override {
    names.insert(node->var);
    for (const VarRef& v : node->carries)
      collect_symbols(v->type, names);
    IRVisitor::visit_node(node);
  }
};

class GraphPrinter {
public:
  GraphPrinter(std::string& out, const PrintOptions& options, bool strict)
      : out_(out), options_(options), strict_(strict) {}

  void function(const Function& f) {
    TypePrinter sig(/*signature=*/true);
    out_ += "fn " + f.name + "(";
    for (size_t i = 0; i < f.params.size(); ++i) {
      if (i) out_ += ", ";
      const VarRef& p = f.params[i];
      out_ += name(p.get()) + ": " + sig.type(p->type);
      if (i < f.defaults.size() && f.defaults[i].defined()) {
        out_ += " = ";
        expr(f.defaults[i], kLowest, 0);
      }
    }
    out_ += ")";
    reserve_names(f);
    if (!f.ret_type.is_unknown()) out_ += " -> " + TypePrinter(false).type(f.ret_type);
    if (f.where.empty()) {
      out_ += " {\n";
    } else {
      out_ += "\n  where " + where_text(f.where) + "\n{\n";
    }
    if (const Block* body = f.body.as<Block>()) {
      bindings(*body, 1);
      out_ += pad(1) + "return ";
      expr(body->result, kLowest, 1);
    } else if (f.body.defined()) {
      out_ += pad(1) + "return ";
      expr(f.body, kLowest, 1);
    }
    out_ += "\n}\n";
  }

  // Prints `e`, in parentheses when it binds looser than `min_prec`; `indent` is the level of
  // the line it starts on, for the lines of a multi-line `if`.
  void expr(const Expr& e, int min_prec, int indent) {
    if (!e.defined()) {
      out_ += "<undefined>";
      return;
    }
    if (precedence(e) < min_prec) {
      out_ += "(";
      expr(e, kLowest, indent);
      out_ += ")";
      return;
    }
    switch (e.kind()) {
    case NodeKind::Var:
      out_ += name(e.as<Var>());
      return;
    case NodeKind::Literal:
      out_ += literal_text(*e.as<Literal>(), strict_);
      return;
    case NodeKind::StringImm:
      out_ += quote(e.as<StringImm>()->value);
      return;
    case NodeKind::ShapeExpr:
      out_ += TypePrinter(false).dims(e.as<ShapeExpr>()->dims);
      return;
    case NodeKind::ListExpr:
      out_ += "[";
      list(e.as<ListExpr>()->items, indent);
      out_ += "]";
      return;
    case NodeKind::Call:
      call(*e.as<Call>(), indent);
      return;
    case NodeKind::Tuple: {
      const Tuple* t = e.as<Tuple>();
      out_ += "(";
      list(t->fields, indent);
      if (t->fields.size() == 1) out_ += ",";
      out_ += ")";
      return;
    }
    case NodeKind::GetItem: {
      const GetItem* g = e.as<GetItem>();
      expr(g->tuple, kAtom, indent);
      out_ += "[" + std::to_string(g->index) + "]";
      return;
    }
    case NodeKind::If:
      if_expr(*e.as<If>(), indent);
      return;
    case NodeKind::Loop:
      loop(*e.as<Loop>(), indent);
      return;
    case NodeKind::Block:
      // Only an If's branches and a function's body hold Blocks in printable IR; anything else
      // is printed in the branch form so that dumps stay readable.
      out_ += "{\n";
      block_contents(*e.as<Block>(), indent + 1);
      out_ += pad(indent) + "}";
      return;
    default:
      internal_error << "not a graph expression: " << node_kind_name(e.kind());
    }
  }

  // Assigns printed names: a Var keeps its own name unless another Var already printed with
  // it or the name is reserved, so that the text reads back as distinct variables. `_` (a
  // discarded value) stays `_`.
  const std::string& name(const Var* v) {
    auto it = names_.find(v);
    if (it != names_.end()) return it->second;
    if (is_discard_name(v->name)) return names_.emplace(v, v->name).first->second;
    std::string base = sanitize_identifier(v->name);
    std::string n = base;
    for (int k = 1; used_.count(n); ++k)
      n = base + "_" + std::to_string(k);
    used_.insert(n);
    return names_.emplace(v, std::move(n)).first->second;
  }

private:
  // Parameters keep their names (they are the function's interface); let-bound vars avoid the
  // function's symbols and callees.
  void reserve_names(const Function& f) {
    std::unordered_set<std::string> reserved;
    for (const VarRef& p : f.params)
      collect_symbols(p->type, reserved);
    collect_symbols(f.ret_type, reserved);
    for (const WhereClause& w : f.where)
      collect_symbols(w.predicate, reserved);
    ReservedNames calls;
    calls.visit(f.body);
    reserved.merge(calls.names);
    used_.merge(reserved);
  }

  static int precedence(const Expr& e) {
    switch (e.kind()) {
    case NodeKind::Literal: {
      const Literal* lit = e.as<Literal>();
      bool negative = !std::holds_alternative<bool>(lit->value) && !is_nonnegative_number(*lit);
      return negative ? kUnary : kAtom;
    }
    case NodeKind::Call: {
      const Call* c = e.as<Call>();
      if (const InfixOp* op = infix_op(*c)) return precedence::infix_level(op->text);
      if (prefix_op(*c)) return kUnary;
      return kAtom;
    }
    case NodeKind::If:
    case NodeKind::Loop:
    case NodeKind::Block:
      return kLowest;
    default:
      return kAtom;
    }
  }

  void list(const std::vector<Expr>& items, int indent) {
    for (size_t i = 0; i < items.size(); ++i) {
      if (i) out_ += ", ";
      expr(items[i], kLowest, indent);
    }
  }

  void call(const Call& c, int indent) {
    if (const InfixOp* op = infix_op(c)) {
      // Infix operators associate to the left; comparisons do not nest without parentheses.
      const int prec = precedence::infix_level(op->text);
      expr(c.args[0], prec == kCompare ? prec + 1 : prec, indent);
      out_ += " ";
      out_ += op->text;
      out_ += " ";
      size_t start = out_.size();
      expr(c.args[1], prec + 1, indent);
      if (prec >= kAdditive) parenthesize_leading_minus(out_, start);
      return;
    }
    if (const char* op = prefix_op(c)) {
      out_ += op;
      const Expr& x = c.args[0];
      // `-1` reads back as the literal -1, so neg(1) keeps its parentheses: `-(1)`.
      const Literal* lit = x.as<Literal>();
      if (lit && is_nonnegative_number(*lit)) {
        out_ += "(" + literal_text(*lit, strict_) + ")";
        return;
      }
      size_t start = out_.size();
      expr(x, kUnary, indent);
      parenthesize_leading_minus(out_, start);
      return;
    }
    out_ += c.callee + "(";
    list(c.args, indent);
    for (size_t i = 0; i < c.kwargs.size(); ++i) {
      if (i || !c.args.empty()) out_ += ", ";
      out_ += c.kwargs[i].name + "=";
      expr(c.kwargs[i].value, kLowest, indent);
    }
    out_ += ")";
  }

  static bool is_simple_branch(const Expr& branch) {
    const Block* b = branch.as<Block>();
    return b && b->bindings.empty() && !b->result.is<If>() && !b->result.is<Block>();
  }

  void if_expr(const If& node, int indent) {
    out_ += "if ";
    if (node.guard.defined())
      out_ += "shape(" + symbolic::to_string(node.guard) + ")";
    else
      expr(node.cond, kLowest, indent);
    if (is_simple_branch(node.then_branch) && is_simple_branch(node.else_branch)) {
      out_ += " { ";
      expr(node.then_branch.as<Block>()->result, kLowest, indent);
      out_ += " } else { ";
      expr(node.else_branch.as<Block>()->result, kLowest, indent);
      out_ += " }";
      return;
    }
    out_ += " {\n";
    branch(node.then_branch, indent + 1);
    out_ += pad(indent) + "} else ";
    // `else if`: the front end reads it as an else block holding just the inner if.
    const Block* else_block = node.else_branch.as<Block>();
    if (else_block && else_block->bindings.empty() && else_block->result.is<If>()) {
      if_expr(*else_block->result.as<If>(), indent);
      return;
    }
    out_ += "{\n";
    branch(node.else_branch, indent + 1);
    out_ += pad(indent) + "}";
  }

  // `for i in 0..N carry (h = x, c: f32[T + i] = c0) while cond {` then the body.
  void loop(const Loop& node, int indent) {
    out_ += "for " + node.var + " in " + symbolic::to_string(node.lo) + "..";
    const ShapeExpr* extent = node.hi.as<ShapeExpr>();
    if (extent && extent->dims.size() == 1) {
      out_ += symbolic::to_string(extent->dims[0]);
    } else {
      expr(node.hi, kAtom, indent);
    }
    if (node.bound.defined()) out_ += " where " + node.var + " < " + symbolic::to_string(node.bound);
    out_ += " carry (";
    for (size_t i = 0; i < node.carries.size(); ++i) {
      if (i) out_ += ", ";
      out_ += name(node.carries[i].get());
      if (node.declared[i]) out_ += ": " + TypePrinter(false).type(node.carries[i]->type);
      out_ += " = ";
      expr(node.inits[i], kLowest, indent);
    }
    out_ += ")";
    if (const Block* cond = node.cond.as<Block>()) {
      out_ += " while ";
      if (is_simple_branch(node.cond)) {
        expr(cond->result, kLowest, indent);
      } else {
        out_ += "{\n";
        branch(node.cond, indent + 1);
        out_ += pad(indent) + "}";
      }
    }
    out_ += " {\n";
    branch(node.body, indent + 1);
    out_ += pad(indent) + "}";
  }

  void branch(const Expr& b, int indent) {
    if (const Block* block = b.as<Block>()) {
      block_contents(*block, indent);
      return;
    }
    out_ += pad(indent);
    expr(b, kLowest, indent);
    out_ += "\n";
  }

  void block_contents(const Block& b, int indent) {
    size_t last_value_end = bindings(b, indent);
    out_ += pad(indent);
    size_t start = out_.size();
    expr(b.result, kLowest, indent);
    // A result that begins with `(`, `[` or `-` would continue the last let's value (as a
    // call, an index or a subtraction); a `;` ends that value.
    if (last_value_end != std::string::npos && start < out_.size() &&
        (out_[start] == '(' || out_[start] == '[' || out_[start] == '-'))
      out_.insert(last_value_end, ";");
    out_ += "\n";
  }

  // Prints the let lines; returns where the last value's text ends (npos when there are none).
  size_t bindings(const Block& b, int indent) {
    size_t last_value_end = std::string::npos;
    for (const Binding& binding : b.bindings) {
      out_ += pad(indent) + "let ";
      bool all_typed = true;
      for (size_t i = 0; i < binding.vars.size(); ++i) {
        if (i) out_ += ", ";
        out_ += name(binding.vars[i].get());
        all_typed = all_typed && !binding.vars[i]->type.is_unknown();
      }
      if (binding.has_asserted_type) out_ += ": " + TypePrinter(false).type(binding.vars[0]->type);
      out_ += " = ";
      expr(binding.value, kLowest, indent);
      last_value_end = out_.size();
      if (options_.show_inferred_types && !binding.has_asserted_type && all_typed) {
        out_ += "  # ";
        for (size_t i = 0; i < binding.vars.size(); ++i) {
          if (i) out_ += ", ";
          out_ += to_string(binding.vars[i]->type);
        }
      }
      out_ += "\n";
    }
    return last_value_end;
  }

  std::string& out_;
  const PrintOptions& options_;
  bool strict_;
  std::unordered_map<const Var*, std::string> names_;
  std::unordered_set<std::string> used_;
};

// ---------------------------------------------------------------- prim level

// By the operator's spelling; min and max print as calls, which are atoms.
int binary_precedence(BinaryOp op) {
  return precedence::infix_level(binary_op_name(op));
}

class PrimPrinter {
public:
  PrimPrinter(std::string& out, bool strict) : out_(out), strict_(strict) {}

  void prim(const PrimFunc& p) {
    TypePrinter sig(/*signature=*/true);
    if (!p.variant_of.empty()) out_ += "# a shape-bucket variant of " + p.variant_of + "\n";
    out_ += "prim " + p.name + "(";
    buffers(p.inputs, sig);
    out_ += ") -> (";
    buffers(p.outputs, sig);
    out_ += ")";
    if (p.where.empty()) {
      out_ += " {\n";
    } else {
      out_ += "\n  where " + where_text(p.where) + "\n{\n";
    }
    if (p.body.defined()) stmt(p.body, 1);
    out_ += "}\n";
  }

  void expr(const PrimExpr& e, int min_prec) {
    if (!e.defined()) {
      out_ += "<undefined>";
      return;
    }
    if (precedence(e) < min_prec) {
      out_ += "(";
      expr(e, kLowest);
      out_ += ")";
      return;
    }
    switch (e.kind()) {
    case NodeKind::IntImm: {
      const IntImm* imm = e.as<IntImm>();
      if (imm->dtype == DType::Bool) {
        out_ += imm->value ? "true" : "false";
      } else {
        out_ += std::to_string(imm->value);
      }
      return;
    }
    case NodeKind::FloatImm:
      out_ += format_float(e.as<FloatImm>()->value, strict_);
      return;
    case NodeKind::Index:
      out_ += symbolic::to_string(e.as<Index>()->value);
      return;
    case NodeKind::Load: {
      const Load* load = e.as<Load>();
      out_ += load->buffer;
      indices(load->indices);
      return;
    }
    case NodeKind::LocalRef:
      out_ += e.as<LocalRef>()->name;
      return;
    case NodeKind::PrimBinary:
      binary(*e.as<PrimBinary>());
      return;
    case NodeKind::Intrinsic: {
      const Intrinsic* in = e.as<Intrinsic>();
      if (const char* op = prefix_intrinsic(*in)) {
        prefix(op, in->args[0]);
        return;
      }
      out_ += in->name + "(";
      for (size_t i = 0; i < in->args.size(); ++i) {
        if (i) out_ += ", ";
        expr(in->args[i], kLowest);
      }
      out_ += ")";
      return;
    }
    case NodeKind::Cast: {
      const Cast* c = e.as<Cast>();
      out_ += "cast(";
      expr(c->value, kLowest);
      out_ += ", " + quote(dtype_name(c->dtype)) + ")";
      return;
    }
    default:
      internal_error << "not a prim expression: " << node_kind_name(e.kind());
    }
  }

  void stmt(const Stmt& s, int indent) {
    if (!s.defined()) return;
    switch (s.kind()) {
    case NodeKind::For: {
      const For* f = s.as<For>();
      out_ += pad(indent);
      if (f->for_kind != ForKind::Serial) out_ += std::string(for_kind_name(f->for_kind)) + " ";
      symbolic::Expr end = symbolic::simplify(f->min + f->extent);
      out_ += "for " + f->var + " in " + symbolic::to_string(f->min) + ".." +
              symbolic::to_string(end) + " {\n";
      stmt(f->body, indent + 1);
      out_ += pad(indent) + "}\n";
      return;
    }
    case NodeKind::Store: {
      const Store* st = s.as<Store>();
      out_ += pad(indent) + st->buffer;
      indices(st->indices);
      out_ += " = ";
      expr(st->value, kLowest);
      out_ += "\n";
      return;
    }
    case NodeKind::LocalDecl: {
      const LocalDecl* d = s.as<LocalDecl>();
      out_ += pad(indent) + (d->is_mutable ? "var " : "let ") + d->name + ": " +
              dtype_name(d->dtype) + " = ";
      expr(d->init, kLowest);
      out_ += "\n";
      return;
    }
    case NodeKind::Assign: {
      const Assign* a = s.as<Assign>();
      out_ += pad(indent) + a->name + " = ";
      expr(a->value, kLowest);
      out_ += "\n";
      return;
    }
    case NodeKind::IfStmt: {
      const IfStmt* i = s.as<IfStmt>();
      out_ += pad(indent);
      if_stmt(*i, indent);
      out_ += "\n";
      return;
    }
    case NodeKind::Alloc: {
      const Alloc* a = s.as<Alloc>();
      out_ += pad(indent) + "alloc " + a->name + ": " + dtype_name(a->dtype) +
              TypePrinter(false).dims(a->shape) + " " + memory_scope_name(a->scope) + "\n";
      return;
    }
    case NodeKind::Seq:
      // The text has no nested blocks: a nested Seq reads back flattened into its parent.
      for (const Stmt& child : s.as<Seq>()->stmts)
        stmt(child, indent);
      return;
    case NodeKind::Evaluate:
      out_ += pad(indent);
      expr(s.as<Evaluate>()->value, kLowest);
      out_ += "\n";
      return;
    default:
      internal_error << "not a statement: " << node_kind_name(s.kind());
    }
  }

private:
  static int precedence(const PrimExpr& e) {
    switch (e.kind()) {
    case NodeKind::IntImm:
      return e.as<IntImm>()->value < 0 && e->dtype != DType::Bool ? kUnary : kAtom;
    case NodeKind::Intrinsic:
      return prefix_intrinsic(*e.as<Intrinsic>()) ? kUnary : kAtom;
    case NodeKind::FloatImm:
      return std::signbit(e.as<FloatImm>()->value) ? kUnary : kAtom;
    case NodeKind::Index:
      return symbolic::precedence(e.as<Index>()->value);
    case NodeKind::PrimBinary:
      return binary_precedence(e.as<PrimBinary>()->op);
    default:
      return kAtom;
    }
  }

  // `-x` and `!x` for the neg and logical_not intrinsics, as the front end reads them.
  static const char* prefix_intrinsic(const Intrinsic& in) {
    if (in.args.size() != 1) return nullptr;
    for (const InfixOp& op : kPrefixOps) // the intrinsics are named as the graph ops
      if (op.callee == in.name) return op.text;
    return nullptr;
  }

  void prefix(const char* op, const PrimExpr& x) {
    out_ += op;
    // A literal right after `-` reads back as a negative literal, so neg(1.0) is `-(1.0)`.
    bool literal = (x.is<IntImm>() && x->dtype != DType::Bool) || x.is<FloatImm>() ||
                   (x.is<Index>() && x.as<Index>()->value.is<symbolic::Const>());
    if (literal && precedence(x) == kAtom) {
      out_ += "(";
      expr(x, kLowest);
      out_ += ")";
      return;
    }
    size_t start = out_.size();
    expr(x, kUnary);
    parenthesize_leading_minus(out_, start);
  }

  // `if c { ... } else if d { ... } else { ... }`, without the leading indent or final newline.
  void if_stmt(const IfStmt& i, int indent) {
    out_ += "if ";
    expr(i.cond, kLowest);
    out_ += " {\n";
    stmt(i.then_body, indent + 1);
    out_ += pad(indent) + "}";
    if (!i.else_body.defined()) return;
    const Stmt* else_body = &i.else_body;
    if (const Seq* seq = else_body->as<Seq>(); seq && seq->stmts.size() == 1)
      else_body = &seq->stmts[0];
    if (const IfStmt* chained = else_body->as<IfStmt>()) {
      out_ += " else ";
      if_stmt(*chained, indent);
      return;
    }
    out_ += " else {\n";
    stmt(i.else_body, indent + 1);
    out_ += pad(indent) + "}";
  }

  void binary(const PrimBinary& b) {
    if (b.op == BinaryOp::Min || b.op == BinaryOp::Max) {
      out_ += binary_op_name(b.op);
      out_ += "(";
      expr(b.a, kLowest);
      out_ += ", ";
      expr(b.b, kLowest);
      out_ += ")";
      return;
    }
    int prec = binary_precedence(b.op);
    expr(b.a, prec == kCompare ? prec + 1 : prec);
    out_ += " ";
    out_ += binary_op_name(b.op);
    out_ += " ";
    size_t start = out_.size();
    expr(b.b, prec + 1);
    if (prec >= kAdditive) parenthesize_leading_minus(out_, start);
  }

  void indices(const std::vector<PrimExpr>& idx) {
    out_ += "[";
    for (size_t i = 0; i < idx.size(); ++i) {
      if (i) out_ += ", ";
      expr(idx[i], kLowest);
    }
    out_ += "]";
  }

  void buffers(const std::vector<Buffer>& bufs, TypePrinter& sig) {
    for (size_t i = 0; i < bufs.size(); ++i) {
      if (i) out_ += ", ";
      out_ += bufs[i].name + ": " + dtype_name(bufs[i].dtype) + sig.dims(bufs[i].shape);
    }
  }

  std::string& out_;
  bool strict_;
};

// `(stride = [2, 2], padding = [1, 1])`, or nothing when there are none.
std::string routine_attributes_text(const std::vector<RoutineAttribute>& attributes) {
  if (attributes.empty()) return "";
  std::string out = "(";
  for (size_t i = 0; i < attributes.size(); ++i) {
    if (i) out += ", ";
    out += attributes[i].name + " = [";
    for (size_t k = 0; k < attributes[i].values.size(); ++k)
      out += (k ? ", " : "") + std::to_string(attributes[i].values[k]);
    out += "]";
  }
  return out + ")";
}

void print_extern_to(std::string& out, const ExternFunc& e) {
  TypePrinter sig(/*signature=*/true);
  PrintOptions options;
  GraphPrinter names(out, options, /*strict=*/true);
  out += "extern fn " + e.name + "(";
  for (size_t i = 0; i < e.params.size(); ++i) {
    if (i) out += ", ";
    out += names.name(e.params[i].get()) + ": " + sig.type(e.params[i]->type);
    if (i < e.views.size() && e.views[i]) out += " " + view_text(*e.views[i]);
  }
  out += ")";
  if (!e.ret_type.is_unknown()) out += " -> " + TypePrinter(false).type(e.ret_type);
  if (e.result_view) out += " " + view_text(*e.result_view);
  std::string binding = quote(e.symbol) + routine_attributes_text(e.attributes);
  if (!e.epilogue.empty()) binding += " epilogue " + e.epilogue;
  if (!e.epilogue_first_row.empty()) binding += " first_row " + e.epilogue_first_row;
  if (e.where.empty()) {
    out += " = " + binding + "\n";
  } else {
    out += "\n  where " + where_text(e.where) + "\n  = " + binding + "\n";
  }
}

std::string strip_trailing_newline(std::string s) {
  if (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

} // namespace

std::string print_module(const Module& m, const PrintOptions& options) {
  std::string out;
  for (const Import& i : m.imports)
    out += "import " + i.name + "\n";
  for (size_t i = 0; i < m.decls.size(); ++i) {
    if (i || !m.imports.empty()) out += "\n";
    const Module::Decl& d = m.decls[i];
    if (d.fn) {
      GraphPrinter(out, options, /*strict=*/true).function(*d.fn);
    } else if (d.prim) {
      PrimPrinter(out, /*strict=*/true).prim(*d.prim);
    } else if (d.ext) {
      print_extern_to(out, *d.ext);
    }
  }
  return out;
}

std::string print_function(const Function& f, const PrintOptions& options) {
  std::string out;
  GraphPrinter(out, options, /*strict=*/true).function(f);
  return out;
}

std::string print_prim(const PrimFunc& p) {
  std::string out;
  PrimPrinter(out, /*strict=*/true).prim(p);
  return out;
}

std::string print_extern(const ExternFunc& e) {
  std::string out;
  print_extern_to(out, e);
  return out;
}

std::string to_string(const Expr& e) {
  std::string out;
  PrintOptions options;
  GraphPrinter(out, options, /*strict=*/false).expr(e, kLowest, 0);
  return out;
}

std::string to_string(const PrimExpr& e) {
  std::string out;
  PrimPrinter(out, /*strict=*/false).expr(e, kLowest);
  return out;
}

std::string to_string(const Stmt& s) {
  std::string out;
  PrimPrinter(out, /*strict=*/false).stmt(s, 0);
  return strip_trailing_newline(std::move(out));
}

} // namespace dsc::ir
