#include "passes/legalize/Epilogue.h"

#include <map>
#include <set>

#include "ir/Functor.h"
#include "ir/LibraryRoutine.h"
#include "ir/OpRegistry.h"
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

// How the epilogue's source reads each buffer.
struct Reads {
  bool data_dependent = false;
  bool all_at_own_index = true;
  bool all_at_own_row = true;
  bool any_column = false; // at its own column (not column 0)
  bool uses_rows = false;
};

// Notes a load read where the element's own index is `vars` (the row variables, then the
// column's).
void note_load(std::map<std::string, Reads>& reads, const ir::Load& l,
               const std::vector<sym::Expr>& vars, const std::set<std::string>& row_vars) {
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
}

// The inputs of `source` but the product, each read by row (offset to the block by the
// routine), whole, or whole at a row's position (indexed by a function of the row's indices:
// a mask indexed by the batch of a batch of products, read where the block's first row plus
// the row puts it), and the product read only at its own index (over `extents`: the rows' dims,
// then the columns'); false with `*why` set when one is read otherwise.
struct RowInputs {
  std::set<std::string> by_row, by_row_column_zero, by_position;

  bool classify(const ComputeDesc& source, const std::map<std::string, Reads>& reads,
                const std::string& product, const std::vector<sym::Expr>& extents,
                FnContext& ctx, std::string* why) {
    for (const ComputeDesc::Input& in : source.inputs) {
      auto found = reads.find(in.buffer.name);
      if (found == reads.end()) continue;
      const Reads& r = found->second;
      if (r.data_dependent) {
        *why = "it reads '" + in.buffer.name + "' at a data-dependent index";
        return false;
      }
      if (in.buffer.name == product) {
        if (!r.all_at_own_index) {
          *why = "it reads the product other than at its own index";
          return false;
        }
        continue;
      }
      if (!r.uses_rows) continue; // read whole
      // Indexed by row: the leading dims, and the columns or one column (read at 0).
      const std::vector<sym::Expr>& shape = in.buffer.shape;
      bool rows_alike = r.all_at_own_row && shape.size() == extents.size();
      for (size_t a = 0; rows_alike && a + 1 < shape.size(); ++a)
        rows_alike = ctx.equal(shape[a], extents[a]);
      if (rows_alike)
        rows_alike = r.any_column ? ctx.equal(shape.back(), extents.back())
                                  : ctx.is_one(shape.back());
      if (!rows_alike)
        by_position.insert(in.buffer.name);
      else
        (r.any_column ? by_row : by_row_column_zero).insert(in.buffer.name);
    }
    return true;
  }

  // The inputs of the epilogue: `source`'s but the product, those indexed by row viewed as
  // [rows, columns] or [rows, 1].
  std::vector<ComputeDesc::Input> inputs(const ComputeDesc& source, const std::string& product,
                                         const sym::Expr& rows, const sym::Expr& columns) const {
    std::vector<ComputeDesc::Input> out;
    for (const ComputeDesc::Input& in : source.inputs) {
      if (in.buffer.name == product) continue;
      ComputeDesc::Input viewed = in;
      if (by_row.count(in.buffer.name)) viewed.buffer.shape = {rows, columns};
      if (by_row_column_zero.count(in.buffer.name)) viewed.buffer.shape = {rows, sym::Expr(1)};
      out.push_back(viewed);
    }
    return out;
  }

  // A load of the source as the epilogue reads it at `row` and `column` (the product's as the
  // result `out`; one at a row's position with the rows' variables replaced by `position`), or
  // undefined to keep it.
  ir::PrimExpr load(const ir::Load& l, const std::string& product, const std::string& out,
                    const sym::Expr& row, const sym::Expr& column,
                    const std::map<std::string, sym::Expr>& position) const {
    if (by_position.count(l.buffer)) {
      std::vector<ir::PrimExpr> indices;
      for (const ir::PrimExpr& i : l.indices)
        indices.push_back(index(sym::simplify(ir::substitute(i.as<ir::Index>()->value, position))));
      return ir::Load::make(l.dtype, l.buffer, std::move(indices));
    }
    if (by_row_column_zero.count(l.buffer))
      return ir::Load::make(l.dtype, l.buffer, {index(row), index(sym::Expr(0))});
    if (l.buffer != product && !by_row.count(l.buffer)) return ir::PrimExpr();
    return ir::Load::make(l.dtype, l.buffer == product ? out : l.buffer,
                          {index(row), index(column)});
  }
};

// An epilogue's frame: a description of `kind` named after `source`, whose result is
// `source`'s viewed as [rows, columns] and whose inputs are those `inputs` gives, with fresh
// symbols for the block's row count and its row, and, when an input is read at a row's
// position, for the block's first row, and each of the row variables `row_vars` (over
// `row_extents`) as the position first_row + row gives it.
struct Frame {
  std::shared_ptr<ComputeDesc> desc;
  sym::Expr rows, row;
  ir::Buffer out;
  std::map<std::string, sym::Expr> position;

