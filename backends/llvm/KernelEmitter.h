#pragma once
// The state of kernel code generation (KernelCodegen.h has the semantics), shared by
// KernelCodegen.cpp (functions, statements, loops) and KernelExprCodegen.cpp (expressions,
// memory access, casts), and open to the KernelTarget the kernel is emitted for: a target
// that runs a loop in another function (the CPU's outlined `parallel` bodies) captures the
// frame's values, starts a frame in the new function, rebinds them there and emits the body
// with emit_stmt.

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include "backends/llvm/KernelTarget.h"
#include "ir/Module.h"

namespace dsc::llvmgen {

// How a dtype lives in registers (bool i1, f16/bf16 as float) and in memory (bool i8,
// f16/bf16 as i16).
llvm::Type* register_type(llvm::LLVMContext& c, ir::DType d);
llvm::Type* memory_type(llvm::LLVMContext& c, ir::DType d);
// Bytes per element in memory.
int dtype_bytes(ir::DType d);

class KernelEmitter {
public:
  struct BufferInfo {
    ir::DType dtype = ir::DType::F32;
    std::vector<symbolic::Expr> shape;
    llvm::Value* data = nullptr;       // ptr to the first element
    std::vector<llvm::Value*> strides; // index-typed, in elements, one per dim
  };
  struct LocalInfo {
    ir::DType dtype = ir::DType::F32;
    llvm::AllocaInst* slot = nullptr; // of register_type(dtype); SROA promotes it
  };
  // What belongs to the function being emitted: the kernel or a function the target
  // outlined.
  struct Frame {
    llvm::Function* fn = nullptr;
    llvm::BasicBlock* entry = nullptr;           // allocas go here
    std::map<std::string, llvm::Value*> symbols; // index-typed: shape symbols, loop variables
    std::map<std::string, BufferInfo> buffers;
    std::map<std::string, LocalInfo> locals;
  };
  using LoopBody = std::function<void(llvm::Value* iv)>;

  KernelEmitter(llvm::Module& m, const ir::PrimFunc& p, std::string symbol_name, KernelTarget& target);
  llvm::Function* emit();

  // ---- for targets
  llvm::IRBuilder<>& builder() { return b_; }
  llvm::Module& module() { return module_; }
  const std::string& name() const { return name_; }
  Frame& frame() { return frame_; }
  llvm::IntegerType* index_type() const { return index_type_; }
  llvm::ConstantInt* index_constant(int64_t v) const;
  // Makes `fn` the function being emitted, with an empty frame and the insertion point in its
  // new entry block; returns the frame it replaces, for leave_function.
  Frame enter_function(llvm::Function* fn);
  void leave_function(Frame saved);

  void emit_stmt(const ir::Stmt& s);
  // `f` as one loop in this function, with the llvm.loop metadata of its kind.
  void emit_serial_for(const ir::For& f);
  // for iv in 0..count (index-typed, none when count <= 0): body(iv); `hint` (may be null)
  // is the back edge's llvm.loop metadata.
  void emit_loop(llvm::Value* count, llvm::MDNode* hint, const std::string& name, const LoopBody& body);
  // A stack slot in the entry block of the current function.
  llvm::AllocaInst* entry_alloca(llvm::Type* t, uint64_t count, const std::string& name);
  void bind_buffer(const std::string& name, ir::DType dtype, const std::vector<symbolic::Expr>& shape,
                   llvm::Value* data);
  // A symbolic expression over the frame's symbols, index-typed (with nsw).
  llvm::Value* index(const symbolic::Expr& e);
  // Whether every symbol of `e` has a value in the frame and is none of `hidden`.
  bool knows_symbols(const symbolic::Expr& e, const std::set<std::string>& hidden) const;
  // Each `where` clause of the prim over the frame's symbols as an llvm.assume, for LLVM's
  // analyses (a trip count that is a multiple of the vector width needs no remainder loop).
  // Sound because every caller proved or checked them (infer_shapes' require_where, the
  // host's guards).
  void assume_where_clauses();

private:
  // ---- KernelCodegen.cpp
  void emit_seq(const ir::Seq& s);
  void emit_for(const ir::For& f);
  void emit_if(const ir::IfStmt& s);
  // Binds the buffer; a heap allocation that the enclosing block must free goes to `heap`.
  void emit_alloc(const ir::Alloc& a, std::vector<llvm::Value*>& heap);
  llvm::MDNode* loop_hint(const ir::For& f);

  // ---- KernelExprCodegen.cpp
  llvm::Value* emit_expr(const ir::PrimExpr& e);
  llvm::Value* emit_binary(const ir::PrimBinary& e);
  llvm::Value* emit_intrinsic(const ir::Intrinsic& e);
  llvm::Value* emit_constant(ir::DType d, double value);
  llvm::Value* emit_cast(llvm::Value* v, ir::DType from, ir::DType to);
  llvm::Value* element_address(const std::string& buffer, const std::vector<ir::PrimExpr>& indices);
  llvm::Value* emit_load(const ir::Load& e);
  void emit_store(const ir::Store& s);
  // Scoped noalias metadata: the access touches `buffer` and no other buffer.
  void tag_access(llvm::Instruction* access, const std::string& buffer);

  llvm::Module& module_;
  llvm::LLVMContext& ctx_;
  const ir::PrimFunc& prim_;
  std::string name_;
  KernelTarget& target_;
  llvm::IRBuilder<> b_;
  llvm::IntegerType* index_type_;
  Frame frame_;
  // Per buffer name (parameters and allocs): its !alias.scope and !noalias lists.
  std::map<std::string, std::pair<llvm::MDNode*, llvm::MDNode*>> alias_;
};

} // namespace dsc::llvmgen
