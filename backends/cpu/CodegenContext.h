#pragma once
// Internal to backends/cpu: the state of kernel code generation (KernelCodegen.h), shared by
// KernelCodegen.cpp (functions, statements, loops), KernelExprCodegen.cpp (expressions,
// memory access, casts) and ParallelCodegen.cpp (outlined parallel loops).

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include "ir/Module.h"

namespace dsc::cpu {

// How a dtype lives in registers (bool i1, f16/bf16 as float) and in memory (bool i8,
// f16/bf16 as i16).
llvm::Type* register_type(llvm::LLVMContext& c, ir::DType d);
llvm::Type* memory_type(llvm::LLVMContext& c, ir::DType d);
// Bytes per element in memory.
int dtype_bytes(ir::DType d);

class KernelEmitter {
public:
  KernelEmitter(llvm::Module& m, const ir::PrimFunc& p, std::string symbol_name);
  llvm::Function* emit();

private:
  struct BufferInfo {
    ir::DType dtype = ir::DType::F32;
    std::vector<symbolic::Expr> shape;
    llvm::Value* data = nullptr;       // ptr to the first element
    std::vector<llvm::Value*> strides; // i64, in elements, one per dim
  };
  struct LocalInfo {
    ir::DType dtype = ir::DType::F32;
    llvm::AllocaInst* slot = nullptr; // of register_type(dtype); SROA promotes it
  };
  // What belongs to the function being emitted: the kernel or an outlined parallel body.
  struct Frame {
    llvm::Function* fn = nullptr;
    llvm::BasicBlock* entry = nullptr;           // allocas go here
    std::map<std::string, llvm::Value*> symbols; // i64: shape symbols and loop variables
    std::map<std::string, BufferInfo> buffers;
    std::map<std::string, LocalInfo> locals;
    bool parallel = false; // inside a parallel body: nested parallel loops run serially
  };
  using LoopBody = std::function<void(llvm::Value* iv)>;

  // ---- KernelCodegen.cpp
  void emit_stmt(const ir::Stmt& s);
  void emit_seq(const ir::Seq& s);
  void emit_for(const ir::For& f);
  void emit_if(const ir::IfStmt& s);
  // Binds the buffer; a heap allocation that the enclosing block must free goes to `heap`.
  void emit_alloc(const ir::Alloc& a, std::vector<llvm::Value*>& heap);
  // for iv in 0..count (i64, none when count <= 0): body(iv); `hint` (may be null) is the
  // back edge's llvm.loop metadata.
  void emit_loop(llvm::Value* count, llvm::MDNode* hint, const std::string& name, const LoopBody& body);
  llvm::MDNode* loop_hint(const ir::For& f);
  // A stack slot in the entry block of the current function.
  llvm::AllocaInst* entry_alloca(llvm::Type* t, uint64_t count, const std::string& name);
  void bind_buffer(const std::string& name, ir::DType dtype, const std::vector<symbolic::Expr>& shape,
                   llvm::Value* data);
  // A symbolic expression over the frame's symbols, as i64 (with nsw).
  llvm::Value* index(const symbolic::Expr& e);
  bool knows_symbols(const symbolic::Expr& e, const std::set<std::string>& hidden) const;

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

  // ---- ParallelCodegen.cpp
  void emit_parallel(const ir::For& f);
  // Statement executions of one run of `s`, as i64 >= 1, from the extents of its loops whose
  // bounds mention none of `hidden` (the others count as one iteration).
  llvm::Value* estimate_work(const ir::Stmt& s, std::set<std::string> hidden);

  llvm::Module& module_;
  llvm::LLVMContext& ctx_;
  const ir::PrimFunc& prim_;
  std::string name_;
  llvm::IRBuilder<> b_;
  Frame frame_;
  int parallel_count_ = 0;
  // Per buffer name (parameters and allocs): its !alias.scope and !noalias lists.
  std::map<std::string, std::pair<llvm::MDNode*, llvm::MDNode*>> alias_;
};

} // namespace dsc::cpu
