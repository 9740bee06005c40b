// Kernels' functions, statements and loops (KernelCodegen.h has the semantics).

#include "backends/llvm/KernelCodegen.h"

#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include "backends/llvm/KernelEmitter.h"
#include "backends/llvm/SymbolicCodegen.h"
#include "ir/Functor.h"
#include "ir/HostProgram.h"
#include "ir/Intrinsics.h"
#include "symbolic/Eval.h"

namespace dsc::llvmgen {

namespace {

// Local buffers of constant size up to this many bytes live on the stack; larger ones and
// those of symbolic size on the target's heap (CPU worker threads have small stacks).
constexpr int64_t kMaxStackBytes = 64 * 1024;

// The names of the buffers a prim allocates, for the alias scopes.
class AllocNames : public ir::IRVisitor {
public:
  std::vector<std::string> names;

protected:
  void visit_node(const ir::Alloc* node) override {
    names.push_back(node->name);
    IRVisitor::visit_node(node);
  }
};

// Whether `s` calls a function the loop vectorizer cannot widen: the math library (f64
// transcendentals) or integer pow (a loop), see MathFunctions.h. A `vectorize` hint on such a loop could only
// fail, and LLVM would warn that it did.
class CallsOpaque : public ir::IRVisitor {
public:
  bool found = false;

protected:
  void visit_node(const ir::Intrinsic* node) override {
    const ir::IntrinsicDef* fn = ir::find_intrinsic(node->name);
    if (fn && fn->cpu == ir::CpuLowering::Polynomial && (node->dtype == ir::DType::F64 || !ir::is_float(node->dtype)))
      found = true;
    IRVisitor::visit_node(node);
  }
};

bool calls_opaque(const ir::Stmt& s) {
  CallsOpaque v;
  v.visit(s);
  return v.found;
}

} // namespace

llvm::Type* register_type(llvm::LLVMContext& c, ir::DType d) {
  switch (d) {
  case ir::DType::Bool:
    return llvm::Type::getInt1Ty(c);
  case ir::DType::I8:
    return llvm::Type::getInt8Ty(c);
  case ir::DType::I32:
    return llvm::Type::getInt32Ty(c);
  case ir::DType::I64:
    return llvm::Type::getInt64Ty(c);
  case ir::DType::F16:
  case ir::DType::BF16:
  case ir::DType::F32:
    return llvm::Type::getFloatTy(c);
  case ir::DType::F64:
    return llvm::Type::getDoubleTy(c);
  }
  internal_error << "unknown dtype";
}

llvm::Type* memory_type(llvm::LLVMContext& c, ir::DType d) {
  switch (d) {
  case ir::DType::Bool:
    return llvm::Type::getInt8Ty(c);
  case ir::DType::F16:
  case ir::DType::BF16:
    return llvm::Type::getInt16Ty(c);
  default:
    return register_type(c, d);
  }
}

int dtype_bytes(ir::DType d) { return d == ir::DType::Bool ? 1 : ir::dtype_bits(d) / 8; }

KernelEmitter::KernelEmitter(llvm::Module& m, const ir::PrimFunc& p, std::string symbol_name, KernelTarget& target)
    : module_(m), ctx_(m.getContext()), prim_(p), name_(std::move(symbol_name)), target_(target), b_(m.getContext()),
      index_type_(llvm::IntegerType::get(m.getContext(), static_cast<unsigned>(target.index_bits()))) {
  internal_assert(target.index_bits() == 32 || target.index_bits() == 64)
      << "index_bits is " << target.index_bits() << "; kernels take 32 or 64";
}

llvm::ConstantInt* KernelEmitter::index_constant(int64_t v) const {
  return llvm::ConstantInt::get(index_type_, static_cast<uint64_t>(v), true);
}

KernelEmitter::Frame KernelEmitter::enter_function(llvm::Function* fn) {
  Frame saved = std::move(frame_);
  frame_ = Frame{};
  frame_.fn = fn;
  frame_.entry = llvm::BasicBlock::Create(ctx_, "entry", fn);
  b_.SetInsertPoint(frame_.entry);
  return saved;
}

void KernelEmitter::leave_function(Frame saved) { frame_ = std::move(saved); }

llvm::Function* KernelEmitter::emit() {
  llvm::Type* ptr = llvm::PointerType::getUnqual(ctx_);
  llvm::Type* i64 = b_.getInt64Ty();
  auto* type = llvm::FunctionType::get(b_.getVoidTy(), {ptr, ptr}, false);
  // The caller may have declared the kernel already (to call it); its body goes there.
  llvm::Function* fn = module_.getFunction(name_);
  if (fn) {
    internal_assert(fn->isDeclaration() && fn->getFunctionType() == type)
        << "'" << name_ << "' is already defined in the module, or declared with another type";
  } else {
    fn = llvm::Function::Create(type, llvm::Function::ExternalLinkage, name_, module_);
  }
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  for (unsigned i = 0; i < 2; ++i) {
    fn->addParamAttr(i, llvm::Attribute::NoAlias);
    fn->addParamAttr(i, llvm::Attribute::NoCapture);
    fn->addParamAttr(i, llvm::Attribute::ReadOnly);
  }
  llvm::Argument* buffers = fn->getArg(0);
  llvm::Argument* symbols = fn->getArg(1);
  buffers->setName("buffers");
  symbols->setName("symbols");

  // One alias scope per buffer: the host never passes overlapping buffers, and allocations
  // are fresh memory.
  std::vector<std::string> names;
  for (const ir::Buffer& buf : prim_.inputs)
    names.push_back(buf.name);
  for (const ir::Buffer& buf : prim_.outputs)
    names.push_back(buf.name);
  AllocNames allocs;
  allocs.visit(prim_.body);
  names.insert(names.end(), allocs.names.begin(), allocs.names.end());
  llvm::MDBuilder mdb(ctx_);
  llvm::MDNode* domain = mdb.createAnonymousAliasScopeDomain(name_);
  std::vector<llvm::MDNode*> scopes;
  for (const std::string& n : names)
    scopes.push_back(mdb.createAnonymousAliasScope(domain, n));
  for (size_t i = 0; i < names.size(); ++i) {
    std::vector<llvm::Metadata*> others;
    for (size_t j = 0; j < names.size(); ++j)
      if (j != i) others.push_back(scopes[j]);
    alias_[names[i]] = {llvm::MDNode::get(ctx_, {scopes[i]}),
                        others.empty() ? nullptr : llvm::MDNode::get(ctx_, others)};
  }

  enter_function(fn);

  // Symbols are dims: >= 0.
  llvm::MDNode* dim_range = mdb.createRange(llvm::APInt(64, 0), llvm::APInt::getSignedMaxValue(64));
  std::vector<std::string> symbol_names = ir::prim_signature_symbols(prim_);
  for (size_t i = 0; i < symbol_names.size(); ++i) {
    llvm::Value* at = b_.CreateConstInBoundsGEP1_64(i64, symbols, i);
    llvm::LoadInst* v = b_.CreateAlignedLoad(i64, at, llvm::Align(8), symbol_names[i]);
    v->setMetadata(llvm::LLVMContext::MD_range, dim_range);
    frame_.symbols[symbol_names[i]] = b_.CreateTrunc(v, index_type_); // none when 64 bits
  }
  size_t slot = 0;
  for (const std::vector<ir::Buffer>* list : {&prim_.inputs, &prim_.outputs}) {
    for (const ir::Buffer& buf : *list) {
      llvm::Value* at = b_.CreateConstInBoundsGEP1_64(ptr, buffers, slot++);
      llvm::Value* data = b_.CreateAlignedLoad(ptr, at, llvm::Align(8), buf.name);
      bind_buffer(buf.name, buf.dtype, buf.shape, data);
    }
  }

  assume_where_clauses();
  emit_stmt(prim_.body);
  b_.CreateRetVoid();
  return fn;
}

void KernelEmitter::assume_where_clauses() {
  auto lookup = [this](const std::string& n) -> llvm::Value* { return frame_.symbols.at(n); };
  for (const ir::WhereClause& w : prim_.where)
    if (knows_symbols(w.predicate, {}))
      b_.CreateAssumption(emit_symbolic_bool(b_, w.predicate, lookup, SymbolicOptions{}));
}

// ---------------------------------------------------------------- statements

void KernelEmitter::emit_stmt(const ir::Stmt& s) {
  if (!s.defined()) return;
  switch (s.kind()) {
  case ir::NodeKind::For:
    emit_for(*s.as<ir::For>());
    return;
  case ir::NodeKind::Store:
    emit_store(*s.as<ir::Store>());
    return;
  case ir::NodeKind::LocalDecl: {
    const auto* d = s.as<ir::LocalDecl>();
    llvm::AllocaInst* slot = entry_alloca(register_type(ctx_, d->dtype), 1, d->name);
    llvm::Value* init = emit_cast(emit_expr(d->init), d->init->dtype, d->dtype);
    b_.CreateStore(init, slot);
    frame_.locals[d->name] = LocalInfo{d->dtype, slot};
    return;
  }
  case ir::NodeKind::Assign: {
    const auto* a = s.as<ir::Assign>();
    auto it = frame_.locals.find(a->name);
    internal_assert(it != frame_.locals.end()) << "assignment to unknown local '" << a->name << "'";
    b_.CreateStore(emit_cast(emit_expr(a->value), a->value->dtype, it->second.dtype), it->second.slot);
    return;
  }
  case ir::NodeKind::IfStmt:
    emit_if(*s.as<ir::IfStmt>());
    return;
  case ir::NodeKind::Alloc: {
    // Alone (not in a Seq) nothing can use it; it still gets freed.
    std::vector<llvm::Value*> heap;
    emit_alloc(*s.as<ir::Alloc>(), heap);
    for (llvm::Value* p : heap)
      target_.heap_free(b_, p);
    return;
  }
  case ir::NodeKind::Seq:
    emit_seq(*s.as<ir::Seq>());
    return;
  case ir::NodeKind::Evaluate: {
    const ir::PrimExpr& v = s.as<ir::Evaluate>()->value;
    const auto* call = v.as<ir::Intrinsic>();
    internal_assert(call) << "a statement that evaluates a value that is no call";
    const ir::IntrinsicDef* fn = ir::find_intrinsic(call->name);
    if (fn && fn->pure()) return; // nothing observable
    target_.emit_effect(*this, *call);
    return;
  }
  default:
    internal_error << "unexpected statement " << ir::node_kind_name(s.kind());
  }
}

void KernelEmitter::emit_seq(const ir::Seq& s) {
  // Locals and buffers declared in the block go out of scope at its end.
  std::map<std::string, LocalInfo> saved_locals = frame_.locals;
  std::map<std::string, BufferInfo> saved_buffers = frame_.buffers;
  std::vector<llvm::Value*> heap;
  for (const ir::Stmt& st : s.stmts) {
    if (const auto* a = st.as<ir::Alloc>())
      emit_alloc(*a, heap);
    else
      emit_stmt(st);
  }
  for (auto it = heap.rbegin(); it != heap.rend(); ++it)
    target_.heap_free(b_, *it);
  frame_.locals = std::move(saved_locals);
  frame_.buffers = std::move(saved_buffers);
}

void KernelEmitter::emit_if(const ir::IfStmt& s) {
  llvm::Value* cond = emit_expr(s.cond);
  llvm::Function* fn = frame_.fn;
  llvm::BasicBlock* then_bb = llvm::BasicBlock::Create(ctx_, "if.then", fn);
  llvm::BasicBlock* else_bb = s.else_body.defined() ? llvm::BasicBlock::Create(ctx_, "if.else", fn) : nullptr;
  llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx_, "if.end", fn);
  b_.CreateCondBr(cond, then_bb, else_bb ? else_bb : done);
  b_.SetInsertPoint(then_bb);
  emit_stmt(s.then_body);
  b_.CreateBr(done);
  if (else_bb) {
    b_.SetInsertPoint(else_bb);
    emit_stmt(s.else_body);
    b_.CreateBr(done);
  }
  b_.SetInsertPoint(done);
}

