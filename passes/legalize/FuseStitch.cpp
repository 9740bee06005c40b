// fuse (passes/legalize/Fuse.h), step 2: stitching rows. The Fuser, its bookkeeping
// and the helpers the steps share are declared in passes/legalize/Fuser.h.

#include <algorithm>
#include <map>
#include <set>

#include "passes/legalize/ElementRewrite.h"
#include "passes/legalize/Fuser.h"
#include "passes/legalize/Scalar.h"

namespace dsc::passes::lowering::fusion {

struct Group {
  ComputeDesc desc;
  std::vector<size_t> members;
  std::vector<VarKey> stage_var; // per stage, the member's var
  std::map<VarKey, size_t> stage_of;
  std::vector<FusedOp> ops;
  std::vector<FusionFact> facts;
  bool open = true;
};

namespace {

// The dtype of a Reduce or Scalar stage's row value: its finish's, its accumulator's or its
// element's (a compute dtype; the stage's output, if any, stores it converted).
ir::DType row_value_dtype(const Stage& s) {
  if (s.kind == Stage::Kind::Scalar) return s.element.value->dtype;
  return s.reduction.finish.defined() ? s.reduction.finish->dtype : s.reduction.identity->dtype;
}

ir::Type result_type(const std::vector<ir::Type>& fields) {
  return fields.size() == 1 ? fields.front() : ir::Type::tuple(fields);
}

// A reduction with no condition, or a single-output map, of one binding var.
bool stitchable(const FnItem& c) {
  if (!c.desc || c.binding.vars.size() != 1 || c.desc->outputs.size() != 1) return false;
  if (c.desc->kind == ComputeDesc::Kind::Reduce) return !c.desc->reduction.condition.defined();
  return c.desc->kind == ComputeDesc::Kind::Map;
}

bool stage_reads(const Stage& s, const std::string& buffer) {
  bool found = false;
  for_each_load(s, [&](const ir::Load& l) { found = found || l.buffer == buffer; });
  return found;
}

// Every load of `buffer` in `e` is at `at` (a data-dependent index is no proof).
bool reads_only_at(const Element& e, const std::string& buffer, const Indices& at) {
  bool only = true;
  for_each_load_in(e, buffer, [&](const std::optional<Indices>& idx) {
    only = only && idx;
    for (size_t a = 0; only && a < idx->size(); ++a)
      only = (*idx)[a].same_as(at[a]);
  });
  return only;
}

} // namespace

void Fuser::stitch() {
  std::vector<Group> groups;
  std::map<VarKey, size_t> group_of;
  std::map<size_t, size_t> group_of_item;
  std::map<size_t, std::set<VarKey>> item_reads;
  for (size_t i = 0; i < items_.size(); ++i) {
    FnItem& c = items_[i];
    if (c.dropped) continue;
    item_reads[i] = reads(c);
    // The open groups it reads (a closed group's results are in memory before it runs).
    std::set<size_t> read_groups;
    for (VarKey v : item_reads[i]) {
      auto g = group_of.find(v);
      if (g != group_of.end() && groups[g->second].open) read_groups.insert(g->second);
    }
    bool joined = false;
    if (read_groups.size() == 1 && stitchable(c)) {
      size_t g = *read_groups.begin();
      joined = join(groups[g], i);
      if (joined) {
        group_of[c.binding.vars.front().get()] = g;
        group_of_item[i] = g;
      }
    }
    if (joined) continue;
    for (size_t g : read_groups)
      groups[g].open = false;
    if (stitchable(c) && c.desc->kind == ComputeDesc::Kind::Reduce) {
      group_of[c.binding.vars.front().get()] = groups.size();
      group_of_item[i] = groups.size();
      groups.push_back(start(i));
    }
  }
  for (size_t g = 0; g < groups.size(); ++g) {
    if (groups[g].members.size() < 2) continue;
    std::set<VarKey> outside;
    for (const auto& [i, rs] : item_reads) {
      auto gi = group_of_item.find(i);
      if (gi != group_of_item.end() && gi->second == g) continue;
      outside.insert(rs.begin(), rs.end());
    }
    finish(groups[g], outside);
  }
}

Group Fuser::start(size_t i) {
  const FnItem& c = items_[i];
  Group g{*c.desc, {i}, {c.binding.vars.front().get()}, {}, c.ops, c.facts, true};
  g.stage_of[c.binding.vars.front().get()] = 0;
  ComputeDesc& d = g.desc;
  d.kind = ComputeDesc::Kind::Stitch;
  d.stitch.rows = d.reduction.space;
  Stage s;
  s.kind = Stage::Kind::Reduce;
  s.reduction = d.reduction;
  s.local = d.names.fresh(d.op);
  s.output = 0;
  d.stitch.stages.push_back(std::move(s));
  return g;
}

// Joins item i to group g: its space must be the rows (a reduction or a row value) or the
// rows with loops of its own where the rows have extent 1 (a map), and it must read the
// group's row values at its own row and the group's maps at its own row.
bool Fuser::join(Group& g, size_t i) {
  FnItem& c = items_[i];
  const ComputeDesc& cd = *c.desc;
  ComputeDesc& gd = g.desc;
  const IndexSpace& rows = gd.stitch.rows;
  bool reduce = cd.kind == ComputeDesc::Kind::Reduce;
  const IndexSpace& space = reduce ? cd.reduction.space : cd.maps.front().space;
  if (space.vars.size() != rows.vars.size()) return false;
  std::vector<FusionFact> facts;
  bool inner = false;
  for (size_t a = 0; a < rows.vars.size(); ++a) {
    bool row = rows.vars[a].is<sym::Sym>(), own = space.vars[a].is<sym::Sym>();
    if (!row) {
      if (own && reduce) return false;
      inner = inner || own;
      continue;
    }
    if (!own) return false;
    sym::ProofResult r = ctx_.decide(sym::eq(space.extents[a], rows.extents[a]));
    note_fact(facts, space.extents[a], rows.extents[a], "row extent of " + cd.op, r);
    if (r.verdict != sym::Verdict::Proved) {
      refuse(items_[g.members.front()], c, "its extent is not shown equal to the rows'", facts);
      return false;
    }
  }
  // Its reads of the group: at its own row (and index 0 of a row value's kept dims).
  std::map<std::string, size_t> member_input; // c's buffer -> stage
  for (const ComputeDesc::Input& in : cd.inputs) {
    auto s = g.stage_of.find(in.arg.get());
    if (s != g.stage_of.end()) member_input[in.buffer.name] = s->second;
  }
  bool at_row = true;
  for_each_load(cd, [&](const ir::Load& l) {
    auto s = member_input.find(l.buffer);
    if (s == member_input.end()) return;
    std::optional<Indices> idx = symbolic_indices(l);
    if (!idx) {
      at_row = false;
      return;
    }
    bool row_value = gd.stitch.stages[s->second].kind != Stage::Kind::Map;
    for (size_t a = 0; a < rows.vars.size(); ++a) {
      if (rows.vars[a].is<sym::Sym>())
        at_row = at_row && (*idx)[a].same_as(space.vars[a]);
      else if (row_value)
        at_row = at_row && (*idx)[a].same_as(sym::Expr(0));
    }
  });
  if (!at_row) {
    refuse(items_[g.members.front()], c, "it reads the group's results at other rows");
    return false;
  }
  // Rename c into the group: row variables become the rows', its own loops, locals and
  // buffers get fresh names, and its reads of the group become row values or loads of the
  // group's maps.
  ElementRewrite rw;
  for (size_t a = 0; a < space.vars.size(); ++a) {
    const sym::Sym* v = space.vars[a].as<sym::Sym>();
    if (!v) continue;
    rw.indices[v->name] =
        rows.vars[a].is<sym::Sym>() ? rows.vars[a] : sym::sym(gd.names.fresh(v->name));
  }
  if (reduce) {
    for (const sym::Expr& v : cd.reduction.reduced.vars)
      if (const sym::Sym* s = v.as<sym::Sym>())
        rw.indices[s->name] = sym::sym(gd.names.fresh(s->name));
    rw.locals[cd.reduction.accumulator] = gd.names.fresh(cd.reduction.accumulator);
  }
  const Element& own_element = reduce ? cd.reduction.body : cd.maps.front().element;
  for (const LocalLet& l : own_element.lets)
    rw.locals[l.name] = gd.names.fresh(l.name);
  for (const ComputeDesc::Input& in : cd.inputs) {
    if (member_input.count(in.buffer.name)) continue;
    std::string name;
    for (const ComputeDesc::Input& gin : gd.inputs)
      if (gin.arg.get() == in.arg.get()) name = gin.buffer.name;
    if (name.empty()) {
      ir::Buffer b = in.buffer;
      b.name = gd.names.fresh(in.buffer.name);
      gd.inputs.push_back(ComputeDesc::Input{b, in.arg});
      name = b.name;
    }
    rw.buffers[in.buffer.name] = name;
  }
  rw.on_load = [&](const ir::Load& l) -> ir::PrimExpr {
    auto s = member_input.find(l.buffer);
    if (s == member_input.end()) return ir::PrimExpr();
    const Stage& stage = gd.stitch.stages[s->second];
    if (stage.kind == Stage::Kind::Map)
      return ir::Load::make(l.dtype, gd.outputs[*stage.output].name, l.indices, l.loc);
    // The row value as the member stored it (rounded to a 16-bit float, say), as c read it.
    return rw.handoff(ir::LocalRef::make(row_value_dtype(stage), stage.local), l.dtype);
  };
  Stage stage;
  stage.local = gd.names.fresh(cd.op);
  ir::Buffer out = cd.outputs.front();
  out.name = gd.names.fresh(out.name);
  stage.output = gd.outputs.size();
  gd.outputs.push_back(out);
  if (reduce) {
    stage.kind = Stage::Kind::Reduce;
    stage.reduction = cd.reduction;
    rw.apply_to(stage.reduction);
  } else {
    stage.kind = inner ? Stage::Kind::Map : Stage::Kind::Scalar;
    stage.space = rw.apply(cd.maps.front().space);
    stage.element = rw.apply(cd.maps.front().element);
  }
  g.stage_of[c.binding.vars.front().get()] = gd.stitch.stages.size();
  g.stage_var.push_back(c.binding.vars.front().get());
  gd.stitch.stages.push_back(std::move(stage));
  g.members.push_back(i);
  g.ops.insert(g.ops.end(), c.ops.begin(), c.ops.end());
  g.facts.insert(g.facts.end(), c.facts.begin(), c.facts.end());
  g.facts.insert(g.facts.end(), facts.begin(), facts.end());
  return true;
}

// A map stage's row that later stages read back and nothing outside needs is written into
// the output of the last stage that reads it, when that stage reads it only at the index
// it writes (element by element, it reads before it writes): softmax's exponentials become
// its quotients in place, with no full-size intermediate. The stages written in place.
std::set<size_t> Fuser::write_rows_in_place(Group& g, const std::set<VarKey>& outside) {
  ComputeDesc& d = g.desc;
  std::vector<Stage>& stages = d.stitch.stages;
  std::set<size_t> in_place;
  std::set<size_t> shared; // outputs a row was redirected into: one row each at a time
  for (size_t s = 0; s < stages.size(); ++s) {
    VarKey v = g.stage_var[s];
    if (stages[s].kind != Stage::Kind::Map || outside.count(v) || results_.count(v)) continue;
    const ir::Buffer& row = d.outputs[*stages[s].output];
    std::optional<size_t> last;
    for (size_t t = s + 1; t < stages.size(); ++t)
      if (stage_reads(stages[t], row.name)) last = t;
    if (!last || stages[*last].kind != Stage::Kind::Map) continue;
    Stage& f = stages[*last];
    const ir::Buffer& out = d.outputs[*f.output];
    bool same = out.dtype == row.dtype && out.shape.size() == row.shape.size();
    for (size_t a = 0; same && a < out.shape.size(); ++a)
      same = ctx_.equal(out.shape[a], row.shape[a]);
    if (!same || shared.count(*f.output) || !reads_only_at(f.element, row.name, f.space.vars))
      continue;
    // Every stage that writes the row's buffer (this one, and any row redirected into it
    // before) now writes f's output, and every read of it reads there.
    ElementRewrite rw;
    rw.buffers[row.name] = out.name;
    for (Stage& t : stages)
      rw.apply_to(t);
    size_t from = *stages[s].output;
    for (size_t t = 0; t < stages.size(); ++t) {
      if (stages[t].output != from || t == *last) continue;
      stages[t].output = f.output;
      in_place.insert(t);
    }
    shared.insert(*f.output);
  }
  return in_place;
}

// The group becomes its last member's description; the others are dropped. Outputs are the
// maps' (later stages read them) and the row values something outside the group reads.
void Fuser::finish(Group& g, const std::set<VarKey>& outside) {
  // The members' reads become the group's (counted once, for the epilogues after).
  for (size_t m : g.members)
    forget_reads(m);
  ComputeDesc& d = g.desc;
  std::set<size_t> in_place = write_rows_in_place(g, outside);
  std::vector<ir::Buffer> outputs;
  std::vector<ir::VarRef> vars;
  std::vector<ir::Type> types;
  std::map<size_t, size_t> renumbered; // candidate output -> output
  for (size_t s = 0; s < d.stitch.stages.size(); ++s) {
    Stage& stage = d.stitch.stages[s];
    const FnItem& member = items_[g.members[s]];
    VarKey v = g.stage_var[s];
    if (stage.kind != Stage::Kind::Map && !outside.count(v) && !results_.count(v)) {
      stage.output.reset();
      continue;
    }
    if (in_place.count(s)) continue; // renumbered with the stage whose output it shares
    renumbered[*stage.output] = outputs.size();
    outputs.push_back(d.outputs[*stage.output]);
    stage.output = outputs.size() - 1;
    vars.push_back(member.binding.vars.front());
    types.push_back(member.binding.vars.front()->type);
  }
  for (size_t s : in_place) {
    Stage& stage = d.stitch.stages[s];
    stage.output = renumbered.at(*stage.output);
  }
  d.outputs = std::move(outputs);
  d.type = result_type(types);
  FnItem& last = items_[g.members.back()];
  for (size_t m : g.members)
    kernel_of_[m] = g.members.back();
  for (size_t m = 0; m + 1 < g.members.size(); ++m) {
    FnItem& member = items_[g.members[m]];
    member.dropped = true;
    last.inserted.insert(last.inserted.begin(), member.inserted.begin(), member.inserted.end());
  }
  last.binding = ir::Binding{vars, last.binding.value, false, last.binding.loc};
  last.desc = std::move(d);
  last.ops = std::move(g.ops);
  last.facts = std::move(g.facts);
  const size_t at = g.members.back();
  for (VarKey v : reads(last)) {
    ++uses_[v];
    readers_[v].push_back(at);
  }
}

// Item i no longer reads what it reads now.
void Fuser::forget_reads(size_t i) {
  for (VarKey v : reads(items_[i])) {
    --uses_[v];
    std::vector<size_t>& rs = readers_[v];
    rs.erase(std::remove(rs.begin(), rs.end(), i), rs.end());
  }
}

} // namespace dsc::passes::lowering::fusion
