#include "runtime/cuda/Emulator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "runtime/HostABI.h"

// The CUDA block emulator runs hand-written CUDA C, in the style the CUDA backend emits, on the
// CPU: results against plain loops, races that a missing __syncthreads() makes visible, and
// clean errors for barrier divergence, warp misuse, compile failures and missing kernels.
namespace dsc::runtime::cuda {
namespace {

const char* const kKernels = R"cuda(// hand-written kernels for CudaEmulatorTest
#ifndef DSC_CUDA_EMULATOR
#include <math_constants.h>
#endif

__device__ __forceinline__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// Every thread gets the block's sum; blockDim.x must be a multiple of 32.
__device__ __forceinline__ float block_all_sum(float v) {
  __shared__ float dsc_red[32];
  unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  v = warp_sum(v);
  if (lane == 0) dsc_red[warp] = v;
  __syncthreads();
  if (warp == 0) {
    float r = lane < (blockDim.x + 31) / 32 ? dsc_red[lane] : 0.0f;
    r = warp_sum(r);
    if (lane == 0) dsc_red[0] = r;
  }
  __syncthreads();
  float total = dsc_red[0];
  __syncthreads();
  return total;
}

extern "C" __global__ void __launch_bounds__(1024) scale_add(const float* __restrict__ a,
    const float* __restrict__ b, float* __restrict__ out, long long n) {
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    out[i] = a[i] * 1.5f + tanhf(b[i]) + rsqrtf(4.0f) * __expf(0.0f) + fminf(b[i], INFINITY);
}

// One block per row; blockDim.x is a power of two.
extern "C" __global__ void __launch_bounds__(1024) row_sum_tree(const float* __restrict__ a,
    float* __restrict__ out, long long n) {
  __shared__ float partial[1024];
  float acc = 0.0f;
  for (long long i = threadIdx.x; i < n; i += blockDim.x) acc += a[blockIdx.x * n + i];
  partial[threadIdx.x] = acc;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = partial[0];
}

extern "C" __global__ void __launch_bounds__(1024) row_sum_shfl(const float* __restrict__ a,
    float* __restrict__ out, long long n) {
  float acc = 0.0f;
  for (long long i = threadIdx.x; i < n; i += blockDim.x) acc += a[blockIdx.x * n + i];
  float total = block_all_sum(acc);
  if (threadIdx.x == blockDim.x - 1) out[blockIdx.x] = total;
}

// A warp-level reduction with __shfl_down_sync: lane 0 of each warp adds its warp's sum.
extern "C" __global__ void __launch_bounds__(1024) sum_shfl_down(const float* __restrict__ a,
    float* __restrict__ out, long long n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? a[i] : 0.0f;
  for (unsigned offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  if (threadIdx.x % 32 == 0) atomicAdd(out, v);
}

// Reverses each block's slice through shared memory; the racy one has no barrier.
extern "C" __global__ void reverse_synced(const float* __restrict__ a, float* __restrict__ out) {
  __shared__ float s[1024];
  long long base = (long long)blockIdx.x * blockDim.x;
  s[threadIdx.x] = a[base + threadIdx.x];
  __syncthreads();
  out[base + threadIdx.x] = s[blockDim.x - 1 - threadIdx.x];
}
extern "C" __global__ void reverse_racy(const float* __restrict__ a, float* __restrict__ out) {
  __shared__ float s[1024];
  long long base = (long long)blockIdx.x * blockDim.x;
  s[threadIdx.x] = a[base + threadIdx.x];
  out[base + threadIdx.x] = s[blockDim.x - 1 - threadIdx.x];
}

// Each thread reads its right neighbour's value; the racy one has no barrier.
extern "C" __global__ void rotate_synced(const float* __restrict__ a, float* __restrict__ out) {
  __shared__ float s[1024];
  long long base = (long long)blockIdx.x * blockDim.x;
  s[threadIdx.x] = a[base + threadIdx.x] * 2.0f;
  __syncthreads();
  out[base + threadIdx.x] = s[(threadIdx.x + 1) % blockDim.x];
}
extern "C" __global__ void rotate_racy(const float* __restrict__ a, float* __restrict__ out) {
  __shared__ float s[1024];
  long long base = (long long)blockIdx.x * blockDim.x;
  s[threadIdx.x] = a[base + threadIdx.x] * 2.0f;
  out[base + threadIdx.x] = s[(threadIdx.x + 1) % blockDim.x];
}

// A 16 x 16 tile transpose: 2-D blocks and grids, shared memory, a barrier.
extern "C" __global__ void transpose(const float* __restrict__ in, float* __restrict__ out,
    long long rows, long long cols) {
  __shared__ float tile[16][17];
  long long x = (long long)blockIdx.x * 16 + threadIdx.x;
  long long y = (long long)blockIdx.y * 16 + threadIdx.y;
  if (x < cols && y < rows) tile[threadIdx.y][threadIdx.x] = in[y * cols + x];
  __syncthreads();
  long long ox = (long long)blockIdx.y * 16 + threadIdx.x;
  long long oy = (long long)blockIdx.x * 16 + threadIdx.y;
  if (ox < rows && oy < cols) out[oy * rows + ox] = tile[threadIdx.x][threadIdx.y];
}

// Writes each thread's indices at its global linear position (x fastest).
extern "C" __global__ void indices(int* __restrict__ out) {
  long long block =
      blockIdx.x + (long long)gridDim.x * (blockIdx.y + (long long)gridDim.y * blockIdx.z);
  long long thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  long long i = block * blockDim.x * blockDim.y * blockDim.z + thread;
  out[4 * i + 0] = threadIdx.x + 100 * threadIdx.y + 10000 * threadIdx.z;
  out[4 * i + 1] = blockIdx.x + 100 * blockIdx.y + 10000 * blockIdx.z;
  out[4 * i + 2] = blockDim.x + 100 * blockDim.y + 10000 * blockDim.z;
  out[4 * i + 3] = gridDim.x + 100 * gridDim.y + 10000 * gridDim.z;
}

// Per thread: a broadcast from lane 3, an inclusive scan, a ballot, all, any, and a block count.
extern "C" __global__ void warp_ops(const int* __restrict__ in, int* __restrict__ out) {
  unsigned t = threadIdx.x, lane = t % 32;
  int v = in[t];
  int scan = v;
  for (unsigned d = 1; d < 32; d *= 2) {
    int up = __shfl_up_sync(0xffffffffu, scan, d);
    if (lane >= d) scan += up;
  }
  __syncwarp();
  out[8 * t + 0] = __shfl_sync(0xffffffffu, v, 3);
  out[8 * t + 1] = scan;
  out[8 * t + 2] = (int)__ballot_sync(0xffffffffu, v > 0);
  out[8 * t + 3] = __all_sync(0xffffffffu, v > 0);
  out[8 * t + 4] = __any_sync(0xffffffffu, v > 5);
  out[8 * t + 5] = __syncthreads_count(v > 0);
  out[8 * t + 6] = __shfl_xor_sync(0xffffffffu, v, 1, 4);
  out[8 * t + 7] = __float_as_int(__int_as_float(v));
}

#ifdef DSC_CUDA_EMULATOR
extern "C" void dsc_emu_scale_add(void* const* buffers, const int64_t* symbols) {
  scale_add((const float*)buffers[0], (const float*)buffers[1], (float*)buffers[2],
            (long long)symbols[0]);
}
extern "C" void dsc_emu_row_sum_tree(void* const* buffers, const int64_t* symbols) {
  row_sum_tree((const float*)buffers[0], (float*)buffers[1], (long long)symbols[0]);
}
extern "C" void dsc_emu_row_sum_shfl(void* const* buffers, const int64_t* symbols) {
  row_sum_shfl((const float*)buffers[0], (float*)buffers[1], (long long)symbols[0]);
}
extern "C" void dsc_emu_sum_shfl_down(void* const* buffers, const int64_t* symbols) {
  sum_shfl_down((const float*)buffers[0], (float*)buffers[1], (long long)symbols[0]);
}
extern "C" void dsc_emu_reverse_synced(void* const* buffers, const int64_t*) {
  reverse_synced((const float*)buffers[0], (float*)buffers[1]);
}
extern "C" void dsc_emu_reverse_racy(void* const* buffers, const int64_t*) {
  reverse_racy((const float*)buffers[0], (float*)buffers[1]);
}
extern "C" void dsc_emu_rotate_synced(void* const* buffers, const int64_t*) {
  rotate_synced((const float*)buffers[0], (float*)buffers[1]);
}
extern "C" void dsc_emu_rotate_racy(void* const* buffers, const int64_t*) {
  rotate_racy((const float*)buffers[0], (float*)buffers[1]);
}
extern "C" void dsc_emu_transpose(void* const* buffers, const int64_t* symbols) {
  transpose((const float*)buffers[0], (float*)buffers[1], (long long)symbols[0],
            (long long)symbols[1]);
}
extern "C" void dsc_emu_indices(void* const* buffers, const int64_t*) {
  indices((int*)buffers[0]);
}
extern "C" void dsc_emu_warp_ops(void* const* buffers, const int64_t*) {
  warp_ops((const int*)buffers[0], (int*)buffers[1]);
}
#endif
)cuda";

// Kernels that misuse barriers and warp operations.
const char* const kMisuse = R"cuda(// kernels that cannot complete
extern "C" __global__ void exit_before_barrier(float* out) {
  if (threadIdx.x >= 5) return;
  __syncthreads();
  out[threadIdx.x] = 1.0f;
}
extern "C" __global__ void divergent_barriers(float* out) {
  if (threadIdx.x % 2) {
    __syncthreads();
  } else {
    __syncthreads();
  }
  out[threadIdx.x] = 1.0f;
}
extern "C" __global__ void shuffle_beyond_block(float* out) {
  float v = 1.0f;
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  out[threadIdx.x] = v;
}
extern "C" __global__ void shuffle_lane_exited(float* out) {
  if (threadIdx.x == 7) return;
  out[threadIdx.x] = __shfl_sync(0xffffffffu, 1.0f, 0);
}
extern "C" __global__ void shuffle_bad_width(float* out) {
  out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, 1.0f, 1, 3);
}
extern "C" __global__ void traps(float* out) {
  if (blockIdx.x == 1 && threadIdx.x == 2) __trap();
  out[threadIdx.x] = 1.0f;
}
extern "C" __global__ void same_line_barriers(float* out) {
  if (threadIdx.x < 3) { __syncthreads(); } else { __syncthreads(); }
  out[threadIdx.x] = 1.0f;
}
#ifdef DSC_CUDA_EMULATOR
extern "C" void dsc_emu_exit_before_barrier(void* const* b, const int64_t*) {
  exit_before_barrier((float*)b[0]);
}
extern "C" void dsc_emu_divergent_barriers(void* const* b, const int64_t*) {
  divergent_barriers((float*)b[0]);
}
extern "C" void dsc_emu_shuffle_beyond_block(void* const* b, const int64_t*) {
  shuffle_beyond_block((float*)b[0]);
}
extern "C" void dsc_emu_shuffle_lane_exited(void* const* b, const int64_t*) {
  shuffle_lane_exited((float*)b[0]);
}
extern "C" void dsc_emu_shuffle_bad_width(void* const* b, const int64_t*) {
  shuffle_bad_width((float*)b[0]);
}
extern "C" void dsc_emu_traps(void* const* b, const int64_t*) { traps((float*)b[0]); }
extern "C" void dsc_emu_same_line_barriers(void* const* b, const int64_t*) {
  same_line_barriers((float*)b[0]);
}
#endif
)cuda";

