#pragma once
// The syntax tree the Bison parser builds and Resolve.cpp turns into IR. It records what was
// written and where, nothing more: names are unresolved strings, and one expression grammar
// serves graph code, prim code, dims and `where` clauses alike (the resolver decides what an
// expression means from where it stands).
//
// Nodes own their children through unique_ptr. Every node records its height (1 for a leaf,
// a chain of one level's binary operators counting once); the parser caps it at kMaxNesting,
// and a chain's length at kMaxChainLength, so that the recursive walkers, and the destructors,
// never run deep enough to overflow the compiler's stack on hostile input.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "support/Diagnostics.h"

namespace dsc::lang::ast {

inline constexpr int kMaxNesting = 256;
// A chain of binary operators of one level counts as one level of nesting, up to this many
// operators; the walkers recurse once per link, on the compiler's large stack
// (support/LargeStack.h).
inline constexpr int kMaxChainLength = 65536;

// A token range; diagnostics point at `begin`.
struct Span {
  SourceLoc begin;
  SourceLoc end;
};

struct Ident {
  std::string name;
  SourceLoc loc;
};

struct Expr;
struct Stmt;
struct Block;
struct LoopParts;
using ExprPtr = std::unique_ptr<Expr>;
using StmtPtr = std::unique_ptr<Stmt>;

enum class ExprKind : uint8_t {
  Name,     // `x`, `nn.softmax` (dotted: a qualified name, only meaningful as a callee)
  Int,      // `768`: the magnitude, up to 2^63 so that a negated literal can reach INT64_MIN
  Float,    // `0.125`
  Bool,     // `true`
  String,   // `"f16"`, escapes already decoded
  Question, // `?`, an anonymous dim
  Unary,    // `-x`, `!x`
  Binary,   // `a + b`, `a && b`
  Compare,  // `a < b <= c`: a chain of comparisons (one link is the common case)
  Call,     // `f(a, axis=1)`
  Index,    // `t[0]`, `buf[i, j]`
  List,     // `[a, b]`
  Tuple,    // `(a, b)`, `(a,)`, `()`
  If,       // `if c { ... } else { ... }` (graph code)
  For,      // `for i in lo..hi [where ...] carry (...) [while c] { ... }` (graph code; see LoopParts)
  Error,    // stands in for a subtree dropped after a diagnostic
};

// The infix and prefix operators, one per row of ir/Operators.def.
enum class Op : uint8_t {
#define DSC_OPERATOR(Name, callee, spelling, arity) Name,
#include "ir/Operators.def"
};
const char* op_spelling(Op op); // "+", "&&", "-" (for Neg), "!"

struct Arg {
  std::string keyword; // empty for a positional argument
  SourceLoc keyword_loc;
  ExprPtr value;
};

struct Expr {
  ExprKind kind = ExprKind::Error;
  SourceLoc loc; // the operator for Unary/Binary/Compare, else the first token
  int height = 1;
  // Binary: the operators in the chain of one level it ends (`a + b - c`: 2), which counts as
  // one level of nesting (kMaxNesting) however long, up to kMaxChainLength.
  int chain_length = 0;
  bool parenthesized = false; // written inside `( )`, so `-(1)` does not fold to a literal

  std::string text; // Name (dotted), String, Call's callee
  uint64_t int_value = 0;
  double float_value = 0;
  bool bool_value = false;
  Op op = Op::Add;                   // Unary, Binary
  std::vector<Op> ops;               // Compare: ops[i] joins operands[i] and operands[i+1]
  std::vector<SourceLoc> op_locs;    // Compare
  std::vector<ExprPtr> operands;     // Unary(1) Binary(2) Compare(n+1) Index(base, indices...)
                                     // List/Tuple items, If(cond)
  std::vector<Arg> args;             // Call
  std::unique_ptr<Block> then_block; // If
  std::unique_ptr<Block> else_block; // If
  std::unique_ptr<LoopParts> loop;   // For

  Expr();
  ~Expr();
  Expr(Expr&&) noexcept;
  Expr& operator=(Expr&&) noexcept;
};

// A type as written: `f32[B, S]` (dims set), `f32` or `tensor` or `int` (a bare name), or a
// tuple `(T, U)`.
struct TypeNode {
  enum class Kind : uint8_t { Named, Tensor, Tuple, Error };
  Kind kind = Kind::Error;
  std::string name; // Named, Tensor: the dtype or type name
  SourceLoc loc;
  std::vector<ExprPtr> dims;    // Tensor
  std::vector<TypeNode> fields; // Tuple
  int height = 1;
};

enum class StmtKind : uint8_t {
  Let,    // `let a = e`, `let a: T = e`, `let q, k, v = e`; `var x: f32 = e` (is_var)
  Return, // `return e` (graph code)
  Assign, // `x = e` (prim)
  Store,  // `buf[i, j] = e` (prim)
  Eval,   // `f(args)` for its effect (prim)
  For,    // `[KIND] for i in lo..hi { body }`, KIND a spelling of ir/ForKinds.def
  If,     // `if c { ... } [else { ... }]` (prim)
  Alloc,  // `alloc t: f32[64] local`
};

enum class AllocScope : uint8_t { Default, Local, Shared, Global };

struct Stmt {
  StmtKind kind = StmtKind::Let;
  SourceLoc loc;
  int height = 1;