  Frame(const ComputeDesc& source, NameSet names, ComputeDesc::Kind kind, const RowInputs& inputs,
        const std::string& product, const sym::Expr& columns,
        const std::vector<sym::Expr>& row_vars, const std::vector<sym::Expr>& row_extents)
      : desc(std::make_shared<ComputeDesc>(std::move(names))) {
    rows = sym::sym(desc->names.fresh("rows"));
    row = sym::sym(desc->names.fresh("row"));
    if (!inputs.by_position.empty()) {
      desc->first_row = desc->names.fresh("first_row");
      // The row's position among all rows, then its index along each row dim, the last fastest.
      sym::Expr rest = sym::sym(desc->first_row) + row;
      for (size_t a = row_vars.size(); a-- > 0;) {
        const sym::Sym* v = row_vars[a].as<sym::Sym>();
        if (v) position[v->name] = sym::simplify(a == 0 ? rest : sym::floormod(rest, row_extents[a]));
        rest = sym::floordiv(rest, row_extents[a]);
      }
    }
    out = source.outputs.front();
    out.shape = {rows, columns};
    desc->kind = kind;
    desc->op = source.op;
    desc->type = ir::Type::tensor(out.dtype, out.shape);
    desc->outputs = {out};
    desc->inputs = inputs.inputs(source, product, rows, columns);
  }
};

// Whether the epilogue stays within what the routine passes it.
bool within_limits(const ComputeDesc& e, std::string* why) {
  std::set<std::string> symbols;
  for (const sym::Expr& d : e.outputs.front().shape)
    for (const std::string& s : sym::free_symbols(d)) symbols.insert(s);
  for (const ComputeDesc::Input& in : e.inputs)
    for (const sym::Expr& d : in.buffer.shape)
      for (const std::string& s : sym::free_symbols(d)) symbols.insert(s);
  if (!e.first_row.empty()) symbols.insert(e.first_row);
  if (e.inputs.size() + 1 > ir::kMaxEpilogueBuffers || symbols.size() > ir::kMaxEpilogueSymbols) {
    *why = "it reads more buffers or symbols than the routine passes an epilogue";
    return false;
  }
  return true;
}

std::set<std::string> names_of(const std::vector<sym::Expr>& vars) {
  std::set<std::string> out;
  for (const sym::Expr& v : vars)
    if (const sym::Sym* s = v.as<sym::Sym>()) out.insert(s->name);
  return out;
}

} // namespace

std::shared_ptr<ComputeDesc> make_epilogue(const ComputeDesc& map, const std::string& product,
                                           ir::DType dtype, FnContext& ctx, std::string* why) {
  const MapOutput& m = map.maps.front();
  const std::vector<sym::Expr>& vars = m.space.vars;
  if (vars.empty() || map.outputs.front().dtype != dtype) {
    *why = std::string("the map's result is not a matrix of the product's dtype (") +
           ir::dtype_name(dtype) + ") that the product's rows can fold into";
    return nullptr;
  }
  // Every index variable but the last (the column's).
  const std::set<std::string> row_vars = names_of({vars.begin(), vars.end() - 1});
  std::map<std::string, Reads> reads;
  for_each_load(map, [&](const ir::Load& l) { note_load(reads, l, vars, row_vars); });
  RowInputs inputs;
  if (!inputs.classify(map, reads, product, m.space.extents, ctx, why)) return nullptr;

  const sym::Expr columns = m.space.extents.back();
  Frame f(map, map.names, ComputeDesc::Kind::Map, inputs, product, columns,
          {vars.begin(), vars.end() - 1}, {m.space.extents.begin(), m.space.extents.end() - 1});
  ComputeDesc& e = *f.desc;
  const sym::Expr &rows = f.rows, &row = f.row;
  const ir::Buffer& out = f.out;
  const sym::Expr column = vars.back().is<sym::Sym>() ? sym::sym(e.names.fresh("col")) : vars.back();
  ElementRewrite rw;
  if (const sym::Sym* v = vars.back().as<sym::Sym>()) rw.indices[v->name] = column;
  rw.on_load = [&](const ir::Load& l) {
    return inputs.load(l, product, out.name, row, column, f.position);
  };
  Element element = rw.apply(m.element);
  if (element_mentions(element, row_vars)) {
    *why = "its element uses a row's index other than to read";
    return nullptr;
  }
  e.maps = {MapOutput{IndexSpace{{rows, columns}, {row, column}}, std::move(element)}};
  return within_limits(e, why) ? f.desc : nullptr;
}