Device& emulator() {
  static std::unique_ptr<Device> device = [] {
    std::string error;
    std::unique_ptr<Device> d = make_emulator_device(&error);
    EXPECT_TRUE(d) << error;
    return d;
  }();
  return *device;
}

// Each module is compiled once per process, on its first launch.
dsc_cuda_module* kernels_module() {
  static dsc_cuda_module module{"emulator_test_kernels", 0, nullptr, kKernels, nullptr};
  return &module;
}

dsc_cuda_module* misuse_module() {
  static dsc_cuda_module module{"emulator_test_misuse", 0, nullptr, kMisuse, nullptr};
  return &module;
}

LaunchShape shape(int64_t grid_x, int64_t block_x, int64_t grid_y = 1, int64_t block_y = 1) {
  LaunchShape s;
  s.grid[0] = grid_x;
  s.grid[1] = grid_y;
  s.block[0] = block_x;
  s.block[1] = block_y;
  return s;
}

bool launch(dsc_cuda_module* module, const char* kernel, const LaunchShape& s,
            std::vector<void*> buffers, std::vector<int64_t> symbols, std::string* error) {
  return emulator().launch(module, kernel, s, buffers.data(), static_cast<int>(buffers.size()),
                           symbols.data(), static_cast<int>(symbols.size()), error);
}

