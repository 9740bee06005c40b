#include "passes/BucketKernels.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/Functor.h"
#include "ir/HostProgram.h"
#include "ir/LibraryRoutine.h"
#include "ir/OpRegistry.h"
#include "symbolic/Eval.h"
#include "symbolic/Printer.h"
#include "symbolic/Simplify.h"

namespace dsc::passes {

namespace {

namespace sym = symbolic;

// The lanes of the target's vectors for the widest element of the prim's buffers.
int64_t vector_lanes(const ir::Target& target, const ir::PrimFunc& p) {
  int widest = 8;
  for (const std::vector<ir::Buffer>* list : {&p.inputs, &p.outputs})
    for (const ir::Buffer& b : *list)
      widest = std::max(widest, ir::dtype_bits(b.dtype));
  const int bits = target.vector_bits ? target.vector_bits : 512;
  return std::max(1, bits / widest);
}

// The distinct extents of the prim's vectorized loops that run once per iteration of an
// enclosing loop (a remainder per row: a single vector loop has one per call, which costs
// nothing worth a variant), symbolic and over its signature symbols only (not over an enclosing
// loop's variable), none of them `hidden`.
std::vector<sym::Expr> vectorized_extents(const ir::PrimFunc& p, const std::set<std::string>& hidden) {
  struct Finder : ir::IRVisitor {
    std::set<std::string> signature;
    std::vector<sym::Expr> extents;
    std::set<std::string> seen;
    int depth = 0; // loops around the node visited

  protected:
    void visit_node(const ir::For* f) override {
      if (f->for_kind == ir::ForKind::Vectorized && depth > 0 && !f->extent.is<sym::Const>()) {
        const std::set<std::string> free = sym::free_symbols(f->extent);
        const bool over_signature = std::all_of(free.begin(), free.end(),
                                                [&](const std::string& s) { return signature.count(s); });
        if (over_signature && seen.insert(sym::to_string(f->extent)).second) extents.push_back(f->extent);
      }
      ++depth;
      ir::IRVisitor::visit_node(f);
      --depth;
    }
  } finder;
  for (const std::string& name : ir::prim_signature_symbols(p))
    if (!hidden.count(name)) finder.signature.insert(name);
  finder.visit(p.body);
  return finder.extents;
}

class Bucketer {
public:
  Bucketer(Compilation& c, PassContext& ctx) : c_(c), ctx_(ctx) {
    for (const ir::Module::Decl& d : c.module.decls) {
      if (d.fn) taken_.insert(d.fn->name);
      if (d.prim) taken_.insert(d.prim->name);
      if (d.ext) taken_.insert(d.ext->name);
    }
  }

  void run() {
    for (ir::HostProgram& h : c_.hosts) {
      sym::Facts facts;
      for (const ir::HostCheck& check : h.checks)
        facts.add(check.predicate);
      rewrite(h.steps, facts);
    }
    std::set<std::string> called;
    for (const ir::HostProgram& h : c_.hosts)
      ir::for_each_step(h.steps, [&](const ir::HostStep& s, int) {
        called.insert(s.callee);
        called.insert(s.epilogue);
      });
    // A kernel every call of which now goes to its variant takes the variant's where clause
    // itself, and the calls its name again (an extern names it as its epilogue). A variant no
    // call chose is dropped.
    std::map<std::string, const ir::PrimFunc*> merged; // kernel -> its variant
    for (auto& [variant, owned] : made_) {
      if (!called.count(variant->name)) continue;
      if (called.count(variant->variant_of))
        c_.module.add(owned);
      else
        merged[variant->variant_of] = variant;
    }
    if (merged.empty()) return;
    for (ir::Module::Decl& d : c_.module.decls) {
      if (!d.prim || !merged.count(d.prim->name)) continue;
      auto* kernel = new ir::PrimFunc();
      kernel->name = d.prim->name;
      kernel->inputs = d.prim->inputs;
      kernel->outputs = d.prim->outputs;
      kernel->where = merged.at(d.prim->name)->where;
      kernel->body = d.prim->body;
      kernel->loc = d.prim->loc;
      d.prim = Ref<ir::PrimFunc>(kernel);
    }
    std::map<std::string, std::string> back; // variant -> kernel
    for (const auto& [kernel, variant] : merged)
      back[variant->name] = kernel;
    for (ir::HostProgram& h : c_.hosts)
      rename(h.steps, back);
  }

private:
  // What a kernel's calls are decided on: the fact in the prim's own symbols, and its variant.
  struct Bucket {
    sym::Expr fact; // undefined: the kernel gets no variant
    std::string variant;
  };

  static void rename(std::vector<ir::HostStep>& steps, const std::map<std::string, std::string>& to) {
    for (ir::HostStep& s : steps) {
      for (std::vector<ir::HostStep>* inner : {&s.then_steps, &s.else_steps, &s.cond_steps, &s.body_steps})
        rename(*inner, to);
      for (std::string* name : {&s.callee, &s.epilogue})
        if (auto it = to.find(*name); it != to.end()) *name = it->second;
    }
  }