std::shared_ptr<ComputeDesc> make_stitched_epilogue(const ComputeDesc& group,
                                                    const std::string& product, ir::DType dtype,
                                                    FnContext& ctx, std::string* why) {
  const Stitch& st = group.stitch;
  const size_t rank = st.rows.vars.size();
  if (group.outputs.size() != 1 || group.outputs.front().dtype != dtype || rank == 0 ||
      st.rows.vars.back().is<sym::Sym>() || st.stages.empty()) {
    *why = std::string("the stitched group does not reduce rows of the product along its last "
                       "dim into one result of the product's dtype (") +
           ir::dtype_name(dtype) + ")";
    return nullptr;
  }
  const std::vector<sym::Expr> row_list(st.rows.vars.begin(), st.rows.vars.end() - 1);
  const std::set<std::string> row_vars = names_of(row_list);
  // Only maps over the rows and the columns write, all of them the result, the last stage
  // among them; the product, overwritten by the first, is read only before it (later stages
  // read the result back, where they wrote it). Each stage's column variable, if it has one.
  const std::string& result_buffer = group.outputs.front().name;
  std::optional<size_t> first_write;
  std::vector<std::optional<sym::Expr>> column(st.stages.size());
  for (size_t s = 0; s < st.stages.size(); ++s) {
    const Stage& stage = st.stages[s];
    const bool last = s + 1 == st.stages.size();
    if ((stage.output && (stage.kind != Stage::Kind::Map || *stage.output != 0)) ||
        (last && !stage.output)) {
      *why = "the stitched group writes something other than its result, in its last stage";
      return nullptr;
    }
    bool reads_product = false;
    for_each_load(stage, [&](const ir::Load& l) { reads_product = reads_product || l.buffer == product; });
    if (first_write && reads_product) {
      *why = "the stitched group reads the product after it writes its result over it";
      return nullptr;
    }
    if (stage.output && !first_write) first_write = s;
    if (stage.kind == Stage::Kind::Reduce) {
      const Reduction& r = stage.reduction;
      if (r.reduced.vars.size() != 1 || !r.reduced.vars[0].is<sym::Sym>() || r.condition.defined()) {
        *why = "a reduction of the group runs over more than the columns";
        return nullptr;
      }
      column[s] = r.reduced.vars[0];
    } else if (stage.kind == Stage::Kind::Map) {
      bool over_rows = stage.space.vars.size() == rank && stage.space.vars.back().is<sym::Sym>();
      for (size_t a = 0; over_rows && a + 1 < rank; ++a)
        over_rows = sym::compare(stage.space.vars[a], st.rows.vars[a]) == 0;
      if (!over_rows) {
        *why = "a map of the group runs over more than the rows and the columns";
        return nullptr;
      }
      column[s] = stage.space.vars.back();
    }
  }
  // How each stage reads: at the rows' variables, then its column's (a stage with no column
  // reads no product and indexes a row only at column 0).
  NameSet names = group.names;
  const sym::Expr no_column = sym::sym(names.fresh("no_column"));
  std::map<std::string, Reads> reads;
  for (size_t s = 0; s < st.stages.size(); ++s) {
    std::vector<sym::Expr> vars = row_list;
    vars.push_back(column[s] ? *column[s] : no_column);
    for_each_load(st.stages[s], [&](const ir::Load& l) { note_load(reads, l, vars, row_vars); });
  }
  const Stage& result = st.stages.back();
  const sym::Expr columns = result.space.extents.back();
  std::vector<sym::Expr> extents(st.rows.extents.begin(), st.rows.extents.end() - 1);
  extents.push_back(columns);
  RowInputs inputs;
  if (!inputs.classify(group, reads, product, extents, ctx, why)) return nullptr;
  if (auto r = reads.find(result_buffer); r != reads.end() && !r->second.all_at_own_index) {
    *why = "it reads its result back other than where it wrote it";
    return nullptr;
  }

  Frame f(group, names, ComputeDesc::Kind::Stitch, inputs, product, columns, row_list,
          {extents.begin(), extents.end() - 1});
  ComputeDesc& e = *f.desc;
  const sym::Expr &rows = f.rows, &row = f.row;
  const ir::Buffer& out = f.out;
  e.stitch.rows = IndexSpace{{rows, sym::Expr(1)}, {row, sym::Expr(0)}};
  for (size_t s = 0; s < st.stages.size(); ++s) {
    Stage stage = st.stages[s];
    const sym::Expr col = column[s] ? *column[s] : no_column;
    ElementRewrite rw;
    rw.on_load = [&](const ir::Load& l) {
      if (l.buffer == result_buffer)
        return ir::Load::make(l.dtype, out.name, {index(row), index(col)});
      return inputs.load(l, product, out.name, row, col, f.position);
    };
    rw.apply_to(stage);
    stage.reduction.space = e.stitch.rows;
    stage.space = stage.kind == Stage::Kind::Map
                      ? IndexSpace{{rows, st.stages[s].space.extents.back()}, {row, col}}
                      : e.stitch.rows;
    if (stage.kind == Stage::Kind::Map) stage.output = 0;
    const Reduction& r = stage.reduction;
    std::vector<Element> parts = {stage.element, r.body};
    for (const ir::PrimExpr& x : {r.finish, r.identity})
      if (x.defined()) parts.push_back(Element{{}, x});
    for (const Element& part : parts)
      if (element_mentions(part, row_vars)) {
        *why = "a stage uses a row's index other than to read";
        return nullptr;
      }
    e.stitch.stages.push_back(std::move(stage));
  }
  return within_limits(e, why) ? f.desc : nullptr;
}

} // namespace dsc::passes::lowering
