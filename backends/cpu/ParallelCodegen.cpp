// Parallel loops of kernels: outlining, collapsing perfect nests, and the run-time grain
// (KernelCodegen.h has the semantics).

#include "backends/cpu/CodegenContext.h"
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

} // namespace

llvm::Value* KernelEmitter::estimate_work(const ir::Stmt& s, std::set<std::string> hidden) {
  llvm::Value* one = b_.getInt64(1);
  if (!s.defined()) return one;
  switch (s.kind()) {
  case ir::NodeKind::Seq: {
    llvm::Value* sum = b_.getInt64(0);
    for (const ir::Stmt& st : s.as<ir::Seq>()->stmts)
      sum = b_.CreateAdd(sum, estimate_work(st, hidden));
    return b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, sum, one);
  }
  case ir::NodeKind::For: {
    const auto* f = s.as<ir::For>();
    const bool known = knows_symbols(f->extent, hidden);
    hidden.insert(f->var);
    llvm::Value* inner = estimate_work(f->body, hidden);
    if (!known) return inner;
    llvm::Value* extent = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, index(f->extent), one);
    return b_.CreateMul(extent, inner);
  }
  case ir::NodeKind::IfStmt: {
    const auto* i = s.as<ir::IfStmt>();
    llvm::Value* then_work = estimate_work(i->then_body, hidden);
    llvm::Value* else_work = estimate_work(i->else_body, hidden);
    return b_.CreateAdd(one, b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, then_work, else_work));
  }
  default:
    return one;
  }
}

