#pragma once
// Symbolic shape expressions over int64.
//
// Semantics, which eval(), the simplifier and the Z3 encoding all follow exactly:
// - Every Sym is a tensor dimension: its value is an integer >= 0. Nothing else is assumed.
// - Add, Sub, Mul are exact integer arithmetic. Evaluation that overflows int64 has no value
//   (eval() returns nullopt); the simplifier never folds an overflowing constant.
// - FloorDiv rounds toward negative infinity and FloorMod takes the sign of the divisor, as in
//   Python: a == b * (a / b) + a % b. Division by zero is defined so that expressions stay
//   total: a / 0 == 0 and a % 0 == a.
// - Min and Max are the usual ones. Comparisons, And, Or and Not are boolean-valued; a boolean
//   evaluates to 0 or 1. There are no GT/GE nodes: `a > b` is built as `b < a`.
//
// Nodes are immutable and hash-consed: two nodes with the same kind, fields and children are
// the same object, so structural equality of two Exprs is pointer equality (`same_as`). The
// canonical form (see Simplify.h) makes equal-valued expressions structurally equal as far as
// the simplifier can tell.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>

#include "support/Assert.h"

namespace dsc::symbolic {

enum class ExprKind : uint8_t {
#define DSC_EXPR_NODE(Name) Name,
#include "symbolic/ExprNodes.def"
};

const char* kind_name(ExprKind kind);

class ExprNode {
public:
  ExprNode(const ExprNode&) = delete;
  ExprNode& operator=(const ExprNode&) = delete;

  const ExprKind kind;
  // Filled in by the hash-consing table.
  size_t hash = 0;

protected:
  explicit ExprNode(ExprKind k) : kind(k) {}
  ~ExprNode() = default;

private:
  friend class Expr;
  friend struct ExprTable;
  mutable std::atomic<int> refcount_{0};
};

// A refcounted handle to an immutable, hash-consed node. Default-constructed handles are
// undefined; everything else is a valid expression.
class Expr {
public:
  Expr() = default;
  Expr(const Expr& other) : node_(other.node_) { retain(); }
  Expr(Expr&& other) noexcept : node_(other.node_) { other.node_ = nullptr; }
  Expr& operator=(const Expr& other);
  Expr& operator=(Expr&& other) noexcept;
  ~Expr() { release(); }

  // An integer constant; implicit so that `x + 1` reads naturally.
  Expr(int64_t value); // NOLINT(google-explicit-constructor)
  Expr(int value) : Expr(static_cast<int64_t>(value)) {} // NOLINT

  bool defined() const { return node_ != nullptr; }
  const ExprNode* get() const { return node_; }
  const ExprNode* operator->() const { return node_; }
  ExprKind kind() const { return node_->kind; }
  bool same_as(const Expr& other) const { return node_ == other.node_; }
  size_t hash() const { return node_ ? node_->hash : 0; }

  // Downcast without RTTI: `if (const Add* add = e.as<Add>())`.
  template <typename T> const T* as() const {
    if (node_ && node_->kind == T::node_kind) return static_cast<const T*>(node_);
    return nullptr;
  }
  template <typename T> bool is() const { return as<T>() != nullptr; }

  // Boolean-valued kinds: comparisons, And, Or, Not and BoolConst.
  bool is_bool() const;

  // Takes one reference already counted by the hash-consing table.
  static Expr adopt(const ExprNode* node) {
    Expr e;
    e.node_ = node;
    return e;
  }

private:
  void retain() const {
    if (node_) node_->refcount_.fetch_add(1, std::memory_order_relaxed);
  }
  void release();

