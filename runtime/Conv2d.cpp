// dsc_rt_conv2d_f32 (HostABI.h): library routine "dsc.conv2d", a 2-D convolution as products
// on dsc's own GEMM (runtime/gemm/Gemm.h).
//
// Each group's weights are a matrix W_g [O/g x (C/g * KH * KW)] as they are stored (OIHW), and
// the input's windows a matrix col [(C/g * KH * KW) x pixels] (im2col: zeros where a window
// reaches into the padding), so that the group's result, stored NCHW, is the product W_g @ col.
// col is never stored: the GEMM asks for it a packed panel at a time (gemm::PanelSource), and
// pack_windows copies each panel's stretches of input rows straight into the GEMM's layout,
// so the windows are copied once, not unrolled and then packed. An image is done a tile of
// output rows at a time (a range of C's columns, its windows at most kColumnFloats were they
// stored), whole tiles per thread when there are enough; small images are side by side in one
// product instead, and a 1x1 convolution with stride 1 and no padding reads its input as col
// in place. With fewer output pixels than channels and constant weights the product is
// transposed (below, at transpose_small).

#include "runtime/Conv2d.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "runtime/RoutineFailure.h"
#include "runtime/ThreadPool.h"
#include "runtime/gemm/ConstantPacks.h"
#include "runtime/gemm/Packing.h"
#include "runtime/gemm/Scratch.h"

