#include "passes/legalize/DescBuilder.h"

#include "ir/OpRegistry.h"
#include "symbolic/Simplify.h"

namespace dsc::passes::lowering {

DescBuilder::DescBuilder(FnContext& ctx, std::string_view op)
    : ctx_(ctx), desc_(NameSet(ctx.symbols())) {
  desc_.op = std::string(op);
}

Operand DescBuilder::input(const ir::Expr& arg, std::string_view hint) {
  Operand o;
  ir::Expr literal = ir::literal_value(arg); // also `-(2.0)`
  if (const ir::Literal* lit = literal.as<ir::Literal>()) {
    o.value = lit->value;
    o.dtype = lit->type.is_tensor() ? lit->type.dtype : DType::F32;
    return o;
  }
  internal_assert(arg->type.is_tensor()) << "legalize: a non-tensor operand of " << desc_.op;
  auto it = input_of_.find(arg.get());
  if (it == input_of_.end()) {
    ir::Buffer b{desc_.names.fresh(hint), arg->type.dtype, arg->type.shape, {}};
    for (sym::Expr& d : b.shape)
      d = sym::simplify(d);
    it = input_of_.emplace(arg.get(), desc_.inputs.size()).first;
    desc_.inputs.push_back(ComputeDesc::Input{b, arg});
  }
  const ir::Buffer& b = desc_.inputs[it->second].buffer;
  o.buffer = b.name;
  o.dtype = b.dtype;
  o.shape = b.shape;
  return o;
}

Operand DescBuilder::output(const ir::Type& type, std::string_view hint) {
  internal_assert(type.is_tensor()) << "legalize: a non-tensor result of " << desc_.op;
  ir::Buffer b{desc_.names.fresh(hint), type.dtype, type.shape, {}};
  for (sym::Expr& d : b.shape)
    d = sym::simplify(d);
  desc_.outputs.push_back(b);
  Operand o;
  o.buffer = b.name;
  o.dtype = b.dtype;
  o.shape = b.shape;
  return o;
}

IndexSpace DescBuilder::space(const std::vector<sym::Expr>& extents, std::string_view hint) {
  IndexSpace s;
  for (const sym::Expr& e : extents) {
    sym::Expr extent = sym::simplify(e);
    const sym::Const* c = extent.as<sym::Const>();
    bool looped = !(c && c->value == 1);
    s.extents.push_back(extent);
    s.vars.push_back(looped ? sym::sym(desc_.names.fresh(hint, /*numbered=*/true)) : sym::Expr(0));
  }
  return s;
}

std::string DescBuilder::local_name(std::string_view hint) {
  return desc_.names.fresh(hint);
}

PrimExpr DescBuilder::load(const Operand& x, const Indices& idx) {
  internal_assert(!x.immediate()) << "legalize: load of an immediate";
  internal_assert(idx.size() == x.rank())
      << "legalize: " << idx.size() << " indices for rank " << x.rank() << " buffer " << x.buffer;
  std::vector<PrimExpr> is;
  for (const sym::Expr& i : idx)
    is.push_back(index(i));
  return ir::Load::make(x.dtype, x.buffer, std::move(is));
}

PrimExpr DescBuilder::read(const Operand& x, const Indices& idx, DType op_dtype) {
  if (x.immediate()) return immediate(x.value, op_dtype);
  PrimExpr v = load(x, idx);
  if (v->dtype != op_dtype) v = convert(v, op_dtype);
  return widen(v);
}

PrimExpr DescBuilder::let(Element& e, std::string_view hint, PrimExpr value) {
  std::string name = local_name(hint);
  PrimExpr ref = ir::LocalRef::make(value->dtype, name);
  e.lets.push_back(LocalLet{name, std::move(value)});
  return ref;
}

Indices DescBuilder::broadcast_indices(const Operand& x, const Indices& out_idx) {
  Indices idx;
  if (x.immediate()) return idx;
  size_t off = out_idx.size() - x.rank();
  for (size_t i = 0; i < x.rank(); ++i)
    idx.push_back(ctx_.is_one(x.shape[i]) ? sym::Expr(0) : out_idx[off + i]);
  return idx;
}

ComputeDesc DescBuilder::map(std::vector<MapOutput> maps, const ir::Type& type) {
  internal_assert(maps.size() == desc_.outputs.size()) << "legalize: one map per output";
  desc_.kind = ComputeDesc::Kind::Map;
  desc_.type = type;
  desc_.maps = std::move(maps);
  return std::move(desc_);
}

ComputeDesc DescBuilder::reduce(Reduction reduction, const ir::Type& type) {
  desc_.kind = ComputeDesc::Kind::Reduce;
  desc_.type = type;
  desc_.reduction = std::move(reduction);
  return std::move(desc_);
}

ComputeDesc DescBuilder::stitch(Stitch stitch, const ir::Type& type) {
  desc_.kind = ComputeDesc::Kind::Stitch;
  desc_.type = type;
  desc_.stitch = std::move(stitch);
  return std::move(desc_);
}

} // namespace dsc::passes::lowering
