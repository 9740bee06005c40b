#include "backends/cpu/HostCodegen.h"

#include <dlpack/dlpack.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/MDBuilder.h>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <map>
#include <set>

#include "backends/cpu/CpuBackend.h"
#include "backends/llvm/SymbolicCodegen.h"
#include "ir/DLDataType.h"
#include "ir/LibraryRoutine.h"
#include "ir/OpRegistry.h"
#include "runtime/HostABI.h"
#include "symbolic/Eval.h"
#include "symbolic/Printer.h"

namespace dsc::cpu {

namespace {

// The emitted code reads an input's shape pointer straight from its DLTensor (dlpack.h 0.6:
// data, device, ndim, dtype, shape, strides, byte_offset); everything else goes through the
// runtime.
constexpr uint64_t kDLTensorShapeOffset = offsetof(DLTensor, shape);
static_assert(offsetof(DLTensor, data) == 0 && offsetof(DLTensor, ndim) == 16 &&
                  offsetof(DLTensor, dtype) == 20 && kDLTensorShapeOffset == 24 &&
                  offsetof(DLTensor, strides) == 32 && offsetof(DLTensor, byte_offset) == 40 &&
                  sizeof(DLTensor) == 48,
              "the DLTensor layout of dlpack.h 0.6 on a 64-bit target");

// A routine whose table row says `Descriptor` gets its scalars as a stack array of int64 in
// ir::SgemmScalar's (or ir::SgemmChainScalar's) order, which the runtime reads as
// dsc_strided_product (or dsc_strided_chain): each field must sit at its scalar's position.
#define DSC_AT(type, field, slot) (offsetof(type, field) == (slot) * sizeof(int64_t))
// The fields both begin with: the batch, the sizes, A's and B's.
#define DSC_FIRST_PRODUCT_AT(type)                                                                 \
  (DSC_AT(type, batch, ir::kBatch) && DSC_AT(type, inner, ir::kInner) &&                           \
   DSC_AT(type, m, ir::kM) && DSC_AT(type, n, ir::kN) && DSC_AT(type, k, ir::kK) &&                \
   DSC_AT(type, a_offset, ir::kAOffset) && DSC_AT(type, a_outer, ir::kAOuter) &&                   \
   DSC_AT(type, a_inner, ir::kAInner) && DSC_AT(type, a_row, ir::kARow) &&                         \
   DSC_AT(type, a_col, ir::kACol) && DSC_AT(type, b_offset, ir::kBOffset) &&                       \
   DSC_AT(type, b_outer, ir::kBOuter) && DSC_AT(type, b_inner, ir::kBInner) &&                     \
   DSC_AT(type, b_row, ir::kBRow) && DSC_AT(type, b_col, ir::kBCol))
static_assert(sizeof(dsc_strided_product) == ir::kSgemmScalars * sizeof(int64_t) &&
                  DSC_FIRST_PRODUCT_AT(dsc_strided_product) &&
                  DSC_AT(dsc_strided_product, c_offset, ir::kCOffset) &&
                  DSC_AT(dsc_strided_product, c_outer, ir::kCOuter) &&
                  DSC_AT(dsc_strided_product, c_inner, ir::kCInner) &&
                  DSC_AT(dsc_strided_product, c_row, ir::kCRow),
              "dsc_strided_product's fields in ir::SgemmScalar's order");
static_assert(sizeof(dsc_strided_chain) == ir::kSgemmChainScalars * sizeof(int64_t) &&
                  DSC_FIRST_PRODUCT_AT(dsc_strided_chain) &&
                  DSC_AT(dsc_strided_chain, n2, ir::kChainN2) &&
                  DSC_AT(dsc_strided_chain, d_offset, ir::kChainDOffset) &&
                  DSC_AT(dsc_strided_chain, d_outer, ir::kChainDOuter) &&
                  DSC_AT(dsc_strided_chain, d_inner, ir::kChainDInner) &&
                  DSC_AT(dsc_strided_chain, d_row, ir::kChainDRow) &&
                  DSC_AT(dsc_strided_chain, d_col, ir::kChainDCol) &&
                  DSC_AT(dsc_strided_chain, c_offset, ir::kChainCOffset) &&
                  DSC_AT(dsc_strided_chain, c_outer, ir::kChainCOuter) &&
                  DSC_AT(dsc_strided_chain, c_inner, ir::kChainCInner) &&
                  DSC_AT(dsc_strided_chain, c_row, ir::kChainCRow),
              "dsc_strided_chain's fields in ir::SgemmChainScalar's order");
#undef DSC_FIRST_PRODUCT_AT
#undef DSC_AT

int64_t element_bytes(ir::DType d) {
  return ir::dtype_bits(d) / 8;
}

std::string describe(const ir::HostBuffer& b, int id) {
  return "buffer %" + std::to_string(id) + " (" + b.name + ")";
}

class HostEmitter final : public HostBuilder {
public:
  HostEmitter(llvm::Module& out, const ir::Module& m, const ir::HostProgram& p,
              const HostDevice& device)
      : out_(out), m_(m), p_(p), device_(device), ctx_(out.getContext()), b_(ctx_),
        ptr_(llvm::PointerType::getUnqual(ctx_)), i32_(b_.getInt32Ty()), i64_(b_.getInt64Ty()) {}