namespace dsc::runtime {

namespace {

// The windows of group `g` as a matrix (B of the group's product, or A of the transposed one
// as its transpose): column j is output pixel first_pixel + j of the images from `image` on,
// side by side (pixel p of image image + p / (oh * ow)), and row r the input element
// (ci, ky, kx) of r = (ci * kh + ky) * kw + kx.
struct Windows {
  const Conv2dShape* shape;
  const float* x;
  int64_t image, g, first_pixel;
};

// d[t] = s[t * stride] for t < n: memcpy for stride 1 (glibc's copies with the widest vectors
// the CPU has, faster than the baseline loop), and for stride 2 a loop the compiler vectorizes
// with no aliasing to guard against (ResNet-18's stem took 13% less time than with a loop that
// could alias).
void copy_strided(float* __restrict d, const float* __restrict s, int64_t n, int64_t stride) {
  if (stride == 1) {
    std::memcpy(d, s, static_cast<size_t>(n) * sizeof(float));
  } else if (stride == 2) {
    for (int64_t t = 0; t < n; ++t)
      d[t] = s[2 * t];
  } else {
    for (int64_t t = 0; t < n; ++t)
      d[t] = s[t * stride];
  }
}

// PanelSource::pack for Windows: each panel made from the input directly. Its columns are runs
// along output rows; per row of the windows, each run is one stretch of an input row (every
// stride-th element; zeros where it reaches into the padding).
void pack_windows(const void* context, int64_t p0, int64_t kc, int64_t col, int64_t cols,
                  int64_t nr, float* out) {
  const Windows& win = *static_cast<const Windows*>(context);
  const Conv2dShape& s = *win.shape;
  // The panel's columns [j, j + count): output row oy of an image, from column ox on; the
  // group's first input channel of that image at `channels`.
  struct Run {
    int64_t j, count, oy, ox;
    const float* channels;
  };
  constexpr int64_t kMaxRuns = 64;
  if (cols > kMaxRuns) std::abort(); // a micro tile wider than any kernel table's
  Run runs[kMaxRuns];
  int64_t num_runs = 0;
  for (int64_t j = 0; j < cols;) {
    const int64_t pixel = win.first_pixel + col + j;
    const int64_t image = win.image + pixel / s.pixels(), at = pixel % s.pixels();
    const int64_t oy = at / s.ow, ox = at % s.ow;
    const int64_t count = std::min(cols - j, s.ow - ox);
    runs[num_runs++] = {j, count, oy, ox,
                        win.x + (image * s.c + win.g * s.group_channels()) * s.h * s.w};
    j += count;
  }
  const int64_t plane = s.h * s.w;
  int64_t ci = p0 / (s.kh * s.kw), ky = p0 / s.kw % s.kh, kx = p0 % s.kw;
  for (int64_t q = 0; q < kc; ++q) {
    float* dst = out + q * nr;
    const int64_t dy = ky * s.dilation_h - s.pad_h, dx = kx * s.dilation_w - s.pad_w;
    for (int64_t r = 0; r < num_runs; ++r) {
      const Run& run = runs[r];
      float* d = dst + run.j;
      const int64_t iy = run.oy * s.stride_h + dy;
      if (iy < 0 || iy >= s.h) {
        std::fill(d, d + run.count, 0.0f);
        continue;
      }
      const float* in = run.channels + ci * plane + iy * s.w;
      // Element t reads ix = x0 + t * stride, inside the row for t in [lo, hi) (no division
      // for stride 1, the common case, where it would cost more than the copy).
      const int64_t x0 = run.ox * s.stride_w + dx, sw = s.stride_w;
      int64_t lo, hi;
      if (sw == 1) {
        lo = std::clamp<int64_t>(-x0, 0, run.count);
        hi = std::clamp<int64_t>(s.w - x0, lo, run.count);
      } else {
        lo = std::clamp<int64_t>(x0 >= 0 ? 0 : (-x0 + sw - 1) / sw, 0, run.count);
        hi = std::clamp<int64_t>(s.w - x0 <= 0 ? 0 : (s.w - x0 + sw - 1) / sw, lo, run.count);
      }
      for (int64_t t = 0; t < lo; ++t)
        d[t] = 0.0f;
      copy_strided(d + lo, in + x0 + lo * sw, hi - lo, sw);
      for (int64_t t = hi; t < run.count; ++t)
        d[t] = 0.0f;
    }
    std::fill(dst + cols, dst + nr, 0.0f);
    if (++kx == s.kw) {
      kx = 0;
      if (++ky == s.kh) ky = 0, ++ci;
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
    const dsc_strided_product p{
        .batch = s.n * groups, .inner = groups, .m = out_group, .n = s.pixels(), .k = s.depth(),
        .a_offset = 0, .a_outer = 0, .a_inner = a_group, .a_row = s.depth(), .a_col = 1,
        .b_offset = 0, .b_outer = s.c * s.h * s.w, .b_inner = s.group_channels() * s.h * s.w,
        .b_row = s.pixels(), .b_col = 1, .c_offset = 0, .c_outer = image_out,
        .c_inner = out_group * s.pixels(), .c_row = s.pixels()};
    dsc_rt_gemm_f32_strided(w, x, y, &p);
    return;
  }
  // Group g's product over the images from `image` on, output pixels [first_pixel,
  // first_pixel + n) of them side by side, into C at `c` (row stride ldc).
  auto product = [&](int64_t image, int64_t g, int64_t first_pixel, int64_t n, float* c,
                     int64_t ldc) {
    const Windows windows{&s, x, image, g, first_pixel};
    const gemm::PanelSource source{pack_windows, &windows};
    gemm::Product p;
    p.a = w + g * a_group;
    p.b_panels = &source;
    p.c = c;
    p.m = out_group, p.n = n, p.k = s.depth();
    p.a_row = s.depth(), p.ldc = ldc;
    gemm::multiply(gemm::kernels(), p);
  };
  // With one group, fewer output pixels than channels (a deep layer's small image) and weights
  // declared constant (gemm/ConstantPacks.h), the product is transposed: C^T [pixels x O] =
  // col^T @ W^T, the windows as A (pack_windows, a panel of pixels at a time) and the weights
  // as B read down their rows, which the GEMM packs once instead of packing A for every call
  // and tile. The pixels are then the rows, which few of waste less of the micro tile than few
  // columns do (on AVX-512 a tile is 14 rows by 32 columns), and a product whose B is packed
  // already runs on two pool loops instead of three per depth block: ResNet-18 at 2 threads
  // took 20% less time. Weights not declared constant are not (B read down its rows packs a
  // float at a time: ResNet-18 took 20% longer at 1 thread).
  const bool transpose_small =
      groups == 1 && gemm::is_constant(w, static_cast<size_t>(s.o * s.depth()) * sizeof(float));
  // Group 0's C^T for the output pixels [first_pixel, first_pixel + count) of the images from
  // `image` on, side by side, into `ct` (row stride O).
  auto product_transposed = [&](int64_t image, int64_t first_pixel, int64_t count, float* ct) {
    const Windows windows{&s, x, image, 0, first_pixel};
    const gemm::PanelSource source{pack_windows, &windows};
    gemm::Product p;
    p.a_panels = &source;
    p.b = w;
    p.c = ct;
    p.m = count, p.n = s.o, p.k = s.depth();
    p.b_row = 1, p.b_col = s.depth(), p.ldc = s.o;
    gemm::multiply(gemm::kernels(), p);
  };
  ThreadPool& pool = global_thread_pool();
  thread_local gemm::Scratch merged_result;
  // C (or C^T) of `images` images from `first`, side by side, into their places in y.
  auto scatter = [&](int64_t first, int64_t images, const float* result, bool transposed) {
    const int64_t wide = images * s.pixels();
    float* out = y + first * image_out;
    pool.parallel_for(images * s.o, 16, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t image = r / s.o, channel = r % s.o;
        float* dst = out + image * image_out + channel * s.pixels();
        if (!transposed) {
          std::memcpy(dst, result + channel * wide + image * s.pixels(),
                      static_cast<size_t>(s.pixels()) * sizeof(float));
          continue;
        }
        const float* src = result + image * s.pixels() * s.o + channel;
        for (int64_t px = 0; px < s.pixels(); ++px)
          dst[px] = src[px * s.o];
      }
    });
  };
  if (groups == 1 && s.n > 1 && s.pixels() < kMergedPixels) {
    // Small images side by side, a chunk at a time (its windows within the budget): one
    // product into a scratch [O x images * pixels] (or its transpose), whose rows are then
    // scattered to the images.
    const int64_t chunk = std::clamp<int64_t>(column_floats / (s.depth() * s.pixels()), 1, s.n);
    for (int64_t first = 0; first < s.n; first += chunk) {
      const int64_t images = std::min(chunk, s.n - first);
      const int64_t wide = images * s.pixels();
      float* result = merged_result.get(s.o * wide);
      const bool transposed = transpose_small && wide < s.o;
      if (transposed)
        product_transposed(first, 0, wide, result);
      else
        product(first, 0, 0, wide, result, wide);
      scatter(first, images, result, transposed);
    }
    return;
  }
  if (transpose_small && s.pixels() < s.o) {
    // An image at a time, each a product split over the threads.
    for (int64_t i = 0; i < s.n; ++i) {
      float* result = merged_result.get(s.o * s.pixels());
      product_transposed(i, 0, s.pixels(), result);
      scatter(i, 1, result, true);
    }
    return;
  }
  // Each image a tile of output rows at a time, the tile's windows within the budget: the
  // tile is a range of C's columns, in every group.
  const int64_t tile_rows =
      std::clamp<int64_t>(column_floats / (groups * s.depth() * s.ow), 1, s.oh);
  const int64_t tiles = gemm::ceil_div(s.oh, tile_rows);
  auto run_tile = [&](int64_t i, int64_t t) {
    const int64_t oy0 = t * tile_rows, oy1 = std::min(s.oh, oy0 + tile_rows);
    for (int64_t g = 0; g < groups; ++g)
      product(i, g, oy0 * s.ow, (oy1 - oy0) * s.ow,
              y + i * image_out + g * out_group * s.pixels() + oy0 * s.ow, s.pixels());
  };
  if (s.n * tiles >= 2 * pool.num_threads()) {
    // Tiles enough for every thread: each runs whole tiles.
    pool.parallel_for(s.n * tiles, 1, [&](int64_t begin, int64_t end) {
      for (int64_t q = begin; q < end; ++q)
        run_tile(q / tiles, q % tiles);
    });
    return;
  }
  // Few tiles: each one's products are split over the threads.
  for (int64_t q = 0; q < s.n * tiles; ++q)
    run_tile(q / tiles, q % tiles);
}

} // namespace dsc::runtime

extern "C" void dsc_rt_conv2d_f32(const float* x, const float* w, float* y, int64_t n, int64_t c,
                                  int64_t h, int64_t width, int64_t o, int64_t kh, int64_t kw,
                                  int64_t oh, int64_t ow, int64_t groups, int64_t stride_h,
                                  int64_t stride_w, int64_t pad_h, int64_t pad_w,
                                  int64_t dilation_h, int64_t dilation_w) {
  dsc::runtime::run_routine(__func__, [&] {
    using namespace dsc::runtime;
    conv2d_f32(x, w, y,
               Conv2dShape{n, c, h, width, o, kh, kw, oh, ow, groups, stride_h, stride_w, pad_h,
                           pad_w, dilation_h, dilation_w},
               kColumnFloats);
  });
}
