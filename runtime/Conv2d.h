#pragma once
// Library routine "dsc.conv2d" (HostABI.h's dsc_rt_conv2d_f32): a 2-D convolution as products
// on dsc's own GEMM over the input's unrolled windows (Conv2d.cpp says how).

#include <cstdint>

#include "runtime/HostABI.h"

namespace dsc::runtime {

// dsc_rt_conv2d_f32's scalars (ir/LibraryRoutine.h's Conv2dScalar), in order.
struct Conv2dShape {
  int64_t n, c, h, w, o, kh, kw, oh, ow;
  int64_t groups, stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w;
  int64_t group_channels() const { return c / groups; }
  int64_t depth() const { return group_channels() * kh * kw; } // each product's k
  int64_t pixels() const { return oh * ow; }                   // each product's n
};

// The windows' budget of one product, in floats (1 MiB, were they stored): an image is done a
// tile of output rows at a time, and small images side by side a chunk of images at a time.
// The windows are never stored (Conv2d.cpp); the budget sets how the work is split.
constexpr int64_t kColumnFloats = int64_t{256} << 10;

// Below this many output pixels per image (a 32 x 32 result), the images of a chunk (of one
// group) are one product side by side rather than a product each, so each block of weights is
// packed once for all of them.
constexpr int64_t kMergedPixels = 1024;

// y = conv2d(x, w) for `shape`, a product of at most `column_floats` floats of windows at a
// time (at least one output row's, or one small image's).
void conv2d_f32(const float* x, const float* w, float* y, const Conv2dShape& shape,
                int64_t column_floats);

} // namespace dsc::runtime
