// cudnn.conv2d's plan (runtime/cuda/Cudnn.h): what the host passes, checked against the
// convolution's definition before cuDNN sees it, and the emulator's loops over a plan on
// small hand-computed cases. The loops against the reference interpreter at random shapes are
// CudaEmulatorVsReferenceTest's conv2d cases; against cuDNN itself, CudaGpuTest's (label gpu).
#include "runtime/cuda/Cudnn.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

namespace dsc::runtime::cuda {
namespace {

using ::testing::HasSubstr;

// n, c, h, w, o, kh, kw, oh, ow, groups, stride, padding, dilation.
Conv2d conv(int64_t n, int64_t c, int64_t h, int64_t w, int64_t o, int64_t kh, int64_t kw,
            int64_t oh, int64_t ow, int64_t groups = 1, int64_t stride = 1, int64_t pad = 0,
            int64_t dilation = 1) {
  return Conv2d{n,  c,      h,      w,      o,   kh,  kw,       oh,
                ow, groups, stride, stride, pad, pad, dilation, dilation};
}

std::string refusal(const Conv2d& c) {
  Conv2dPlan plan;
  std::string error;
  EXPECT_FALSE(plan_conv2d(c, &plan, &error));
  return error;
}

TEST(CudaCudnnPlan, TakesTheScalarsAsCudnnInts) {
  Conv2d c = conv(2, 4, 9, 8, 6, 3, 2, 0, 0, 2, 2, 1, 1);
  c.stride_w = 3;
  c.oh = (9 + 2 - 2 - 1) / 2 + 1;
  c.ow = (8 + 2 - 1 - 1) / 3 + 1;
  Conv2dPlan plan;
  std::string error;
  ASSERT_TRUE(plan_conv2d(c, &plan, &error)) << error;
  EXPECT_EQ(plan.action, Conv2dPlan::Action::Convolve);
  EXPECT_EQ(plan.group_channels(), 2);
  EXPECT_EQ(plan.stride_h, 2);
  EXPECT_EQ(plan.stride_w, 3);
  EXPECT_EQ(plan.oh, 5);
  EXPECT_EQ(plan.ow, 3);
}

TEST(CudaCudnnPlan, EmptyResultsAndNoInputChannels) {
  Conv2dPlan plan;
  std::string error;
  ASSERT_TRUE(plan_conv2d(conv(0, 3, 5, 5, 4, 3, 3, 3, 3), &plan, &error)) << error;
  EXPECT_EQ(plan.action, Conv2dPlan::Action::Nothing);
  ASSERT_TRUE(plan_conv2d(conv(2, 0, 5, 5, 4, 3, 3, 3, 3), &plan, &error)) << error;
  EXPECT_EQ(plan.action, Conv2dPlan::Action::Zero);
  EXPECT_EQ(plan.zero_floats, 2 * 4 * 3 * 3);
  std::vector<float> y(72, 5.0f);
  conv2d_loops(plan, nullptr, nullptr, y.data());
  for (float v : y)
    EXPECT_EQ(v, 0.0f);
}

TEST(CudaCudnnPlan, RefusesWhatIsNoConvolution) {
  EXPECT_EQ(refusal(conv(1, 1, 5, 5, 1, 3, 3, 4, 3)),
            "the result's height is 4, but the window fits 3 times");
  EXPECT_EQ(refusal(conv(1, 1, 5, 5, 1, 3, 3, 3, 4)),
            "the result's width is 4, but the window fits 3 times");
  EXPECT_EQ(refusal(conv(1, 1, 2, 5, 1, 3, 3, 1, 3)),
            "the window's height 3 is more than the padded input's 2");
  EXPECT_EQ(refusal(conv(1, 1, 5, 5, 1, 3, 3, 1, 1, 1, 1, 0, 3)),
            "the window's height 7 is more than the padded input's 5");
  EXPECT_EQ(refusal(conv(1, 3, 5, 5, 4, 3, 3, 3, 3, 2)),
            "3 input and 4 output channels do not split into 2 groups");
  EXPECT_EQ(refusal(conv(1, 1, 5, 5, 1, 3, 3, 3, 3, 1, 0)), "the stride must be at least 1, not 0");
  EXPECT_EQ(refusal(conv(1, 1, 5, 5, 1, 3, 3, 3, 3, 0)), "groups must be at least 1, not 0");
  EXPECT_EQ(refusal(conv(-1, 1, 5, 5, 1, 3, 3, 3, 3)), "the batch is negative (-1)");
  EXPECT_EQ(refusal(conv(1, 1, 5, 5, 1, 3, 3, 3, 3, 1, 1, -1)), "the padding is negative (-1)");
}

TEST(CudaCudnnPlan, RefusesSizesBeyondCudnnInts) {
  const int64_t big = int64_t{std::numeric_limits<int>::max()} + 1;
  EXPECT_EQ(refusal(conv(big, 1, 1, 1, 1, 1, 1, 1, 1)),
            std::to_string(big) + " does not fit cuDNN's 32-bit int");
  // Each dim fits, but an image of 65536 x 65536 has 2^32 elements.
  EXPECT_THAT(refusal(conv(1, 1, 65536, 65536, 1, 1, 1, 65536, 65536)),
              HasSubstr("does not fit cuDNN's 32-bit strides"));
}

// y = conv2d(x, w) by hand: a 1x1x3x4 image, two 2x2 filters, stride 1, padding 1, so the
// result is 1x2x4x5 and its corners read one input element each.
TEST(CudaCudnnPlan, LoopsCrossCorrelateWithZeroPadding) {
  const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  const std::vector<float> w = {1, 10, 100, 1000, 0, 0, 0, 1};
  Conv2dPlan plan;
  std::string error;
  ASSERT_TRUE(plan_conv2d(conv(1, 1, 3, 4, 2, 2, 2, 4, 5, 1, 1, 1), &plan, &error)) << error;
  std::vector<float> y(40, -1.0f);
  conv2d_loops(plan, x.data(), w.data(), y.data());
  // Filter 0 at (0, 0) covers x rows -1..0, columns -1..0: only x[0][0] = 1, under w[1][1].
  EXPECT_EQ(y[0], 1000.0f);
  // At (1, 1): x[0][0] w00 + x[0][1] w01 + x[1][0] w10 + x[1][1] w11.
  EXPECT_EQ(y[1 * 5 + 1], 1 * 1 + 2 * 10 + 5 * 100 + 6 * 1000.0f);
  // At (3, 4): only x[2][3] = 12, under w[0][0].
  EXPECT_EQ(y[3 * 5 + 4], 12.0f);
  // Filter 1 is the window's bottom-right element: y1[i][j] = x[i][j] inside, else 0.
  EXPECT_EQ(y[20 + 0], 1.0f);
  EXPECT_EQ(y[20 + 2 * 5 + 3], 12.0f);
  EXPECT_EQ(y[20 + 3 * 5 + 4], 0.0f);
}

// Two groups of two input channels: output channel 0 reads channels 0 and 1, channel 1 reads
// channels 2 and 3 (1x1 filters of ones).
TEST(CudaCudnnPlan, LoopsReadEachGroupsChannels) {
  std::vector<float> x(4 * 2 * 2);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>(1 << (i / 4));
  const std::vector<float> w = {1, 1, 1, 1};
  Conv2dPlan plan;
  std::string error;
  ASSERT_TRUE(plan_conv2d(conv(1, 4, 2, 2, 2, 1, 1, 2, 2, 2), &plan, &error)) << error;
  std::vector<float> y(8);
  conv2d_loops(plan, x.data(), w.data(), y.data());
  EXPECT_EQ(y[0], 1.0f + 2.0f);
  EXPECT_EQ(y[4], 4.0f + 8.0f);
}

// Loading needs no GPU: where cuDNN is installed (/usr/local/cuda/lib64 here), every entry
// point the runtime calls resolves, so a misspelt one fails here rather than on a GPU.
TEST(CudaCudnnPlan, LoadsEveryEntryPointWhereInstalled) {
  std::string error;
  const Cudnn* cudnn = Cudnn::load(&error);
  if (!cudnn && error.find("cannot be loaded") != std::string::npos) GTEST_SKIP() << error;
  EXPECT_NE(cudnn, nullptr) << error;
}

} // namespace
} // namespace dsc::runtime::cuda