// Deterministic, distinct, non-zero values.
std::vector<float> ramp(size_t n, float scale = 0.25f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<float>(static_cast<int>((i * 7919) % 2003) - 1000) * scale + 0.125f;
  return v;
}

// The path in "...; the source is kept in /tmp/dsc-cuda-emulator-x/m.cu)".
std::string kept_source(const std::string& message) {
  const std::string marker = "kept in ";
  size_t at = message.find(marker);
  if (at == std::string::npos) return "";
  size_t end = message.find(')', at);
  return message.substr(at + marker.size(), end - at - marker.size());
}

TEST(CudaEmulator, Describe) {
  EXPECT_EQ(emulator().describe(), "the CUDA block emulator (CPU)");
  std::string error;
  EXPECT_TRUE(emulator().synchronize(&error));
  // One multiprocessor's worth, so that small shapes cross the occupancy rule (CudaSource.h).
  EXPECT_EQ(emulator().resident_threads(), 2048);
}

TEST(CudaEmulator, GridStrideElementwise) {
  for (int64_t n : {1, 7, 1000, 4099}) {
    std::vector<float> a = ramp(static_cast<size_t>(n)), b = ramp(static_cast<size_t>(n), 0.01f);
    std::vector<float> out(static_cast<size_t>(n), -1.0f);
    int64_t blocks = std::min<int64_t>((n + 127) / 128, 5); // fewer threads than elements
    std::string error;
    ASSERT_TRUE(launch(kernels_module(), "scale_add", shape(blocks, 128),
                       {a.data(), b.data(), out.data()}, {n}, &error))
        << error;
    for (int64_t i = 0; i < n; ++i) {
      size_t k = static_cast<size_t>(i);
      float expected = a[k] * 1.5f + std::tanh(b[k]) + 0.5f + std::fmin(b[k], INFINITY);
      EXPECT_NEAR(out[k], expected, 1e-5f * (1.0f + std::fabs(expected)))
          << "n=" << n << " i=" << i;
    }
  }
}

