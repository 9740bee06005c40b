#include "passes/legalize/ElementRewrite.h"

#include "ir/Functor.h"
#include "ir/OpRegistry.h"
#include "passes/legalize/Scalar.h"
#include "symbolic/Simplify.h"

namespace dsc::passes::lowering {

namespace sym = symbolic;

namespace {

class Rewriter : public ir::IRMutator {
public:
  explicit Rewriter(const ElementRewrite& rw) : rw_(rw) {}

protected:
  ir::PrimExpr mutate_node(const ir::Index* node, const ir::PrimExpr& self) override {
    if (rw_.indices.empty()) return self;
    sym::Expr v = sym::simplify(ir::substitute(node->value, rw_.indices));
    if (v.same_as(node->value)) return self;
    return ir::Index::make(v, node->loc);
  }
  ir::PrimExpr mutate_node(const ir::Load* node, const ir::PrimExpr& self) override {
    ir::PrimExpr e = ir::IRMutator::mutate_node(node, self);
    const ir::Load* load = e.as<ir::Load>();
    if (rw_.on_load) {
      ir::PrimExpr replaced = rw_.on_load(*load);
      if (replaced.defined()) return replaced;
    }
    auto it = rw_.buffers.find(load->buffer);
    if (it == rw_.buffers.end()) return e;
    return ir::Load::make(load->dtype, it->second, load->indices, load->loc);
  }
  // A widening of a handoff's rounding back to the value's own dtype is the value.
  ir::PrimExpr mutate_node(const ir::Cast* node, const ir::PrimExpr& self) override {
    ir::PrimExpr e = ir::IRMutator::mutate_node(node, self);
    const ir::Cast* cast = e.as<ir::Cast>();
    const ir::Cast* inner = cast ? cast->value.as<ir::Cast>() : nullptr;
    if (inner && rw_.handoffs.count(inner) && inner->value->dtype == cast->dtype)
      return inner->value;
    return e;
  }
  ir::PrimExpr mutate_node(const ir::LocalRef* node, const ir::PrimExpr& self) override {
    auto it = rw_.locals.find(node->name);
    if (it == rw_.locals.end()) return self;
    return ir::LocalRef::make(node->dtype, it->second, node->loc);
  }

private:
  const ElementRewrite& rw_;
};

} // namespace

ir::PrimExpr ElementRewrite::handoff(ir::PrimExpr value, ir::DType stored) {
  if (value->dtype == stored) return value;
  ir::PrimExpr rounded = convert(value, stored);
  if (const ir::Cast* cast = rounded.as<ir::Cast>();
      cast && (stored == ir::DType::F16 || stored == ir::DType::BF16) &&
      cast->value.same_as(value))
    handoffs.insert(cast);
  return rounded;
}

ir::PrimExpr ElementRewrite::apply(const ir::PrimExpr& e) const {
  if (!e.defined()) return e;
  return Rewriter(*this).mutate(e);
}

std::string ElementRewrite::local(const std::string& name) const {
  auto it = locals.find(name);
  return it == locals.end() ? name : it->second;
}

Element ElementRewrite::apply(const Element& e) const {
  Element out;
  for (const LocalLet& l : e.lets)
    out.lets.push_back(LocalLet{local(l.name), apply(l.value)});
  out.value = apply(e.value);
  return out;
}

IndexSpace ElementRewrite::apply(const IndexSpace& space) const {
  IndexSpace out = space;
  for (sym::Expr& v : out.vars)
    if (const sym::Sym* s = v.as<sym::Sym>()) {
      auto it = indices.find(s->name);
      if (it != indices.end()) v = it->second;
    }
  return out;
}

void ElementRewrite::apply_to(MapOutput& m) const {
  m.space = apply(m.space);
  m.element = apply(m.element);
}

void ElementRewrite::apply_to(Reduction& r) const {
  r.space = apply(r.space);
  r.reduced = apply(r.reduced);
  r.identity = apply(r.identity);
  r.body = apply(r.body);
  r.condition = apply(r.condition);
  r.accumulator = local(r.accumulator);
  r.finish = apply(r.finish);
}

void ElementRewrite::apply_to(Stage& s) const {
  apply_to(s.reduction);
  s.space = apply(s.space);
  s.element = apply(s.element);
  s.local = local(s.local);
}

void rewrite_desc(ComputeDesc& d, const ElementRewrite& rw) {
  for (MapOutput& m : d.maps)
    rw.apply_to(m);
  if (d.kind == ComputeDesc::Kind::Reduce) rw.apply_to(d.reduction);
  d.stitch.rows = rw.apply(d.stitch.rows);
  for (Stage& s : d.stitch.stages)
    rw.apply_to(s);
}

namespace {

// Every load in the scalar parts of the maps, the reduction and the stages given.
void visit_loads(const std::vector<MapOutput>& maps, const Reduction* reduction,
                 const std::vector<Stage>& stages, const std::function<void(const ir::Load&)>& fn) {
  struct Loads : ir::IRVisitor {
    const std::function<void(const ir::Load&)>& fn;
    explicit Loads(const std::function<void(const ir::Load&)>& f) : fn(f) {}
    void visit_node(const ir::Load* l) override {
      fn(*l);
      ir::IRVisitor::visit_node(l);
    }
  } loads(fn);
  auto element = [&](const Element& e) {
    for (const LocalLet& l : e.lets)
      loads.visit(l.value);
    loads.visit(e.value);
  };
  auto visit_reduction = [&](const Reduction& r) {
    element(r.body);
    if (r.condition.defined()) loads.visit(r.condition);
    if (r.finish.defined()) loads.visit(r.finish);
  };
  for (const MapOutput& m : maps)
    element(m.element);
  if (reduction) visit_reduction(*reduction);
  for (const Stage& s : stages) {
    if (s.kind == Stage::Kind::Reduce)
      visit_reduction(s.reduction);
    else
      element(s.element);
  }
}

} // namespace

void for_each_load(const ComputeDesc& d, const std::function<void(const ir::Load&)>& fn) {
  visit_loads(d.maps, d.kind == ComputeDesc::Kind::Reduce ? &d.reduction : nullptr, d.stitch.stages,
              fn);
}

void for_each_load(const Stage& s, const std::function<void(const ir::Load&)>& fn) {
  visit_loads({}, nullptr, {s}, fn);
}

} // namespace dsc::passes::lowering
