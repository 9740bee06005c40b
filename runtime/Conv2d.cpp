// dsc_rt_conv2d_f32 (HostABI.h): library routine "dsc.conv2d", a 2-D convolution as products
// on dsc's own GEMM (runtime/gemm/Gemm.h).
//
// Each group's weights are a matrix W_g [O/g x (C/g * KH * KW)] as they are stored (OIHW). The
// input windows are unrolled (im2col) into a matrix col [(C/g * KH * KW) x pixels], zeros where
// a window reaches into the padding, so that the group's result, stored NCHW, is the product
// W_g @ col. An image is done a tile of output rows at a time (a range of C's columns), its
// windows at most kColumnFloats, so that the product reads them from cache rather than memory;
// small images are side by side in one product instead, and a 1x1 convolution with stride 1
// and no padding reads its input as col in place.

#include "runtime/Conv2d.h"

#include <algorithm>
#include <cstring>

#include "runtime/ThreadPool.h"
#include "runtime/gemm/Packing.h"
#include "runtime/gemm/Scratch.h"

namespace dsc::runtime {

namespace {

// Row (ci, y, x) of image `image` and group `g`'s windows, for output rows [oy0, oy1): at each
// output position of those rows, the input element its window reads there, or 0 in the
// padding; (oy1 - oy0) * ow floats.
void unroll_row(const Conv2dShape& s, const float* x, int64_t image, int64_t g, int64_t row,
                int64_t oy0, int64_t oy1, float* out) {
  const int64_t ci = row / (s.kh * s.kw), ky = row / s.kw % s.kh, kx = row % s.kw;
  const float* plane = x + (image * s.c + g * s.group_channels() + ci) * s.h * s.w;
  if (s.stride_h == 1 && s.stride_w == 1 && s.ow == s.w) {
    // Rows as long as the input's (a "same" convolution): the rows inside the image are one
    // shifted copy of the plane, then the columns that wrapped into a neighbouring row are
    // zeroed.
    const int64_t x0 = kx * s.dilation_w - s.pad_w, y0 = ky * s.dilation_h - s.pad_h;
    const int64_t lo = std::clamp<int64_t>(-y0, oy0, oy1),
                  hi = std::clamp<int64_t>(s.h - y0, lo, oy1);
    std::fill(out, out + (lo - oy0) * s.ow, 0.0f);
    std::fill(out + (hi - oy0) * s.ow, out + (oy1 - oy0) * s.ow, 0.0f);
    // body[i] is plane[start + i], for the i that lie inside the plane.
    const int64_t start = (lo + y0) * s.w + x0, count = (hi - lo) * s.ow;
    const int64_t first = std::clamp<int64_t>(-start, 0, count);
    const int64_t last = std::clamp<int64_t>(s.h * s.w - start, first, count);
    float* body = out + (lo - oy0) * s.ow;
    std::fill(body, body + first, 0.0f);
    std::memcpy(body + first, plane + start + first,
                static_cast<size_t>(last - first) * sizeof(float));
    std::fill(body + last, body + count, 0.0f);
    const int64_t left = std::clamp<int64_t>(-x0, 0, s.ow),
                  right = std::clamp<int64_t>(s.w - x0, left, s.ow);
    for (int64_t r = 0; r < hi - lo; ++r) {
      std::fill(body + r * s.ow, body + r * s.ow + left, 0.0f);
      std::fill(body + r * s.ow + right, body + (r + 1) * s.ow, 0.0f);
    }
    return;
  }
  for (int64_t oy = oy0; oy < oy1; ++oy) {
    float* line = out + (oy - oy0) * s.ow;
    const int64_t iy = oy * s.stride_h - s.pad_h + ky * s.dilation_h;
    if (iy < 0 || iy >= s.h) {
      std::memset(line, 0, static_cast<size_t>(s.ow) * sizeof(float));
      continue;
    }
    const float* in = plane + iy * s.w;
    const int64_t x0 = kx * s.dilation_w - s.pad_w; // the input column of output column 0
    if (s.stride_w == 1) {
      // Output columns [lo, hi) read inside the row, at x0 + ox.
      const int64_t lo = std::clamp<int64_t>(-x0, 0, s.ow);
      const int64_t hi = std::clamp<int64_t>(s.w - x0, lo, s.ow);
      std::fill(line, line + lo, 0.0f);
      std::memcpy(line + lo, in + x0 + lo, static_cast<size_t>(hi - lo) * sizeof(float));
      std::fill(line + hi, line + s.ow, 0.0f);
      continue;
    }
    for (int64_t ox = 0; ox < s.ow; ++ox) {
      const int64_t ix = x0 + ox * s.stride_w;
      line[ox] = ix >= 0 && ix < s.w ? in[ix] : 0.0f;
    }
  }
}

} // namespace

void conv2d_f32(const float* x, const float* w, float* y, const Conv2dShape& s,
                int64_t column_floats) {
  const int64_t sizes[] = {s.n, s.c, s.h, s.w, s.o, s.kh, s.kw, s.oh, s.ow, s.pad_h, s.pad_w};
  for (int64_t v : sizes)
    if (v < 0) return;
  if (s.groups < 1 || s.stride_h < 1 || s.stride_w < 1 || s.dilation_h < 1 || s.dilation_w < 1 ||
      s.c % s.groups != 0 || s.o % s.groups != 0)
    return; // not a convolution: compile time refuses such calls (ir/LibraryRoutine.cpp)
  if (s.n == 0 || s.o == 0 || s.pixels() == 0) return;
  const int64_t groups = s.groups, out_group = s.o / groups;
  const int64_t image_out = s.o * s.pixels();
  if (s.depth() == 0) {
    std::fill(y, y + s.n * image_out, 0.0f);
    return;
  }
  // Product (image, g) of the batch: A = W_g (shared by the images), B = the group's columns,
  // C = the group's output channels of the image.
  const int64_t a_group = out_group * s.depth();
  if (s.kh == 1 && s.kw == 1 && s.stride_h == 1 && s.stride_w == 1 && s.pad_h == 0 &&
      s.pad_w == 0 && s.oh == s.h && s.ow == s.w) {
    dsc_rt_gemm_f32_strided(w, x, y, s.n * groups, groups, out_group, s.pixels(), s.depth(),
                            /*a*/ 0, 0, a_group, s.depth(), 1,
                            /*b*/ 0, s.c * s.h * s.w, s.group_channels() * s.h * s.w, s.pixels(), 1,
                            /*c*/ 0, image_out, out_group * s.pixels(), s.pixels());
    return;
  }
  thread_local gemm::Scratch columns, merged_result;
  ThreadPool& pool = global_thread_pool();
  if (groups == 1 && s.n > 1 && s.pixels() < kMergedPixels) {
    // Small images side by side, a chunk at a time: col [depth x images * pixels], one
    // product into a scratch [O x images * pixels], whose rows are then scattered to the
    // images.
    const int64_t chunk = std::clamp<int64_t>(column_floats / (s.depth() * s.pixels()), 1, s.n);
    float* col = columns.get(chunk * s.depth() * s.pixels());
    for (int64_t first = 0; first < s.n; first += chunk) {
      const int64_t images = std::min(chunk, s.n - first);
      const int64_t wide = images * s.pixels();
      pool.parallel_for(images * s.depth(), 8, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const int64_t image = r / s.depth(), row = r % s.depth();
          unroll_row(s, x, first + image, 0, row, 0, s.oh, col + row * wide + image * s.pixels());
        }
      });
      float* result = merged_result.get(s.o * wide);
      dsc_rt_gemm_f32_strided(w, col, result, 1, 1, s.o, wide, s.depth(), 0, 0, 0, s.depth(), 1,
                              0, 0, 0, wide, 1, 0, 0, 0, wide);
      float* out = y + first * image_out;
      pool.parallel_for(images * s.o, 16, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const int64_t image = r / s.o, channel = r % s.o;
          std::memcpy(out + image * image_out + channel * s.pixels(),
                      result + channel * wide + image * s.pixels(),
                      static_cast<size_t>(s.pixels()) * sizeof(float));
        }
      });
    }
    return;
  }
  // Each image a tile of output rows at a time, the tile's windows within the budget, so that
  // the product reads them from cache: the tile is a range of C's columns, in every group.
  const int64_t tile_rows =
      std::clamp<int64_t>(column_floats / (groups * s.depth() * s.ow), 1, s.oh);
  const int64_t tiles = gemm::ceil_div(s.oh, tile_rows);
  // Tile t of image i: its windows unrolled by `unroll` (a loop over the rows of col), then
  // its products.
  auto run_tile = [&](int64_t i, int64_t t, float* col, auto&& unroll) {
    const int64_t oy0 = t * tile_rows, oy1 = std::min(s.oh, oy0 + tile_rows);
    const int64_t tile = (oy1 - oy0) * s.ow;
    unroll(groups * s.depth(), [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r)
        unroll_row(s, x, i, r / s.depth(), r % s.depth(), oy0, oy1, col + r * tile);
    });
    dsc_rt_gemm_f32_strided(w, col, y + i * image_out + oy0 * s.ow, groups, 1, out_group, tile,
                            s.depth(),
                            /*a*/ 0, a_group, 0, s.depth(), 1,
                            /*b*/ 0, s.depth() * tile, 0, tile, 1,
                            /*c*/ 0, out_group * s.pixels(), 0, s.pixels());
  };
  const int64_t col_floats = groups * s.depth() * tile_rows * s.ow;
  if (s.n * tiles >= 2 * pool.num_threads()) {
    // Tiles enough for every thread: each runs whole tiles, its windows in its own cache.
    pool.parallel_for(s.n * tiles, 1, [&](int64_t begin, int64_t end) {
      float* col = columns.get(col_floats);
      for (int64_t q = begin; q < end; ++q)
        run_tile(q / tiles, q % tiles, col, [](int64_t rows, auto&& f) { f(0, rows); });
    });
    return;
  }
  // Few tiles: each one's unrolling and products are split over the threads.
  float* col = columns.get(col_floats);
  for (int64_t q = 0; q < s.n * tiles; ++q)
    run_tile(q / tiles, q % tiles, col,
             [&](int64_t rows, auto&& f) { pool.parallel_for(rows, 8, f); });
}

} // namespace dsc::runtime

extern "C" void dsc_rt_conv2d_f32(const float* x, const float* w, float* y, int64_t n, int64_t c,
                                  int64_t h, int64_t width, int64_t o, int64_t kh, int64_t kw,
                                  int64_t oh, int64_t ow, int64_t groups, int64_t stride_h,
                                  int64_t stride_w, int64_t pad_h, int64_t pad_w,
                                  int64_t dilation_h, int64_t dilation_w) {
  using namespace dsc::runtime;
  conv2d_f32(x, w, y,
             Conv2dShape{n, c, h, width, o, kh, kw, oh, ow, groups, stride_h, stride_w, pad_h,
                         pad_w, dilation_h, dilation_w},
             kColumnFloats);
}