void KernelEmitter::emit_alloc(const ir::Alloc& a, std::vector<llvm::Value*>& heap) {
  llvm::Type* elem = memory_type(ctx_, a.dtype);
  const int64_t bytes = dtype_bytes(a.dtype);
  // A constant element count, when every dim is one.
  int64_t count = 1;
  bool constant = true;
  for (const symbolic::Expr& d : a.shape) {
    std::optional<int64_t> v = symbolic::eval(d, symbolic::Bindings{});
    if (!v || __builtin_mul_overflow(count, std::max<int64_t>(*v, 0), &count)) {
      constant = false;
      break;
    }
  }
  llvm::Value* data;
  if (constant && count <= kMaxStackBytes / bytes) {
    llvm::AllocaInst* slot = entry_alloca(elem, static_cast<uint64_t>(std::max<int64_t>(count, 1)), a.name);
    slot->setAlignment(llvm::Align(64));
    data = slot;
  } else {
    llvm::Value* n = index_constant(1);
    for (const symbolic::Expr& d : a.shape)
      n = b_.CreateMul(n, b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, index(d), index_constant(0)));
    llvm::Value* size = b_.CreateMul(n, index_constant(bytes));
    data = target_.heap_alloc(b_, size, a.name);
    heap.push_back(data);
  }
  bind_buffer(a.name, a.dtype, a.shape, data);
}

