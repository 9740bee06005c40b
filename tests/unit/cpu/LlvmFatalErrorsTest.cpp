// LLVM's fatal errors inside guard_llvm_fatal_errors (backends/cpu/LlvmFatalErrors.h) come
// back as errors naming what was being compiled: one raised by hand, and a real one from
// instruction selection.

#include "backends/cpu/LlvmFatalErrors.h"

#include <gtest/gtest.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/ErrorHandling.h>
#include <llvm/Support/raw_ostream.h>

#include "backends/cpu/TargetSelection.h"

// Jumping out of LLVM's fatal-error path leaves what the skipped frames own (LLVM's message
// string, the compile's objects) allocated, on purpose (backends/cpu/LlvmFatalErrors.h); in
// sanitizer builds LeakSanitizer is told so, for what the guarded code and LLVM allocated.
extern "C" const char* __lsan_default_suppressions() {
  return "leak:run_guarded\nleak:libLLVM\n";
}

namespace dsc::cpu {
namespace {

TEST(LlvmFatalErrors, ReportFatalErrorIsAnError) {
  std::string error;
  EXPECT_FALSE(guard_llvm_fatal_errors(
      "'layer'", []() -> bool { llvm::report_fatal_error("something LLVM cannot do"); }, &error));
  EXPECT_EQ(error, "LLVM failed while compiling 'layer': something LLVM cannot do");
  // The handler stays usable, and a body that finishes decides the result.
  error.clear();
  EXPECT_TRUE(guard_llvm_fatal_errors(
      "'f'", [] { return true; }, &error));
  EXPECT_FALSE(guard_llvm_fatal_errors(
      "'f'", [] { return false; }, &error));
  EXPECT_EQ(error, "");
}

TEST(LlvmFatalErrors, GuardsNest) {
  std::string inner_error, outer_error;
  bool inner_result = true;
  EXPECT_TRUE(guard_llvm_fatal_errors(
      "'outer'",
      [&] {
        inner_result = guard_llvm_fatal_errors(
            "'inner'", []() -> bool { llvm::report_fatal_error("inner failure"); }, &inner_error);
        return true;
      },
      &outer_error));
  EXPECT_FALSE(inner_result);
  EXPECT_EQ(inner_error, "LLVM failed while compiling 'inner': inner failure");
  EXPECT_EQ(outer_error, "");
  EXPECT_FALSE(guard_llvm_fatal_errors(
      "'outer'", []() -> bool { llvm::report_fatal_error("outer failure"); }, &outer_error));
  EXPECT_EQ(outer_error, "LLVM failed while compiling 'outer': outer failure");
}

#if defined(__x86_64__)
// An AVX-512 intrinsic compiled for a CPU without AVX-512: type legalization calls
// report_fatal_error ("Do not know how to split the result of this operator!"), which would
// otherwise end the process.
TEST(LlvmFatalErrors, InstructionSelectionFailure) {
  initialize_native_target();
  ir::Target options;
  options.cpu = "x86-64";
  ResolvedTarget target;
  std::string error;
  ASSERT_TRUE(resolve_target(options, &target, &error)) << error;
  std::unique_ptr<llvm::TargetMachine> tm = create_target_machine(target, &error);
  ASSERT_TRUE(tm) << error;
  auto* context = new llvm::LLVMContext; // leaked with the module when LLVM fails
  auto* module = new llvm::Module("fatal", *context);
  module->setDataLayout(tm->createDataLayout());
  module->setTargetTriple(target.triple);
  llvm::Type* v16 = llvm::FixedVectorType::get(llvm::Type::getFloatTy(*context), 16);
  auto* fn = llvm::Function::Create(llvm::FunctionType::get(v16, {v16}, false),
                                    llvm::Function::ExternalLinkage, "f", module);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(*context, "entry", fn));
  llvm::Value* r = b.CreateIntrinsic(llvm::Intrinsic::x86_avx512_rsqrt14_ps_512, {},
                                     {fn->getArg(0), fn->getArg(0), b.getInt16(-1)});
  b.CreateRet(r);
  bool emitted = guard_llvm_fatal_errors(
      "'f'",
      [&] {
        llvm::SmallVector<char, 0> object;
        llvm::raw_svector_ostream out(object);
        llvm::legacy::PassManager passes;
        if (tm->addPassesToEmitFile(passes, out, nullptr, llvm::CodeGenFileType::ObjectFile))
          return false;
        passes.run(*module);
        return true;
      },
      &error);
  EXPECT_FALSE(emitted);
  EXPECT_EQ(error.rfind("LLVM failed while compiling 'f': Do not know how to split", 0), 0u)
      << error;
}
#endif

} // namespace
} // namespace dsc::cpu