  llvm::Function* emit(std::string* error) {
    const std::string name = host_symbol(p_.name);
    if (out_.getFunction(name)) {
      if (error) *error = "two host functions are named '" + name + "'";
      return nullptr;
    }
    llvm::FunctionType* type = llvm::FunctionType::get(i32_, {ptr_, ptr_}, false);
    fn_ = llvm::Function::Create(type, llvm::Function::ExternalLinkage, name, out_);
    fn_->addFnAttr(llvm::Attribute::NoUnwind);
    // The host code binds symbols and calls kernels once per step: it is not worth LLVM's
    // optimizer, whose register allocation over one function of every layer's calls cost
    // most of a deep model's build. Kernels are optimized as before.
    fn_->addFnAttr(llvm::Attribute::OptimizeNone);
    fn_->addFnAttr(llvm::Attribute::NoInline);
    call_ = fn_->getArg(0);
    call_->setName("call");
    inputs_ = fn_->getArg(1);
    inputs_->setName("inputs");
    entry_ = llvm::BasicBlock::Create(ctx_, "entry", fn_);
    llvm::BasicBlock* body = llvm::BasicBlock::Create(ctx_, "check_inputs", fn_);
    b_.SetInsertPoint(body);

    check_inputs();
    if (ok()) bind_dims();
    if (ok()) check_predicates();
    if (ok()) make_runtime_slots();
    if (ok()) allocate();
    if (ok()) resolve_buffers();
    if (ok()) emit_steps();
    if (!ok()) {
      fn_->eraseFromParent();
      if (error) *error = error_;
      return nullptr;
    }
    b_.CreateRet(b_.getInt32(0));
    llvm::IRBuilder<> entry(entry_);
    entry.CreateBr(body);
    return fn_;
  }

  // HostBuilder, for the device's steps.
  llvm::IRBuilder<>& ir() override { return b_; }
  llvm::Module& module() override { return out_; }
  llvm::Value* call() override { return call_; }
  void check_status(llvm::Value* status, const std::string& label) override {
    guard(
        b_.CreateICmpEQ(status, i32(0)), [this] { return i32(1); }, label);
  }
  void bind(const std::string& symbol, llvm::Value* value) override { symbols_[symbol] = value; }
  void unbind(const std::string& symbol) override { symbols_.erase(symbol); }

  void fail(const std::string& message) override {
    if (error_.empty()) error_ = "host program '" + p_.name + "': " + message;
  }
  bool ok() const override { return error_.empty(); }

  llvm::FunctionCallee runtime(const char* name, llvm::Type* result,
                               llvm::ArrayRef<llvm::Type*> params) override {
    llvm::FunctionCallee f =
        out_.getOrInsertFunction(name, llvm::FunctionType::get(result, params, false));
    if (auto* decl = llvm::dyn_cast<llvm::Function>(f.getCallee()))
      decl->addFnAttr(llvm::Attribute::NoUnwind);
    return f;
  }

private:
  llvm::ConstantInt* i32(int64_t v) { return b_.getInt32(static_cast<uint32_t>(v)); }

  // A stack array in the entry block (at least one element, so it is never zero-sized).
  llvm::Value* stack_array(llvm::Type* element, size_t n, const std::string& name) override {
    llvm::IRBuilder<> entry(entry_);
    return entry.CreateAlloca(llvm::ArrayType::get(element, std::max<size_t>(n, 1)), nullptr, name);
  }

  llvm::Constant* string_constant(const std::string& s) override {
    auto it = strings_.find(s);
    if (it != strings_.end()) return it->second;
    llvm::Constant* g = b_.CreateGlobalString(s, ".str", 0, &out_);
    strings_.emplace(s, g);
    return g;
  }

  llvm::Value* symbol(const std::string& name) {
    auto it = symbols_.find(name);
    if (it != symbols_.end()) return it->second;
    auto slot = runtime_slots_.find(name);
    if (slot != runtime_slots_.end()) return b_.CreateLoad(i64_, slot->second, name);
    fail("symbol '" + name + "' is used, but no input dim binds it");
    return b_.getInt64(0);
  }

  // A stack slot per run-time symbol, stored by its Bind step (mem2reg makes them values).
  void make_runtime_slots() {
    for (const ir::RuntimeSymbol& r : p_.runtime_symbols) {
      if (symbols_.count(r.name) || runtime_slots_.count(r.name)) {
        fail("run-time symbol '" + r.name + "' is bound twice");
        return;
      }
      runtime_slots_[r.name] = stack_array(i64_, 1, r.name + ".slot");
    }
  }


  llvm::Value* eval(const symbolic::Expr& e, const std::string& what) override {
    if (!e.defined()) {
      fail(what + " has no value");
      return b_.getInt64(0);
    }
    return llvmgen::emit_symbolic(b_, e, [this](const std::string& s) { return symbol(s); });
  }

  // eval() for a size made from user-given dims: an overflow of its arithmetic joins
  // *overflowed, for guard_overflow to report before anything is allocated.
  llvm::Value* eval_size(const symbolic::Expr& e, const std::string& what,
                         llvm::Value** overflowed) {
    if (!e.defined()) return eval(e, what);
    llvmgen::SymbolicOptions options;
    options.overflowed = overflowed;
    return llvmgen::emit_symbolic(
        b_, e, [this](const std::string& s) { return symbol(s); }, options);
  }

  // Fails the call with "cannot allocate <what> of 'f' at ...: its size overflows 64 bits"
  // when `overflowed` (from eval_size; null when nothing could overflow) is true.
  void guard_overflow(llvm::Value* overflowed, const std::string& what) {
    if (!overflowed) return;
    llvm::FunctionCallee fail_overflow = runtime("dsc_rt_fail_overflow", i32_, {ptr_, ptr_});
    guard(
        b_.CreateNot(overflowed),
        [&] {
          return b_.CreateCall(fail_overflow, {call_, string_constant(what)});
        },
        "overflow");
  }

  // Continues in a new block when `holds`; otherwise returns failure() from the host function.
  void guard(llvm::Value* holds, const std::function<llvm::Value*()>& failure,
             const std::string& what) {
    llvm::BasicBlock* failed = llvm::BasicBlock::Create(ctx_, what + ".fail", fn_);
    llvm::BasicBlock* next = llvm::BasicBlock::Create(ctx_, what + ".ok", fn_);
    llvm::MDNode* weights = llvm::MDBuilder(ctx_).createBranchWeights(1u << 20, 1);
    b_.CreateCondBr(holds, next, failed, weights);
    b_.SetInsertPoint(failed);
    b_.CreateRet(failure());
    b_.SetInsertPoint(next);
  }

