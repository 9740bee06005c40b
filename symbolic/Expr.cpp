#include "symbolic/Expr.h"

#include <cstring>
#include <functional>
#include <limits>
#include <mutex>
#include <unordered_set>

#include "symbolic/Syntax.h"

namespace dsc::symbolic {

const char* kind_name(ExprKind kind) {
  switch (kind) {
#define DSC_EXPR_NODE(Name)                                                                        \
  case ExprKind::Name:                                                                             \
    return #Name;
#include "symbolic/ExprNodes.def"
  }
  return "?";
}

namespace {

size_t mix(size_t seed, size_t value) {
  return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}

// Hash and equality of a node's own fields; children are compared by identity because they
// are already hash-consed.
size_t shallow_hash(const ExprNode* n) {
  size_t h = std::hash<int>()(static_cast<int>(n->kind));
  switch (n->kind) {
  case ExprKind::Const:
    return mix(h, std::hash<int64_t>()(static_cast<const Const*>(n)->value));
  case ExprKind::BoolConst:
    return mix(h, static_cast<const BoolConst*>(n)->value ? 1 : 2);
  case ExprKind::Sym:
    return mix(h, std::hash<std::string>()(static_cast<const Sym*>(n)->name));
  case ExprKind::Not:
    return mix(h, static_cast<const Not*>(n)->a.hash());
  default: {
    const auto* b = static_cast<const BinaryNode*>(n);
    return mix(mix(h, b->a.hash()), b->b.hash());
  }
  }
}

bool shallow_equal(const ExprNode* x, const ExprNode* y) {
  if (x->kind != y->kind) return false;
  switch (x->kind) {
  case ExprKind::Const:
    return static_cast<const Const*>(x)->value == static_cast<const Const*>(y)->value;
  case ExprKind::BoolConst:
    return static_cast<const BoolConst*>(x)->value == static_cast<const BoolConst*>(y)->value;
  case ExprKind::Sym:
    return static_cast<const Sym*>(x)->name == static_cast<const Sym*>(y)->name;
  case ExprKind::Not:
    return static_cast<const Not*>(x)->a.same_as(static_cast<const Not*>(y)->a);
  default: {
    const auto* a = static_cast<const BinaryNode*>(x);
    const auto* b = static_cast<const BinaryNode*>(y);
    return a->a.same_as(b->a) && a->b.same_as(b->b);
  }
  }
}

void delete_node(const ExprNode* n) {
  switch (n->kind) {
#define DSC_EXPR_NODE(Name)                                                                        \
  case ExprKind::Name:                                                                             \
    delete static_cast<const Name*>(n);                                                            \
    return;
#include "symbolic/ExprNodes.def"
  }
}

} // namespace

// The hash-consing table. A node's last reference is dropped under the table's lock, and a
// lookup that finds a node takes its reference under the same lock, so a node is never both
// revived and deleted.
struct ExprTable {
  struct Hash {
    size_t operator()(const ExprNode* n) const { return n->hash; }
  };
  struct Equal {
    bool operator()(const ExprNode* a, const ExprNode* b) const { return shallow_equal(a, b); }
  };

  std::mutex mutex;
  std::unordered_set<const ExprNode*, Hash, Equal> nodes;

  static ExprTable& get() {
    // Leaked on purpose: Exprs in other static objects may be released after main returns.
    static ExprTable* table = new ExprTable();
    return *table;
  }

  template <typename Node, typename... Args> static Expr intern(Args&&... args) {
    Node* fresh = new Node(std::forward<Args>(args)...);
    fresh->hash = shallow_hash(fresh);
    ExprTable& table = get();
    std::lock_guard<std::mutex> lock(table.mutex);
    auto [it, inserted] = table.nodes.insert(fresh);
    if (!inserted) {
      delete fresh;
      (*it)->refcount_.fetch_add(1, std::memory_order_relaxed);
      return Expr::adopt(*it);
    }
    fresh->refcount_.store(1, std::memory_order_relaxed);
    return Expr::adopt(fresh);
  }