TEST(CudaEmulator, BlockReductions) {
  const int64_t rows = 3;
  for (int64_t n : {1, 33, 1000, 4097}) {
    std::vector<float> a = ramp(static_cast<size_t>(rows * n));
    std::vector<double> expected(rows, 0.0);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t i = 0; i < n; ++i)
        expected[static_cast<size_t>(r)] += a[static_cast<size_t>(r * n + i)];
    // The tree needs a power-of-two block; the shuffle reduction a multiple of the warp.
    for (auto [kernel, block] :
         std::vector<std::pair<const char*, int64_t>>{{"row_sum_tree", 1},
                                                      {"row_sum_tree", 64},
                                                      {"row_sum_tree", 1024},
                                                      {"row_sum_shfl", 32},
                                                      {"row_sum_shfl", 96},
                                                      {"row_sum_shfl", 1024}}) {
      std::vector<float> out(rows, -1.0f);
      std::string error;
      ASSERT_TRUE(
          launch(kernels_module(), kernel, shape(rows, block), {a.data(), out.data()}, {n}, &error))
          << kernel << " block " << block << ": " << error;
      for (int64_t r = 0; r < rows; ++r) {
        double want = expected[static_cast<size_t>(r)];
        EXPECT_NEAR(out[static_cast<size_t>(r)], want, 1e-4 * (1.0 + std::fabs(want)) + 1e-3)
            << kernel << " block " << block << " n " << n << " row " << r;
      }
    }
  }
}

TEST(CudaEmulator, ShuffleDownAndAtomicAdd) {
  for (int64_t n : {5, 1000, 4099}) {
    std::vector<float> a = ramp(static_cast<size_t>(n));
    double expected = 0;
    for (float x : a)
      expected += x;
    float out = 0.0f;
    std::string error;
    ASSERT_TRUE(launch(kernels_module(), "sum_shfl_down", shape((n + 255) / 256, 256),
                       {a.data(), &out}, {n}, &error))
        << error;
    EXPECT_NEAR(out, expected, 1e-4 * (1.0 + std::fabs(expected)) + 1e-3) << "n=" << n;
  }
}

