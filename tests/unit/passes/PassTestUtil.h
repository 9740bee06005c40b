#pragma once
// Builds graph IR by hand for the pass tests: types from text (`f32[B, S*12, 64]`), calls,
// bindings and functions.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/Module.h"
#include "passes/PassContext.h"
#include "symbolic/Printer.h"
#include "tests/unit/ir/TypeText.h"

namespace dsc::testing {

namespace sym = symbolic;

// A test fixture with diagnostics that point into a numbered source buffer, so that every
// node can carry a distinct location (column) to check where errors point.
class IRBuilderTest : public ::testing::Test {
protected:
  SourceLoc loc() { return SourceLoc{file_, 1, ++col_}; }

  ir::VarRef var(const std::string& name, const std::string& t = "?") {
    return ir::Var::make(name, type(t), loc());
  }
  static ir::Expr ref(const ir::VarRef& v) { return ir::Expr(v); }
  ir::Expr call(const std::string& callee, std::vector<ir::Expr> args,
                std::vector<ir::KeywordArg> kwargs = {}) {
    return ir::Call::make(callee, std::move(args), std::move(kwargs), ir::Type::unknown(), loc());
  }
  ir::KeywordArg kw(const std::string& name, ir::Expr value) { return {name, value, loc()}; }
  ir::Expr shape(const std::vector<std::string>& dims) {
    std::vector<sym::Expr> ds;
    for (const std::string& d : dims)
      ds.push_back(dim(d));
    return ir::ShapeExpr::make(std::move(ds), loc());
  }
  ir::Expr lit(int64_t v) { return ir::Literal::make(v, loc()); }
  ir::Expr lit(double v) { return ir::Literal::make(v, loc()); }
  ir::Expr lit(bool v) { return ir::Literal::make(v, loc()); }
  ir::Expr str(const std::string& s) { return ir::StringImm::make(s, loc()); }

  ir::Binding let(const ir::VarRef& v, ir::Expr value) {
    return ir::Binding{{v}, std::move(value), false, loc()};
  }
  // `let v: T = value`: v's type is the asserted one.
  ir::Binding let_typed(const ir::VarRef& v, ir::Expr value) {
    return ir::Binding{{v}, std::move(value), true, loc()};
  }
  ir::Binding let_many(std::vector<ir::VarRef> vs, ir::Expr value) {
    return ir::Binding{std::move(vs), std::move(value), false, loc()};
  }
  ir::Expr block(std::vector<ir::Binding> bindings, ir::Expr result) {
    return ir::Block::make(std::move(bindings), std::move(result), loc());
  }

  Ref<ir::Function> fn(const std::string& name, std::vector<ir::VarRef> params,
                       std::vector<ir::Binding> bindings, ir::Expr result,
                       const std::string& ret = "?", std::vector<std::string> where = {},
                       std::vector<ir::Expr> defaults = {}, std::vector<ir::ShapeFact> facts = {}) {
    auto* f = new ir::Function();
    f->name = name;
    f->params = std::move(params);
    f->defaults = std::move(defaults);
    f->defaults.resize(f->params.size());
    f->ret_type = type(ret);
    for (const std::string& w : where)
      f->where.push_back(ir::WhereClause{pred(w), loc()});
    f->body = block(std::move(bindings), std::move(result));
    f->facts = std::move(facts);
    f->loc = loc();
    return Ref<ir::Function>(f);
  }

  // The diagnostics as "error: message" lines, notes indented.
  std::string messages() const {
    std::string out;
    for (const Diagnostic& d : diags_.diagnostics()) {
      out +=
          std::string(d.severity == Severity::Error ? "error: " : "warning: ") + d.message + "\n";
      for (const Diagnostic::Note& n : d.notes)
        out += "  note: " + n.message + "\n";
    }
    return out;
  }

  SourceManager sources_;
  uint32_t file_ = sources_.add("test.dsc", std::string(4000, ' '));
  DiagnosticEngine diags_{sources_};
  sym::Prover prover_;
  passes::PassContext ctx_{diags_, prover_};
  uint32_t col_ = 0;
};

} // namespace dsc::testing
