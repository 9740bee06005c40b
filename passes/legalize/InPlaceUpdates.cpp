#include "passes/legalize/InPlaceUpdates.h"

#include <map>

#include "ir/Functor.h"
#include "ir/OpRegistry.h"

namespace dsc::passes::lowering {

namespace {

// How often each var is read, anywhere in the block (nested blocks included).
std::map<const ir::Var*, int> reads_of(const ir::Block& body) {
  struct Reads : ir::IRVisitor {
    std::map<const ir::Var*, int> count;

  protected:
    void visit_node(const ir::Var* v) override { ++count[v]; }
  } reads;
  for (const ir::Binding& b : body.bindings)
    reads.visit(b.value);
  reads.visit(body.result);
  return reads.count;
}

// The vars the block returns: its result, a var or a tuple of vars.
std::set<const ir::Var*> returned(const ir::Block& body) {
  std::set<const ir::Var*> out;
  if (const ir::Var* v = body.result.as<ir::Var>()) out.insert(v);
  if (const ir::Tuple* t = body.result.as<ir::Tuple>())
    for (const ir::Expr& f : t->fields)
      if (const ir::Var* v = f.as<ir::Var>()) out.insert(v);
  return out;
}

} // namespace

std::set<const ir::Var*> in_place_updates(const ir::Block& body, const std::vector<ir::VarRef>& params) {
  const std::map<const ir::Var*, int> reads = reads_of(body);
  auto read_once = [&](const ir::Var* v) {
    auto it = reads.find(v);
    return it != reads.end() && it->second == 1;
  };
  std::set<const ir::Var*> param_set;
  for (const ir::VarRef& p : params)
    param_set.insert(p.get());
  const std::set<const ir::Var*> results = returned(body);

  // Each chain from its parameter: the updates in order, the last one's var last.
  std::map<const ir::Var*, std::vector<const ir::Var*>> chains; // parameter -> its updates
  std::map<const ir::Var*, const ir::Var*> chain_of;             // update -> its parameter
  for (const ir::Binding& b : body.bindings) {
    const ir::Call* call = b.value.as<ir::Call>();
    if (!call || ir::op_id(call->callee) != ir::OpId::update_slice || b.vars.size() != 1 ||
        call->args.empty())
      continue;
    const ir::Var* dst = call->args[0].as<ir::Var>();
    if (!dst || !read_once(dst)) continue;
    const ir::Var* root = param_set.count(dst) ? dst : nullptr;
    if (auto link = chain_of.find(dst); link != chain_of.end()) root = link->second;
    if (!root) continue;
    chains[root].push_back(b.vars[0].get());
    chain_of[b.vars[0].get()] = root;
  }
  std::set<const ir::Var*> out;
  for (const auto& [param, updates] : chains) {
    // Unless the entry returns the last update, the caller would see its buffer change. Others
    // may read it too: they run after the update, as they read its result.
    if (!results.count(updates.back())) continue;
    out.insert(updates.begin(), updates.end());
  }
  return out;
}

} // namespace dsc::passes::lowering