  const ExprNode* node_ = nullptr;
};

struct ExprHash {
  size_t operator()(const Expr& e) const { return e.hash(); }
};
struct ExprSame {
  bool operator()(const Expr& a, const Expr& b) const { return a.same_as(b); }
};

// ---- Node types. `make` checks the operand types; it does not simplify. ----

struct Const : ExprNode {
  static constexpr ExprKind node_kind = ExprKind::Const;
  int64_t value;
  static Expr make(int64_t value);

private:
  friend struct ExprTable;
  explicit Const(int64_t v) : ExprNode(node_kind), value(v) {}
};

struct BoolConst : ExprNode {
  static constexpr ExprKind node_kind = ExprKind::BoolConst;
  bool value;
  static Expr make(bool value);

private:
  friend struct ExprTable;
  explicit BoolConst(bool v) : ExprNode(node_kind), value(v) {}
};

struct Sym : ExprNode {
  static constexpr ExprKind node_kind = ExprKind::Sym;
  // An identifier ([A-Za-z_][A-Za-z0-9_]*) other than true, false, min and max, so that every
  // expression prints as text that parses back to it (is_symbol_name, symbolic/Syntax.h).
  std::string name;
  static Expr make(std::string_view name);

private:
  friend struct ExprTable;
  explicit Sym(std::string_view n) : ExprNode(node_kind), name(n) {}
};

struct BinaryNode : ExprNode {
  Expr a, b;

protected:
  BinaryNode(ExprKind k, Expr x, Expr y) : ExprNode(k), a(std::move(x)), b(std::move(y)) {}
};

#define DSC_DECLARE_BINARY(Name)                                                                   \
  struct Name : BinaryNode {                                                                       \
    static constexpr ExprKind node_kind = ExprKind::Name;                                          \
    static Expr make(Expr a, Expr b);                                                              \
                                                                                                   \
  private:                                                                                         \
    friend struct ExprTable;                                                                       \
    Name(Expr x, Expr y) : BinaryNode(node_kind, std::move(x), std::move(y)) {}                    \
  };
DSC_DECLARE_BINARY(Add)
DSC_DECLARE_BINARY(Sub)
DSC_DECLARE_BINARY(Mul)
DSC_DECLARE_BINARY(FloorDiv)
DSC_DECLARE_BINARY(FloorMod)
DSC_DECLARE_BINARY(Min)
DSC_DECLARE_BINARY(Max)
DSC_DECLARE_BINARY(EQ)
DSC_DECLARE_BINARY(NE)
DSC_DECLARE_BINARY(LT)
DSC_DECLARE_BINARY(LE)
DSC_DECLARE_BINARY(And)
DSC_DECLARE_BINARY(Or)
#undef DSC_DECLARE_BINARY

struct Not : ExprNode {
  static constexpr ExprKind node_kind = ExprKind::Not;
  Expr a;
  static Expr make(Expr a);

private:
  friend struct ExprTable;
  explicit Not(Expr x) : ExprNode(node_kind), a(std::move(x)) {}
};

// ---- Builders: thin sugar over `make`, no simplification. ----

Expr sym(std::string_view name);
Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
Expr operator-(Expr a); // -a is built as (-1) * a; constants fold to a negative Const.
Expr floordiv(Expr a, Expr b);
Expr floormod(Expr a, Expr b);
Expr min(Expr a, Expr b);
Expr max(Expr a, Expr b);
Expr eq(Expr a, Expr b);
Expr ne(Expr a, Expr b);
Expr lt(Expr a, Expr b);
Expr le(Expr a, Expr b);
Expr gt(Expr a, Expr b); // lt(b, a)
Expr ge(Expr a, Expr b); // le(b, a)
Expr logical_and(Expr a, Expr b);
Expr logical_or(Expr a, Expr b);
Expr logical_not(Expr a);

// A deterministic total order on structure (kind, then fields, then children), independent of
// addresses, so canonical forms and printed output are the same in every run.
int compare(const Expr& a, const Expr& b);
struct ExprLess {
  bool operator()(const Expr& a, const Expr& b) const { return compare(a, b) < 0; }
};

// Number of live nodes in the hash-consing table; for tests and leak checks.
size_t live_node_count();

} // namespace dsc::symbolic
