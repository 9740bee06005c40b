#include "ir/ops/OpUtil.h"

#include <algorithm>

#include "symbolic/Eval.h"
#include "symbolic/Printer.h"
#include "symbolic/Simplify.h"

namespace dsc::ir::ops {

namespace sym = symbolic;

Expr default_int0() {
  return Literal::make(int64_t{0});
}
Expr default_int1() {
  return Literal::make(int64_t{1});
}
Expr default_false() {
  return Literal::make(false);
}
Expr default_f32() {
  return StringImm::make("f32");
}
Expr default_i64() {
  return StringImm::make("i64");
}

std::optional<int64_t> literal_int(const Expr& e) {
  if (const Literal* lit = e.as<Literal>()) {
    if (const int64_t* v = std::get_if<int64_t>(&lit->value)) return *v;
    return std::nullopt;
  }
  const Call* c = e.as<Call>();
  if (!c || op_id(c->callee) != OpId::neg || c->args.size() != 1 || !c->kwargs.empty()) return std::nullopt;
  std::optional<int64_t> v = literal_int(c->args[0]);
  if (!v || *v == INT64_MIN) return std::nullopt;
  return -*v;
}

std::optional<double> literal_number(const Expr& e) {
  if (const Literal* lit = e.as<Literal>()) {
    if (const int64_t* v = std::get_if<int64_t>(&lit->value)) return static_cast<double>(*v);
    if (const double* v = std::get_if<double>(&lit->value)) return *v;
    return std::nullopt;
  }
  const Call* c = e.as<Call>();
  if (!c || op_id(c->callee) != OpId::neg || c->args.size() != 1 || !c->kwargs.empty()) return std::nullopt;
  std::optional<double> v = literal_number(c->args[0]);
  if (!v) return std::nullopt;
  return -*v;
}

int64_t int_arg(const BoundArgs& args, size_t i) {
  std::optional<int64_t> v = literal_int(args[i]);
  internal_assert(v) << "Int argument " << i << " was not normalized by bind_arguments";
  return *v;
}

sym::Expr dim_arg(const BoundArgs& args, size_t i) {
  if (!args[i].defined()) return sym::Expr();
  const ShapeExpr* s = args[i].as<ShapeExpr>();
  internal_assert(s && s->dims.size() == 1) << "Dim argument " << i << " was not normalized";
  return canon(s->dims[0]);
}

std::vector<sym::Expr> shape_arg(const BoundArgs& args, size_t i) {
  const ShapeExpr* s = args[i].as<ShapeExpr>();
  internal_assert(s) << "Shape argument " << i << " was not normalized";
  std::vector<sym::Expr> dims;
  for (const sym::Expr& d : s->dims)
    dims.push_back(canon(d));
  return dims;
}

bool is_shape_arg(const BoundArgs& args, size_t i) {
  return args[i].defined() && args[i].is<ShapeExpr>();
}

std::optional<std::pair<int64_t, int64_t>> int_pair_arg(const BoundArgs& args, size_t i,
                                                        const std::string& op, const char* name,
                                                        int64_t min, ShapeContext& ctx) {
  const std::string what = op + ": " + name;
  int64_t h = 0, w = 0;
  if (is_shape_arg(args, i)) {
    std::vector<sym::Expr> dims = shape_arg(args, i);
    std::optional<int64_t> ch = dims.size() == 2 ? as_const(dims[0]) : std::nullopt;
    std::optional<int64_t> cw = dims.size() == 2 ? as_const(dims[1]) : std::nullopt;
    if (!ch || !cw) {
      ctx.error(args.locs[i],
                what + " must be an int or a pair of ints, got " + shape_string(dims));
      return std::nullopt;
    }
    h = *ch;
    w = *cw;
  } else {
    h = w = int_arg(args, i);
  }
  if (h < min || w < min) {
    ctx.error(args.locs[i], what + " must be >= " + std::to_string(min) + ", got " +
                                std::to_string(h < min ? h : w));
    return std::nullopt;
  }
  return std::make_pair(h, w);
}

sym::Expr canon(const sym::Expr& e) {
  return sym::simplify(e);
}

std::optional<int64_t> as_const(const sym::Expr& e) {
  if (const sym::Const* c = e.as<sym::Const>()) return c->value;
  sym::Expr c = canon(e);
  if (const sym::Const* k = c.as<sym::Const>()) return k->value;
  return std::nullopt;
}

sym::Expr product(const std::vector<sym::Expr>& dims) {
  sym::Expr p(1);
  for (const sym::Expr& d : dims)
    p = p * d;
  return canon(p);
}

std::string shape_string(const std::vector<sym::Expr>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? ", " : "") + sym::to_string(dims[i]);
  return s + "]";
}

bool require_nonnegative(const std::vector<sym::Expr>& dims, SourceLoc loc, const std::string& op,
                         ShapeContext& ctx) {
  for (const sym::Expr& d : dims) {
    if (std::optional<int64_t> c = as_const(d)) {
      if (*c >= 0) continue;
      ctx.error(loc, op + ": dim " + std::to_string(*c) + " is negative");
      return false;
    }
    if (!ctx.require(sym::le(sym::Expr(0), d), loc,
                     op + ": dim " + sym::to_string(d) + " must be >= 0"))
      return false;
  }
  return true;
}

