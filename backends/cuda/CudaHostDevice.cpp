#include "backends/cuda/CudaHostDevice.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/GlobalVariable.h>

#include <map>
#include <optional>

#include "backends/cpu/HostDevice.h"
#include "backends/cuda/DeviceCode.h"
#include "ir/OpRegistry.h"
#include "symbolic/Eval.h"

namespace dsc::cuda {

namespace {

using cpu::HostBuilder;
using cpu::KernelCall;

// The module's CUDA kernels as runtime/HostABI.h's dsc_cuda_module (internal; the runtime
// fills in `loaded`): its images, its source and its name.
llvm::GlobalVariable* emit_cuda_module(llvm::Module& out, const DeviceCode& code,
                                       const std::string& name) {
  llvm::LLVMContext& ctx = out.getContext();
  llvm::Type* i32 = llvm::Type::getInt32Ty(ctx);
  llvm::Type* i64 = llvm::Type::getInt64Ty(ctx);
  llvm::PointerType* ptr = llvm::PointerType::getUnqual(ctx);
  auto bytes = [&](const std::string& data, bool terminate, const std::string& symbol) {
    llvm::Constant* init = llvm::ConstantDataArray::getString(ctx, data, terminate);
    auto* g = new llvm::GlobalVariable(out, init->getType(), true, llvm::GlobalValue::InternalLinkage,
                                       init, symbol);
    g->setAlignment(llvm::Align(64));
    return g;
  };
  llvm::StructType* image_type = llvm::StructType::get(ctx, {i32, i32, ptr, i64});
  std::vector<llvm::Constant*> images;
  for (size_t k = 0; k < code.images.size(); ++k) {
    const DeviceImage& image = code.images[k];
    llvm::GlobalVariable* data =
        bytes(image.data, image.is_ptx, "dsc_cuda_image." + std::to_string(k));
    const uint64_t size = image.data.size() + (image.is_ptx ? 1 : 0);
    images.push_back(llvm::ConstantStruct::get(
        image_type, {llvm::ConstantInt::get(i32, static_cast<uint64_t>(image.arch)),
                     llvm::ConstantInt::get(i32, image.is_ptx ? 1 : 0), data,
                     llvm::ConstantInt::get(i64, size)}));
  }
  llvm::ArrayType* images_type = llvm::ArrayType::get(image_type, images.size());
  auto* table = new llvm::GlobalVariable(out, images_type, true, llvm::GlobalValue::InternalLinkage,
                                         llvm::ConstantArray::get(images_type, images),
                                         "dsc_cuda_images");
  llvm::StructType* module_type = llvm::StructType::get(ctx, {ptr, i32, ptr, ptr, ptr});
  llvm::Constant* init = llvm::ConstantStruct::get(
      module_type, {bytes(name, true, "dsc_cuda_module.name"),
                    llvm::ConstantInt::get(i32, images.size()), table,
                    bytes(code.source, true, "dsc_cuda_source"), llvm::ConstantPointerNull::get(ptr)});
  return new llvm::GlobalVariable(out, module_type, false, llvm::GlobalValue::InternalLinkage, init,
                                  "dsc_cuda_module");
}

class CudaHostDevice final : public cpu::HostDevice {
public:
  explicit CudaHostDevice(const ir::Target& target) : target_(target) {}

  ir::TargetKind kind() const override { return ir::TargetKind::Cuda; }

  bool begin_module(llvm::Module& out, const ir::Module& m, const std::string& name,
                    std::string* error) override {
    code_ = compile_device_code(m, target_, name, error);
    if (!code_) return false;
    module_ = emit_cuda_module(out, *code_, name);
    return true;
  }