void KernelEmitter::emit_parallel(const ir::For& outer) {
  llvm::Type* i64 = b_.getInt64Ty();
  llvm::Type* ptr = b_.getPtrTy();

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
  llvm::Value* zero = b_.getInt64(0);
  llvm::Value* total = b_.getInt64(1);
  for (const ir::For* f : nest)
    total = b_.CreateMul(total, b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, index(f->extent), zero), "", false,
                         true);
  llvm::Value* work = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, estimate_work(body, nest_vars), b_.getInt64(1));
  llvm::Value* grain = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, b_.CreateSDiv(b_.getInt64(kChunkWork), work),
                                               b_.getInt64(1), nullptr, "grain");

  // The context: every symbol, buffer pointer and local in scope, by value.
  std::vector<std::string> symbol_names, buffer_names, local_names;
  std::vector<llvm::Type*> fields;
  for (const auto& [n, v] : frame_.symbols) {
    symbol_names.push_back(n);
    fields.push_back(i64);
  }
  for (const auto& [n, info] : frame_.buffers) {
    buffer_names.push_back(n);
    fields.push_back(ptr);
  }
  for (const auto& [n, info] : frame_.locals) {
    local_names.push_back(n);
    fields.push_back(info.slot->getAllocatedType());
  }
  if (fields.empty()) fields.push_back(i64); // keep the struct non-empty
  llvm::StructType* context_type = llvm::StructType::get(ctx_, fields);
  llvm::AllocaInst* context = entry_alloca(context_type, 1, "parallel.ctx");
  {
    unsigned field = 0;
    for (const std::string& n : symbol_names)
      b_.CreateStore(frame_.symbols.at(n), b_.CreateStructGEP(context_type, context, field++));
    for (const std::string& n : buffer_names)
      b_.CreateStore(frame_.buffers.at(n).data, b_.CreateStructGEP(context_type, context, field++));
    for (const std::string& n : local_names) {
      const LocalInfo& info = frame_.locals.at(n);
      llvm::Value* v = b_.CreateLoad(info.slot->getAllocatedType(), info.slot, n);
      b_.CreateStore(v, b_.CreateStructGEP(context_type, context, field++));
    }
  }

  // The body: void NAME.parallel.K(ptr ctx, i64 begin, i64 end).
  auto* body_type = llvm::FunctionType::get(b_.getVoidTy(), {ptr, i64, i64}, false);
  llvm::Function* body_fn = llvm::Function::Create(body_type, llvm::Function::InternalLinkage,
                                                   name_ + ".parallel." + std::to_string(parallel_count_++), module_);
  body_fn->addFnAttr(llvm::Attribute::NoUnwind);
  body_fn->addParamAttr(0, llvm::Attribute::NoAlias);
  body_fn->addParamAttr(0, llvm::Attribute::NoCapture);
  body_fn->addParamAttr(0, llvm::Attribute::ReadOnly);
  body_fn->getArg(0)->setName("ctx");
  llvm::Value* begin = body_fn->getArg(1);
  llvm::Value* end = body_fn->getArg(2);
  begin->setName("begin");
  end->setName("end");

  Frame saved = std::move(frame_);
  llvm::IRBuilderBase::InsertPoint saved_ip = b_.saveIP();
  frame_ = Frame{};
  frame_.fn = body_fn;
  frame_.entry = llvm::BasicBlock::Create(ctx_, "entry", body_fn);
  frame_.parallel = true;
  b_.SetInsertPoint(frame_.entry);
  {
    llvm::Value* ctx_arg = body_fn->getArg(0);
    unsigned field = 0;
    for (const std::string& n : symbol_names)
      frame_.symbols[n] = b_.CreateLoad(i64, b_.CreateStructGEP(context_type, ctx_arg, field++), n);
    for (const std::string& n : buffer_names) {
      const BufferInfo& info = saved.buffers.at(n);
      llvm::Value* data = b_.CreateLoad(ptr, b_.CreateStructGEP(context_type, ctx_arg, field++), n);
      bind_buffer(n, info.dtype, info.shape, data);
    }
    for (const std::string& n : local_names) {
      const LocalInfo& info = saved.locals.at(n);
      llvm::Type* t = info.slot->getAllocatedType();
      llvm::Value* v = b_.CreateLoad(t, b_.CreateStructGEP(context_type, ctx_arg, field++), n);
      llvm::AllocaInst* slot = entry_alloca(t, 1, n);
      b_.CreateStore(v, slot);
      frame_.locals[n] = LocalInfo{info.dtype, slot};
    }
  }

  if (nest.size() == 1) {
    const ir::For& f = outer;
    llvm::Value* lo = index(f.min);
    emit_loop(b_.CreateSub(end, begin), nullptr, f.var, [&](llvm::Value* iv) {
      frame_.symbols[f.var] = b_.CreateAdd(lo, b_.CreateAdd(begin, iv, "", true, true), f.var, false, true);
      emit_stmt(body);
    });
  } else {
    // Rows of the innermost loop: split `flat` into indices once per row, then run the
    // innermost loop over the part of the row inside [begin, end).
    std::vector<llvm::Value*> mins, extents;
    for (const ir::For* f : nest) {
      mins.push_back(index(f->min));
      extents.push_back(b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, index(f->extent), zero));
    }
    const size_t last = nest.size() - 1;
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    llvm::BasicBlock* header = llvm::BasicBlock::Create(ctx_, "rows.header", body_fn);
    llvm::BasicBlock* row = llvm::BasicBlock::Create(ctx_, "rows.body", body_fn);
    llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx_, "rows.exit", body_fn);
    b_.CreateBr(header);
    b_.SetInsertPoint(header);
    llvm::PHINode* flat = b_.CreatePHI(i64, 2, "flat");
    flat->addIncoming(begin, pre);
    b_.CreateCondBr(b_.CreateICmpSLT(flat, end), row, exit);
    b_.SetInsertPoint(row);
    // Inside a chunk every extent is >= 1, so the unsigned divisions are safe.
    llvm::Value* start = b_.CreateURem(flat, extents[last], "row.start");
    llvm::Value* rest = b_.CreateUDiv(flat, extents[last]);
    for (size_t j = last; j-- > 0;) {
      llvm::Value* i = j == 0 ? rest : b_.CreateURem(rest, extents[j]);
      if (j > 0) rest = b_.CreateUDiv(rest, extents[j]);
      frame_.symbols[nest[j]->var] = b_.CreateAdd(mins[j], i, nest[j]->var, false, true);
    }
    llvm::Value* count = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b_.CreateSub(extents[last], start),
                                                  b_.CreateSub(end, flat), nullptr, "row.count");
    const ir::For& inner = *nest[last];
    emit_loop(count, nullptr, inner.var, [&](llvm::Value* iv) {
      frame_.symbols[inner.var] = b_.CreateAdd(mins[last], b_.CreateAdd(start, iv, "", true, true), inner.var, false, true);
      emit_stmt(body);
    });
    flat->addIncoming(b_.CreateAdd(flat, count, "", true, true), b_.GetInsertBlock());
    b_.CreateBr(header);
    b_.SetInsertPoint(exit);
  }
  b_.CreateRetVoid();

  frame_ = std::move(saved);
  b_.restoreIP(saved_ip);
  llvm::FunctionCallee parallel_for =
      module_.getOrInsertFunction("dsc_rt_parallel_for", b_.getVoidTy(), ptr, ptr, i64, i64);
  b_.CreateCall(parallel_for, {body_fn, context, total, grain});
}

} // namespace dsc::cpu
