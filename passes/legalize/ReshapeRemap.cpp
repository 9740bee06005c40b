#include "passes/legalize/ReshapeRemap.h"

#include "symbolic/Printer.h"
#include "symbolic/Simplify.h"

namespace dsc::passes::lowering {

namespace sym = symbolic;

namespace {

std::vector<size_t> looped_dims(const std::vector<sym::Expr>& shape, FnContext& ctx) {
  std::vector<size_t> dims;
  for (size_t d = 0; d < shape.size(); ++d)
    if (!ctx.is_one(shape[d])) dims.push_back(d);
  return dims;
}

} // namespace

std::optional<ReshapeRemap> ReshapeRemap::make(const std::vector<sym::Expr>& source,
                                               const std::vector<sym::Expr>& view, FnContext& ctx,
                                               FusionFact* fact, sym::Expr* undecided) {
  ReshapeRemap r;
  r.source_ = source;
  r.view_ = view;
  std::vector<size_t> s = looped_dims(source, ctx), v = looped_dims(view, ctx);
  // Every dim at least 1: with a dim of 0 the view is empty and no index is ever remapped.
  std::vector<sym::Expr> nonempty;
  for (const std::vector<sym::Expr>* shape : {&source, &view})
    for (const sym::Expr& d : *shape)
      nonempty.push_back(sym::le(sym::Expr(1), d));
  sym::ProofResult last; // of the last comparison `equal` made
  std::string outcome;   // its word for the log
  auto equal = [&](const sym::Expr& a, const sym::Expr& b) {
    outcome = "proved";
    if (sym::simplify(a).same_as(sym::simplify(b))) return true;
    last = ctx.decide(sym::eq(a, b), nonempty);
    outcome = ctx.outcome(sym::eq(a, b), last, nonempty);
    return last.verdict == sym::Verdict::Proved;
  };
  size_t i = 0, j = 0;
  while (i < s.size() && j < v.size()) {
    Group g{{s[i++]}, {v[j++]}, ""};
    sym::Expr ps = source[g.source[0]], pv = view[g.view[0]];
    while (!equal(ps, pv)) {
      // Grow the side whose product is not larger (either way, groups of proved-equal
      // products are a valid remap; this only finds them).
      sym::ProofResult less = ctx.decide(sym::le(ps, pv), nonempty);
      if (less.verdict == sym::Verdict::Proved && i < s.size()) {
        g.source.push_back(s[i]);
        ps = sym::simplify(ps * source[s[i++]]);
        continue;
      }
      sym::ProofResult greater = ctx.decide(sym::le(pv, ps), nonempty);
      if (greater.verdict == sym::Verdict::Proved && j < v.size()) {
        g.view.push_back(v[j]);
        pv = sym::simplify(pv * view[v[j++]]);
        continue;
      }
      sym::Expr same = sym::eq(ps, pv);
      if (fact)
        *fact = FusionFact{sym::to_string(same), "dims of the reshape that correspond",
                           fusion_outcome(last)};
      if (undecided) *undecided = same;
      return std::nullopt;
    }
    g.outcome = outcome;
    r.groups_.push_back(std::move(g));
  }
  if (i != s.size() || j != v.size()) {
    if (fact) *fact = FusionFact{"", "dims of the reshape left unmatched", "unknown"};
    return std::nullopt;
  }
  return r;
}

std::vector<FusionFact> ReshapeRemap::facts() const {
  std::vector<FusionFact> out;
  auto product = [](const std::vector<size_t>& dims, const std::vector<sym::Expr>& shape) {
    std::string s;
    for (size_t d : dims)
      s += (s.empty() ? "" : "*") + sym::to_string(shape[d]);
    return s;
  };
  for (const Group& g : groups_) {
    if (g.source.size() == 1 && g.view.size() == 1 &&
        sym::simplify(source_[g.source[0]]).same_as(sym::simplify(view_[g.view[0]])))
      continue;
    out.push_back(FusionFact{product(g.source, source_) + " == " + product(g.view, view_),
                             "the reshape is an index remap", g.outcome});
  }
  return out;
}

std::vector<sym::Expr> ReshapeRemap::operator()(const std::vector<sym::Expr>& index) const {
  std::vector<sym::Expr> out(source_.size(), sym::Expr(0));
  for (const Group& g : groups_) {
    sym::Expr flat(0);
    for (size_t d : g.view)
      flat = flat * view_[d] + index[d];
    // Delinearize: source dim t gets (flat / product of the later dims) mod its extent; the
    // first needs no mod (flat is below the group's product) and the last no division.
    sym::Expr stride(1);
    for (size_t k = g.source.size(); k-- > 0;) {
      size_t d = g.source[k];
      sym::Expr idx = k + 1 == g.source.size() ? flat : sym::floordiv(flat, stride);
      if (k > 0) idx = sym::floormod(idx, source_[d]);
      out[d] = sym::simplify(idx);
      stride = stride * source_[d];
    }
  }
  return out;
}

} // namespace dsc::passes::lowering
