#pragma once
// infer_shapes (passes/InferShapes.h) in two files that share this header: passes/InferShapes.cpp
// walks a function's body (bindings, `if`, loops, tuples) and passes/shape_inference/Calls.cpp
// types calls (ops, fns of the module, instances of fns with `tensor` parameters) and binds the
// symbols of written types to actual dims. Only those two files include it.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/Module.h"
#include "ir/OpRegistry.h"
#include "passes/IRUtil.h"
#include "passes/PassContext.h"
#include "symbolic/Simplify.h"

namespace dsc::passes::shape_inference {

namespace sym = symbolic;
using namespace ir;

using SymbolMap = std::map<std::string, sym::Expr>;

inline constexpr size_t kMaxInstantiationDepth = 32;

// A declared return type to check: not left out, and not `tensor` (any tensor).
inline bool declares_type(const Type& t) {
  return !t.is_unknown() && t.kind != Type::Kind::Any;
}

inline bool has_unknown(const Type& t) {
  if (t.is_unknown()) return true;
  for (const Type& f : t.fields)
    if (has_unknown(f)) return true;
  return false;
}

inline sym::Expr canon(const sym::Expr& e) {
  return sym::simplify(e);
}

// Arguments that are not values: dims lists, strings, lists of tensors.
inline bool is_non_value(const Expr& e) {
  return e.is<ShapeExpr>() || e.is<StringImm>() || e.is<ListExpr>();
}

inline Type canon(const Type& t) {
  Type out = t;
  for (sym::Expr& d : out.shape)
    d = canon(d);
  for (Type& f : out.fields)
    f = canon(f);
  return out;
}

// Whether a value of type `actual` may stand where `dtype` is expected.
inline bool dtype_fits(const Type& actual, DType dtype) {
  return actual.weak ? weak_fits(actual.dtype, dtype) : actual.dtype == dtype;
}

inline std::string quoted_list(const std::vector<std::string>& names) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i)
    s += (i ? ", " : "") + names[i];
  return s;
}

// A written dim to match against an actual one (a parameter's, an assertion's, a return's).
struct DimPair {
  sym::Expr written;
  sym::Expr actual;
  SourceLoc loc;
  std::string what;
};

enum class Match : uint8_t { Ok, Error, Unknown };

// Per top-level function: the facts known so far, the facts recorded for collect_facts,
// and the ShapeContext every rule uses. Callee bodies instantiated for a call share it, since
// their types are in the caller's symbols.
struct Session {
  explicit Session(PassContext& pc) : pass(pc), ctx(pc.diags, facts, pc.prover, recorded) {}

  // Run-time checks are assumed from where they are recorded on (the host checks them first).
  void absorb() {
    for (; absorbed < recorded.size(); ++absorbed)
      facts.add(recorded[absorbed].predicate);
  }

  PassContext& pass;
  sym::Facts facts;
  std::vector<ShapeFact> recorded;
  size_t absorbed = 0;
  ShapeContext ctx;
  std::vector<std::pair<const Module*, std::string>> instantiating;
};

class ModuleInferrer;

// Infers one function body: the top-level functions of the module (their symbols as written)
// and callee bodies instantiated for a call (their symbols substituted by the caller's dims).
class BodyInferrer {
public:
  BodyInferrer(ModuleInferrer& mi, Session& s, const Module& scope, const Function& f,
               SymbolMap subst, bool instantiation)
      : mi_(mi), s_(s), scope_(scope), fn_(f), subst_(std::move(subst)),
        instantiation_(instantiation) {}

  Ref<Function> run_top_level();
  Type run_instance(const std::vector<Expr>& param_values);

private:
  Expr infer(const Expr& e);
  Expr infer_block(const Block& b);
  Expr infer_if(const If& node);
  Expr infer_loop(const Loop& node);
  // Whether `got` is `want` (dims proved equal); `got`'s weak dtype may fit `want`'s.
  bool proved_same_type(const Type& want, const Type& got);
  Expr infer_get_item(const GetItem& g);
  Expr infer_call(const Call& call);
  Type call_op(const OpDef& op, const Call& call);
  Type call_signature(const Call& call, const std::string& name, const std::vector<VarRef>& params,
                      const std::vector<Expr>& defaults, const Type& ret,
                      const std::vector<WhereClause>& where);
  Type call_instance(const Call& call, const Function& callee, const Module& callee_scope,
                     const std::string& shown_name);
  void unknown_callee(const Call& call);
  // The callee's where clauses in the caller's symbols: proved, or run-time facts.
  bool require_where(const std::vector<WhereClause>& where, const SymbolMap& map, const Call& call,
                     const std::string& name);

  std::optional<std::vector<std::pair<Expr, SourceLoc>>>
  bind_call_args(const Call& call, const std::string& name, const std::vector<VarRef>& params,
                 const std::vector<Expr>& defaults);
  Match collect_pairs(const Type& written, const Type& actual, SourceLoc loc,
                      const std::string& what, std::vector<DimPair>& out);
  // Binds unbound symbols of the written dims (first binding wins) and checks the rest.
  // `map` gets the bindings; `named` binds by recording equalities instead (top level).
  bool bind_pairs(const std::vector<DimPair>& pairs, SymbolMap& map, bool named);
  bool is_bound(const std::string& name, const SymbolMap& map, bool named) const;
  void bind(const std::string& name, const sym::Expr& value, SourceLoc loc, const std::string& what,
            SymbolMap& map, bool named);
  Type check_asserted(const Type& written, const Type& actual, SourceLoc loc,
                      const std::string& what);
  Type unify_branches(const Type& a, const Type& b, SourceLoc loc);

  Diagnostic& error(SourceLoc loc, std::string message) {
    return s_.ctx.error(loc, std::move(message));
  }

  ModuleInferrer& mi_;
  Session& s_;
  const Module& scope_;
  const Function& fn_;
  SymbolMap subst_;
  bool instantiation_;
  std::set<std::string> known_; // top level: symbols bound by parameters and assertions
  std::unordered_map<const ExprNode*, Expr> vars_;
};

class ModuleInferrer {
public:
  ModuleInferrer(const Module& m, PassContext& ctx) : m_(m), ctx_(ctx) {}

  Module run() {
    Module out;
    out.imports = m_.imports;
    for (const Module::Decl& d : m_.decls) {
      if (d.fn && !is_generic(*d.fn)) {
        out.add(infer(*d.fn));
        continue;
      }
      out.decls.push_back(d);
    }
    return out;
  }

  const Module& main() const { return m_; }

  Ref<Function> infer(const Function& f) {
    auto it = done_.find(&f);
    if (it != done_.end()) return it->second;
    in_progress_.insert(&f);
    Session s(ctx_);
    Ref<Function> result = BodyInferrer(*this, s, m_, f, {}, false).run_top_level();
    in_progress_.erase(&f);
    done_[&f] = result;
    return result;
  }

  // The return type of a call to a (non-generic) function of the module: declared, or
  // inferred from its body first. nullopt for a recursive call with none declared.
  std::optional<Type> return_type(const Function& f) {
    if (declares_type(f.ret_type)) return f.ret_type;
    if (in_progress_.count(&f)) return std::nullopt;
    return infer(f)->ret_type;
  }

private:
  const Module& m_;
  PassContext& ctx_;
  std::map<const Function*, Ref<Function>> done_;
  std::set<const Function*> in_progress_;
};

} // namespace dsc::passes::shape_inference
