#include "ir/StridedView.h"

#include "ir/Type.h"
#include "symbolic/Printer.h"
#include "symbolic/Simplify.h"

namespace dsc::ir {

StridedView dense_view(const std::vector<symbolic::Expr>& shape) {
  StridedView v;
  v.shape = shape;
  v.strides.assign(shape.size(), symbolic::Expr(1));
  for (size_t k = shape.size(); k-- > 1;)
    v.strides[k - 1] = symbolic::simplify(v.strides[k] * shape[k]);
  v.offset = symbolic::Expr(0);
  return v;
}

symbolic::Expr last_element(const StridedView& v) {
  symbolic::Expr last = v.offset;
  for (size_t k = 0; k < v.shape.size() && k < v.strides.size(); ++k)
    last = last + (v.shape[k] - 1) * v.strides[k];
  return symbolic::simplify(last);
}

std::string view_mismatch(const StridedView& v, const Type& buffer) {
  if (!buffer.is_tensor()) return "only a tensor can be read as a strided view";
  if (v.shape.size() != v.strides.size())
    return "the view has " + std::to_string(v.shape.size()) + " dims but " +
           std::to_string(v.strides.size()) + " strides";
  if (!v.offset.defined()) return "the view has no offset";
  return "";
}

std::string permutation_mismatch(const StridedView& v, const Type& buffer) {
  if (std::string why = view_mismatch(v, buffer); !why.empty()) return why;
  auto same = [](const symbolic::Expr& a, const symbolic::Expr& b) {
    return symbolic::compare(symbolic::simplify(a), symbolic::simplify(b)) == 0;
  };
  auto one = [&](const symbolic::Expr& e) { return same(e, symbolic::Expr(1)); };
  if (!same(v.offset, 0)) return "the view does not start at the buffer's first element";
  const StridedView dense = dense_view(buffer.shape);
  std::vector<bool> taken(dense.shape.size(), false);
  for (size_t d = 0; d < v.shape.size(); ++d) {
    if (one(v.shape[d])) continue;
    bool found = false;
    for (size_t b = 0; b < dense.shape.size() && !found; ++b) {
      if (taken[b] || one(dense.shape[b])) continue;
      if (same(v.shape[d], dense.shape[b]) && same(v.strides[d], dense.strides[b]))
        found = taken[b] = true;
    }
    if (!found)
      return "dim " + std::to_string(d) + " of the view (" + symbolic::to_string(v.shape[d]) +
             " at stride " + symbolic::to_string(v.strides[d]) +
             ") is no dim of the buffer at its row-major stride";
  }
  for (size_t b = 0; b < dense.shape.size(); ++b)
    if (!taken[b] && !one(dense.shape[b]))
      return "dim " + std::to_string(b) + " of the buffer (" + symbolic::to_string(dense.shape[b]) +
             ") is no dim of the view";
  return "";
}

bool same_view(const StridedView& a, const StridedView& b) {
  auto same = [](const std::vector<symbolic::Expr>& x, const std::vector<symbolic::Expr>& y) {
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i)
      if (!x[i].same_as(y[i])) return false;
    return true;
  };
  return same(a.shape, b.shape) && same(a.strides, b.strides) && a.offset.same_as(b.offset);
}

std::string view_text(const StridedView& v) {
  auto list = [](const std::vector<symbolic::Expr>& xs) {
    std::string s = "[";
    for (size_t i = 0; i < xs.size(); ++i) s += (i ? ", " : "") + symbolic::to_string(xs[i]);
    return s + "]";
  };
  return "as " + list(v.shape) + " strides " + list(v.strides) + " offset " +
         symbolic::to_string(v.offset);
}

} // namespace dsc::ir