void KernelEmitter::emit_for(const ir::For& f) {
  switch (f.for_kind) {
  case ir::ForKind::Serial:
  case ir::ForKind::Unrolled:
  case ir::ForKind::Vectorized:
    emit_serial_for(f);
    return;
  default:
    target_.emit_for(*this, f);
    return;
  }
}

void KernelEmitter::emit_serial_for(const ir::For& f) {
  llvm::Value* lo = index(f.min);
  llvm::Value* count = index(f.extent);
  emit_loop(count, loop_hint(f), f.var, [&](llvm::Value* iv) {
    frame_.symbols[f.var] = b_.CreateAdd(lo, iv, f.var, false, true);
    emit_stmt(f.body);
  });
  frame_.symbols.erase(f.var);
}

void KernelEmitter::emit_loop(llvm::Value* count, llvm::MDNode* hint, const std::string& name,
                              const LoopBody& body) {
  llvm::Function* fn = frame_.fn;
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  llvm::BasicBlock* header = llvm::BasicBlock::Create(ctx_, name + ".header", fn);
  llvm::BasicBlock* body_bb = llvm::BasicBlock::Create(ctx_, name + ".body", fn);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx_, name + ".exit", fn);
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  llvm::PHINode* iv = b_.CreatePHI(index_type_, 2, name + ".iv");
  iv->addIncoming(index_constant(0), pre);
  b_.CreateCondBr(b_.CreateICmpSLT(iv, count), body_bb, exit);
  b_.SetInsertPoint(body_bb);
  body(iv);
  llvm::Value* next = b_.CreateAdd(iv, index_constant(1), name + ".next", true, true);
  llvm::BranchInst* back = b_.CreateBr(header);
  if (hint) back->setMetadata(llvm::LLVMContext::MD_loop, hint);
  iv->addIncoming(next, b_.GetInsertBlock());
  b_.SetInsertPoint(exit);
}

