// dsc.conv2d on the CPU (runtime/Conv2d.h) against the CUDA emulator's direct loops over the
// same convolution (runtime/cuda/Cudnn.h's conv2d_loops, itself checked against the reference
// interpreter by CudaEmulatorVsReferenceTest): the windows at the edges of the padding,
// strides and dilations, groups, the 1x1 convolution read in place, small images side by side
// in one product, an image a tile of output rows at a time, the transposed product of fewer
// pixels than channels (its weights declared constant or not), no input channels, and a batch
// done a chunk of images at a time. The
// graph-level cases at random shapes are OpsVsReferenceTest's conv2d ones.
#include "runtime/Conv2d.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "runtime/cuda/Cudnn.h"
#include "runtime/gemm/ConstantPacks.h"

namespace dsc::runtime {
namespace {

int64_t positions(int64_t extent, int64_t pad, int64_t dilation, int64_t window, int64_t stride) {
  return (extent + 2 * pad - dilation * (window - 1) - 1) / stride + 1;
}

struct Case {
  int64_t n, c, h, w, o, kh, kw, groups, stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w;
};

// The case's shape, with the result's height and width those of the window.
Conv2dShape shape_of(const Case& k) {
  const int64_t oh = positions(k.h, k.pad_h, k.dilation_h, k.kh, k.stride_h);
  const int64_t ow = positions(k.w, k.pad_w, k.dilation_w, k.kw, k.stride_w);
  return {k.n, k.c,      k.h,        k.w,        k.o,     k.kh,    k.kw,         oh,
          ow,  k.groups, k.stride_h, k.stride_w, k.pad_h, k.pad_w, k.dilation_h, k.dilation_w};
}

// The largest difference between conv2d_f32 (windows `budget` floats at a time) and the loops;
// with `constant_weights`, the weights are declared constant for two calls (the second reads
// the GEMM's pack of them).
float worst_difference(const Case& k, int64_t budget, bool constant_weights = false) {
  const Conv2dShape s = shape_of(k);
  cuda::Conv2dPlan plan;
  std::string error;
  EXPECT_TRUE(cuda::plan_conv2d(cuda::Conv2d{s.n, s.c, s.h, s.w, s.o, s.kh, s.kw, s.oh, s.ow,
                                             s.groups, s.stride_h, s.stride_w, s.pad_h, s.pad_w,
                                             s.dilation_h, s.dilation_w},
                                &plan, &error))
      << error;
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> x(static_cast<size_t>(s.n * s.c * s.h * s.w) + 1);
  std::vector<float> w(static_cast<size_t>(s.o * s.group_channels() * s.kh * s.kw) + 1);
  for (float& v : x)
    v = d(rng);
  for (float& v : w)
    v = d(rng);
  const size_t results = static_cast<size_t>(s.n * s.o * s.oh * s.ow);
  std::vector<float> want(results), got(results + 1, NAN);
  got.back() = 7.0f; // past the end: must stay
  cuda::conv2d_loops(plan, x.data(), w.data(), want.data());
  if (constant_weights) {
    EXPECT_TRUE(gemm::declare_constant(w.data(), w.size() * sizeof(float), &error)) << error;
    conv2d_f32(x.data(), w.data(), got.data(), s, budget);
    std::fill(got.begin(), got.end() - 1, NAN);
  }
  conv2d_f32(x.data(), w.data(), got.data(), s, budget);
  if (constant_weights) {
    EXPECT_TRUE(gemm::release_constant(w.data()));
  }
  EXPECT_EQ(got.back(), 7.0f) << "written past the result";
  float worst = 0;
  for (size_t i = 0; i < results; ++i) {
    if (std::isnan(got[i])) return INFINITY;
    worst = std::max(worst, std::fabs(got[i] - want[i]) / std::max(1.0f, std::fabs(want[i])));
  }
  return worst;
}

TEST(Conv2d, MatchesTheDirectLoops) {
  const Case cases[] = {
      // n, c, h, w, o, kh, kw, groups, stride h w, padding h w, dilation h w
      {1, 3, 7, 5, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1},    // padding on every side
      {2, 4, 9, 13, 6, 3, 2, 2, 2, 3, 2, 0, 1, 1},   // two groups, strides 2 and 3
      {1, 2, 11, 8, 3, 3, 3, 1, 1, 1, 2, 2, 2, 2},   // dilation 2 with padding 2
      {3, 16, 6, 6, 16, 3, 3, 16, 1, 1, 1, 1, 1, 1}, // depthwise
      {2, 5, 1, 1, 7, 1, 1, 1, 1, 1, 0, 0, 1, 1},    // a single pixel
      {1, 1, 2, 2, 1, 5, 5, 1, 1, 1, 2, 2, 1, 1},    // a window wider than the image
      {1, 3, 17, 31, 8, 7, 7, 1, 2, 2, 3, 3, 1, 1},  // ResNet's stem, at a prime size
      {2, 8, 5, 7, 12, 1, 1, 4, 1, 1, 0, 0, 1, 1},   // 1x1, read in place, with groups
      {2, 6, 5, 7, 4, 1, 1, 2, 2, 1, 0, 0, 1, 1},    // 1x1 with a stride: unrolled
      {3, 4, 5, 6, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1},    // small images, side by side
      // Windows deeper than the GEMM's depth block of 256 (one starts inside a window, at
      // 256 = 28 * 9 + 4), over images side by side and in tiles of one image.
      {2, 40, 9, 11, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1},
      {1, 33, 37, 41, 19, 3, 3, 1, 2, 1, 1, 1, 2, 1},
      // Fewer output pixels than channels, weights not constant: the ordinary product.
      {1, 40, 5, 6, 48, 3, 3, 1, 1, 1, 1, 1, 1, 1},
      {3, 20, 4, 4, 64, 3, 3, 1, 2, 2, 1, 1, 1, 1},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(std::to_string(k.n) + "x" + std::to_string(k.c) + "x" + std::to_string(k.h) + "x" +
                 std::to_string(k.w) + " * " + std::to_string(k.o) + "x" + std::to_string(k.kh) +
                 "x" + std::to_string(k.kw) + " groups " + std::to_string(k.groups));
    // The whole image as one tile (most of these), then tiles of two output rows and of one.
    const Conv2dShape s = shape_of(k);
    for (int64_t budget : {kColumnFloats, 2 * s.groups * s.depth() * s.ow + 1, int64_t{1}})
      EXPECT_LT(worst_difference(k, budget), 1e-5f) << "windows of " << budget << " floats";
  }
}

// A batch of 5 whose windows fit two images at a time: chunks of 2, 2 and 1.
TEST(Conv2d, ABatchInChunksOfImages) {
  const Case k{5, 3, 6, 7, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1};
  const Conv2dShape s = shape_of(k);
  const int64_t image = s.groups * s.depth() * s.pixels();
  EXPECT_LT(worst_difference(k, 2 * image + 1), 1e-5f);
  EXPECT_LT(worst_difference(k, 1), 1e-5f); // less than an image: one at a time
}

// With the weights declared constant, fewer output pixels than channels take the transposed
// product (the weights as B, packed once by the first call): one image, images side by side,
// windows deeper than a depth block, a pixel count that is no multiple of the micro tile's
// rows. More pixels than channels still take the ordinary one.
TEST(Conv2d, ConstantWeights) {
  for (const Case& k : {Case{1, 40, 5, 6, 48, 3, 3, 1, 1, 1, 1, 1, 1, 1},
                        Case{3, 20, 4, 4, 64, 3, 3, 1, 2, 2, 1, 1, 1, 1},
                        Case{1, 29, 7, 7, 61, 3, 3, 1, 1, 1, 1, 1, 2, 2},
                        Case{2, 3, 9, 11, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1}}) {
    const size_t before = gemm::constant_pack_count();
    EXPECT_LT(worst_difference(k, kColumnFloats, true), 1e-5f) << k.o << " channels";
    EXPECT_EQ(gemm::constant_pack_count(), before); // released with the weights
  }
}

TEST(Conv2d, NoInputChannelsGiveZeros) {
  const Conv2dShape s{2, 0, 3, 3, 4, 1, 1, 3, 3, 1, 1, 1, 0, 0, 1, 1};
  std::vector<float> y(72, 5.0f);
  conv2d_f32(nullptr, nullptr, y.data(), s, kColumnFloats);
  for (float v : y)
    EXPECT_EQ(v, 0.0f);
}

} // namespace
} // namespace dsc::runtime