  // dsc_rt_cuda_launch(call, module, kernel, grid, block, 0, buffers, n, symbols, n), its grid
  // and block (x and y) evaluated from the step's symbol values.
  void run_kernel(HostBuilder& b, const KernelCall& k) const override {
    auto it = code_->launches.find(k.step->callee);
    if (it == code_->launches.end()) {
      b.fail(k.what + ": it has no compiled GPU kernel");
      return;
    }
    const KernelLaunch& shape = it->second;
    llvm::IRBuilder<>& ir = b.ir();
    llvm::PointerType* ptr = ir.getPtrTy();
    llvm::IntegerType* i32 = ir.getInt32Ty();
    llvm::IntegerType* i64 = ir.getInt64Ty();
    std::map<std::string, symbolic::Expr> values;
    for (size_t j = 0; j < k.symbols.size(); ++j) values[k.symbols[j]] = k.step->ints[j];
    const bool asks_device = [&] {
      for (const symbolic::Expr* e : {&shape.grid_x, &shape.block_x, &shape.block_y})
        if (symbolic::free_symbols(*e).count(kResidentThreadsSymbol)) return true;
      return false;
    }();
    if (asks_device) {
      llvm::Value* slot = b.stack_array(i64, 1, "resident_threads");
      llvm::FunctionCallee resident = b.runtime("dsc_rt_cuda_resident_threads", i32, {ptr, ptr});
      b.check_status(ir.CreateCall(resident, {b.call(), slot}), "resident threads");
      b.bind(kResidentThreadsSymbol, ir.CreateLoad(i64, slot));
    }
    llvm::Value* grid = b.eval(ir::substitute(shape.grid_x, values), "the grid of " + k.what);
    llvm::Value* block = b.eval(ir::substitute(shape.block_x, values), "the block of " + k.what);
    llvm::Value* block_rows =
        b.eval(ir::substitute(shape.block_y, values), "the block of " + k.what);
    b.unbind(kResidentThreadsSymbol);
    if (!b.ok()) return;
    llvm::FunctionCallee launch =
        b.runtime("dsc_rt_cuda_launch", i32,
                  {ptr, ptr, ptr, i64, i64, i64, i64, i64, i64, i64, ptr, i32, ptr, i32});
    llvm::Value* one = ir.getInt64(1);
    llvm::Value* status = ir.CreateCall(
        launch, {b.call(), module_, b.string_constant(shape.kernel), grid, one, one, block,
                 block_rows, one, ir.getInt64(0), k.buffers,
                 ir.getInt32(static_cast<uint32_t>(k.num_buffers)), k.ints,
                 ir.getInt32(static_cast<uint32_t>(k.symbols.size()))});
    b.check_status(status, "launch");
  }

  // CUDA routines take the call first and return a status.
  void call_routine(HostBuilder& b, const ir::LibraryRoutine& routine,
                    std::vector<llvm::Value*> args, std::vector<llvm::Type*> types) const override {
    args.insert(args.begin(), b.call());
    types.insert(types.begin(), b.ir().getPtrTy());
    llvm::Value* status =
        b.ir().CreateCall(b.runtime(routine.runtime_function, b.ir().getInt32Ty(), types), args);
    b.check_status(status, "library");
  }

  void copy(HostBuilder& b, llvm::Value* dst, llvm::Value* src, llvm::Value* bytes) const override {
    llvm::IRBuilder<>& ir = b.ir();
    llvm::FunctionCallee copy = b.runtime("dsc_rt_cuda_copy", ir.getInt32Ty(),
                                          {ir.getPtrTy(), ir.getPtrTy(), ir.getPtrTy(), ir.getInt64Ty()});
    b.check_status(ir.CreateCall(copy, {b.call(), dst, src, bytes}), "copy");
  }

  // A copy to the host (dsc_rt_cuda_read, which waits for the call's stream), then a load.
  llvm::Value* read_scalar(HostBuilder& b, llvm::Value* pointer, unsigned bytes,
                           const std::string& what) const override {
    llvm::IRBuilder<>& ir = b.ir();
    llvm::Type* type = ir.getIntNTy(bytes * 8);
    llvm::Value* slot = b.stack_array(type, 1, what + ".host");
    llvm::FunctionCallee read = b.runtime("dsc_rt_cuda_read", ir.getInt32Ty(),
                                          {ir.getPtrTy(), ir.getPtrTy(), ir.getPtrTy(), ir.getInt64Ty()});
    b.check_status(ir.CreateCall(read, {b.call(), slot, pointer, ir.getInt64(bytes)}), "read");
    return ir.CreateLoad(type, slot, what);
  }

  llvm::Function* epilogue_kernel(HostBuilder&, const std::string&) const override {
    return nullptr;
  }

private:
  ir::Target target_;
  std::optional<DeviceCode> code_;
  llvm::GlobalVariable* module_ = nullptr;
};

std::unique_ptr<cpu::HostDevice> make(const ir::Target& target) {
  return std::make_unique<CudaHostDevice>(target);
}

} // namespace

void register_cuda_host_device() {
  cpu::register_host_device(ir::TargetKind::Cuda, &make);
}

} // namespace dsc::cuda
