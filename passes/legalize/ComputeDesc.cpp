#include "passes/legalize/ComputeDesc.h"

#include "ir/Functor.h"
#include "ir/Intrinsics.h"

namespace dsc::passes::lowering {

namespace {

// Words of the language and scalar functions other than the intrinsics and dtypes: never
// names in a generated prim.
// identity-lint: the language's words (lang/Lexer.h), not the ops where, min, max and cast.
const char* const kWords[] = {
    "import", "fn",    "prim",  "extern",   "let",       "var",    "return", "if",    "else",
    "for",    "in",    "where", "parallel", "vectorize", "unroll", "alloc",  "local", "shared",
    "global", "true",  "false", "tensor",   "int",       "float",  "str",    "min",   "max",
    "cast",   "carry", "while"};

bool ends_with_digit(std::string_view s) {
  return !s.empty() && s.back() >= '0' && s.back() <= '9';
}

} // namespace

bool guards(const ir::PrimExpr& condition) {
  struct Reads : ir::IRVisitor {
    bool data = false, indices = false;
    void visit_node(const ir::Load*) override { data = true; }
    void visit_node(const ir::LocalRef*) override { data = true; }
    void visit_node(const ir::Index*) override { indices = true; }
  } reads;
  reads.visit(condition);
  return reads.indices && !reads.data;
}

bool is_guarding_select(const ir::PrimExpr& e) {
  const ir::Intrinsic* s = e.as<ir::Intrinsic>();
  return s && ir::find_intrinsic(s->name) == &ir::intrinsic(ir::IntrinsicId::select) &&
         guards(s->args[0]);
}

NameSet::NameSet(const std::set<std::string>& reserved) : taken_(reserved) {
  for (const char* w : kWords)
    taken_.insert(w);
  for (const std::string& d : ir::dtype_names())
    taken_.insert(d);
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

} // namespace dsc::passes::lowering