  void check_inputs() {
    llvm::FunctionCallee check =
        runtime("dsc_rt_check_input", i32_, {ptr_, i32_, ptr_, i32_, i32_, i32_});
    llvm::FunctionCallee data = runtime("dsc_rt_input_data", ptr_, {ptr_});
    std::vector<llvm::Value*> tensors;
    for (size_t i = 0; i < p_.params.size(); ++i) {
      const ir::Buffer& param = p_.params[i];
      llvm::Value* slot = b_.CreateConstInBoundsGEP1_64(ptr_, inputs_, i);
      llvm::Value* tensor = b_.CreateLoad(ptr_, slot, param.name + ".tensor");
      DLDataType dl = ir::to_dl(param.dtype);
      llvm::Value* status =
          b_.CreateCall(check, {call_, i32(static_cast<int64_t>(i)), tensor, i32(dl.code),
                                i32(dl.bits), i32(static_cast<int64_t>(param.shape.size()))});
      guard(
          b_.CreateICmpEQ(status, i32(0)), [this] { return i32(1); }, "check_input");
      tensors.push_back(tensor);
    }
    for (size_t i = 0; i < tensors.size(); ++i) {
      const std::string& name = p_.params[i].name;
      data_.push_back(b_.CreateCall(data, {tensors[i]}, name + ".data"));
      llvm::Value* field =
          b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), tensors[i], kDLTensorShapeOffset);
      shapes_.push_back(b_.CreateLoad(ptr_, field, name + ".shape"));
    }
  }

  void bind_dims() {
    llvm::FunctionCallee fail_dim =
        runtime("dsc_rt_fail_dim", i32_, {ptr_, i32_, i32_, i64_, i64_, ptr_});
    for (const ir::HostDim& d : p_.dims) {
      if (d.param < 0 || static_cast<size_t>(d.param) >= p_.params.size()) {
        fail("a dim of param " + std::to_string(d.param) + ", which does not exist");
        return;
      }
      const ir::Buffer& param = p_.params[static_cast<size_t>(d.param)];
      if (d.axis < 0 || static_cast<size_t>(d.axis) >= param.shape.size()) {
        fail("dim " + std::to_string(d.axis) + " of '" + param.name + "', which has rank " +
             std::to_string(param.shape.size()));
        return;
      }
      llvm::Value* field = b_.CreateConstInBoundsGEP1_64(
          i64_, shapes_[static_cast<size_t>(d.param)], static_cast<uint64_t>(d.axis));
      llvm::Value* actual = b_.CreateLoad(i64_, field);
      llvm::Value* expected;
      std::string text;
      if (!d.binds.empty()) {
        auto bound = symbols_.find(d.binds);
        if (bound == symbols_.end()) {
          actual->setName(d.binds);
          symbols_.emplace(d.binds, actual);
          continue;
        }
        // A symbol bound twice: the second dim must agree with the first.
        expected = bound->second;
        text = d.binds;
      } else {
        expected = eval(d.expected, "the expected value of dim " + std::to_string(d.axis) +
                                        " of '" + param.name + "'");
        if (!ok()) return;
        text = symbolic::to_string(d.expected);
      }
      guard(
          b_.CreateICmpEQ(actual, expected),
          [&] {
            return b_.CreateCall(fail_dim, {call_, i32(d.param), i32(d.axis), actual, expected,
                                            string_constant(text)});
          },
          "dim");
    }
  }

  void check_predicates() {
    for (const ir::HostCheck& c : p_.checks) {
      emit_check(c);
      if (!ok()) return;
    }
  }

  // Fails the call with "<what> violated: S = 600 (<location>)" unless c's predicate holds.
  void emit_check(const ir::HostCheck& c) {
    if (!c.predicate.defined()) {
      fail("check '" + c.what + "' has no predicate");
      return;
    }
    llvm::FunctionCallee fail_check =
        runtime("dsc_rt_fail_check", i32_, {ptr_, ptr_, ptr_, i32_, ptr_, ptr_});
    llvm::Value* holds =
        llvmgen::emit_symbolic_bool(b_, c.predicate, [this](const std::string& s) { return symbol(s); });
    std::vector<llvm::Value*> values;
    for (const std::string& s : c.symbols)
      values.push_back(symbol(s));
    if (!ok()) return;
    guard(
        holds,
        [&] {
          const size_t n = c.symbols.size();
          llvm::Value* names = stack_array(ptr_, n, "check.names");
          llvm::Value* vals = stack_array(i64_, n, "check.values");
          for (size_t j = 0; j < n; ++j) {
            b_.CreateStore(string_constant(c.symbols[j]),
                           b_.CreateConstInBoundsGEP1_64(ptr_, names, j));
            b_.CreateStore(values[j], b_.CreateConstInBoundsGEP1_64(i64_, vals, j));
          }
          return b_.CreateCall(fail_check,
                               {call_, string_constant(c.what), string_constant(c.location),
                                i32(static_cast<int64_t>(n)), names, vals});
        },
        "where"); // identity-lint: the block of the where clauses' checks, not the op
  }