  void rewrite(std::vector<ir::HostStep>& steps, const sym::Facts& facts) {
    for (ir::HostStep& s : steps) {
      for (std::vector<ir::HostStep>* inner : {&s.then_steps, &s.else_steps, &s.cond_steps, &s.body_steps})
        rewrite(*inner, facts);
      if (s.kind == ir::HostStep::Kind::Kernel) bucket_call(s, facts, s.callee, s.ints, {});
      // An epilogue's block of rows is the routine's to choose at run time: its row count and
      // first row are no part of the fact.
      if (s.kind == ir::HostStep::Kind::Library && !s.epilogue.empty()) {
        Ref<ir::PrimFunc> epilogue = c_.module.prim(s.epilogue);
        if (!epilogue) continue;
        bucket_call(s, facts, s.epilogue, s.epilogue_ints,
                    {ir::epilogue_rows_symbol(*epilogue), s.epilogue_first_row});
      }
    }
  }

  // `prim` (the step's kernel or its epilogue, whose symbols take `values`) called through
  // its variant where the fact holds.
  void bucket_call(ir::HostStep& step, const sym::Facts& facts, const std::string& prim,
                   const std::vector<sym::Expr>& ints, const std::set<std::string>& hidden) {
    const Bucket& bucket = bucket_of(prim, hidden);
    if (!bucket.fact.defined()) return;
    // The fact in the caller's symbols: the prim's symbols are the step's values, in order.
    const std::vector<std::string> names = ir::prim_signature_symbols(*c_.module.prim(prim));
    std::map<std::string, sym::Expr> values;
    for (size_t i = 0; i < names.size() && i < ints.size(); ++i)
      values.emplace(names[i], ints[i]);
    const sym::Expr fact = sym::simplify(ir::substitute(bucket.fact, values));
    // Never true at the shapes the checks allow: the kernel as it is.
    if (ctx_.prover.prove(sym::logical_not(fact), facts).verdict == sym::Verdict::Proved) return;
    ir::HostStep variant = step;
    (step.kind == ir::HostStep::Kind::Kernel ? variant.callee : variant.epilogue) = bucket.variant;
    if (ctx_.prover.prove(fact, facts).verdict == sym::Verdict::Proved) {
      step = std::move(variant);
      return;
    }
    ir::HostStep choice;
    choice.kind = ir::HostStep::Kind::If;
    choice.ints = {fact};
    choice.location = step.location;
    choice.then_steps = {std::move(variant)};
    choice.else_steps = {std::move(step)};
    step = std::move(choice);
  }

  const Bucket& bucket_of(const std::string& name, const std::set<std::string>& hidden) {
    auto it = buckets_.find(name);
    if (it != buckets_.end()) return it->second;
    Bucket& b = buckets_[name];
    Ref<ir::PrimFunc> prim = c_.module.prim(name);
    if (!prim || !prim->body.defined() || !prim->variant_of.empty()) return b;
    const int64_t lanes = vector_lanes(ctx_.target, *prim);
    if (lanes < 2) return b;
    sym::Facts own;
    for (const ir::WhereClause& w : prim->where)
      own.add(w.predicate);
    std::vector<sym::Expr> parts;
    for (const sym::Expr& extent : vectorized_extents(*prim, hidden)) {
      sym::Expr part = sym::eq(sym::floormod(extent, sym::Expr(lanes)), sym::Expr(0));
      if (ctx_.prover.prove(part, own).verdict != sym::Verdict::Proved) parts.push_back(part);
    }
    if (parts.empty()) return b;
    sym::Expr fact = parts.front();
    for (size_t i = 1; i < parts.size(); ++i)
      fact = sym::logical_and(fact, parts[i]);
    b.fact = fact;
    b.variant = fresh(name + "_by" + std::to_string(lanes));
    auto* v = new ir::PrimFunc();
    v->name = b.variant;
    v->inputs = prim->inputs;
    v->outputs = prim->outputs;
    v->where = prim->where;
    v->body = prim->body;
    v->loc = prim->loc;
    v->variant_of = name;
    for (const sym::Expr& part : parts)
      v->where.push_back(ir::WhereClause{part, prim->loc});
    made_.emplace_back(v, Ref<ir::PrimFunc>(v));
    return b;
  }

  std::string fresh(const std::string& base) {
    std::string name = base;
    for (int k = 1; taken_.count(name); ++k)
      name = base + "_" + std::to_string(k);
    taken_.insert(name);
    return name;
  }

  Compilation& c_;
  PassContext& ctx_;
  std::set<std::string> taken_;
  std::map<std::string, Bucket> buckets_;
  std::vector<std::pair<ir::PrimFunc*, Ref<ir::PrimFunc>>> made_; // the variants, and owning them
};

} // namespace

void bucket_kernels(Compilation& c, PassContext& ctx) {
  if (!ctx.target.runs(ir::ForKind::Vectorized)) return; // the variants drop vector remainders
  Bucketer(c, ctx).run();
}

} // namespace dsc::passes
