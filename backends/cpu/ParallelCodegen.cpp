// Parallel loops of kernels: outlining, collapsing perfect nests, and the run-time grain
// (CpuKernel.h has the semantics).

#include "backends/cpu/ParallelCodegen.h"

#include "symbolic/Eval.h"

namespace dsc::cpu {

namespace {

// Statement executions a chunk should have at least, so that scheduling costs stay small.
constexpr int64_t kChunkWork = 16384;

const ir::Stmt& unwrap(const ir::Stmt& s) {
  const ir::Stmt* at = &s;
  while (const auto* seq = at->as<ir::Seq>()) {
    if (seq->stmts.size() != 1) break;
    at = &seq->stmts[0];
  }
  return *at;
}

bool mentions(const symbolic::Expr& e, const std::set<std::string>& names) {
  for (const std::string& s : symbolic::free_symbols(e))
    if (names.count(s)) return true;
  return false;
}

// Statement executions of one run of `s`, index-typed and >= 1, from the extents of its loops
// whose bounds mention none of `hidden` (the others count as one iteration).
llvm::Value* estimate_work(llvmgen::KernelEmitter& e, const ir::Stmt& s, std::set<std::string> hidden) {
  llvm::IRBuilder<>& b = e.builder();
  llvm::Value* one = e.index_constant(1);
  if (!s.defined()) return one;
  switch (s.kind()) {
  case ir::NodeKind::Seq: {
    llvm::Value* sum = e.index_constant(0);
    for (const ir::Stmt& st : s.as<ir::Seq>()->stmts)
      sum = b.CreateAdd(sum, estimate_work(e, st, hidden));
    return b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, sum, one);
  }
  case ir::NodeKind::For: {
    const auto* f = s.as<ir::For>();
    const bool known = e.knows_symbols(f->extent, hidden);
    hidden.insert(f->var);
    llvm::Value* inner = estimate_work(e, f->body, hidden);
    if (!known) return inner;
    llvm::Value* extent = b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, e.index(f->extent), one);
    return b.CreateMul(extent, inner);
  }
  case ir::NodeKind::IfStmt: {
    const auto* i = s.as<ir::IfStmt>();
    llvm::Value* then_work = estimate_work(e, i->then_body, hidden);
    llvm::Value* else_work = estimate_work(e, i->else_body, hidden);
    return b.CreateAdd(one, b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, then_work, else_work));
  }
  default:
    return one;
  }
}

} // namespace

