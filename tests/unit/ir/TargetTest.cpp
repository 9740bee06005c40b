// Targets: which loop kinds each runs (ir/ForKinds.def), how each computes each dtype
// (ir/TargetKinds.def), which library routines each offers (ir/LibraryRoutines.def), and their
// one-line descriptions.
#include "ir/Target.h"

#include <gtest/gtest.h>

#include "ir/LibraryRoutine.h"
#include "symbolic/Printer.h"

namespace dsc::ir {
namespace {

TEST(Target, LoopKindsByTarget) {
  Target cpu = cpu_target(), cuda = cuda_target();
  for (ForKind k : {ForKind::Serial, ForKind::Unrolled}) {
    EXPECT_TRUE(cpu.runs(k)) << for_kind_name(k);
    EXPECT_TRUE(cuda.runs(k)) << for_kind_name(k);
  }
  for (ForKind k : {ForKind::Parallel, ForKind::Vectorized}) {
    EXPECT_TRUE(cpu.runs(k)) << for_kind_name(k);
    EXPECT_FALSE(cuda.runs(k)) << for_kind_name(k);
  }
  for (ForKind k : {ForKind::GpuBlockX, ForKind::GpuBlockY, ForKind::GpuBlockZ, ForKind::GpuBlockRows,
                    ForKind::GpuThreadX, ForKind::GpuThreadY, ForKind::GpuThreadZ}) {
    EXPECT_FALSE(cpu.runs(k)) << for_kind_name(k);
    EXPECT_TRUE(cuda.runs(k)) << for_kind_name(k);
  }
}

TEST(Target, LoopKindSpellingsRoundTrip) {
  for (ForKind k : {ForKind::Serial, ForKind::Parallel, ForKind::Vectorized, ForKind::Unrolled,
                    ForKind::GpuBlockX, ForKind::GpuBlockRows, ForKind::GpuThreadZ}) {
    std::optional<ForKind> back = for_kind_named(for_kind_name(k));
    ASSERT_TRUE(back.has_value()) << for_kind_name(k);
    EXPECT_EQ(*back, k);
  }
  EXPECT_FALSE(for_kind_named("paralel").has_value());
}

TEST(Target, ArithmeticByDType) {
  const Target cpu = cpu_target(), cuda = cuda_target();
  for (DType d : {DType::Bool, DType::I8, DType::I32, DType::I64, DType::F32, DType::F64}) {
    EXPECT_EQ(cpu.arithmetic(d), Arithmetic::Native) << dtype_name(d);
    EXPECT_EQ(cuda.arithmetic(d), Arithmetic::Native) << dtype_name(d);
  }
  for (DType d : {DType::F16, DType::BF16}) {
    EXPECT_EQ(cpu.arithmetic(d), Arithmetic::Widened) << dtype_name(d);
    EXPECT_EQ(cuda.arithmetic(d), Arithmetic::Unsupported) << dtype_name(d);
  }
  EXPECT_EQ(cpu.computed_dtype_names(), "bool, i8, i32, i64, f16, bf16, f32 and f64");
  EXPECT_EQ(cuda.computed_dtype_names(), "bool, i8, i32, i64, f32 and f64");
}

TEST(Target, LibraryRoutinesByTarget) {
  EXPECT_TRUE(cpu_target().offers("blas.sgemm"));
  EXPECT_FALSE(cuda_target().offers("blas.sgemm"));
  EXPECT_FALSE(cpu_target().offers("blas.dgemm"));
  for (const LibraryRoutine& r : all_library_routines()) {
    EXPECT_EQ(find_library_routine(r.symbol), &r);
    EXPECT_GT(r.buffers, 0) << r.symbol;
    EXPECT_NE(std::string(r.runtime_function), "") << r.symbol;
  }
}

TEST(Target, SgemmScalarsFoldBatchesIntoM) {
  const LibraryRoutine* r = find_library_routine("cublas.sgemm");
  ASSERT_NE(r, nullptr);
  using symbolic::sym;
  std::string error;
  auto args = r->scalar_args({dense_view({sym("B"), sym("S"), 768}), dense_view({768, 64}),
                              dense_view({sym("B"), sym("S"), 64})},
                             {}, &error);
  ASSERT_TRUE(args.has_value()) << error;
  ASSERT_EQ(args->size(), static_cast<size_t>(r->scalars));
  EXPECT_EQ(symbolic::to_string((*args)[kBatch]), "1");
  EXPECT_EQ(symbolic::to_string((*args)[kInner]), "1");
  EXPECT_EQ(symbolic::to_string((*args)[kM]), "B*S");
  EXPECT_EQ(symbolic::to_string((*args)[kN]), "64");
  EXPECT_FALSE(r->scalar_args({dense_view({sym("B"), 3, 4, 5}), dense_view({sym("B"), 5, 6}),
                               dense_view({sym("B"), 3, 4, 6})},
                              {}, &error));
  EXPECT_EQ(error, "GEMM operands with batch dims of different ranks");
  // A view with neither stride 1 stays a copy: cuBLAS reads a matrix or its transpose.
  StridedView every_other = dense_view({4, 3});
  every_other.strides = {6, 2};
  EXPECT_FALSE(r->scalar_args({every_other, dense_view({3, 5}), dense_view({4, 5})}, {}, &error));
  EXPECT_EQ(error, "BLAS reads an operand as a matrix or its transpose, with one of its two strides 1");
}

TEST(Target, Describe) {
  EXPECT_EQ(cpu_target().describe(), "cpu (native)");
  Target t = cpu_target();
  t.cpu = "znver3";
  t.vector_bits = 512;
  EXPECT_EQ(t.describe(), "cpu (znver3, 512-bit vectors)");
  EXPECT_EQ(cuda_target().describe(), "cuda (sm_80, sm_90)");
}

} // namespace
} // namespace dsc::ir
