#include "ir/Combiner.h"

#include "ir/Functor.h"

namespace dsc::ir {

bool is_combiner(BinaryOp op) {
  return op == BinaryOp::Add || op == BinaryOp::Mul || op == BinaryOp::Min || op == BinaryOp::Max;
}

std::optional<Update> as_update(const PrimExpr& value,
                                const std::function<bool(const PrimExpr&)>& is_self) {
  const PrimBinary* b = value.as<PrimBinary>();
  if (!b || !is_combiner(b->op)) return std::nullopt;
  if (is_self(b->a)) return Update{b->op, b->a, b->b};
  if (is_self(b->b)) return Update{b->op, b->b, b->a};
  return std::nullopt;
}

bool reads_local(const PrimExpr& e, const std::string& name) {
  struct Reads : IRVisitor {
    std::string name;
    bool found = false;

  protected:
    void visit_node(const LocalRef* node) override { found |= node->name == name; }
  } r;
  r.name = name;
  r.visit(e);
  return r.found;
}

std::optional<BinaryOp> local_combiner(const Stmt& s, const std::string& name) {
  struct Finder : IRVisitor {
    std::string name;
    std::optional<BinaryOp> op;
    bool bad = false;

  protected:
    void visit_node(const Assign* node) override {
      if (node->name != name) return;
      std::optional<Update> u = as_update(node->value, [&](const PrimExpr& e) {
        const LocalRef* r = e.as<LocalRef>();
        return r && r->name == name;
      });
      if (!u || reads_local(u->other, name) || (op && *op != u->op)) {
        bad = true;
        return;
      }
      op = u->op;
    }
  } f;
  f.name = name;
  f.visit(s);
  if (f.bad || !f.op) return std::nullopt;
  return f.op;
}

} // namespace dsc::ir