std::optional<size_t> normalize_axis(int64_t axis, size_t rank, const std::string& op,
                                     SourceLoc loc, ShapeContext& ctx) {
  int64_t r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r) {
    ctx.error(loc, op + ": axis " + std::to_string(axis) + " is out of range for rank " +
                       std::to_string(rank));
    return std::nullopt;
  }
  return static_cast<size_t>(axis < 0 ? axis + r : axis);
}

namespace {

const char* literal_kind(DType d) {
  int rank = literal_kind_rank(d);
  return rank == 0 ? "bool" : rank == 1 ? "integer" : "float";
}

} // namespace

std::optional<UnifiedDType> unify_dtypes(const std::string& op, const BoundArgs& args,
                                         const std::vector<size_t>& which, ShapeContext& ctx) {
  std::optional<size_t> strong;
  for (size_t i : which) {
    const Type& t = args.types[i];
    if (!t.is_tensor() || t.weak) continue;
    if (!strong) {
      strong = i;
      continue;
    }
    if (t.dtype != args.types[*strong].dtype) {
      ctx.error(args.locs[i], op + ": dtypes differ: " + dtype_name(args.types[*strong].dtype) +
                                  " vs " + dtype_name(t.dtype));
      return std::nullopt;
    }
  }
  if (strong) {
    DType d = args.types[*strong].dtype;
    for (size_t i : which) {
      const Type& t = args.types[i];
      if (!t.is_tensor() || !t.weak || weak_fits(t.dtype, d)) continue;
      ctx.error(args.locs[i], op + ": a " + literal_kind(t.dtype) + " literal cannot take dtype " +
                                  dtype_name(d));
      return std::nullopt;
    }
    return UnifiedDType{d, false};
  }
  std::optional<DType> widest;
  for (size_t i : which) {
    const Type& t = args.types[i];
    if (!t.is_tensor()) continue;
    if (!widest || literal_kind_rank(t.dtype) > literal_kind_rank(*widest)) widest = t.dtype;
  }
  return UnifiedDType{widest.value_or(DType::F32), true};
}

std::optional<std::vector<sym::Expr>> broadcast_dims(const std::string& op,
                                                     const std::vector<sym::Expr>& a,
                                                     const std::vector<sym::Expr>& b, SourceLoc loc,
                                                     const std::string& what, ShapeContext& ctx) {
  size_t rank = std::max(a.size(), b.size());
  std::vector<sym::Expr> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Right-aligned: result dim i pairs a[i - (rank - a.size())] with b's likewise.
    bool has_a = i >= rank - a.size(), has_b = i >= rank - b.size();
    if (!has_b) {
      out[i] = canon(a[i - (rank - a.size())]);
      continue;
    }
    if (!has_a) {
      out[i] = canon(b[i - (rank - b.size())]);
      continue;
    }
    sym::Expr x = canon(a[i - (rank - a.size())]), y = canon(b[i - (rank - b.size())]);
    if (x.same_as(y)) {
      out[i] = x;
      continue;
    }
    std::optional<int64_t> cx = as_const(x), cy = as_const(y);
    if (cx == 1) {
      out[i] = y;
      continue;
    }
    if (cy == 1) {
      out[i] = x;
      continue;
    }
    sym::Bindings w;
    sym::Verdict v = ctx.decide(sym::eq(x, y), &w);
    if (v == sym::Verdict::Proved) {
      out[i] = x;
      continue;
    }
    if (!cy && ctx.proved(sym::eq(y, sym::Expr(1)))) {
      out[i] = x;
      continue;
    }
    if (!cx && ctx.proved(sym::eq(x, sym::Expr(1)))) {
      out[i] = y;
      continue;
    }
    if (v == sym::Verdict::Disproved) {
      Diagnostic& d = ctx.error(loc, op + ": cannot broadcast dims " + sym::to_string(x) + " and " +
                                         sym::to_string(y));
      d.notes.push_back({loc, "the shapes are " + shape_string(a) + " and " + shape_string(b) +
                                  "; broadcast dims must be equal or 1"});
      std::string vars = format_bindings(w, sym::eq(x, y));
      if (!vars.empty()) {
        std::optional<int64_t> vx = sym::eval(x, w), vy = sym::eval(y, w);
        std::string example = "e.g. " + vars;
        if (vx && vy) example += " gives " + std::to_string(*vx) + " vs " + std::to_string(*vy);
        d.notes.push_back({loc, "they can never be equal (" + example + ")"});
      }
      return std::nullopt;
    }
    ctx.record(sym::eq(x, y), loc, what + " " + std::to_string(i) + " of " + op);
    out[i] = x;
  }
  return out;
}

std::optional<std::vector<sym::Expr>> broadcast_shapes(const std::string& op, const BoundArgs& args,
                                                       const std::vector<size_t>& which,
                                                       ShapeContext& ctx) {
  std::vector<sym::Expr> out;
  bool first = true;
  for (size_t i : which) {
    const Type& t = args.types[i];
    if (!t.is_tensor()) continue;
    if (first) {
      for (const sym::Expr& d : t.shape)
        out.push_back(canon(d));
      first = false;
      continue;
    }
    std::optional<std::vector<sym::Expr>> next =
        broadcast_dims(op, out, t.shape, args.locs[i], "broadcast of dim", ctx);
    if (!next) return std::nullopt;
    out = std::move(*next);
  }
  return out;
}

Type tensor_of(DType dtype, std::vector<sym::Expr> shape, bool weak) {
  for (sym::Expr& d : shape)
    d = canon(d);
  Type t = Type::tensor(dtype, std::move(shape));
  t.weak = weak;
  return t;
}

} // namespace dsc::ir::ops
