#pragma once
// What the lowerings of one fn share: the module being built (new prims and externs are added
// to it), the fn's shape facts (to decide broadcasting and BLAS eligibility), fresh names for
// declarations and bindings, and bindings to insert before the one being lowered.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "ir/Module.h"
#include "passes/PassContext.h"
#include "symbolic/Facts.h"

namespace dsc::passes::lowering {

class FnContext {
public:
  // `taken` holds every declaration name of the module being built; new ones are added to it.
  FnContext(ir::Module& out, std::set<std::string>& taken, const ir::Function& fn,
            PassContext& pass);

  const ir::Function& fn() const { return fn_; }
  PassContext& pass() { return pass_; }

  // The binding being lowered: where diagnostics point.
  void set_loc(SourceLoc loc) { loc_ = loc; }
  SourceLoc loc() const { return loc_; }
  // "<what> is not supported by the CPU backend yet", at the current binding.
  Diagnostic& unsupported(const std::string& what);

  // Proved under the fn's facts: its where clauses, parameter dims >= 0, and every shape fact
  // (run-time checks included: the host checks them before any kernel runs).
  bool proved(const symbolic::Expr& predicate);
  // What the prover says of `predicate` under those facts, and `assumptions` besides.
  symbolic::ProofResult decide(const symbolic::Expr& predicate,
                               const std::vector<symbolic::Expr>& assumptions = {});
  // The fusion log's word for `predicate`, decided as `result` (under `assumptions` besides the
  // fn's facts): `proved`, `guarded at run time` when only the variant's guard proves it, or
  // the counterexample.
  std::string outcome(const symbolic::Expr& predicate, const symbolic::ProofResult& result,
                      const std::vector<symbolic::Expr>& assumptions = {});

  // Guarded variants. While a block is fused with guards open, fusion hands each fact it needed
  // and the prover left open to want_guard; the first one that can hold (its negation is not
  // proved) is kept. Legalize then compiles the block twice, between enter_variant and
  // leave_variant: where the fact holds (decide() takes it as true) and where it does not; the
  // host tests the fact at run time and runs one of the two.
  void open_guards() { guards_open_ = true; }
  void close_guards() { guards_open_ = false; }
  void want_guard(const symbolic::Expr& fact);
  std::optional<symbolic::Expr> take_wanted_guard();
  void enter_variant(const symbolic::Expr& fact, bool holds);
  void leave_variant();
  // The variants being legalized, for the fusion log: `B == P` or `B != P`; empty outside.
  std::string variant() const;

  // A new var of `type`, named after `hint`.
  ir::VarRef new_var(std::string_view hint, const ir::Type& type);

  // Everything describing a block adds to the module and to this context, so that a block
  // described and fused only to learn which guard it wants leaves no trace.
  struct Checkpoint {
    size_t decls = 0, names = 0;
    std::map<std::string, int> decl_counters;
    std::vector<Ref<ir::ExternFunc>> externs;
    std::map<std::set<std::string>, ir::Expr> carriers;
  };
  Checkpoint checkpoint() const;
  void rollback(const Checkpoint& c);

  // A dim that is (proved) 1.
  bool is_one(const symbolic::Expr& dim);
  // Two dims that are (proved) equal.
  bool equal(const symbolic::Expr& a, const symbolic::Expr& b);

  // Every symbol the fn mentions; prims never use these names for anything else.
  const std::set<std::string>& symbols() const { return symbols_; }
  // The symbols the fn's parameters bind; any other symbol in a value's type is data-dependent.
  const std::set<std::string>& param_symbols() const { return param_symbols_; }

  // A new declaration name `<fn>_<op>_<n>`.
  std::string new_decl_name(std::string_view op);
  void add_prim(Ref<ir::PrimFunc> prim);
  // The module legalize is building.
  const ir::Module& module() const { return out_; }
  // The extern bound to library routine `symbol` ("blas.sgemm") with this signature, strided
  // views of its parameters (none when empty) and of its result (none when empty), routine
  // attributes, and epilogue prim (none when empty) with its first-row symbol (none when empty),
  // named
  // `<fn>_<routine>_<n>` ("sgemm") and added on first use; its name.
  std::string library_extern(const std::string& symbol, const std::vector<ir::Type>& args,
                             const ir::Type& result, const std::string& epilogue = "",
                             const std::string& epilogue_first_row = "",
                             const std::vector<std::optional<ir::StridedView>>& views = {},
                             const std::optional<ir::StridedView>& result_view = std::nullopt,
                             const std::vector<ir::RoutineAttribute>& attributes = {});

  // Inserts `let NAME = value` before the binding being lowered; returns the var.
  ir::Expr insert_binding(std::string_view hint, ir::Expr value, const ir::Type& type);
  std::vector<ir::Binding> take_inserted();

  // A value of type i8[0, S, T, ...] over `names` (sorted), made once per set by a prim with no
  // inputs: a prim that uses symbols none of its buffers has as a plain dim takes it as an
  // extra input, so that they are bound on entry (the host binds a prim's symbols from the
  // plain dims of the buffers it passes). Zero bytes.
  ir::Expr symbol_carrier(const std::set<std::string>& names);

  // Around the legalization of an if's branch: values made once per fn (symbol carriers) and
  // bound inside the branch are not visible after it, so they are forgotten when it closes.
  using Scope = std::map<std::set<std::string>, ir::Expr>;
  Scope open_scope() const { return carriers_; }
  void close_scope(Scope saved) { carriers_ = std::move(saved); }

private:
  std::string fresh_var_name(std::string_view hint);
  symbolic::ProofResult prove(const symbolic::Expr& predicate,
                              const std::vector<symbolic::Expr>& assumptions, bool guarded);
  bool assumes_a_guard() const;

  ir::Module& out_;
  std::set<std::string>& taken_;
  const ir::Function& fn_;
  PassContext& pass_;
  SourceLoc loc_;
  symbolic::Facts facts_;
  std::set<std::string> symbols_;
  std::set<std::string> param_symbols_;
  std::set<std::string> var_names_;
  std::map<std::string, int> decl_counters_;
  std::vector<Ref<ir::ExternFunc>> externs_; // made so far, each signature once
  std::map<std::set<std::string>, ir::Expr> carriers_;
  std::vector<ir::Binding> inserted_;
  std::vector<std::string> names_taken_; // by this context, in order (for rollback)
  struct Variant {
    symbolic::Expr fact;
    bool holds; // the variant assumes the fact; otherwise it is the one where the fact fails
  };
  std::vector<Variant> variants_; // being legalized, outermost first
  bool guards_open_ = false;
  std::optional<symbolic::Expr> wanted_guard_;
};

} // namespace dsc::passes::lowering