  // Called with the last reference about to go; decides under the lock.
  static void release_last(const ExprNode* n) {
    ExprTable& table = get();
    {
      std::lock_guard<std::mutex> lock(table.mutex);
      if (n->refcount_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
      table.nodes.erase(n);
    }
    delete_node(n); // drops the children's references outside the lock
  }
};

void Expr::release() {
  if (!node_) return;
  int count = node_->refcount_.load(std::memory_order_relaxed);
  while (count > 1) {
    if (node_->refcount_.compare_exchange_weak(count, count - 1, std::memory_order_acq_rel)) {
      node_ = nullptr;
      return;
    }
  }
  const ExprNode* n = node_;
  node_ = nullptr;
  ExprTable::release_last(n);
}

Expr& Expr::operator=(const Expr& other) {
  if (this == &other) return *this;
  other.retain();
  release();
  node_ = other.node_;
  return *this;
}

Expr& Expr::operator=(Expr&& other) noexcept {
  if (this == &other) return *this;
  release();
  node_ = other.node_;
  other.node_ = nullptr;
  return *this;
}

Expr::Expr(int64_t value) : Expr(Const::make(value)) {}

bool Expr::is_bool() const {
  internal_assert(defined()) << "is_bool() on an undefined Expr";
  switch (kind()) {
  case ExprKind::BoolConst:
  case ExprKind::EQ:
  case ExprKind::NE:
  case ExprKind::LT:
  case ExprKind::LE:
  case ExprKind::And:
  case ExprKind::Or:
  case ExprKind::Not:
    return true;
  default:
    return false;
  }
}

Expr Const::make(int64_t value) { return ExprTable::intern<Const>(value); }
Expr BoolConst::make(bool value) { return ExprTable::intern<BoolConst>(value); }

// Symbols print as themselves, so only names the parser reads back as a symbol are allowed.
Expr Sym::make(std::string_view name) {
  internal_assert(is_symbol_name(name)) << "'" << name << "' is not a symbol name";
  return ExprTable::intern<Sym>(name);
}

namespace {

void check_int_operands(const char* op, const Expr& a, const Expr& b) {
  internal_assert(a.defined() && b.defined()) << op << " of an undefined Expr";
  internal_assert(!a.is_bool() && !b.is_bool()) << op << " needs integer operands";
}

void check_bool_operands(const char* op, const Expr& a, const Expr& b) {
  internal_assert(a.defined() && b.defined()) << op << " of an undefined Expr";
  internal_assert(a.is_bool() && b.is_bool()) << op << " needs boolean operands";
}

} // namespace

#define DSC_DEFINE_INT_BINARY(Name)                                                                \
  Expr Name::make(Expr a, Expr b) {                                                                \
    check_int_operands(#Name, a, b);                                                               \
    return ExprTable::intern<Name>(std::move(a), std::move(b));                                    \
  }
DSC_DEFINE_INT_BINARY(Add)
DSC_DEFINE_INT_BINARY(Sub)
DSC_DEFINE_INT_BINARY(Mul)
DSC_DEFINE_INT_BINARY(FloorDiv)
DSC_DEFINE_INT_BINARY(FloorMod)
DSC_DEFINE_INT_BINARY(Min)
DSC_DEFINE_INT_BINARY(Max)
DSC_DEFINE_INT_BINARY(EQ)
DSC_DEFINE_INT_BINARY(NE)
DSC_DEFINE_INT_BINARY(LT)
DSC_DEFINE_INT_BINARY(LE)
#undef DSC_DEFINE_INT_BINARY

Expr And::make(Expr a, Expr b) {
  check_bool_operands("And", a, b);
  return ExprTable::intern<And>(std::move(a), std::move(b));
}

Expr Or::make(Expr a, Expr b) {
  check_bool_operands("Or", a, b);
  return ExprTable::intern<Or>(std::move(a), std::move(b));
}

Expr Not::make(Expr a) {
  internal_assert(a.defined() && a.is_bool()) << "Not needs a boolean operand";
  return ExprTable::intern<Not>(std::move(a));
}

Expr sym(std::string_view name) { return Sym::make(name); }
Expr operator+(Expr a, Expr b) { return Add::make(std::move(a), std::move(b)); }
Expr operator-(Expr a, Expr b) { return Sub::make(std::move(a), std::move(b)); }
Expr operator*(Expr a, Expr b) { return Mul::make(std::move(a), std::move(b)); }

Expr operator-(Expr a) {
  if (const Const* c = a.as<Const>()) {
    if (c->value != std::numeric_limits<int64_t>::min()) return Const::make(-c->value);
  }
  return Mul::make(Const::make(-1), std::move(a));
}

Expr floordiv(Expr a, Expr b) { return FloorDiv::make(std::move(a), std::move(b)); }
Expr floormod(Expr a, Expr b) { return FloorMod::make(std::move(a), std::move(b)); }
Expr min(Expr a, Expr b) { return Min::make(std::move(a), std::move(b)); }
Expr max(Expr a, Expr b) { return Max::make(std::move(a), std::move(b)); }
Expr eq(Expr a, Expr b) { return EQ::make(std::move(a), std::move(b)); }
Expr ne(Expr a, Expr b) { return NE::make(std::move(a), std::move(b)); }
Expr lt(Expr a, Expr b) { return LT::make(std::move(a), std::move(b)); }
Expr le(Expr a, Expr b) { return LE::make(std::move(a), std::move(b)); }
Expr gt(Expr a, Expr b) { return LT::make(std::move(b), std::move(a)); }
Expr ge(Expr a, Expr b) { return LE::make(std::move(b), std::move(a)); }
Expr logical_and(Expr a, Expr b) { return And::make(std::move(a), std::move(b)); }
Expr logical_or(Expr a, Expr b) { return Or::make(std::move(a), std::move(b)); }
Expr logical_not(Expr a) { return Not::make(std::move(a)); }

int compare(const Expr& a, const Expr& b) {
  if (a.same_as(b)) return 0;
  if (a.kind() != b.kind()) return a.kind() < b.kind() ? -1 : 1;
  switch (a.kind()) {
  case ExprKind::Const: {
    int64_t x = a.as<Const>()->value, y = b.as<Const>()->value;
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  case ExprKind::BoolConst:
    return a.as<BoolConst>()->value < b.as<BoolConst>()->value ? -1 : 1;
  case ExprKind::Sym: {
    int c = a.as<Sym>()->name.compare(b.as<Sym>()->name);
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  case ExprKind::Not:
    return compare(a.as<Not>()->a, b.as<Not>()->a);
  default: {
    const auto* x = static_cast<const BinaryNode*>(a.get());
    const auto* y = static_cast<const BinaryNode*>(b.get());
    if (int c = compare(x->a, y->a)) return c;
    return compare(x->b, y->b);
  }
  }
}

size_t live_node_count() {
  ExprTable& table = ExprTable::get();
  std::lock_guard<std::mutex> lock(table.mutex);
  return table.nodes.size();
}

} // namespace dsc::symbolic
