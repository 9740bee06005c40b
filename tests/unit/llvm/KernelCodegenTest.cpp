// The target-neutral kernel emitter (backends/llvm/KernelCodegen.h) with a stand-in target,
// as a GPU backend would use it: the index width comes from the target (32 bits here, as a
// GPU would take), and heap buffers, the math library and loops of other kinds go through
// the target. Only emitted and verified IR is checked; running kernels is the CPU tests' job.

#include "backends/llvm/KernelCodegen.h"

#include <gtest/gtest.h>

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include "tests/unit/FrontendUtil.h"

namespace dsc::testing {
namespace {

// Index width as asked; heap buffers from "test_alloc"/"test_free"; math from "test.NAME".
class TestTarget : public llvmgen::KernelTarget {
public:
  explicit TestTarget(int bits) : bits_(bits) {}
  int index_bits() const override { return bits_; }
  void emit_for(llvmgen::KernelEmitter&, const ir::For& f) override {
    ADD_FAILURE() << "the test target was asked for a '" << ir::for_kind_name(f.for_kind) << "' loop";
  }
  void emit_effect(llvmgen::KernelEmitter&, const ir::Intrinsic&) override {}
  llvm::Value* call_math_library(llvm::IRBuilder<>& b, const ir::IntrinsicDef& fn,
                                 const std::vector<llvm::Value*>& args) override {
    std::vector<llvm::Type*> params(args.size(), args[0]->getType());
    llvm::FunctionCallee callee = b.GetInsertBlock()->getModule()->getOrInsertFunction(
        std::string("test.") + fn.name, llvm::FunctionType::get(args[0]->getType(), params, false));
    return b.CreateCall(callee, args);
  }
  llvm::Value* heap_alloc(llvm::IRBuilder<>& b, llvm::Value* bytes, const std::string& name) override {
    llvm::Module* m = b.GetInsertBlock()->getModule();
    return b.CreateCall(m->getOrInsertFunction("test_alloc", b.getPtrTy(), bytes->getType()), {bytes}, name);
  }
  void heap_free(llvm::IRBuilder<>& b, llvm::Value* data) override {
    llvm::Module* m = b.GetInsertBlock()->getModule();
    b.CreateCall(m->getOrInsertFunction("test_free", b.getVoidTy(), b.getPtrTy()), {data});
  }

private:
  int bits_;
};

// Every construct the emitter runs itself: serial, vectorized and unrolled loops, a heap
// buffer of symbolic size, floor division in indices and in values, f16 loads, f64 library
// math, locals and branches.
constexpr const char* kPrims = R"(
prim f(x: f32[m, n], h: f16[n], k: i32[n]) -> (y: f32[m, n], z: f64[n], w: i32[n]) {
  alloc u: f32[n] local
  for i in 0..m {
    vectorize for j in 0..n {
      u[j] = x[i, j] + cast(h[j], "f32")
    }
    for j in 0..n {
      let v: f32 = u[(j + i) % n]
      if v > 0.0 {
        y[i, j] = v * cast(i / 2, "f32")
      } else {
        y[i, j] = exp(v)
      }
    }
  }
  unroll for j in 0..4 {
    w[j % n] = k[j % n] / 3 + cast(j, "i32")
  }
  for j in 0..n {
    z[j] = tanh(cast(x[0, j], "f64"))
  }
}
)";

struct Emitted {
  std::string ir;
  std::string problems; // verify_kernel's and verifyModule's messages
};

Emitted emit(int index_bits) {
  Emitted out;
  std::optional<ir::Module> m = parse_clean(kPrims);
  if (!m) {
    out.problems = "does not parse";
    return out;
  }
  llvm::LLVMContext ctx;
  llvm::Module module("test", ctx);
  TestTarget target(index_bits);
  llvm::Function* f = llvmgen::emit_kernel(module, *m->prim("f"), "kernel_f", target);
  out.problems = llvmgen::verify_kernel(*f);
  llvm::raw_string_ostream problems(out.problems);
  llvm::verifyModule(module, &problems);
  llvm::raw_string_ostream text(out.ir);
  module.print(text, nullptr);
  return out;
}

TEST(LlvmKernelCodegen, ThirtyTwoBitIndices) {
  Emitted e = emit(32);
  ASSERT_EQ(e.problems, "") << e.ir;
  // Loop variables, the heap size and element offsets are i32; symbols arrive as i64 and are
  // truncated once.
  EXPECT_NE(e.ir.find("phi i32"), std::string::npos) << e.ir;
  EXPECT_EQ(e.ir.find("phi i64"), std::string::npos) << e.ir;
  EXPECT_NE(e.ir.find("call ptr @test_alloc(i32"), std::string::npos) << e.ir;
  EXPECT_NE(e.ir.find("call void @test_free("), std::string::npos) << e.ir;
  EXPECT_NE(e.ir.find("getelementptr inbounds float, ptr %x, i32"), std::string::npos) << e.ir;
  EXPECT_NE(e.ir.find("trunc i64 %m to i32"), std::string::npos) << e.ir;
  // f64 tanh through the target's library; f32 exp inline.
  EXPECT_NE(e.ir.find("call double @test.tanh(double"), std::string::npos) << e.ir;
  EXPECT_NE(e.ir.find("define internal float @dsc.math.exp.f32"), std::string::npos) << e.ir;
  EXPECT_NE(e.ir.find("llvm.loop.vectorize.enable"), std::string::npos) << e.ir;
  EXPECT_NE(e.ir.find("llvm.loop.unroll.full"), std::string::npos) << e.ir;
}

TEST(LlvmKernelCodegen, SixtyFourBitIndices) {
  Emitted e = emit(64);
  ASSERT_EQ(e.problems, "") << e.ir;
  EXPECT_NE(e.ir.find("phi i64"), std::string::npos) << e.ir;
  EXPECT_EQ(e.ir.find("phi i32"), std::string::npos) << e.ir;
  EXPECT_NE(e.ir.find("call ptr @test_alloc(i64"), std::string::npos) << e.ir;
  EXPECT_EQ(e.ir.find("trunc i64 %m"), std::string::npos) << e.ir;
}

} // namespace
} // namespace dsc::testing
