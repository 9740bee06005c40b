#pragma once
// A module: the three kinds of function of docs/architecture.md, in source order.
//   fn      Function: graph code over tensors (params, `where` clauses, a Block body).
//   prim    PrimFunc: loop code over buffers in destination-passing style; the caller
//           allocates the outputs.
//   extern  ExternFunc: a signature bound to a vendor routine ("blas.sgemm").
// All are immutable; passes build new ones. A Module is a cheap value (handles only).

#include <memory>
#include <string>
#include <vector>

#include "ir/IR.h"
#include "ir/RoutineAttribute.h"
#include "ir/StridedView.h"

namespace dsc::ir {

struct WhereClause {
  symbolic::Expr predicate;
  SourceLoc loc;
};

// A shape fact the function relies on: a `where` clause, a fact an op implies (matmul's
// inner dims agree, broadcast dims agree), or a type assertion's dims. infer_shapes records
// them; collect_facts decides each one.
struct ShapeFact {
  enum class Origin : uint8_t { Where, Op, Assertion };
  enum class Status : uint8_t {
    Unchecked,    // not yet looked at by collect_facts
    Assumed,      // a `where` clause: checked on entry at run time, assumed inside
    Proved,       // proved at compile time: no run-time check
    RuntimeCheck, // not provable: checked at run time
  };
  symbolic::Expr predicate;
  SourceLoc loc;
  Origin origin = Origin::Op;
  Status status = Status::Unchecked;
  std::string what;            // "matmul inner dims", "broadcast of a dim of add", ...
  std::string counterexample;  // RuntimeCheck: "S=1, T=2" from the prover, when it has one
};

struct Function : RefCounted {
  std::string name;
  std::vector<VarRef> params;
  // Per parameter: its default value (a Literal or StringImm) or undefined
  // (`axis: int = -1`, `mask: tensor = 0.0`).
  std::vector<Expr> defaults;
  Type ret_type; // Unknown when not declared
  std::vector<WhereClause> where;
  Expr body; // a Block
  std::vector<ShapeFact> facts;
  SourceLoc loc;
};

struct Buffer {
  std::string name;
  DType dtype = DType::F32;
  std::vector<symbolic::Expr> shape;
  SourceLoc loc;
};

struct PrimFunc : RefCounted {
  std::string name;
  std::vector<Buffer> inputs;
  std::vector<Buffer> outputs;
  std::vector<WhereClause> where;
  Stmt body;
  SourceLoc loc;
  // A shape-bucket variant (passes/BucketKernels.h): the prim it is a copy of, under one more
  // where clause; empty otherwise. Printed as a comment, so not part of the parsed form or of
  // structural equality.
  std::string variant_of;
};

struct ExternFunc : RefCounted {
  std::string name;
  std::vector<VarRef> params;
  Type ret_type;
  std::vector<WhereClause> where;
  std::string symbol; // "blas.sgemm"
  // The routine's attributes, in the order its table names them (none for most routines).
  std::vector<RoutineAttribute> attributes;
  // Per parameter, empty or how the routine reads the buffer passed (ir/StridedView.h); all
  // empty or one entry per parameter.
  std::vector<std::optional<StridedView>> views;
  // How the routine writes the buffer it returns, when not as itself: a permutation of its
  // dims (ir/StridedView.h: permutation_mismatch), as a product written head by head into a
  // head-merged layout. Only for a routine that reads views, and not with an epilogue.
  std::optional<StridedView> result_view;
  // A prim the routine runs on each finished block of rows of its result, or empty
  // (ir/LibraryRoutine.h: epilogue_mismatch says what it must look like).
  std::string epilogue;
  // The epilogue's symbol that receives each block's first row (its index among all the
  // result's rows), or empty: an epilogue reading an input at an index computed from the
  // whole row, not offset by rows (a mask indexed by the batch of a batch of products).
  std::string epilogue_first_row;
  SourceLoc loc;
};

class Module;

struct Import {
  std::string name; // "nn"
  SourceLoc loc;
  // The imported module once the front end has loaded it; its functions are called as
  // `nn.softmax`. Not part of the importing module's printed form or its equality.
  std::shared_ptr<const Module> module;
};

class Module {
public:
  struct Decl {
    Ref<Function> fn;
    Ref<PrimFunc> prim;
    Ref<ExternFunc> ext;
    const std::string& name() const;
    SourceLoc loc() const;
  };

  std::vector<Import> imports;
  std::vector<Decl> decls; // exactly one of fn/prim/ext set in each, in source order

  void add(Ref<Function> f) { decls.push_back(Decl{std::move(f), nullptr, nullptr}); }
  void add(Ref<PrimFunc> p) { decls.push_back(Decl{nullptr, std::move(p), nullptr}); }
  void add(Ref<ExternFunc> e) { decls.push_back(Decl{nullptr, nullptr, std::move(e)}); }

  // Lookup by name; null when absent.
  const Decl* find(std::string_view name) const;
  Ref<Function> function(std::string_view name) const;
  Ref<PrimFunc> prim(std::string_view name) const;
  Ref<ExternFunc> ext(std::string_view name) const;
  // A function of an imported module by qualified name ("nn.softmax"), or null.
  Ref<Function> imported_function(std::string_view qualified_name) const;
};

} // namespace dsc::ir
