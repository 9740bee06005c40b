#include "passes/legalize/Epilogue.h"

#include <map>
#include <set>

#include "ir/Functor.h"
#include "ir/LibraryRoutine.h"
#include "passes/legalize/ElementRewrite.h"
#include "passes/legalize/Scalar.h"
#include "symbolic/Eval.h"
#include "symbolic/Simplify.h"

namespace dsc::passes::lowering {

namespace sym = symbolic;

namespace {

using Indices = std::vector<sym::Expr>;

bool mentions(const sym::Expr& e, const std::set<std::string>& names) {
  for (const std::string& s : sym::free_symbols(e))
    if (names.count(s)) return true;
  return false;
}

bool same(const sym::Expr& a, const sym::Expr& b) {
  return sym::simplify(a).same_as(sym::simplify(b));
}

bool at_own_index(const Indices& idx, const std::vector<sym::Expr>& vars) {
  if (idx.size() != vars.size()) return false;
  for (size_t a = 0; a < idx.size(); ++a)
    if (!same(idx[a], vars[a])) return false;
  return true;
}

// At the map's own row (its leading indices), and at its own column or at column 0.
bool at_own_row(const Indices& idx, const std::vector<sym::Expr>& vars, bool* column_zero) {
  if (idx.size() != vars.size()) return false;
  for (size_t a = 0; a + 1 < idx.size(); ++a)
    if (!same(idx[a], vars[a])) return false;
  *column_zero = same(idx.back(), sym::Expr(0));
  return *column_zero || same(idx.back(), vars.back());
}

// Whether an index anywhere in `e` (a load's, or a value's) uses one of `names`.
bool element_mentions(const Element& e, const std::set<std::string>& names) {
  struct Find : ir::IRVisitor {
    const std::set<std::string>& names;
    bool found = false;
    explicit Find(const std::set<std::string>& n) : names(n) {}
    void visit_node(const ir::Index* i) override { found = found || mentions(i->value, names); }
  } find(names);
  for (const LocalLet& l : e.lets)
    find.visit(l.value);
  find.visit(e.value);
  return find.found;
}

// How the map reads each buffer.
struct Reads {
  bool data_dependent = false;
  bool all_at_own_index = true;
  bool all_at_own_row = true;
  bool any_column = false; // at its own column (not column 0)
  bool uses_rows = false;
};

} // namespace

std::shared_ptr<ComputeDesc> make_epilogue(const ComputeDesc& map, const std::string& product,
                                           FnContext& ctx, std::string* why) {
  const MapOutput& m = map.maps.front();
  const std::vector<sym::Expr>& vars = m.space.vars;
  if (vars.empty() || map.outputs.front().dtype != ir::DType::F32) {
    *why = "the map's result is not an f32 matrix the product's rows can fold into";
    return nullptr;
  }
  std::set<std::string> row_vars; // every index variable but the last (the column's)
  for (size_t a = 0; a + 1 < vars.size(); ++a)
    if (const sym::Sym* v = vars[a].as<sym::Sym>()) row_vars.insert(v->name);

  std::map<std::string, Reads> reads;
  for_each_load(map, [&](const ir::Load& l) {
    Reads& r = reads[l.buffer];
    Indices idx;
    for (const ir::PrimExpr& i : l.indices) {
      const ir::Index* x = i.as<ir::Index>();
      if (!x) {
        r.data_dependent = true;
        return;
      }
      idx.push_back(x->value);
      r.uses_rows = r.uses_rows || mentions(x->value, row_vars);
    }
    r.all_at_own_index = r.all_at_own_index && at_own_index(idx, vars);
    bool column_zero = false;
    r.all_at_own_row = r.all_at_own_row && at_own_row(idx, vars, &column_zero);
    r.any_column = r.any_column || !column_zero;
  });
  std::set<std::string> by_row, by_row_column_zero;
  for (const ComputeDesc::Input& in : map.inputs) {
    const Reads& r = reads[in.buffer.name];
    if (r.data_dependent) {
      *why = "it reads '" + in.buffer.name + "' at a data-dependent index";
      return nullptr;
    }
    if (in.buffer.name == product) {
      if (!r.all_at_own_index) {
        *why = "it reads the product other than at its own index";
        return nullptr;
      }
      continue;
    }
    if (!r.uses_rows) continue; // read whole
    // Indexed by row: the map's leading dims, and its columns or one column (read at 0).
    const std::vector<sym::Expr>& shape = in.buffer.shape;
    bool rows_alike = r.all_at_own_row && shape.size() == m.space.extents.size();
    for (size_t a = 0; rows_alike && a + 1 < shape.size(); ++a)
      rows_alike = ctx.equal(shape[a], m.space.extents[a]);
    if (rows_alike)
      rows_alike = r.any_column ? ctx.equal(shape.back(), m.space.extents.back())
                                : ctx.is_one(shape.back());
    if (!rows_alike) {
      *why = "it reads '" + in.buffer.name +
             "' at rows other than its own, which a block of the product's rows does not cover";
      return nullptr;
    }
    (r.any_column ? by_row : by_row_column_zero).insert(in.buffer.name);
  }

  auto epilogue = std::make_shared<ComputeDesc>(map.names);
  ComputeDesc& e = *epilogue;
  const sym::Expr rows = sym::sym(e.names.fresh("rows"));
  const sym::Expr columns = m.space.extents.back();
  const sym::Expr row = sym::sym(e.names.fresh("row"));
  const sym::Expr column = vars.back().is<sym::Sym>() ? sym::sym(e.names.fresh("col")) : vars.back();
  ir::Buffer out = map.outputs.front();
  out.shape = {rows, columns};
  e.kind = ComputeDesc::Kind::Map;
  e.op = map.op;
  e.type = ir::Type::tensor(out.dtype, out.shape);
  e.outputs = {out};
  for (const ComputeDesc::Input& in : map.inputs) {
    if (in.buffer.name == product) continue;
    ComputeDesc::Input viewed = in;
    if (by_row.count(in.buffer.name)) viewed.buffer.shape = {rows, columns};
    if (by_row_column_zero.count(in.buffer.name)) viewed.buffer.shape = {rows, sym::Expr(1)};
    e.inputs.push_back(viewed);
  }
  ElementRewrite rw;
  if (const sym::Sym* v = vars.back().as<sym::Sym>()) rw.indices[v->name] = column;
  rw.on_load = [&](const ir::Load& l) -> ir::PrimExpr {
    if (by_row_column_zero.count(l.buffer))
      return ir::Load::make(l.dtype, l.buffer, {index(row), index(sym::Expr(0))});
    if (l.buffer != product && !by_row.count(l.buffer)) return ir::PrimExpr();
    return ir::Load::make(l.dtype, l.buffer == product ? out.name : l.buffer,
                          {index(row), index(column)});
  };
  Element element = rw.apply(m.element);
  if (element_mentions(element, row_vars)) {
    *why = "its element uses a row's index other than to read";
    return nullptr;
  }
  e.maps = {MapOutput{IndexSpace{{rows, columns}, {row, column}}, std::move(element)}};
  std::set<std::string> symbols;
  for (const sym::Expr& d : e.outputs.front().shape)
    for (const std::string& s : sym::free_symbols(d)) symbols.insert(s);
  for (const ComputeDesc::Input& in : e.inputs)
    for (const sym::Expr& d : in.buffer.shape)
      for (const std::string& s : sym::free_symbols(d)) symbols.insert(s);
  if (e.inputs.size() + 1 > ir::kMaxEpilogueBuffers || symbols.size() > ir::kMaxEpilogueSymbols) {
    *why = "it reads more buffers or symbols than the routine passes an epilogue";
    return nullptr;
  }
  return epilogue;
}

} // namespace dsc::passes::lowering