// With the barrier the answer is right; without it each thread runs until it ends before the
// next one starts, so it reads slots of shared memory the threads after it have not written
// yet: the race gives a wrong answer instead of hiding.
TEST(CudaEmulator, MissingBarrierShowsTheRace) {
  for (int64_t block : {2, 7, 256, 1024}) {
    const int64_t blocks = 3, n = blocks * block;
    std::vector<float> a = ramp(static_cast<size_t>(n)); // distinct values
    std::vector<float> reversed(static_cast<size_t>(n)), rotated(static_cast<size_t>(n));
    for (int64_t b = 0; b < blocks; ++b)
      for (int64_t t = 0; t < block; ++t) {
        size_t i = static_cast<size_t>(b * block + t);
        reversed[i] = a[static_cast<size_t>(b * block + block - 1 - t)];
        rotated[i] = a[static_cast<size_t>(b * block + (t + 1) % block)] * 2.0f;
      }
    std::string error;
    std::vector<float> out(static_cast<size_t>(n));
    ASSERT_TRUE(launch(kernels_module(), "reverse_synced", shape(blocks, block),
                       {a.data(), out.data()}, {}, &error))
        << error;
    EXPECT_EQ(out, reversed) << "block " << block;
    ASSERT_TRUE(launch(kernels_module(), "rotate_synced", shape(blocks, block),
                       {a.data(), out.data()}, {}, &error))
        << error;
    EXPECT_EQ(out, rotated) << "block " << block;

    // Thread t reads slot block-1-t: stale for the first half of each block.
    ASSERT_TRUE(launch(kernels_module(), "reverse_racy", shape(blocks, block),
                       {a.data(), out.data()}, {}, &error))
        << error;
    int64_t wrong = 0;
    for (size_t i = 0; i < out.size(); ++i)
      wrong += out[i] != reversed[i];
    EXPECT_EQ(wrong, blocks * (block / 2)) << "block " << block;
    // Thread t reads slot t+1: stale for all but the last thread of each block.
    ASSERT_TRUE(launch(kernels_module(), "rotate_racy", shape(blocks, block),
                       {a.data(), out.data()}, {}, &error))
        << error;
    wrong = 0;
    for (size_t i = 0; i < out.size(); ++i)
      wrong += out[i] != rotated[i];
    EXPECT_EQ(wrong, blocks * (block - 1)) << "block " << block;
  }
}

TEST(CudaEmulator, TwoDimensionalTranspose) {
  for (auto [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {37, 53}, {64, 16}}) {
    std::vector<float> in = ramp(static_cast<size_t>(rows * cols));
    std::vector<float> out(static_cast<size_t>(rows * cols), -1.0f);
    std::string error;
    ASSERT_TRUE(launch(kernels_module(), "transpose",
                       shape((cols + 15) / 16, 16, (rows + 15) / 16, 16), {in.data(), out.data()},
                       {rows, cols}, &error))
        << error;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        ASSERT_EQ(out[static_cast<size_t>(c * rows + r)], in[static_cast<size_t>(r * cols + c)])
            << rows << "x" << cols << " at " << r << "," << c;
  }
}

TEST(CudaEmulator, BuiltInVariables) {
  LaunchShape s;
  int64_t grid[3] = {2, 3, 2}, block[3] = {4, 3, 2};
  for (int d = 0; d < 3; ++d) {
    s.grid[d] = grid[d];
    s.block[d] = block[d];
  }
  const int64_t threads = 2 * 3 * 2 * 4 * 3 * 2;
  std::vector<int> out(static_cast<size_t>(4 * threads), -1);
  std::string error;
  ASSERT_TRUE(launch(kernels_module(), "indices", s, {out.data()}, {}, &error)) << error;
  int64_t i = 0;
  for (int bz = 0; bz < 2; ++bz)
    for (int by = 0; by < 3; ++by)
      for (int bx = 0; bx < 2; ++bx)
        for (int tz = 0; tz < 2; ++tz)
          for (int ty = 0; ty < 3; ++ty)
            for (int tx = 0; tx < 4; ++tx, ++i) {
              size_t k = static_cast<size_t>(4 * i);
              EXPECT_EQ(out[k + 0], tx + 100 * ty + 10000 * tz);
              EXPECT_EQ(out[k + 1], bx + 100 * by + 10000 * bz);
              EXPECT_EQ(out[k + 2], 4 + 100 * 3 + 10000 * 2);
              EXPECT_EQ(out[k + 3], 2 + 100 * 3 + 10000 * 2);
            }
}

