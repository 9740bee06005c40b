#include "passes/legalize/LoopBuilder.h"

#include "ir/Functor.h"
#include "ir/Intrinsics.h"
#include "ir/OpRegistry.h"
#include "symbolic/Eval.h"
#include "symbolic/Simplify.h"

namespace dsc::passes::lowering {

namespace {

// Words of the language and scalar functions other than the intrinsics: never names in a
// generated prim.
const char* const kWords[] = {
    "import", "fn",    "prim",   "extern", "let",   "var",      "return",    "if",
    "else",   "for",   "in",     "where",  "parallel", "vectorize", "unroll", "alloc",
    "local",  "shared", "global", "true",  "false", "bool",     "i8",        "i32",
    "i64",    "f16",   "bf16",   "f32",    "f64",   "tensor",   "int",       "float",
    "str",    "min",   "max",    "cast"};

bool ends_with_digit(std::string_view s) {
  return !s.empty() && s.back() >= '0' && s.back() <= '9';
}

class SymbolUse : public ir::IRVisitor {
public:
  std::set<std::string> symbols;
  std::set<std::string> loop_vars;

  void add(const sym::Expr& e) {
    if (!e.defined()) return;
    for (const std::string& s : sym::free_symbols(e))
      symbols.insert(s);
  }

protected:
  void visit_node(const ir::Index* node) override { add(node->value); }
  void visit_node(const ir::For* node) override {
    loop_vars.insert(node->var);
    add(node->min);
    add(node->extent);
    ir::IRVisitor::visit_node(node);
  }
  void visit_node(const ir::Alloc* node) override {
    for (const sym::Expr& d : node->shape)
      add(d);
    ir::IRVisitor::visit_node(node);
  }
};

} // namespace

std::set<std::string> used_symbols(const Stmt& s) {
  SymbolUse use;
  use.visit(s);
  std::set<std::string> out;
  for (const std::string& n : use.symbols)
    if (!use.loop_vars.count(n)) out.insert(n);
  return out;
}

NameSet::NameSet(const std::set<std::string>& reserved) : taken_(reserved) {
  for (const char* w : kWords)
    taken_.insert(w);
  for (const ir::IntrinsicDef& fn : ir::all_intrinsics())
    taken_.insert(fn.name);
}

std::string NameSet::fresh(std::string_view hint, bool numbered) {
  std::string base(hint);
  // `x` then `x0`: a hint ending in a digit gets a separator so that numbers do not run on.
  if (!numbered && taken_.insert(base).second) return base;
  if (ends_with_digit(base)) base += "_";
  for (int n = 0;; ++n) {
    std::string name = base + std::to_string(n);
    if (taken_.insert(name).second) return name;
  }
}

PrimBuilder::PrimBuilder(FnContext& ctx, std::string_view op)
    : ctx_(ctx), op_(op), names_(ctx.symbols()) {}

Operand PrimBuilder::input(const ir::Expr& arg, std::string_view hint) {
  Operand o;
  ir::Expr literal = ir::literal_value(arg); // also `-(2.0)`
  if (const ir::Literal* lit = literal.as<ir::Literal>()) {
    o.value = lit->value;
    o.dtype = lit->type.is_tensor() ? lit->type.dtype : DType::F32;
    return o;
  }
  internal_assert(arg->type.is_tensor()) << "legalize: a non-tensor operand of " << op_;
  auto it = input_of_.find(arg.get());
  if (it != input_of_.end()) {
    const ir::Buffer& b = inputs_[it->second];
    o.buffer = b.name;
    o.dtype = b.dtype;
    o.shape = b.shape;
    return o;
  }
  ir::Buffer b{names_.fresh(hint), arg->type.dtype, arg->type.shape, {}};
  for (sym::Expr& d : b.shape)
    d = sym::simplify(d);
  input_of_[arg.get()] = inputs_.size();
  inputs_.push_back(b);
  args_.push_back(arg);
  o.buffer = b.name;
  o.dtype = b.dtype;
  o.shape = b.shape;
  return o;
}

Operand PrimBuilder::output(const ir::Type& type, std::string_view hint) {
  internal_assert(type.is_tensor()) << "legalize: a non-tensor result of " << op_;
  ir::Buffer b{names_.fresh(hint), type.dtype, type.shape, {}};
  for (sym::Expr& d : b.shape)
    d = sym::simplify(d);
  outputs_.push_back(b);
  Operand o;
  o.buffer = b.name;
  o.dtype = b.dtype;
  o.shape = b.shape;
  return o;
}

sym::Expr PrimBuilder::loop_var(std::string_view hint) {
  return sym::sym(names_.fresh(hint, /*numbered=*/true));
}

std::string PrimBuilder::local_name(std::string_view hint) {
  return names_.fresh(hint);
}

Stmt PrimBuilder::loops(const std::vector<sym::Expr>& extents,
                        const std::function<Stmt(const Indices&)>& body, std::string_view hint) {
  // A dim of extent 1 needs no loop: its index is 0.
  Indices vars;
  std::vector<bool> looped;
  for (const sym::Expr& e : extents) {
    sym::Expr extent = sym::simplify(e);
    const sym::Const* c = extent.as<sym::Const>();
    looped.push_back(!(c && c->value == 1));
    vars.push_back(looped.back() ? loop_var(hint) : sym::Expr(0));
  }
  Stmt s = body(vars);
  for (size_t i = extents.size(); i-- > 0;) {
    if (!looped[i]) continue;
    s = ir::For::make(vars[i].as<sym::Sym>()->name, sym::Expr(0), sym::simplify(extents[i]),
                      ir::ForKind::Serial, s);
  }
  return s;
}

PrimExpr PrimBuilder::load(const Operand& x, const Indices& idx) {
  internal_assert(!x.immediate()) << "legalize: load of an immediate";
  internal_assert(idx.size() == x.rank())
      << "legalize: " << idx.size() << " indices for rank " << x.rank() << " buffer " << x.buffer;
  std::vector<PrimExpr> is;
  for (const sym::Expr& i : idx)
    is.push_back(index(i));
  return ir::Load::make(x.dtype, x.buffer, std::move(is));
}

PrimExpr PrimBuilder::read(const Operand& x, const Indices& idx, DType op_dtype) {
  if (x.immediate()) return immediate(x.value, op_dtype);
  PrimExpr v = load(x, idx);
  if (v->dtype != op_dtype) v = convert(v, op_dtype);
  return widen(v);
}

Stmt PrimBuilder::write(const Operand& out, const Indices& idx, PrimExpr value) {
  internal_assert(idx.size() == out.rank()) << "legalize: bad store into " << out.buffer;
  if (value->dtype != out.dtype) value = convert(value, out.dtype);
  std::vector<PrimExpr> is;
  for (const sym::Expr& i : idx)
    is.push_back(index(i));
  return ir::Store::make(out.buffer, std::move(is), value);
}

Stmt PrimBuilder::let(std::string_view hint, PrimExpr value, PrimExpr* ref) {
  std::string name = local_name(hint);
  DType d = value->dtype;
  *ref = ir::LocalRef::make(d, name);
  return ir::LocalDecl::make(name, d, false, std::move(value));
}

Stmt PrimBuilder::var(std::string_view hint, PrimExpr init, std::string* name) {
  *name = local_name(hint);
  DType d = init->dtype;
  return ir::LocalDecl::make(*name, d, true, std::move(init));
}

PrimBuilder::Indices PrimBuilder::broadcast_indices(const Operand& x, const Indices& out_idx) {
  Indices idx;
  if (x.immediate()) return idx;
  size_t off = out_idx.size() - x.rank();
  for (size_t i = 0; i < x.rank(); ++i)
    idx.push_back(ctx_.is_one(x.shape[i]) ? sym::Expr(0) : out_idx[off + i]);
  return idx;
}

ir::Expr PrimBuilder::finish(Stmt body, const ir::Type& type) {
  // Every symbol the prim's body uses must appear in a dim of one of its buffers, so that it
  // is part of the prim's signature (ir::prim_signature_symbols) and the printed prim binds it.
  std::set<std::string> used = used_symbols(body), in_dims;
  for (const std::vector<ir::Buffer>* bufs : {&inputs_, &outputs_})
    for (const ir::Buffer& b : *bufs)
      for (const sym::Expr& d : b.shape)
        for (const std::string& s : sym::free_symbols(d)) in_dims.insert(s);
  std::set<std::string> missing;
  for (const std::string& s : used)
    if (!in_dims.count(s)) missing.insert(s);
  if (!missing.empty()) {
    // Symbols in no buffer's dims (a slice's symbolic start): an extra zero-byte input,
    // i8[0, P], names them.
    ir::Expr carrier = ctx_.symbol_carrier(missing);
    ir::Buffer b{names_.fresh("symbols"), carrier->type.dtype, carrier->type.shape, {}};
    inputs_.push_back(b);
    args_.push_back(carrier);
  }
  auto* p = new ir::PrimFunc();
  p->name = ctx_.new_decl_name(op_);
  p->inputs = inputs_;
  p->outputs = outputs_;
  p->body = body.is<ir::Seq>() ? body : ir::Seq::make({body});
  p->loc = ctx_.loc();
  ctx_.add_prim(Ref<ir::PrimFunc>(p));
  return ir::Call::make(p->name, args_, {}, type, ctx_.loc());
}

} // namespace dsc::passes::lowering