  bool is_var = false;      // Let: `var` rather than `let`
  std::vector<Ident> names; // Let: the bound names; Assign/Alloc/For: names[0]
  bool has_type = false;    // Let, Alloc
  TypeNode type;            // Let (when has_type), Alloc
  ExprPtr value;            // Let, Return, Assign, Store, Eval (the Call)
  ExprPtr target;           // Store: the Index expression `buf[i, j]`
  std::string loop_kind;            // For: the word before `for` ("" for none)
  SourceLoc loop_kind_loc;          // For: where that word was written
  ExprPtr lo, hi;                   // For
  ExprPtr cond;                     // If
  std::unique_ptr<Block> body;      // For body, If then-body
  std::unique_ptr<Block> else_body; // If; null when absent
  AllocScope scope = AllocScope::Default;
};

// `{ stmts [result] }`. Graph if-branches end with a result expression; other blocks do not.
struct Block {
  SourceLoc loc;     // the `{`
  SourceLoc end_loc; // the `}`
  std::vector<StmtPtr> stmts;
  ExprPtr result;
  int height = 1;
};

// One carried value of a graph loop: `name = init` or `name: T = init`.
struct Carry {
  Ident name;
  bool has_type = false;
  TypeNode type;
  ExprPtr init;
};

// A graph loop: `for var in lo..hi [where clauses] carry (carries) [while cond] { body }`.
struct LoopParts {
  Ident var;
  ExprPtr lo, hi;
  std::vector<ExprPtr> where;
  std::vector<Carry> carries;
  std::unique_ptr<Block> cond; // `while c` wrapped in a block, or `while { ... }`; null when absent
  std::unique_ptr<Block> body;
};

// `as [dims] strides [strides] offset X` after an extern parameter's type: the routine reads
// the buffer passed as a strided view (ir/StridedView.h).
struct ParamView {
  SourceLoc loc;
  std::vector<ExprPtr> shape, strides;
  ExprPtr offset;
};

struct Param {
  Ident name;
  TypeNode type;
  ExprPtr default_value;           // `axis: int = -1`
  std::shared_ptr<ParamView> view; // an extern's operand read in place, or null
};

// `stride = [2, 2]` after an extern's routine (ir::RoutineAttribute).
struct RoutineAttribute {
  Ident name;
  std::vector<int64_t> values;
};

enum class DeclKind : uint8_t { Import, Fn, Prim, Extern };

struct Decl {
  DeclKind kind = DeclKind::Fn;
  SourceLoc loc; // the keyword
  Ident name;    // the function, or the imported module
  std::vector<Param> params;
  bool has_ret = false;
  TypeNode ret;               // Fn (when has_ret), Extern
  std::shared_ptr<ParamView> ret_view; // Extern: the result written through a strided view
  std::vector<Param> outputs; // Prim
  std::vector<ExprPtr> where;
  std::unique_ptr<Block> body; // Fn, Prim
  std::string symbol;          // Extern: "blas.sgemm"
  SourceLoc symbol_loc;
  std::vector<RoutineAttribute> attributes; // Extern: `= "cudnn.conv2d"(stride = [2, 2])`
  Ident epilogue;              // Extern: the prim the routine runs on finished rows, if any
  Ident epilogue_first_row;    // Extern: the epilogue's symbol for a block's first row, if any
};

struct Module {
  std::vector<Decl> decls;
  // Declarations left out because they contain syntax errors (their names, when known).
  std::vector<std::string> dropped;
};

// ---- Builders the grammar actions use; each computes the node's height. ----

ExprPtr make_leaf(ExprKind kind, SourceLoc loc);
ExprPtr make_unary(Op op, SourceLoc loc, ExprPtr x);
ExprPtr make_binary(Op op, SourceLoc loc, ExprPtr a, ExprPtr b);
// Appends to `lhs` when it is an unparenthesized chain, else starts a new one.
ExprPtr make_compare(Op op, SourceLoc loc, ExprPtr lhs, ExprPtr rhs);
ExprPtr make_call(std::string callee, SourceLoc loc, std::vector<Arg> args);
ExprPtr make_index(SourceLoc loc, ExprPtr base, std::vector<ExprPtr> indices);
ExprPtr make_list(ExprKind kind, SourceLoc loc, std::vector<ExprPtr> items);
ExprPtr make_if(SourceLoc loc, ExprPtr cond, std::unique_ptr<Block> then_block,
                std::unique_ptr<Block> else_block);
ExprPtr make_for(SourceLoc loc, std::unique_ptr<LoopParts> parts);

// Declarations travel by pointer: they are the largest values, and the parser's stack cells
// are as large as the largest value.
std::unique_ptr<Decl> make_decl(DeclKind kind, const Span& at, std::string name,
                                const Span& name_at);
TypeNode named_type(std::string name, const Span& at);
TypeNode tensor_type(std::string name, const Span& at, std::vector<ExprPtr> dims);
TypeNode tuple_type(const Span& at, std::vector<TypeNode> fields);
StmtPtr make_stmt(StmtKind kind, const Span& at);
std::unique_ptr<Block> make_block(const Span& open, const Span& close, std::vector<StmtPtr> stmts,
                                  ExprPtr result);
// `else if ...` is an else block whose only content is the nested `if`.
std::unique_ptr<Block> wrap_expr(ExprPtr e);
std::unique_ptr<Block> wrap_stmt(StmtPtr s);

// The height of a block from its statements and result; of a statement from its parts.
void update_height(Block& b);
void update_height(Stmt& s);

} // namespace dsc::lang::ast