TEST(CudaEmulator, WarpOperations) {
  const int threads = 64;
  std::vector<int> in(threads);
  for (int t = 0; t < threads; ++t)
    in[static_cast<size_t>(t)] = t % 5 == 0 ? 0 : t % 9;
  std::vector<int> out(static_cast<size_t>(8 * threads), -1);
  std::string error;
  ASSERT_TRUE(
      launch(kernels_module(), "warp_ops", shape(1, threads), {in.data(), out.data()}, {}, &error))
      << error;
  int positive_in_block = 0;
  for (int v : in)
    positive_in_block += v > 0;
  for (int t = 0; t < threads; ++t) {
    int base = t / 32 * 32, lane = t % 32;
    int scan = 0;
    unsigned ballot = 0;
    bool all = true, any = false;
    for (int l = 0; l < 32; ++l) {
      int v = in[static_cast<size_t>(base + l)];
      if (l <= lane) scan += v;
      if (v > 0) ballot |= 1u << l;
      all = all && v > 0;
      any = any || v > 5;
    }
    const int* o = &out[static_cast<size_t>(8 * t)];
    EXPECT_EQ(o[0], in[static_cast<size_t>(base + 3)]) << t;
    EXPECT_EQ(o[1], scan) << t;
    EXPECT_EQ(static_cast<unsigned>(o[2]), ballot) << t;
    EXPECT_EQ(o[3], all ? 1 : 0) << t;
    EXPECT_EQ(o[4], any ? 1 : 0) << t;
    EXPECT_EQ(o[5], positive_in_block) << t;
    EXPECT_EQ(o[6], in[static_cast<size_t>(t ^ 1)]) << t;
    EXPECT_EQ(o[7], in[static_cast<size_t>(t)]) << t;
  }
}

TEST(CudaEmulator, ConcurrentLaunchesOfOneModule) {
  std::vector<std::thread> workers;
  std::vector<int> failures(4, 0);
  for (int w = 0; w < 4; ++w)
    workers.emplace_back([w, &failures] {
      const int64_t n = 777 + w;
      std::vector<float> a = ramp(static_cast<size_t>(n)), out(static_cast<size_t>(n));
      for (int round = 0; round < 10; ++round) {
        std::string error;
        if (!launch(kernels_module(), "rotate_synced", shape(7, n / 7), {a.data(), out.data()}, {},
                    &error)) {
          ++failures[static_cast<size_t>(w)];
          continue;
        }
        int64_t block = n / 7;
        for (int64_t i = 0; i < 7 * block; ++i) {
          int64_t b = i / block, t = i % block;
          if (out[static_cast<size_t>(i)] !=
              a[static_cast<size_t>(b * block + (t + 1) % block)] * 2.0f) {
            ++failures[static_cast<size_t>(w)];
            break;
          }
        }
      }
    });
  for (std::thread& t : workers)
    t.join();
  for (int w = 0; w < 4; ++w)
    EXPECT_EQ(failures[static_cast<size_t>(w)], 0) << "worker " << w;
}

// Two modules that define the same helper keep separate __shared__ arrays: launches of different
// modules run at once on different threads. (Shared memory outlives a launch only in the
// emulator, which is what lets this test look.)
TEST(CudaEmulator, ModulesDoNotShareSharedMemory) {
  static const char* const kSource = R"cuda(
__device__ __forceinline__ float* slot() {
  __shared__ float dsc_slot[1];
  return dsc_slot;
}
extern "C" __global__ void put(const float* in) { slot()[0] = in[0]; }
extern "C" __global__ void take(float* out) { out[0] = slot()[0]; }
extern "C" void dsc_emu_put(void* const* b, const int64_t*) { put((const float*)b[0]); }
extern "C" void dsc_emu_take(void* const* b, const int64_t*) { take((float*)b[0]); }
)cuda";
  static dsc_cuda_module first{"same_helper_1", 0, nullptr, kSource, nullptr};
  static dsc_cuda_module second{"same_helper_2", 0, nullptr, kSource, nullptr};
  float one = 1.0f, two = 2.0f, out = 0.0f;
  std::string error;
  ASSERT_TRUE(launch(&first, "put", shape(1, 1), {&one}, {}, &error)) << error;
  ASSERT_TRUE(launch(&second, "put", shape(1, 1), {&two}, {}, &error)) << error;
  ASSERT_TRUE(launch(&first, "take", shape(1, 1), {&out}, {}, &error)) << error;
  EXPECT_EQ(out, 1.0f);
  ASSERT_TRUE(launch(&second, "take", shape(1, 1), {&out}, {}, &error)) << error;
  EXPECT_EQ(out, 2.0f);
}