llvm::MDNode* KernelEmitter::loop_hint(const ir::For& f) {
  const char* property = nullptr;
  switch (f.for_kind) {
  case ir::ForKind::Vectorized:
    if (calls_opaque(f.body)) return nullptr;
    property = "llvm.loop.vectorize.enable";
    break;
  case ir::ForKind::Unrolled:
    property = f.extent.is<symbolic::Const>() ? "llvm.loop.unroll.full" : "llvm.loop.unroll.enable";
    break;
  default:
    return nullptr;
  }
  std::vector<llvm::Metadata*> prop = {llvm::MDString::get(ctx_, property)};
  if (f.for_kind == ir::ForKind::Vectorized)
    prop.push_back(llvm::ConstantAsMetadata::get(llvm::ConstantInt::getTrue(ctx_)));
  llvm::Metadata* ops[] = {nullptr, llvm::MDNode::get(ctx_, prop)};
  llvm::MDNode* loop = llvm::MDNode::getDistinct(ctx_, ops);
  loop->replaceOperandWith(0, loop);
  return loop;
}

llvm::AllocaInst* KernelEmitter::entry_alloca(llvm::Type* t, uint64_t count, const std::string& name) {
  llvm::IRBuilder<> entry(frame_.entry, frame_.entry->begin());
  return entry.CreateAlloca(t, count == 1 ? nullptr : entry.getInt64(count), name);
}

void KernelEmitter::bind_buffer(const std::string& name, ir::DType dtype, const std::vector<symbolic::Expr>& shape,
                                llvm::Value* data) {
  BufferInfo info;
  info.dtype = dtype;
  info.shape = shape;
  info.data = data;
  info.strides.resize(shape.size());
  llvm::Value* stride = index_constant(1);
  for (size_t k = shape.size(); k-- > 0;) {
    info.strides[k] = stride;
    if (k > 0) stride = b_.CreateMul(stride, index(shape[k]), "", false, true);
  }
  frame_.buffers[name] = std::move(info);
}

llvm::Value* KernelEmitter::index(const symbolic::Expr& e) {
  SymbolicOptions options;
  options.no_signed_wrap = true;
  options.type = index_type_;
  return emit_symbolic(
      b_, e,
      [this](const std::string& n) -> llvm::Value* {
        auto it = frame_.symbols.find(n);
        internal_assert(it != frame_.symbols.end()) << "symbol '" << n << "' has no value in the kernel";
        return it->second;
      },
      options);
}

bool KernelEmitter::knows_symbols(const symbolic::Expr& e, const std::set<std::string>& hidden) const {
  for (const std::string& s : symbolic::free_symbols(e))
    if (hidden.count(s) || !frame_.symbols.count(s)) return false;
  return true;
}

// ---------------------------------------------------------------- entry points

llvm::Function* emit_kernel(llvm::Module& m, const ir::PrimFunc& p, const std::string& symbol_name,
                            KernelTarget& target) {
  KernelEmitter emitter(m, p, symbol_name, target);
  return emitter.emit();
}

std::string verify_kernel(const llvm::Function& f) {
  std::string out;
  llvm::raw_string_ostream os(out);
  const std::string prefix = f.getName().str() + ".";
  for (const llvm::Function& g : *f.getParent()) {
    if (&g != &f && !g.getName().starts_with(prefix)) continue;
    if (llvm::verifyFunction(g, &os)) os << "(in function " << g.getName() << ")\n";
  }
  return out;
}

} // namespace dsc::llvmgen