  void allocate() {
    bool has_arena = false;
    for (const ir::HostBuffer& buf : p_.buffers)
      has_arena |= buf.storage == ir::HostBuffer::Storage::Arena;
    if (has_arena) {
      llvm::Value* overflowed = nullptr;
      llvm::Value* bytes = eval_size(p_.arena_bytes, "the arena size", &overflowed);
      if (!ok()) return;
      guard_overflow(overflowed, "the arena");
      llvm::FunctionCallee arena = runtime("dsc_rt_arena", ptr_, {ptr_, i64_});
      arena_ = b_.CreateCall(arena, {call_, bytes}, "arena");
      guard(
          b_.CreateIsNotNull(arena_), [this] { return i32(1); }, "arena");
    }

    // Output k is the one Output buffer with index k, for every k < outputs.size(), or a
    // parameter updated in place, which the runtime returns (the manifest's updates_param).
    const size_t num_outputs = p_.outputs.size();
    std::vector<int> output_buffer(num_outputs, -1);
    for (size_t id = 0; id < p_.buffers.size(); ++id) {
      const ir::HostBuffer& buf = p_.buffers[id];
      if (buf.storage != ir::HostBuffer::Storage::Output) continue;
      if (buf.index < 0 || static_cast<size_t>(buf.index) >= num_outputs) {
        fail(describe(buf, static_cast<int>(id)) + " is output " + std::to_string(buf.index) +
             ", but the program has " + std::to_string(num_outputs) + " outputs");
        return;
      }
      if (output_buffer[static_cast<size_t>(buf.index)] >= 0) {
        fail("two buffers are output " + std::to_string(buf.index));
        return;
      }
      output_buffer[static_cast<size_t>(buf.index)] = static_cast<int>(id);
    }
    output_buffer_ = output_buffer;
    for (size_t k = 0; k < num_outputs && ok(); ++k) {
      if (output_buffer[k] < 0 && updates_a_param(p_.outputs[k])) {
        outputs_.push_back(nullptr);
        continue;
      }
      if (output_buffer[k] < 0) {
        fail("no buffer is output " + std::to_string(k));
        return;
      }
      // An output shaped by a run-time symbol is allocated by the step that writes it.
      const ir::HostBuffer& buf = p_.buffers[static_cast<size_t>(output_buffer[k])];
      outputs_.push_back(ir::has_runtime_dims(p_, buf.shape) ? nullptr : allocate_output(k));
    }
  }

  bool updates_a_param(int id) const {
    if (id < 0 || static_cast<size_t>(id) >= p_.buffers.size()) return false;
    return p_.buffers[static_cast<size_t>(id)].updated_in_place &&
           p_.buffers[static_cast<size_t>(ir::alias_root(p_, id))].storage ==
               ir::HostBuffer::Storage::Param;
  }

  // dsc_rt_output for output k at its shape's current value; a null returns 1.
  llvm::Value* allocate_output(size_t k) {
    llvm::FunctionCallee output =
        runtime("dsc_rt_output", ptr_, {ptr_, i32_, i32_, i32_, i32_, ptr_});
    const ir::HostBuffer& buf = p_.buffers[static_cast<size_t>(output_buffer_[k])];
    llvm::Value* shape = stack_array(i64_, buf.shape.size(), "output" + std::to_string(k) + ".shape");
    llvm::Value* overflowed = nullptr;
    for (size_t j = 0; j < buf.shape.size(); ++j)
      b_.CreateStore(eval_size(buf.shape[j], "a dim of output " + std::to_string(k), &overflowed),
                     b_.CreateConstInBoundsGEP1_64(i64_, shape, j));
    if (!ok()) return nullptr;
    guard_overflow(overflowed, "output " + std::to_string(k));
    DLDataType dl = ir::to_dl(buf.dtype);
    llvm::Value* data =
        b_.CreateCall(output,
                      {call_, i32(static_cast<int64_t>(k)), i32(dl.code), i32(dl.bits),
                       i32(static_cast<int64_t>(buf.shape.size())), shape},
                      "output" + std::to_string(k));
    guard(
        b_.CreateIsNotNull(data), [this] { return i32(1); }, "output");
    return data;
  }

  void resolve_buffers() {
    pointers_.assign(p_.buffers.size(), nullptr);
    for (size_t id = 0; id < p_.buffers.size() && ok(); ++id)
      resolve(static_cast<int>(id), 0);
  }

  // The pointer of a buffer a step uses; a late output (shaped by a run-time symbol) is
  // allocated on its first use, after the symbols are bound and outside any if (lower_host
  // makes it so).
  llvm::Value* pointer(int id) {
    const auto at = static_cast<size_t>(id);
    if (pointers_[at]) return pointers_[at];
    const ir::HostBuffer& buf = p_.buffers[at];
    if (buf.storage == ir::HostBuffer::Storage::Alias) { // of a late output
      pointers_[at] = pointer(buf.index);
      return pointers_[at];
    }
    if (buf.storage != ir::HostBuffer::Storage::Output) {
      fail(describe(buf, id) + " has no storage");
      return llvm::ConstantPointerNull::get(ptr_);
    }
    const auto k = static_cast<size_t>(buf.index);
    outputs_[k] = allocate_output(k);
    pointers_[at] = outputs_[k];
    return pointers_[at] ? pointers_[at] : llvm::ConstantPointerNull::get(ptr_);
  }

  llvm::Value* resolve(int id, size_t depth) {
    const auto at = static_cast<size_t>(id);
    if (pointers_[at]) return pointers_[at];
    const ir::HostBuffer& buf = p_.buffers[at];
    llvm::Value* pointer = nullptr;
    switch (buf.storage) {
    case ir::HostBuffer::Storage::Param:
      if (buf.index < 0 || static_cast<size_t>(buf.index) >= p_.params.size()) {
        fail(describe(buf, id) + " is param " + std::to_string(buf.index) +
             ", which does not exist");
        return nullptr;
      }
      if (p_.params[static_cast<size_t>(buf.index)].dtype != buf.dtype) {
        fail(describe(buf, id) + " is " + ir::dtype_name(buf.dtype) + ", but param " +
             std::to_string(buf.index) + " is " +
             ir::dtype_name(p_.params[static_cast<size_t>(buf.index)].dtype));
        return nullptr;
      }
      pointer = data_[static_cast<size_t>(buf.index)];
      break;
    case ir::HostBuffer::Storage::Arena: {
      llvm::Value* offset = eval(buf.offset, "the arena offset of " + describe(buf, id));
      if (!ok()) return nullptr;
      pointer = b_.CreateInBoundsGEP(b_.getInt8Ty(), arena_, offset, buf.name);
      break;
    }
    case ir::HostBuffer::Storage::Output:
      pointer = outputs_[static_cast<size_t>(buf.index)]; // null: allocated when written
      if (!pointer) return nullptr;
      break;
    case ir::HostBuffer::Storage::Alias:
      if (buf.index < 0 || static_cast<size_t>(buf.index) >= p_.buffers.size() ||
          depth > p_.buffers.size()) {
        fail(describe(buf, id) + " aliases buffer %" + std::to_string(buf.index) +
             ", which does not exist or aliases itself");
        return nullptr;
      }
      pointer = resolve(buf.index, depth + 1);
      break;
    }
    pointers_[at] = pointer;
    return pointer;
  }