TEST(CudaEmulator, EmptyGridLaunchesNothing) {
  // An empty grid returns before the module is compiled, so even a broken one is fine.
  dsc_cuda_module broken{"never_compiled", 0, nullptr, "this is not C++", nullptr};
  std::string error;
  EXPECT_TRUE(launch(&broken, "anything", shape(0, 32), {}, {}, &error)) << error;
  EXPECT_EQ(broken.loaded, nullptr);
}

std::string launch_error(dsc_cuda_module* module, const char* kernel, const LaunchShape& s) {
  std::vector<float> out(4096, 0.0f);
  std::string error;
  EXPECT_FALSE(launch(module, kernel, s, {out.data()}, {}, &error)) << kernel;
  return error;
}

TEST(CudaEmulator, BarrierDivergenceIsAnError) {
  std::string error = launch_error(misuse_module(), "exit_before_barrier", shape(2, 32));
  EXPECT_NE(error.find("barrier divergence"), std::string::npos) << error;
  EXPECT_NE(error.find("block (0, 0, 0): thread (0, 0, 0) waits in __syncthreads (line 4)"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("thread (5, 0, 0) has exited"), std::string::npos) << error;

  error = launch_error(misuse_module(), "divergent_barriers", shape(1, 64));
  EXPECT_NE(error.find("barrier divergence"), std::string::npos) << error;
  EXPECT_NE(error.find("(line 11)"), std::string::npos) << error;
  EXPECT_NE(error.find("(line 9)"), std::string::npos) << error;

  error = launch_error(misuse_module(), "same_line_barriers", shape(1, 8));
  EXPECT_NE(error.find("waits in __syncthreads (line 32), but thread (3, 0, 0) waits in "
                       "another __syncthreads on that line (barrier divergence)"),
            std::string::npos)
      << error;

  // The module still works after a failed launch.
  std::vector<float> a = ramp(64), out(64);
  ASSERT_TRUE(
      launch(kernels_module(), "reverse_synced", shape(1, 64), {a.data(), out.data()}, {}, &error))
      << error;
  EXPECT_EQ(out[0], a[63]);
}

TEST(CudaEmulator, WarpMisuseIsAnError) {
  // A block of 7 threads: lane 0 reads lane 16, which no thread of the block is.
  std::string error = launch_error(misuse_module(), "shuffle_beyond_block", shape(1, 7));
  EXPECT_NE(error.find("reads lane 16, beyond the block's 7 threads"), std::string::npos) << error;
  // A block of 48: the second warp has 16 lanes, and lane 0 of it (thread 32) reads lane 16.
  error = launch_error(misuse_module(), "shuffle_beyond_block", shape(1, 48));
  EXPECT_NE(error.find("thread (32, 0, 0)"), std::string::npos) << error;
  EXPECT_NE(error.find("beyond the block's 48 threads"), std::string::npos) << error;
  // A lane of the mask ended instead of taking part.
  error = launch_error(misuse_module(), "shuffle_lane_exited", shape(1, 32));
  EXPECT_NE(error.find("lane 7 of its mask, thread (7, 0, 0), has exited"), std::string::npos)
      << error;
  error = launch_error(misuse_module(), "shuffle_bad_width", shape(1, 32));
  EXPECT_NE(error.find("width 3, which is not a power of two"), std::string::npos) << error;
  error = launch_error(misuse_module(), "traps", shape(2, 4));
  EXPECT_NE(error.find("block (1, 0, 0): thread (2, 0, 0) called __trap() (line 28)"),
            std::string::npos)
      << error;
}

TEST(CudaEmulator, LaunchShapeErrors) {
  std::string error = launch_error(kernels_module(), "reverse_synced", shape(1, 2048));
  EXPECT_NE(error.find("the block's x dimension is 2048; CUDA allows 1 to 1024"), std::string::npos)
      << error;
  error = launch_error(kernels_module(), "reverse_synced", shape(1, 64, 1, 64));
  EXPECT_NE(error.find("a block of 4096 threads; CUDA allows at most 1024"), std::string::npos)
      << error;
  error = launch_error(kernels_module(), "reverse_synced", shape(1, 32, 70000, 1));
  EXPECT_NE(error.find("the grid's y dimension is 70000; CUDA allows 1 to 65535"),
            std::string::npos)
      << error;
  LaunchShape dynamic = shape(1, 32);
  dynamic.shared_bytes = 256;
  error = launch_error(kernels_module(), "reverse_synced", dynamic);
  EXPECT_NE(error.find("dynamic shared memory"), std::string::npos) << error;
}

TEST(CudaEmulator, MissingKernelIsAnError) {
  std::string error = launch_error(kernels_module(), "no_such_kernel", shape(1, 32));
  EXPECT_NE(error.find("module 'emulator_test_kernels' has no kernel 'no_such_kernel'"),
            std::string::npos)
      << error;
}

TEST(CudaEmulator, CompileErrorNamesTheCompilerOutput) {
  static const char* const kBroken = R"cuda(// broken
extern "C" __global__ void broken(float* out) {
  out[threadIdx.x] = undeclared_value;
}
)cuda";
  dsc_cuda_module module{"broken/module", 0, nullptr, kBroken, nullptr};
  std::string error = launch_error(&module, "broken", shape(1, 32));
  EXPECT_NE(error.find("cannot compile CUDA module 'broken/module' for the emulator"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("undeclared_value"), std::string::npos) << error;
  std::string source = kept_source(error);
  ASSERT_FALSE(source.empty()) << error;
  EXPECT_NE(error.find(source + ":3:"), std::string::npos) << error; // file:line of the error
  EXPECT_TRUE(std::filesystem::exists(source)) << source;
  // The failure is kept: the next launch says the same without compiling again.
  EXPECT_EQ(launch_error(&module, "broken", shape(1, 32)), error);
  std::error_code ignored;
  std::filesystem::remove_all(std::filesystem::path(source).parent_path(), ignored);

  dsc_cuda_module no_source{"no_source", 0, nullptr, nullptr, nullptr};
  error = launch_error(&no_source, "k", shape(1, 1));
  EXPECT_NE(error.find("it has no CUDA C source"), std::string::npos) << error;
}

TEST(CudaEmulator, MemoryCopiesAndSgemm) {
  Device& d = emulator();
  std::string error;
  const int64_t m = 5, n = 7, k = 3;
  auto* a = static_cast<float*>(d.allocate(m * k * sizeof(float), "a", &error));
  auto* b = static_cast<float*>(d.allocate(k * n * sizeof(float), "b", &error));
  auto* c = static_cast<float*>(d.allocate(m * n * sizeof(float), "c", &error));
  void* empty = d.allocate(0, "empty", &error);
  ASSERT_TRUE(a && b && c && empty) << error;
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 64, 0u);
  std::vector<float> ha = ramp(m * k), hb = ramp(k * n, 0.5f), hc(m * n);
  ASSERT_TRUE(d.copy(a, ha.data(), ha.size() * sizeof(float), CopyKind::HostToDevice, &error));
  ASSERT_TRUE(d.copy(b, hb.data(), hb.size() * sizeof(float), CopyKind::HostToDevice, &error));
  ASSERT_TRUE(d.sgemm(a, b, c, dense_product(1, m, n, k, 0, 0, false), &error)) << error;
  ASSERT_TRUE(d.copy(hc.data(), c, hc.size() * sizeof(float), CopyKind::DeviceToHost, &error));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double want = 0;
      for (int64_t p = 0; p < k; ++p)
        want += double(ha[static_cast<size_t>(i * k + p)]) * hb[static_cast<size_t>(p * n + j)];
      EXPECT_NEAR(hc[static_cast<size_t>(i * n + j)], want, 1e-3 * (1 + std::fabs(want)));
    }
  EXPECT_EQ(d.allocate(uint64_t{1} << 62, "a huge tensor", &error), nullptr);
  EXPECT_NE(error.find("of device memory for a huge tensor"), std::string::npos) << error;
  for (void* p : {static_cast<void*>(a), static_cast<void*>(b), static_cast<void*>(c), empty})
    d.release(p);
}

} // namespace
} // namespace dsc::runtime::cuda
