#include "passes/CollectFacts.h"

#include <set>

#include "ir/OpRegistry.h"
#include "passes/IRUtil.h"
#include "symbolic/Eval.h"
#include "symbolic/Printer.h"

namespace dsc::passes {

namespace {

namespace sym = symbolic;
using ir::ShapeFact;

// What the parameter types imply: every dim of a run-time tensor is >= 0, so a parameter
// written `f32[S - 4]` implies S >= 4. Lone symbols and constants say nothing new.
std::vector<sym::Expr> signature_facts(const ir::Function& f) {
  std::vector<sym::Expr> out;
  for (const ir::VarRef& p : f.params) {
    if (!p->type.is_tensor()) continue;
    for (const sym::Expr& d : p->type.shape)
      if (!d.is<sym::Sym>() && !d.is<sym::Const>()) out.push_back(sym::le(sym::Expr(0), d));
  }
  return out;
}

class FactCollector {
public:
  FactCollector(const ir::Function& f, PassContext& ctx) : f_(f), ctx_(ctx) {}

  std::vector<ShapeFact> run() {
    std::vector<ShapeFact> facts = f_.facts;
    bool has_where = false;
    for (const ShapeFact& fact : facts)
      has_where |= fact.origin == ShapeFact::Origin::Where;
    if (!has_where) {
      // Not through infer_shapes: the clauses still count.
      std::vector<ShapeFact> clauses;
      for (const ir::WhereClause& w : f_.where)
        clauses.push_back(ShapeFact{w.predicate, w.loc, ShapeFact::Origin::Where,
                                    ShapeFact::Status::Unchecked, "where clause", ""});
      facts.insert(facts.begin(), clauses.begin(), clauses.end());
    }

    std::vector<sym::Expr> base = signature_facts(f_);
    std::vector<const ShapeFact*> where;
    for (const ShapeFact& fact : facts)
      if (fact.origin == ShapeFact::Origin::Where) where.push_back(&fact);
    bool consistent = check_consistent(base, where);

    sym::Facts assumptions;
    for (const sym::Expr& p : base)
      assumptions.add(p);
    for (ShapeFact& fact : facts) {
      if (fact.origin == ShapeFact::Origin::Where) {
        fact.status = ShapeFact::Status::Assumed;
        assumptions.add(fact.predicate);
      } else if ((fact.origin == ShapeFact::Origin::Assertion &&
                  fact.status == ShapeFact::Status::Proved) ||
                 fact.status == ShapeFact::Status::Assumed) {
        // A symbol bound by a type assertion, or the bound of a data-dependent one (nonzero's
        // count): true by construction.
        assumptions.add(fact.predicate);
      } else if (fact.status == ShapeFact::Status::Proved) {
        // infer_shapes proved it assuming the facts recorded before it, which may themselves
        // be only checked at run time; assuming it from the start could then prove those from
        // it, and nothing would check either (reshape(x: [B, S], [2, S]) returned as [B, S]:
        // the element count proved from B == 2, and B == 2 from the element count). Decided
        // again below, in order.
        fact.status = ShapeFact::Status::Unchecked;
      }
    }
    if (!consistent) return facts; // everything would follow from a contradiction
    // In order, each from the where clauses, the assertions and the facts before it: the host
    // code checks every run-time fact before it computes anything, so a fact that follows from
    // earlier ones (checked or proved) needs no check of its own, and no fact is ever assumed
    // to prove one that comes before it.
    for (ShapeFact& fact : facts) {
      if (fact.status == ShapeFact::Status::RuntimeCheck) { // decided before (inline_calls)
        assumptions.add(fact.predicate);
        continue;
      }
      if (fact.status != ShapeFact::Status::Unchecked) continue;
      decide(fact, assumptions);
      assumptions.add(fact.predicate);
    }
    return facts;
  }

private:
  bool unsat(const std::vector<sym::Expr>& preds) {
    sym::Facts facts;
    for (const sym::Expr& p : preds)
      facts.add(p);
    if (facts.inconsistent()) return true;
    return ctx_.prover.prove(sym::Expr(sym::BoolConst::make(false)), facts).verdict ==
           sym::Verdict::Proved;
  }