  // The buffer ids of a step, checked.
  bool step_buffers(const ir::HostStep& s, size_t count, const std::string& what) {
    if (s.buffers.size() != count) {
      fail(what + " takes " + std::to_string(count) + " buffers, not " +
           std::to_string(s.buffers.size()));
      return false;
    }
    for (int id : s.buffers) {
      if (id < 0 || static_cast<size_t>(id) >= p_.buffers.size()) {
        fail(what + " uses buffer %" + std::to_string(id) + ", which does not exist");
        return false;
      }
    }
    return true;
  }

  const ir::HostBuffer& buffer(int id) const { return p_.buffers[static_cast<size_t>(id)]; }

  void emit_steps() { emit_steps(p_.steps); }

  void emit_steps(const std::vector<ir::HostStep>& steps) {
    for (const ir::HostStep& s : steps) {
      switch (s.kind) {
      case ir::HostStep::Kind::Kernel:
        emit_kernel_call(s);
        break;
      case ir::HostStep::Kind::Library:
        emit_library_call(s);
        break;
      case ir::HostStep::Kind::Copy:
        emit_copy(s);
        break;
      case ir::HostStep::Kind::If:
        emit_if(s);
        break;
      case ir::HostStep::Kind::Bind:
        emit_bind(s);
        break;
      case ir::HostStep::Kind::Loop:
        emit_loop(s);
        break;
      case ir::HostStep::Kind::Check: {
        if (s.ints.size() != 1) {
          fail("a check step has no single predicate");
          return;
        }
        std::set<std::string> names = symbolic::free_symbols(s.ints[0]);
        emit_check(ir::HostCheck{s.ints[0], s.callee, s.location, {names.begin(), names.end()}});
        break;
      }
      }
      if (!ok()) return;
    }
  }

  // The value of a scalar buffer of `bytes` bytes (1, 4 or 8) as an integer of that width,
  // read to the host by the device.
  llvm::Value* read_scalar(int id, unsigned bytes, const std::string& what) {
    return device_.read_scalar(*this, pointer(id), bytes, what);
  }

