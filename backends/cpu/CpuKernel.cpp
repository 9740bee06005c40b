#include "backends/cpu/CpuKernel.h"

#include "backends/cpu/ParallelCodegen.h"
#include "backends/llvm/KernelCodegen.h"
#include "backends/llvm/KernelTarget.h"
#include "ir/Functor.h"
#include "ir/Intrinsics.h"

namespace dsc::cpu {

namespace {

// Intrinsics called as statements that the CPU can drop: pure ones, and effects that mean
// nothing to one CPU thread running a kernel.
bool is_cpu_droppable_intrinsic(const std::string& name) {
  const ir::IntrinsicDef* fn = ir::find_intrinsic(name);
  return fn && (fn->pure() || fn->cpu == ir::CpuLowering::Nothing);
}

class CpuKernelTarget : public llvmgen::KernelTarget {
public:
  explicit CpuKernelTarget(int index_bits) : index_bits_(index_bits) {}

  int index_bits() const override { return index_bits_; }

  void emit_for(llvmgen::KernelEmitter& e, const ir::For& f) override {
    internal_assert(f.for_kind == ir::ForKind::Parallel)
        << "the CPU backend has no '" << ir::for_kind_name(f.for_kind) << "' loops";
    if (in_parallel_) {
      e.emit_serial_for(f);
      return;
    }
    emit_parallel(e, f, outlined_++, [&](const ir::Stmt& body) {
      in_parallel_ = true;
      e.emit_stmt(body);
      in_parallel_ = false;
    });
  }

  void emit_effect(llvmgen::KernelEmitter&, const ir::Intrinsic& call) override {
    internal_assert(is_cpu_droppable_intrinsic(call.name)) << "the CPU backend cannot run this statement";
  }

  llvm::Value* call_math_library(llvm::IRBuilder<>& b, const ir::IntrinsicDef& fn,
                                 const std::vector<llvm::Value*>& args) override {
    llvm::Module* m = b.GetInsertBlock()->getModule();
    llvm::Type* d = b.getDoubleTy();
    internal_assert(!args.empty() && args[0]->getType() == d) << "libm '" << fn.name << "' takes doubles";
    std::vector<llvm::Type*> params(args.size(), d);
    llvm::FunctionCallee callee = m->getOrInsertFunction(fn.name, llvm::FunctionType::get(d, params, false));
    if (auto* f = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
      f->setDoesNotThrow();
      f->setWillReturn();
    }
    return b.CreateCall(callee, args);
  }

  llvm::Value* heap_alloc(llvm::IRBuilder<>& b, llvm::Value* bytes, const std::string& name) override {
    llvm::Module* m = b.GetInsertBlock()->getModule();
    llvm::FunctionCallee malloc_fn = m->getOrInsertFunction("malloc", b.getPtrTy(), b.getInt64Ty());
    return b.CreateCall(malloc_fn, {b.CreateZExt(bytes, b.getInt64Ty())}, name);
  }

  void heap_free(llvm::IRBuilder<>& b, llvm::Value* data) override {
    llvm::Module* m = b.GetInsertBlock()->getModule();
    b.CreateCall(m->getOrInsertFunction("free", b.getVoidTy(), b.getPtrTy()), {data});
  }

private:
  int index_bits_;
  int outlined_ = 0;
  bool in_parallel_ = false; // inside an outlined body: nested parallel loops run serially
};

class UnknownEffects : public ir::IRVisitor {
public:
  KernelProblem problem;

protected:
  void visit_node(const ir::Evaluate* node) override {
    const auto* call = node->value.as<ir::Intrinsic>();
    if (problem.message.empty() && call && !is_cpu_droppable_intrinsic(call->name)) {
      problem.message = "the CPU backend has no intrinsic '" + call->name + "'";
      problem.loc = node->loc;
    }
    IRVisitor::visit_node(node);
  }
};

} // namespace

llvm::Function* emit_cpu_kernel(llvm::Module& m, const ir::PrimFunc& p, const std::string& symbol_name,
                                int index_bits) {
  CpuKernelTarget target(index_bits);
  return llvmgen::emit_kernel(m, p, symbol_name, target);
}

KernelProblem check_kernel(const ir::PrimFunc& p) {
  UnknownEffects v;
  v.visit(p.body);
  if (!v.problem.message.empty()) v.problem.message = "prim '" + p.name + "': " + v.problem.message;
  return v.problem;
}

} // namespace dsc::cpu