  // Reports the first clause that leaves no values satisfying the clauses before it (and
  // the parameter types), naming a small set of the earlier clauses it contradicts.
  bool check_consistent(const std::vector<sym::Expr>& base,
                        const std::vector<const ShapeFact*>& where) {
    std::vector<sym::Expr> all = base;
    for (const ShapeFact* w : where)
      all.push_back(w->predicate);
    if (where.empty() || !unsat(all)) return true;
    std::vector<sym::Expr> prefix = base;
    for (size_t k = 0; k < where.size(); ++k) {
      prefix.push_back(where[k]->predicate);
      if (!unsat(prefix)) continue;
      std::string clause = sym::to_string(where[k]->predicate);
      std::vector<sym::Expr> alone = base;
      alone.push_back(where[k]->predicate);
      if (unsat(alone)) {
        ctx_.diags.error(where[k]->loc, "where clause '" + clause + "' can never hold" +
                                            (base.empty() ? " (symbols are dims, so >= 0)"
                                                          : " for the parameter types"));
        return false;
      }
      // Drop the earlier clauses the contradiction does not need.
      std::vector<size_t> needed;
      for (size_t j = 0; j < k; ++j)
        needed.push_back(j);
      for (size_t j = 0; j < k; ++j) {
        std::vector<sym::Expr> trial = base;
        for (size_t i : needed)
          if (i != j) trial.push_back(where[i]->predicate);
        trial.push_back(where[k]->predicate);
        if (unsat(trial)) std::erase(needed, j);
      }
      Diagnostic& d = ctx_.diags.error(where[k]->loc, "where clause '" + clause +
                                                          "' contradicts the clauses before it");
      for (size_t i : needed)
        d.notes.push_back(
            {where[i]->loc, "contradicted clause: '" + sym::to_string(where[i]->predicate) + "'"});
      return false;
    }
    return false;
  }

  void decide(ShapeFact& fact, const sym::Facts& assumptions) {
    sym::ProofResult r = ctx_.prover.prove(fact.predicate, assumptions);
    if (r.verdict == sym::Verdict::Proved) {
      fact.status = ShapeFact::Status::Proved;
      return;
    }
    fact.status = ShapeFact::Status::RuntimeCheck;
    if (r.verdict != sym::Verdict::Disproved) return;
    fact.counterexample = ir::format_bindings(r.counterexample, fact.predicate);
    // A check that can only fail is a mistake in the program, not a check.
    if (ctx_.prover.prove(sym::logical_not(fact.predicate), assumptions).verdict ==
        sym::Verdict::Proved) {
      ctx_.diags.error(fact.loc,
                       fact.what + ": '" + sym::to_string(fact.predicate) + "' can never hold");
      return;
    }
    warn_if_degenerate(fact, assumptions);
  }

  // A check that holds only where a dim is 0 (reshaping [B, 6] to [B, 4] checks B == 0) is
  // almost surely a mistake too, though a call with empty tensors would pass it: a warning
  // naming each symbol that the check forces to 0.
  void warn_if_degenerate(const ShapeFact& fact, const sym::Facts& assumptions) {
    sym::Facts with_check = assumptions;
    with_check.add(fact.predicate);
    auto forces = [&](const sym::Expr& p) {
      return ctx_.prover.prove(p, with_check).verdict == sym::Verdict::Proved;
    };
    std::string forced, either;
    sym::Expr any_zero;
    const std::set<std::string> symbols = sym::free_symbols(fact.predicate);
    for (const std::string& s : symbols) {
      sym::Expr zero = sym::eq(sym::Sym::make(s), sym::Expr(0));
      any_zero = any_zero.defined() ? sym::logical_or(any_zero, zero) : zero;
      either += (either.empty() ? "" : " or ") + s + " = 0";
      if (forces(zero)) forced += (forced.empty() ? "" : " and ") + s + " = 0";
    }
    // B*S == 0 forces no one symbol, but still only holds for empty tensors.
    if (forced.empty() && symbols.size() > 1 && forces(any_zero)) forced = either;
    if (forced.empty()) return;
    // fact.what is "reshape: element counts": the op, then what it checks.
    const size_t colon = fact.what.find(':');
    const std::string op = colon == std::string::npos ? "" : fact.what.substr(0, colon);
    ctx_.diags.warning(fact.loc, (op.empty() ? "this check (" + fact.what + ")" : "this " + op) +
                                     " is valid only when " + forced + " (its run-time check is '" +
                                     sym::to_string(fact.predicate) + "')");
  }

  const ir::Function& f_;
  PassContext& ctx_;
};

} // namespace

ir::Module collect_facts(const ir::Module& m, PassContext& ctx) {
  ir::Module out;
  out.imports = m.imports;
  for (const ir::Module::Decl& d : m.decls) {
    if (!d.fn || is_generic(*d.fn)) {
      out.decls.push_back(d);
      continue;
    }
    const ir::Function& f = *d.fn;
    out.add(rebuild_function(f, f.ret_type, f.body, FactCollector(f, ctx).run()));
  }
  return out;
}

} // namespace dsc::passes