  void emit_if(const ir::HostStep& s) {
    llvm::Value* cond = nullptr;
    if (s.buffers.empty() && s.ints.size() == 1) { // a guarded fusion's shape fact
      cond = llvmgen::emit_symbolic_bool(b_, s.ints[0],
                                         [this](const std::string& n) { return symbol(n); });
    } else {
      if (!step_buffers(s, 1, "an if step")) return;
      if (buffer(s.buffers[0]).dtype != ir::DType::Bool) {
        fail("an if step tests " + describe(buffer(s.buffers[0]), s.buffers[0]) + ", not a bool");
        return;
      }
      cond = b_.CreateICmpNE(read_scalar(s.buffers[0], 1, "cond"), b_.getInt8(0));
    }
    llvm::BasicBlock* then_block = llvm::BasicBlock::Create(ctx_, "if.then", fn_);
    llvm::BasicBlock* else_block = llvm::BasicBlock::Create(ctx_, "if.else", fn_);
    llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx_, "if.end", fn_);
    b_.CreateCondBr(cond, then_block, else_block);
    // A late output allocated in one branch is not allocated in the other.
    const std::vector<llvm::Value*> before = pointers_;
    b_.SetInsertPoint(then_block);
    emit_steps(s.then_steps);
    b_.CreateBr(done);
    pointers_ = before;
    b_.SetInsertPoint(else_block);
    emit_steps(s.else_steps);
    b_.CreateBr(done);
    pointers_ = before;
    b_.SetInsertPoint(done);
  }

  // var := start; while var < end { cond steps; stop unless cond; body steps; ++var }. The var
  // lives in its run-time symbol's slot, which holds where the loop stopped afterwards.
  void emit_loop(const ir::HostStep& s) {
    auto slot = runtime_slots_.find(s.callee);
    if (slot == runtime_slots_.end() || s.ints.size() != 2) {
      fail("a loop step over '" + s.callee + "', which is not a run-time symbol");
      return;
    }
    if (!s.buffers.empty() && !step_buffers(s, 1, "the condition of a loop")) return;
    llvm::Value* start = eval(s.ints[0], "the start of the loop over " + s.callee);
    llvm::Value* end = eval(s.ints[1], "the end of the loop over " + s.callee);
    if (!ok()) return;
    b_.CreateStore(start, slot->second);
    llvm::BasicBlock* head = llvm::BasicBlock::Create(ctx_, "loop.head", fn_);
    llvm::BasicBlock* body = llvm::BasicBlock::Create(ctx_, "loop.body", fn_);
    llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx_, "loop.end", fn_);
    b_.CreateBr(head);
    // Pointers made inside the loop do not dominate its exit.
    const std::vector<llvm::Value*> before = pointers_;
    b_.SetInsertPoint(head);
    llvm::Value* i = b_.CreateLoad(i64_, slot->second, s.callee);
    b_.CreateCondBr(b_.CreateICmpSLT(i, end), body, done);
    b_.SetInsertPoint(body);
    emit_steps(s.cond_steps);
    if (!ok()) return;
    if (!s.buffers.empty()) {
      llvm::Value* go = b_.CreateICmpNE(read_scalar(s.buffers[0], 1, "while"), b_.getInt8(0));
      llvm::BasicBlock* next = llvm::BasicBlock::Create(ctx_, "loop.iteration", fn_);
      b_.CreateCondBr(go, next, done);
      b_.SetInsertPoint(next);
    }
    emit_steps(s.body_steps);
    if (!ok()) return;
    llvm::Value* current = b_.CreateLoad(i64_, slot->second, s.callee);
    b_.CreateStore(b_.CreateAdd(current, b_.getInt64(1)), slot->second);
    b_.CreateBr(head);
    pointers_ = before;
    b_.SetInsertPoint(done);
  }

  // symbol := value, after checking 0 <= value <= its upper bound.
  void emit_bind(const ir::HostStep& s) {
    const ir::RuntimeSymbol* r = ir::find_runtime_symbol(p_, s.callee);
    auto slot = runtime_slots_.find(s.callee);
    if (!r || slot == runtime_slots_.end()) {
      fail("a bind step of '" + s.callee + "', which is not a run-time symbol");
      return;
    }
    llvm::Value* value = nullptr;
    if (s.buffers.size() == 1 && s.ints.empty()) {
      if (!step_buffers(s, 1, "the bind of " + s.callee)) return;
      const ir::DType dtype = buffer(s.buffers[0]).dtype;
      if (dtype != ir::DType::I64 && dtype != ir::DType::I32) {
        fail("the bind of " + s.callee + " reads a " + ir::dtype_name(dtype) + " buffer");
        return;
      }
      value = read_scalar(s.buffers[0], dtype == ir::DType::I64 ? 8 : 4, s.callee + ".value");
      value = b_.CreateSExt(value, i64_);
    } else if (s.buffers.empty() && s.ints.size() == 1) {
      value = eval(s.ints[0], "the value of " + s.callee);
    } else {
      fail("the bind of " + s.callee + " has no single value");
      return;
    }
    llvm::Value* bound = eval(r->upper_bound, "the upper bound of " + s.callee);
    if (!ok()) return;
    llvm::Value* holds = b_.CreateAnd(b_.CreateICmpSGE(value, b_.getInt64(0)),
                                      b_.CreateICmpSLE(value, bound));
    llvm::FunctionCallee fail_check =
        runtime("dsc_rt_fail_check", i32_, {ptr_, ptr_, ptr_, i32_, ptr_, ptr_});
    const std::string what =
        r->what + ": 0 <= " + r->name + " <= " + symbolic::to_string(r->upper_bound);
    guard(
        holds,
        [&] {
          llvm::Value* names = stack_array(ptr_, 1, "bind.names");
          llvm::Value* vals = stack_array(i64_, 1, "bind.values");
          b_.CreateStore(string_constant(r->name), names);
          b_.CreateStore(value, vals);
          return b_.CreateCall(fail_check, {call_, string_constant(what),
                                            string_constant(s.location), i32(1), names, vals});
        },
        "bind");
    b_.CreateStore(value, slot->second);
  }

  void emit_kernel_call(const ir::HostStep& s) {
    const std::string what = "the call of prim '" + s.callee + "'";
    auto prim = m_.prim(s.callee);
    if (!prim) {
      fail(what + ": the module has no such prim");
      return;
    }
    std::vector<const ir::Buffer*> signature;
    for (const ir::Buffer& b : prim->inputs)
      signature.push_back(&b);
    for (const ir::Buffer& b : prim->outputs)
      signature.push_back(&b);
    if (!step_buffers(s, signature.size(), what)) return;
    for (size_t j = 0; j < signature.size(); ++j) {
      const ir::HostBuffer& arg = buffer(s.buffers[j]);
      if (arg.dtype != signature[j]->dtype) {
        fail(what + ": " + describe(arg, s.buffers[j]) + " is " + ir::dtype_name(arg.dtype) +
             ", but '" + signature[j]->name + "' is " + ir::dtype_name(signature[j]->dtype));
        return;
      }
    }
    const std::vector<std::string> symbols = ir::prim_signature_symbols(*prim);
    if (s.ints.size() != symbols.size()) {
      fail(what + " passes " + std::to_string(s.ints.size()) + " symbols; the kernel takes " +
           std::to_string(symbols.size()));
      return;
    }
    llvm::Value* buffers = stack_array(ptr_, signature.size(), s.callee + ".buffers");
    for (size_t j = 0; j < signature.size(); ++j)
      b_.CreateStore(pointer(s.buffers[j]), b_.CreateConstInBoundsGEP1_64(ptr_, buffers, j));
    llvm::Value* ints = stack_array(i64_, symbols.size(), s.callee + ".symbols");
    for (size_t j = 0; j < symbols.size(); ++j)
      b_.CreateStore(eval(s.ints[j], "symbol " + symbols[j] + " of " + what),
                     b_.CreateConstInBoundsGEP1_64(i64_, ints, j));
    if (!ok()) return;
    device_.run_kernel(*this, KernelCall{&s, symbols, buffers, signature.size(), ints, what});
  }

  // runtime_function(buffer pointers..., int64 scalars... or their descriptor), as
  // ir/LibraryRoutines.def says.
  void emit_library_call(const ir::HostStep& s) {
    const std::string what = "the call of library routine '" + s.callee + "'";
    const ir::LibraryRoutine* routine = ir::find_library_routine(s.callee);
    const ir::TargetKind device = device_.kind();
    if (!routine || routine->target != device) {
      fail(what + ": the " + ir::target_kind_name(device) + " target has no such routine");
      return;
    }
    if (!s.epilogue.empty()) {
      emit_library_call_with_epilogue(s, *routine, what);
      return;
    }
    if (!step_buffers(s, static_cast<size_t>(routine->buffers), what)) return;
    for (size_t i = 0; i < s.buffers.size(); ++i) {
      const int id = s.buffers[i];
      const ir::DType want = ir::routine_buffer_dtype(*routine, i);
      if (buffer(id).dtype != want) {
        fail(what + ": " + describe(buffer(id), id) + " is " + ir::dtype_name(buffer(id).dtype) +
             "; the routine takes " + ir::dtype_name(want));
        return;
      }
    }
    if (s.ints.size() != static_cast<size_t>(routine->scalars)) {
      fail(what + " has " + std::to_string(s.ints.size()) + " scalars; it takes " +
           std::to_string(routine->scalars) + " (" + routine->summary + ")");
      return;
    }
    std::vector<llvm::Type*> types;
    std::vector<llvm::Value*> args;
    for (int id : s.buffers) {
      args.push_back(pointer(id));
      types.push_back(ptr_);
    }
    append_scalars(s, *routine, what, args, types);
    if (!ok()) return;
    device_.call_routine(*this, *routine, std::move(args), std::move(types));
  }

  // The step's scalars, after its buffers, as the routine takes them (its table's scalars_by):
  // an i64 argument each, or the address of a stack array of them, which the runtime reads as
  // the routine's descriptor struct (runtime/HostABI.h; the static_asserts above).
  void append_scalars(const ir::HostStep& s, const ir::LibraryRoutine& routine,
                      const std::string& what, std::vector<llvm::Value*>& args,
                      std::vector<llvm::Type*>& types) {
    if (routine.scalars_by == ir::ScalarsBy::Values) {
      for (const symbolic::Expr& e : s.ints) {
        args.push_back(eval(e, what));
        types.push_back(i64_);
      }
      return;
    }
    llvm::Value* descriptor = stack_array(i64_, s.ints.size(), s.callee + ".scalars");
    for (size_t j = 0; j < s.ints.size(); ++j)
      b_.CreateStore(eval(s.ints[j], what), b_.CreateConstInBoundsGEP1_64(i64_, descriptor, j));
    args.push_back(descriptor);
    types.push_back(ptr_);
  }

  // epilogue_function(operand and result pointers, the routine's scalars, then the epilogue:
  // its kernel, its buffers (its inputs, then the result) at row 0, each one's bytes per row
  // (0: read whole), its symbols' values, and the slot of its row count), as
  // runtime/HostABI.h's dsc_rt_gemm_f32_strided_epilogue takes them.
  void emit_library_call_with_epilogue(const ir::HostStep& s, const ir::LibraryRoutine& routine,
                                       const std::string& what) {
    Ref<ir::PrimFunc> prim = m_.prim(s.epilogue);
    llvm::Function* kernel = device_.epilogue_kernel(*this, s.epilogue);
    if (!routine.epilogue_function || !prim || !kernel) {
      fail(what + ": its epilogue '" + s.epilogue + "' has no compiled kernel to run");
      return;
    }
    const size_t inputs = prim->inputs.size();
    if (!step_buffers(s, static_cast<size_t>(routine.buffers) + inputs, what)) return;
    const std::vector<std::string> symbols = ir::prim_signature_symbols(*prim);
    const std::string rows = ir::epilogue_rows_symbol(*prim);
    auto slot = std::find(symbols.begin(), symbols.end(), rows);
    auto first_row = std::find(symbols.begin(), symbols.end(), s.epilogue_first_row);
    const int64_t first_row_slot = s.epilogue_first_row.empty() ? -1 : first_row - symbols.begin();
    if (rows.empty() || slot == symbols.end() || s.epilogue_ints.size() != symbols.size() ||
        s.ints.size() != static_cast<size_t>(routine.scalars) ||
        (!s.epilogue_first_row.empty() && first_row == symbols.end())) {
      fail(what + ": its epilogue '" + s.epilogue + "' does not fit the step");
      return;
    }
    std::vector<const ir::Buffer*> formals;
    std::vector<int> actuals;
    for (size_t k = 0; k < inputs; ++k) {
      formals.push_back(&prim->inputs[k]);
      actuals.push_back(s.buffers[static_cast<size_t>(routine.operands()) + k]);
    }
    formals.push_back(&prim->outputs[0]);
    actuals.push_back(s.buffers.back());
    for (size_t j = 0; j < formals.size(); ++j)
      if (buffer(actuals[j]).dtype != formals[j]->dtype) {
        fail(what + ": " + describe(buffer(actuals[j]), actuals[j]) + " is " +
             ir::dtype_name(buffer(actuals[j]).dtype) + ", but epilogue buffer '" +
             formals[j]->name + "' is " + ir::dtype_name(formals[j]->dtype));
        return;
      }
    std::map<std::string, symbolic::Expr> values;
    for (size_t j = 0; j < symbols.size(); ++j) values[symbols[j]] = s.epilogue_ints[j];
    llvm::Value* pointers = stack_array(ptr_, formals.size(), s.epilogue + ".buffers");
    llvm::Value* row_bytes = stack_array(i64_, formals.size(), s.epilogue + ".row_bytes");
    for (size_t j = 0; j < formals.size(); ++j) {
      b_.CreateStore(pointer(actuals[j]), b_.CreateConstInBoundsGEP1_64(ptr_, pointers, j));
      const std::vector<symbolic::Expr>& shape = formals[j]->shape;
      symbolic::Expr bytes = 0; // a buffer not indexed by row is passed whole
      if (!shape.empty() && shape[0].same_as(prim->outputs[0].shape[0])) {
        bytes = element_bytes(formals[j]->dtype);
        for (size_t a = 1; a < shape.size(); ++a) bytes = bytes * shape[a];
      }
      b_.CreateStore(eval(ir::substitute(bytes, values), "the row size of " + formals[j]->name),
                     b_.CreateConstInBoundsGEP1_64(i64_, row_bytes, j));
    }
    llvm::Value* ints = stack_array(i64_, symbols.size(), s.epilogue + ".symbols");
    for (size_t j = 0; j < symbols.size(); ++j)
      b_.CreateStore(eval(s.epilogue_ints[j], "symbol " + symbols[j] + " of " + what),
                     b_.CreateConstInBoundsGEP1_64(i64_, ints, j));
    // The operands, then the result.
    std::vector<llvm::Value*> args;
    for (int j = 0; j < routine.operands(); ++j) args.push_back(pointer(s.buffers[j]));
    args.push_back(pointer(s.buffers.back()));
    std::vector<llvm::Type*> types(args.size(), ptr_);
    append_scalars(s, routine, what, args, types);
    if (!ok()) return;
    args.insert(args.end(), {kernel, pointers, row_bytes,
                             b_.getInt64(static_cast<uint64_t>(formals.size())), ints,
                             b_.getInt64(static_cast<uint64_t>(symbols.size())),
                             b_.getInt64(static_cast<uint64_t>(slot - symbols.begin())),
                             b_.getInt64(static_cast<uint64_t>(first_row_slot))});
    types.insert(types.end(), {ptr_, ptr_, ptr_, i64_, ptr_, i64_, i64_, i64_});
    b_.CreateCall(runtime(routine.epilogue_function, b_.getVoidTy(), types), args);
  }

  void emit_copy(const ir::HostStep& s) {
    const std::string what = "a copy step";
    if (!step_buffers(s, 2, what)) return;
    if (s.ints.size() == 4) return emit_copy_into_slice(s);
    const ir::HostBuffer& dst = buffer(s.buffers[1]);
    llvm::Value* bytes = b_.getInt64(static_cast<uint64_t>(element_bytes(dst.dtype)));
    for (const symbolic::Expr& d : dst.shape)
      bytes = b_.CreateMul(bytes, eval(d, "a dim of " + describe(dst, s.buffers[1])));
    if (!ok()) return;
    device_.copy(*this, pointer(s.buffers[1]), pointer(s.buffers[0]), bytes);
  }

  // An update written in place (ir/HostProgram.h, Copy): `rows` blocks of `row` elements, each
  // a device copy, `pitch` elements apart in the destination from `offset` on.
  void emit_copy_into_slice(const ir::HostStep& s) {
    const ir::HostBuffer& dst = buffer(s.buffers[1]);
    const std::string of = "the update of " + describe(dst, s.buffers[1]);
    llvm::Value* elem = b_.getInt64(static_cast<uint64_t>(element_bytes(dst.dtype)));
    llvm::Value* rows = eval(s.ints[0], "the rows of " + of);
    llvm::Value* row = b_.CreateMul(eval(s.ints[1], "the row of " + of), elem);
    llvm::Value* pitch = b_.CreateMul(eval(s.ints[2], "the pitch of " + of), elem);
    llvm::Value* offset = b_.CreateMul(eval(s.ints[3], "the offset of " + of), elem);
    if (!ok()) return;
    llvm::Value* to = b_.CreateInBoundsGEP(b_.getInt8Ty(), pointer(s.buffers[1]), offset);
    llvm::Value* from = pointer(s.buffers[0]);
    llvm::Function* fn = b_.GetInsertBlock()->getParent();
    llvm::BasicBlock* before = b_.GetInsertBlock();
    llvm::BasicBlock* loop = llvm::BasicBlock::Create(b_.getContext(), "update.row", fn);
    llvm::BasicBlock* body = llvm::BasicBlock::Create(b_.getContext(), "update.copy", fn);
    llvm::BasicBlock* done = llvm::BasicBlock::Create(b_.getContext(), "update.done", fn);
    b_.CreateBr(loop);
    b_.SetInsertPoint(loop);
    llvm::PHINode* r = b_.CreatePHI(i64_, 2, "r");
    r->addIncoming(b_.getInt64(0), before);
    b_.CreateCondBr(b_.CreateICmpSLT(r, rows), body, done);
    b_.SetInsertPoint(body);
    device_.copy(*this, b_.CreateInBoundsGEP(b_.getInt8Ty(), to, b_.CreateMul(r, pitch)),
                 b_.CreateInBoundsGEP(b_.getInt8Ty(), from, b_.CreateMul(r, row)), row);
    r->addIncoming(b_.CreateAdd(r, b_.getInt64(1)), b_.GetInsertBlock());
    b_.CreateBr(loop);
    b_.SetInsertPoint(done);
  }

  llvm::Module& out_;
  const ir::Module& m_;
  const ir::HostProgram& p_;
  const HostDevice& device_;
  llvm::LLVMContext& ctx_;
  llvm::IRBuilder<> b_;
  llvm::PointerType* ptr_;
  llvm::IntegerType* i32_;
  llvm::IntegerType* i64_;

  llvm::Function* fn_ = nullptr;
  llvm::Value* call_ = nullptr;
  llvm::Value* inputs_ = nullptr;
  llvm::BasicBlock* entry_ = nullptr;
  std::vector<llvm::Value*> data_;   // per param: its data pointer
  std::vector<llvm::Value*> shapes_; // per param: its int64_t* shape
  std::map<std::string, llvm::Value*> symbols_;
  std::map<std::string, llvm::Constant*> strings_;
  llvm::Value* arena_ = nullptr;
  std::vector<llvm::Value*> outputs_;  // per output index: its data pointer (null until
                                       // allocated, for one shaped by a run-time symbol)
  std::vector<int> output_buffer_;     // per output index: its buffer id
  std::map<std::string, llvm::Value*> runtime_slots_;
  std::vector<llvm::Value*> pointers_; // per buffer id
  std::string error_;
};

} // namespace

llvm::Function* emit_host_function(llvm::Module& out, const ir::Module& m,
                                   const ir::HostProgram& program, const HostDevice& device,
                                   std::string* error) {
  return HostEmitter(out, m, program, device).emit(error);
}

} // namespace dsc::cpu