void emit_parallel(llvmgen::KernelEmitter& e, const ir::For& outer, int outlined_index,
                   const std::function<void(const ir::Stmt& body)>& emit_body) {
  using Frame = llvmgen::KernelEmitter::Frame;
  using LocalInfo = llvmgen::KernelEmitter::LocalInfo;
  using BufferInfo = llvmgen::KernelEmitter::BufferInfo;
  llvm::IRBuilder<>& b = e.builder();
  llvm::LLVMContext& ctx = b.getContext();
  // The runtime's ranges are i64; the kernel's index arithmetic is in the index type.
  llvm::Type* i64 = b.getInt64Ty();
  llvm::Type* idx = e.index_type();
  llvm::Type* ptr = b.getPtrTy();

  // The perfect nest: parallel loops directly inside one another whose bounds do not use the
  // variables of the loops around them in the nest.
  std::vector<const ir::For*> nest = {&outer};
  std::set<std::string> nest_vars = {outer.var};
  for (;;) {
    const auto* inner = unwrap(nest.back()->body).as<ir::For>();
    if (!inner || inner->for_kind != ir::ForKind::Parallel) break;
    if (mentions(inner->min, nest_vars) || mentions(inner->extent, nest_vars)) break;
    nest.push_back(inner);
    nest_vars.insert(inner->var);
  }
  const ir::Stmt& body = nest.back()->body;

  // The iteration count and the grain, at the call site.
  llvm::Value* zero = e.index_constant(0);
  llvm::Value* total = e.index_constant(1);
  for (const ir::For* f : nest)
    total = b.CreateMul(total, b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, e.index(f->extent), zero), "", false,
                         true);
  llvm::Value* work =
      b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, estimate_work(e, body, nest_vars), e.index_constant(1));
  llvm::Value* grain = b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, b.CreateSDiv(e.index_constant(kChunkWork), work),
                                               e.index_constant(1), nullptr, "grain");

  // The context: every symbol, buffer pointer and local in scope, by value.
  Frame& frame = e.frame();
  std::vector<std::string> symbol_names, buffer_names, local_names;
  std::vector<llvm::Type*> fields;
  for (const auto& [n, v] : frame.symbols) {
    symbol_names.push_back(n);
    fields.push_back(idx);
  }
  for (const auto& [n, info] : frame.buffers) {
    buffer_names.push_back(n);
    fields.push_back(ptr);
  }
  for (const auto& [n, info] : frame.locals) {
    local_names.push_back(n);
    fields.push_back(info.slot->getAllocatedType());
  }
  if (fields.empty()) fields.push_back(i64); // keep the struct non-empty
  llvm::StructType* context_type = llvm::StructType::get(ctx, fields);
  llvm::AllocaInst* context = e.entry_alloca(context_type, 1, "parallel.ctx");
  {
    unsigned field = 0;
    for (const std::string& n : symbol_names)
      b.CreateStore(frame.symbols.at(n), b.CreateStructGEP(context_type, context, field++));
    for (const std::string& n : buffer_names)
      b.CreateStore(frame.buffers.at(n).data, b.CreateStructGEP(context_type, context, field++));
    for (const std::string& n : local_names) {
      const LocalInfo& info = frame.locals.at(n);
      llvm::Value* v = b.CreateLoad(info.slot->getAllocatedType(), info.slot, n);
      b.CreateStore(v, b.CreateStructGEP(context_type, context, field++));
    }
  }

  // The body: void NAME.parallel.K(ptr ctx, i64 begin, i64 end).
  auto* body_type = llvm::FunctionType::get(b.getVoidTy(), {ptr, i64, i64}, false);
  llvm::Function* body_fn =
      llvm::Function::Create(body_type, llvm::Function::InternalLinkage,
                             e.name() + ".parallel." + std::to_string(outlined_index), e.module());
  body_fn->addFnAttr(llvm::Attribute::NoUnwind);
  body_fn->addParamAttr(0, llvm::Attribute::NoAlias);
  body_fn->addParamAttr(0, llvm::Attribute::NoCapture);
  body_fn->addParamAttr(0, llvm::Attribute::ReadOnly);
  body_fn->getArg(0)->setName("ctx");
  body_fn->getArg(1)->setName("begin");
  body_fn->getArg(2)->setName("end");

  llvm::IRBuilderBase::InsertPoint saved_ip = b.saveIP();
  Frame saved = e.enter_function(body_fn);
  Frame& inside = e.frame();
  llvm::Value* begin = b.CreateTrunc(body_fn->getArg(1), idx); // none when 64 bits
  llvm::Value* end = b.CreateTrunc(body_fn->getArg(2), idx);
  {
    llvm::Value* ctx_arg = body_fn->getArg(0);
    unsigned field = 0;
    for (const std::string& n : symbol_names)
      inside.symbols[n] = b.CreateLoad(idx, b.CreateStructGEP(context_type, ctx_arg, field++), n);
    for (const std::string& n : buffer_names) {
      const BufferInfo& info = saved.buffers.at(n);
      llvm::Value* data = b.CreateLoad(ptr, b.CreateStructGEP(context_type, ctx_arg, field++), n);
      e.bind_buffer(n, info.dtype, info.shape, data);
    }
    for (const std::string& n : local_names) {
      const LocalInfo& info = saved.locals.at(n);
      llvm::Type* t = info.slot->getAllocatedType();
      llvm::Value* v = b.CreateLoad(t, b.CreateStructGEP(context_type, ctx_arg, field++), n);
      llvm::AllocaInst* slot = e.entry_alloca(t, 1, n);
      b.CreateStore(v, slot);
      inside.locals[n] = LocalInfo{info.dtype, slot};
    }
    e.assume_where_clauses();
  }

  if (nest.size() == 1) {
    const ir::For& f = outer;
    llvm::Value* lo = e.index(f.min);
    e.emit_loop(b.CreateSub(end, begin), nullptr, f.var, [&](llvm::Value* iv) {
      inside.symbols[f.var] = b.CreateAdd(lo, b.CreateAdd(begin, iv, "", true, true), f.var, false, true);
      emit_body(body);
    });
  } else {
    // Rows of the innermost loop: split `flat` into indices once per row, then run the
    // innermost loop over the part of the row inside [begin, end).
    std::vector<llvm::Value*> mins, extents;
    for (const ir::For* f : nest) {
      mins.push_back(e.index(f->min));
      extents.push_back(b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, e.index(f->extent), zero));
    }
    const size_t last = nest.size() - 1;
    llvm::BasicBlock* pre = b.GetInsertBlock();
    llvm::BasicBlock* header = llvm::BasicBlock::Create(ctx, "rows.header", body_fn);
    llvm::BasicBlock* row = llvm::BasicBlock::Create(ctx, "rows.body", body_fn);
    llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx, "rows.exit", body_fn);
    b.CreateBr(header);
    b.SetInsertPoint(header);
    llvm::PHINode* flat = b.CreatePHI(idx, 2, "flat");
    flat->addIncoming(begin, pre);
    b.CreateCondBr(b.CreateICmpSLT(flat, end), row, exit);
    b.SetInsertPoint(row);
    // Inside a chunk every extent is >= 1, so the unsigned divisions are safe.
    llvm::Value* start = b.CreateURem(flat, extents[last], "row.start");
    llvm::Value* rest = b.CreateUDiv(flat, extents[last]);
    for (size_t j = last; j-- > 0;) {
      llvm::Value* i = j == 0 ? rest : b.CreateURem(rest, extents[j]);
      if (j > 0) rest = b.CreateUDiv(rest, extents[j]);
      inside.symbols[nest[j]->var] = b.CreateAdd(mins[j], i, nest[j]->var, false, true);
    }
    llvm::Value* count = b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b.CreateSub(extents[last], start),
                                                  b.CreateSub(end, flat), nullptr, "row.count");
    const ir::For& inner = *nest[last];
    e.emit_loop(count, nullptr, inner.var, [&](llvm::Value* iv) {
      inside.symbols[inner.var] =
          b.CreateAdd(mins[last], b.CreateAdd(start, iv, "", true, true), inner.var, false, true);
      emit_body(body);
    });
    flat->addIncoming(b.CreateAdd(flat, count, "", true, true), b.GetInsertBlock());
    b.CreateBr(header);
    b.SetInsertPoint(exit);
  }
  b.CreateRetVoid();

  e.leave_function(std::move(saved));
  b.restoreIP(saved_ip);
  llvm::FunctionCallee parallel_for =
      e.module().getOrInsertFunction("dsc_rt_parallel_for", b.getVoidTy(), ptr, ptr, i64, i64);
  b.CreateCall(parallel_for, {body_fn, context, b.CreateSExt(total, i64), b.CreateSExt(grain, i64)});
}

} // namespace dsc::cpu
