// The CUDA block emulator's side of a kernel library: the CUDA C of a dsc_cuda_module
// (runtime/HostABI.h) compiled by the host C++ compiler with
//
//   c++ -std=c++17 -O1 -shared -fPIC -Wl,-Bsymbolic -DDSC_CUDA_EMULATOR
//       -include dsc_cuda_emulator.h -x c++ module.cu -o libmodule.so
//
// This header gives the CUDA keywords, built-in variables and device functions a meaning on
// the CPU, and holds the scheduler that runs them (runtime/cuda/Emulator.cpp loads the library
// and calls dsc_emu_launch). It is compiled into exactly one translation unit per library, so
// it defines as well as declares. libdsc_runtime embeds its text (runtime/CMakeLists.txt), so
// a built model needs no source tree.
//
// How a launch runs: the blocks one after another, on the calling OS thread. Each GPU thread
// of a block is a fiber with its own stack. The scheduler resumes the fibers in thread order,
// each until it reaches __syncthreads(), a warp operation (__shfl_*_sync, __syncwarp,
// __ballot_sync, ...) or its end; only when no fiber can run does it release a barrier (every
// live thread of the block waits there) or a warp operation (every lane its masks name waits
// there). So a thread that reads shared memory without a barrier reads it before the threads
// after it wrote it, as on a GPU where the race goes the wrong way: races show, not hide.
// What cannot complete is an error message, never a hang: threads that exited or wait at
// another barrier while others wait at a __syncthreads, lanes missing from a warp operation,
// a lane reading a thread beyond the block, __trap().
//
// The globals here (threadIdx, the scheduler) are the library's, so the caller runs one launch
// of a library at a time (the runtime holds a mutex per module); libraries are independent.
//
// Fibers switch with a few lines of assembly on x86-64 and with ucontext elsewhere (or with
// -DDSC_CUDA_EMULATOR_UCONTEXT), about ten times slower.
//
// Not emulated: dynamic shared memory (`extern __shared__`), textures, cooperative groups,
// clock(), __launch_bounds__ limits, and the GPU's float rounding in intrinsics (__expf is
// expf, rsqrtf is 1 / sqrtf). A stack overflow in a thread (64 KiB each,
// DSC_CUDA_EMULATOR_STACK_KIB to change it) hits a guard page and kills the process.
#ifndef DSC_CUDA_EMULATOR_H
#define DSC_CUDA_EMULATOR_H

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if !defined(__x86_64__) || defined(DSC_CUDA_EMULATOR_UCONTEXT)
#define DSC_EMU_USE_UCONTEXT 1
#include <ucontext.h>
#endif

// ---- CUDA keywords ----

#define __global__
// Hidden, so that a library keeps its own copy of the __shared__ arrays of its inline helpers:
// exported, two libraries defining the same helper would share one (a GNU unique symbol). GCC
// warns that the attribute means nothing on `static __device__` functions; it does not matter.
#define __device__ __attribute__((visibility("hidden")))
#pragma GCC diagnostic ignored "-Wattributes"
#define __host__
#define __constant__
#define __managed__
#define __forceinline__ __attribute__((always_inline)) inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
// One object per block: blocks run one after another, and a library runs one launch at a time.
#define __shared__ static

#ifndef CUDART_INF_F
#define CUDART_INF_F INFINITY
#define CUDART_NAN_F NAN
#define CUDART_INF ((double)INFINITY)
#define CUDART_NAN ((double)NAN)
#define CUDART_PI_F 3.141592654f
#define CUDART_PI 3.1415926535897931e+0
#endif

struct uint3 {
  unsigned int x, y, z;
};
struct dim3 {
  unsigned int x = 1, y = 1, z = 1;
  dim3() = default;
  constexpr dim3(unsigned int vx, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
};
struct __attribute__((aligned(8))) float2 {
  float x, y;
};
struct __attribute__((aligned(16))) float4 {
  float x, y, z, w;
};
struct __attribute__((aligned(8))) int2 {
  int x, y;
};
struct __attribute__((aligned(16))) int4 {
  int x, y, z, w;
};
static inline float2 make_float2(float x, float y) {
  return float2{x, y};
}
static inline float4 make_float4(float x, float y, float z, float w) {
  return float4{x, y, z, w};
}
static inline int2 make_int2(int x, int y) {
  return int2{x, y};
}
static inline int4 make_int4(int x, int y, int z, int w) {
  return int4{x, y, z, w};
}

enum { warpSize = 32 };

// ---- the scheduler's state and the built-in variables ----
// Hidden: each library has its own, and the kernels (outside the pragma) stay exported.
#pragma GCC visibility push(hidden)

uint3 threadIdx, blockIdx;
dim3 blockDim, gridDim;

namespace dsc_emu {

enum class Wait : unsigned char { Ready, Barrier, Warp, Exited, Trapped };
enum class WarpOp : unsigned char { Shuffle, Sync, Ballot, All, Any };
enum class BarrierOp : unsigned char { Sync, Count, And, Or };

#ifdef DSC_EMU_USE_UCONTEXT
typedef ucontext_t Context;
#else
struct Context {
  void* sp;
};
#endif

struct Fiber {
  Context context;
  char* stack; // the usable stack, above its guard page
  unsigned tid;
  uint3 index;
  Wait wait;
  const char* where;  // the operation it waits in, for messages
  int line;           // ... and its line in the CUDA source
  int site;           // which barrier call it waits at
  long long barriers; // barriers passed
  // At a barrier.
  BarrierOp barrier_op;
  int predicate;
  int barrier_result;
  // At a warp operation.
  WarpOp warp_op;
  unsigned mask;
  int source; // the lane read by a shuffle; -1: its own value
  int value_size;
  uint64_t value;
  uint64_t result;
};

struct Scheduler {
  Context context;
  Fiber* fibers;
  Fiber* current;
  unsigned threads; // per block
  void (*entry)(void* const*, const int64_t*);
  void* const* buffers;
  const int64_t* symbols;
  char* error;
  size_t error_size;
  char trap_note[160]; // what a trapped fiber did, for the message
  // The fibers' stacks, kept from launch to launch and grown when a launch needs more.
  char* pool;
  size_t pool_bytes;
  size_t stack_bytes;
  unsigned pool_fibers;
};

Scheduler scheduler;

#ifndef DSC_EMU_USE_UCONTEXT
// switch_context(save, to): saves the callee-saved registers and the FP control words on the
// current stack, stores the stack pointer in *save and resumes the context whose stack pointer
// is `to`. A new context's stack holds the frame that resumes fiber_start, which calls the
// function in r13 on the fiber's stack and never returns.
extern "C" void dsc_emu_switch_context(void** save, void* to);
extern "C" void dsc_emu_fiber_start();
asm(R"(
  .pushsection .text
  .p2align 4
  .globl dsc_emu_switch_context
  .hidden dsc_emu_switch_context
  .type dsc_emu_switch_context, @function
dsc_emu_switch_context:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $16, %rsp
  fnstcw (%rsp)
  stmxcsr 8(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  fldcw (%rsp)
  ldmxcsr 8(%rsp)
  addq $16, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size dsc_emu_switch_context, .-dsc_emu_switch_context

  .p2align 4
  .globl dsc_emu_fiber_start
  .hidden dsc_emu_fiber_start
  .type dsc_emu_fiber_start, @function
dsc_emu_fiber_start:
  .cfi_startproc
  .cfi_undefined rip
  callq *%r13
  ud2
  .cfi_endproc
  .size dsc_emu_fiber_start, .-dsc_emu_fiber_start
  .popsection
)");
#endif

inline void switch_to(Context* save, Context* to) {
  __asm__ __volatile__("" ::: "memory");
#ifdef DSC_EMU_USE_UCONTEXT
  swapcontext(save, to);
#else
  dsc_emu_switch_context(&save->sp, to->sp);
#endif
  __asm__ __volatile__("" ::: "memory");
}

// Leaves the current fiber for the scheduler, which resumes it when its wait is over.
inline void suspend() {
  Fiber* self = scheduler.current;
  switch_to(&self->context, &scheduler.context);
}

extern "C" void dsc_emu_fiber_main() {
  scheduler.entry(scheduler.buffers, scheduler.symbols);
  scheduler.current->wait = Wait::Exited;
  suspend();
  abort(); // the scheduler never resumes an exited fiber
}

inline void start_fiber(Fiber* f) {
#ifdef DSC_EMU_USE_UCONTEXT
  getcontext(&f->context);
  f->context.uc_stack.ss_sp = f->stack;
  f->context.uc_stack.ss_size = scheduler.stack_bytes;
  f->context.uc_link = nullptr;
  makecontext(&f->context, dsc_emu_fiber_main, 0);
#else
  // The frame dsc_emu_switch_context pops: FP control words, r15..r12, rbx, rbp, then the
  // return address. After `ret` the stack pointer is 16-byte aligned, as a call needs.
  uint64_t* frame = reinterpret_cast<uint64_t*>(f->stack + scheduler.stack_bytes - 88);
  uint16_t fpu_control = 0x037f; // the x87 default
  uint32_t sse_control = 0x1f80; // MXCSR default: all exceptions masked, round to nearest
  memset(frame, 0, 88);
  memcpy(&frame[0], &fpu_control, sizeof fpu_control);
  memcpy(&frame[1], &sse_control, sizeof sse_control);
  frame[4] = reinterpret_cast<uint64_t>(&dsc_emu_fiber_main); // r13
  frame[8] = reinterpret_cast<uint64_t>(&dsc_emu_fiber_start);
  f->context.sp = frame;
#endif
}

__attribute__((format(printf, 1, 2))) inline void fail(const char* format, ...) {
  if (!scheduler.error || scheduler.error_size == 0) return;
  va_list args;
  va_start(args, format);
  vsnprintf(scheduler.error, scheduler.error_size, format, args);
  va_end(args);
}

// "(3, 0, 0)"
struct IndexText {
  char text[48];
  explicit IndexText(uint3 i) { snprintf(text, sizeof text, "(%u, %u, %u)", i.x, i.y, i.z); }
};

inline int barrier(BarrierOp op, int predicate, const char* where, int line, int site) {
  Fiber* self = scheduler.current;
  self->wait = Wait::Barrier;
  self->barrier_op = op;
  self->predicate = predicate != 0;
  self->where = where;
  self->line = line;
  self->site = site;
  suspend();
  return self->barrier_result;
}

inline uint64_t warp_operation(WarpOp op, unsigned mask, int source, uint64_t value, int value_size,
                               const char* where, int line) {
  Fiber* self = scheduler.current;
  self->wait = Wait::Warp;
  self->warp_op = op;
  self->mask = mask;
  self->source = source;
  self->value = value;
  self->value_size = value_size;
  self->where = where;
  self->line = line;
  suspend();
  return self->result;
}

// Ends the launch with "block ...: thread ... <note> (line N)".
__attribute__((format(printf, 2, 3))) inline void trap(int line, const char* format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(scheduler.trap_note, sizeof scheduler.trap_note, format, args);
  va_end(args);
  Fiber* self = scheduler.current;
  self->wait = Wait::Trapped;
  self->line = line;
  suspend();
  abort();
}

template <class T> inline uint64_t to_bits(T v) {
  static_assert(sizeof(T) <= 8, "warp shuffles move values of at most 8 bytes");
  uint64_t bits = 0;
  memcpy(&bits, &v, sizeof v);
  return bits;
}

template <class T> inline T from_bits(uint64_t bits) {
  T v;
  memcpy(&v, &bits, sizeof v);
  return v;
}

// The lane a shuffle reads, or -1 for its own value; `kind` as in CUDA's __shfl*_sync.
enum class ShuffleKind { Index, Up, Down, Xor };
inline int shuffle_source(ShuffleKind kind, int operand, int width, const char* where, int line) {
  if (width <= 0 || width > 32 || (width & (width - 1)) != 0)
    trap(line, "called %s with width %d, which is not a power of two up to 32", where, width);
  int lane = static_cast<int>(scheduler.current->tid % 32u);
  int base = lane & ~(width - 1);
  switch (kind) {
  case ShuffleKind::Index:
    return base + (operand & (width - 1));
  case ShuffleKind::Up:
    return operand < 0 || lane - base < operand ? -1 : lane - operand;
  case ShuffleKind::Down:
    return operand < 0 || lane - base + operand >= width ? -1 : lane + operand;
  case ShuffleKind::Xor: {
    int source = lane ^ operand;
    return source < 0 || source >= base + width ? -1 : source;
  }
  }
  return -1;
}

template <class T>
inline T shuffle(ShuffleKind kind, unsigned mask, T v, int operand, int width, const char* where,
                 int line) {
  int source = shuffle_source(kind, operand, width, where, line);
  return from_bits<T>(
      warp_operation(WarpOp::Shuffle, mask, source, to_bits(v), sizeof(T), where, line));
}

// ---- running a block ----

inline bool fail_waiting(const Fiber& waiter, const char* what_else) {
  fail("block %s: thread %s waits in %s (line %d), %s", IndexText(blockIdx).text,
       IndexText(waiter.index).text, waiter.where, waiter.line, what_else);
  return false;
}

// Completes the warp operations whose lanes all arrived. False with the error set when one
// cannot complete: a lane its masks name exited or waits elsewhere, or a misuse.
inline bool release_warps(bool* progressed) {
  Scheduler& s = scheduler;
  unsigned warps = (s.threads + 31) / 32;
  for (unsigned w = 0; w < warps; ++w) {
    Fiber* lanes = s.fibers + w * 32;
    unsigned count = s.threads - w * 32 < 32 ? s.threads - w * 32 : 32;
    unsigned existing = count == 32 ? 0xffffffffu : (1u << count) - 1;
    unsigned waiting = 0, needed = 0;
    for (unsigned l = 0; l < count; ++l) {
      if (lanes[l].wait != Wait::Warp) continue;
      waiting |= 1u << l;
      needed |= lanes[l].mask;
      if (!(lanes[l].mask & (1u << l))) {
        char why[96];
        snprintf(why, sizeof why, "but its mask 0x%08x leaves out its own lane %u", lanes[l].mask,
                 l);
        return fail_waiting(lanes[l], why);
      }
    }
    if (!waiting) continue;
    needed &= existing;
    if ((needed & waiting) != needed) {
      unsigned missing = __builtin_ctz(needed & ~waiting);
      const Fiber& other = lanes[missing];
      const Fiber* waiter = &lanes[__builtin_ctz(waiting)];
      for (unsigned l = 0; l < count; ++l)
        if ((waiting >> l & 1) && (lanes[l].mask >> missing & 1)) {
          waiter = &lanes[l];
          break;
        }
      char why[160];
      if (other.wait == Wait::Exited)
        snprintf(why, sizeof why, "but lane %u of its mask, thread %s, has exited", missing,
                 IndexText(other.index).text);
      else
        snprintf(why, sizeof why, "but lane %u of its mask, thread %s, waits in %s (line %d)",
                 missing, IndexText(other.index).text, other.where, other.line);
      return fail_waiting(*waiter, why);
    }
    for (unsigned l = 0; l < count; ++l) {
      if (!(waiting >> l & 1)) continue;
      Fiber& f = lanes[l];
      switch (f.warp_op) {
      case WarpOp::Shuffle: {
        if (f.source < 0 || static_cast<unsigned>(f.source) == l) {
          f.result = f.value;
          break;
        }
        unsigned source = static_cast<unsigned>(f.source);
        char why[160];
        if (source >= count) {
          snprintf(why, sizeof why,
                   "and reads lane %u, beyond the block's %u threads (lanes 0..%u of this warp)",
                   source, s.threads, count - 1);
          return fail_waiting(f, why);
        }
        if (!(f.mask >> source & 1)) {
          snprintf(why, sizeof why, "and reads lane %u, which its mask 0x%08x leaves out", source,
                   f.mask);
          return fail_waiting(f, why);
        }
        const Fiber& from = lanes[source];
        if (from.warp_op != WarpOp::Shuffle || from.value_size != f.value_size) {
          snprintf(why, sizeof why, "and reads lane %u, which waits in %s (line %d)", source,
                   from.where, from.line);
          return fail_waiting(f, why);
        }
        f.result = from.value;
        break;
      }
      case WarpOp::Sync:
        f.result = 0;
        break;
      case WarpOp::Ballot:
      case WarpOp::All:
      case WarpOp::Any: {
        unsigned ballot = 0;
        for (unsigned k = 0; k < count; ++k)
          if ((f.mask >> k & 1) && lanes[k].value) ballot |= 1u << k;
        unsigned named = f.mask & existing;
        f.result = f.warp_op == WarpOp::Ballot ? ballot
                   : f.warp_op == WarpOp::All  ? ballot == named
                                               : ballot != 0;
        break;
      }
      }
    }
    for (unsigned l = 0; l < count; ++l)
      if (waiting >> l & 1) lanes[l].wait = Wait::Ready;
    *progressed = true;
  }
  return true;
}

// Releases the barrier every live thread waits at. False with the error set when threads
// exited before it or wait at different barriers.
inline bool release_barrier(bool* done) {
  Scheduler& s = scheduler;
  const Fiber* first = nullptr;
  const Fiber* exited = nullptr;
  for (unsigned t = 0; t < s.threads; ++t) {
    const Fiber& f = s.fibers[t];
    if (f.wait == Wait::Exited) {
      if (!exited) exited = &f;
      continue;
    }
    if (!first) first = &f;
  }
  if (!first) {
    *done = true;
    return true;
  }
  char why[192];
  if (exited) {
    snprintf(why, sizeof why, "but thread %s has exited (barrier divergence)",
             IndexText(exited->index).text);
    return fail_waiting(*first, why);
  }
  int count = 0, all = 1, any = 0;
  for (unsigned t = 0; t < s.threads; ++t) {
    const Fiber& f = s.fibers[t];
    if (f.barriers != first->barriers)
      snprintf(why, sizeof why,
               "after %lld barriers, but thread %s waits in %s (line %d) after %lld "
               "(barrier divergence)",
               first->barriers, IndexText(f.index).text, f.where, f.line, f.barriers);
    else if (f.line != first->line || f.where != first->where)
      snprintf(why, sizeof why, "but thread %s waits in %s (line %d) (barrier divergence)",
               IndexText(f.index).text, f.where, f.line);
    else if (f.site != first->site)
      snprintf(why, sizeof why,
               "but thread %s waits in another %s on that line (barrier divergence)",
               IndexText(f.index).text, f.where);
    else
      continue;
    return fail_waiting(*first, why);
  }
  for (unsigned t = 0; t < s.threads; ++t) {
    const Fiber& f = s.fibers[t];
    count += f.predicate;
    all &= f.predicate;
    any |= f.predicate;
  }
  for (unsigned t = 0; t < s.threads; ++t) {
    Fiber& f = s.fibers[t];
    f.barrier_result = f.barrier_op == BarrierOp::Count ? count
                       : f.barrier_op == BarrierOp::And ? all
                       : f.barrier_op == BarrierOp::Or  ? any
                                                        : 0;
    ++f.barriers;
    f.wait = Wait::Ready;
  }
  return true;
}

inline bool run_block() {
  Scheduler& s = scheduler;
  for (unsigned t = 0; t < s.threads; ++t) {
    Fiber& f = s.fibers[t];
    f.wait = Wait::Ready;
    f.barriers = 0;
    start_fiber(&f);
  }
  for (;;) {
    // Each fiber runs until it waits or ends, in thread order.
    for (unsigned t = 0; t < s.threads; ++t) {
      Fiber& f = s.fibers[t];
      if (f.wait != Wait::Ready) continue;
      s.current = &f;
      threadIdx = f.index;
      switch_to(&s.context, &f.context);
      if (f.wait == Wait::Trapped) {
        fail("block %s: thread %s %s (line %d)", IndexText(blockIdx).text, IndexText(f.index).text,
             s.trap_note, f.line);
        return false;
      }
    }
    s.current = nullptr;
    bool progressed = false;
    if (!release_warps(&progressed)) return false;
    if (progressed) continue;
    bool done = false;
    if (!release_barrier(&done)) return false;
    if (done) return true;
  }
}

inline size_t page_size() {
  long page = sysconf(_SC_PAGESIZE);
  return page > 0 ? static_cast<size_t>(page) : 4096;
}

// Stacks for `threads` fibers, each with a guard page below it.
inline bool reserve_stacks(unsigned threads) {
  Scheduler& s = scheduler;
  size_t page = page_size();
  size_t stack = 64 * 1024;
  if (const char* kib = getenv("DSC_CUDA_EMULATOR_STACK_KIB")) {
    long value = atol(kib);
    if (value >= 16 && value <= 1024 * 1024) stack = static_cast<size_t>(value) * 1024;
  }
  stack = (stack + page - 1) / page * page;
  if (s.pool && s.pool_fibers >= threads && s.stack_bytes == stack) return true;
  if (s.pool) munmap(s.pool, s.pool_bytes);
  free(s.fibers);
  s.pool = nullptr;
  s.fibers = nullptr;
  s.pool_fibers = 0;
  size_t bytes = (stack + page) * threads;
  void* pool = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  Fiber* fibers = static_cast<Fiber*>(calloc(threads, sizeof(Fiber)));
  if (pool == MAP_FAILED || !fibers) {
    if (pool != MAP_FAILED) munmap(pool, bytes);
    free(fibers);
    fail("cannot allocate the stacks of %u emulated threads (%zu KiB each)", threads, stack / 1024);
    return false;
  }
  s.pool = static_cast<char*>(pool);
  s.pool_bytes = bytes;
  s.stack_bytes = stack;
  s.pool_fibers = threads;
  s.fibers = fibers;
  for (unsigned t = 0; t < threads; ++t) {
    char* guard = s.pool + t * (stack + page);
    mprotect(guard, page, PROT_NONE);
    fibers[t].stack = guard + page;
  }
  return true;
}

} // namespace dsc_emu

#pragma GCC visibility pop

// Runs `entry` (a dsc_emu_<kernel> wrapper) on a grid of blocks; 0, or 1 with a message in
// `error`. The caller runs one launch of this library at a time.
extern "C" __attribute__((visibility("default"))) int
dsc_emu_launch(void (*entry)(void* const*, const int64_t*), const int64_t grid[3],
               const int64_t block[3], void* const* buffers, const int64_t* symbols, char* error,
               size_t error_size) {
  using namespace dsc_emu;
  Scheduler& s = scheduler;
  s.error = error;
  s.error_size = error_size;
  if (error && error_size) error[0] = 0;
  if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0) return 0;
  static const int64_t kGridLimit[3] = {2147483647, 65535, 65535};
  static const int64_t kBlockLimit[3] = {1024, 1024, 64};
  for (int d = 0; d < 3; ++d) {
    const char axis = "xyz"[d];
    if (grid[d] < 0 || grid[d] > kGridLimit[d]) {
      fail("the grid's %c dimension is %lld; CUDA allows 1 to %lld", axis, (long long)grid[d],
           (long long)kGridLimit[d]);
      return 1;
    }
    if (block[d] <= 0 || block[d] > kBlockLimit[d]) {
      fail("the block's %c dimension is %lld; CUDA allows 1 to %lld", axis, (long long)block[d],
           (long long)kBlockLimit[d]);
      return 1;
    }
  }
  int64_t threads = block[0] * block[1] * block[2];
  if (threads > 1024) {
    fail("a block of %lld threads; CUDA allows at most 1024", (long long)threads);
    return 1;
  }
  if (!reserve_stacks(static_cast<unsigned>(threads))) return 1;
  s.threads = static_cast<unsigned>(threads);
  s.entry = entry;
  s.buffers = buffers;
  s.symbols = symbols;
  blockDim = dim3(static_cast<unsigned>(block[0]), static_cast<unsigned>(block[1]),
                  static_cast<unsigned>(block[2]));
  gridDim = dim3(static_cast<unsigned>(grid[0]), static_cast<unsigned>(grid[1]),
                 static_cast<unsigned>(grid[2]));
  for (unsigned t = 0; t < s.threads; ++t) {
    Fiber& f = s.fibers[t];
    f.tid = t;
    f.index = uint3{t % blockDim.x, t / blockDim.x % blockDim.y, t / (blockDim.x * blockDim.y)};
  }
  for (unsigned z = 0; z < gridDim.z; ++z)
    for (unsigned y = 0; y < gridDim.y; ++y)
      for (unsigned x = 0; x < gridDim.x; ++x) {
        blockIdx = uint3{x, y, z};
        if (!run_block()) return 1;
      }
  return 0;
}

// ---- device functions ----

// Macros, so that each call site is told apart (__COUNTER__): threads waiting at different
// barriers are barrier divergence even when the barriers share a line.
#define __syncthreads()                                                                            \
  ((void)::dsc_emu::barrier(::dsc_emu::BarrierOp::Sync, 0, "__syncthreads", __LINE__, __COUNTER__))
#define __syncthreads_count(predicate)                                                             \
  ::dsc_emu::barrier(::dsc_emu::BarrierOp::Count, (predicate), "__syncthreads_count", __LINE__,    \
                     __COUNTER__)
#define __syncthreads_and(predicate)                                                               \
  ::dsc_emu::barrier(::dsc_emu::BarrierOp::And, (predicate), "__syncthreads_and", __LINE__,        \
                     __COUNTER__)
#define __syncthreads_or(predicate)                                                                \
  ::dsc_emu::barrier(::dsc_emu::BarrierOp::Or, (predicate), "__syncthreads_or", __LINE__,          \
                     __COUNTER__)
static inline void __syncwarp(unsigned mask = 0xffffffffu, int line = __builtin_LINE()) {
  dsc_emu::warp_operation(dsc_emu::WarpOp::Sync, mask, -1, 0, 0, "__syncwarp", line);
}
static inline unsigned __ballot_sync(unsigned mask, int predicate, int line = __builtin_LINE()) {
  return static_cast<unsigned>(dsc_emu::warp_operation(dsc_emu::WarpOp::Ballot, mask, -1,
                                                       predicate != 0, 4, "__ballot_sync", line));
}
static inline int __all_sync(unsigned mask, int predicate, int line = __builtin_LINE()) {
  return static_cast<int>(dsc_emu::warp_operation(dsc_emu::WarpOp::All, mask, -1, predicate != 0, 4,
                                                  "__all_sync", line));
}
static inline int __any_sync(unsigned mask, int predicate, int line = __builtin_LINE()) {
  return static_cast<int>(dsc_emu::warp_operation(dsc_emu::WarpOp::Any, mask, -1, predicate != 0, 4,
                                                  "__any_sync", line));
}
template <class T>
static inline T __shfl_sync(unsigned mask, T v, int src_lane, int width = warpSize,
                            int line = __builtin_LINE()) {
  return dsc_emu::shuffle(dsc_emu::ShuffleKind::Index, mask, v, src_lane, width, "__shfl_sync",
                          line);
}
template <class T>
static inline T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = warpSize,
                               int line = __builtin_LINE()) {
  return dsc_emu::shuffle(dsc_emu::ShuffleKind::Up, mask, v, static_cast<int>(delta), width,
                          "__shfl_up_sync", line);
}
template <class T>
static inline T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = warpSize,
                                 int line = __builtin_LINE()) {
  return dsc_emu::shuffle(dsc_emu::ShuffleKind::Down, mask, v, static_cast<int>(delta), width,
                          "__shfl_down_sync", line);
}
template <class T>
static inline T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = warpSize,
                                int line = __builtin_LINE()) {
  return dsc_emu::shuffle(dsc_emu::ShuffleKind::Xor, mask, v, lane_mask, width, "__shfl_xor_sync",
                          line);
}
static inline void __trap(int line = __builtin_LINE()) {
  dsc_emu::trap(line, "called __trap()");
}
static inline void __threadfence() {
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
static inline void __threadfence_block() {
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
template <class T> static inline T __ldg(const T* p) {
  return *p;
}

// Atomics: the fibers of a launch share one OS thread, but launches of different libraries
// may touch the same memory from different OS threads, as different streams do on a GPU.
// Replaces *address by update(*address) atomically; returns the old value.
template <class T, class F> static inline T dsc_emu_atomic_update(T* address, F update) {
  T old;
  __atomic_load(address, &old, __ATOMIC_RELAXED);
  for (;;) {
    T value = update(old);
    if (__atomic_compare_exchange(address, &old, &value, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
      return old;
  }
}
static inline float atomicAdd(float* address, float v) {
  return dsc_emu_atomic_update(address, [v](float old) { return old + v; });
}
static inline double atomicAdd(double* address, double v) {
  return dsc_emu_atomic_update(address, [v](double old) { return old + v; });
}
static inline int atomicAdd(int* a, int v) {
  return __atomic_fetch_add(a, v, __ATOMIC_SEQ_CST);
}
static inline unsigned atomicAdd(unsigned* a, unsigned v) {
  return __atomic_fetch_add(a, v, __ATOMIC_SEQ_CST);
}
static inline unsigned long long atomicAdd(unsigned long long* a, unsigned long long v) {
  return __atomic_fetch_add(a, v, __ATOMIC_SEQ_CST);
}
static inline int atomicSub(int* a, int v) {
  return __atomic_fetch_sub(a, v, __ATOMIC_SEQ_CST);
}
static inline int atomicExch(int* a, int v) {
  return __atomic_exchange_n(a, v, __ATOMIC_SEQ_CST);
}
static inline float atomicExch(float* a, float v) {
  float old;
  __atomic_exchange(a, &v, &old, __ATOMIC_SEQ_CST);
  return old;
}
static inline int atomicCAS(int* a, int compare, int v) {
  __atomic_compare_exchange_n(a, &compare, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return compare;
}
static inline unsigned long long atomicCAS(unsigned long long* a, unsigned long long compare,
                                           unsigned long long v) {
  __atomic_compare_exchange_n(a, &compare, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return compare;
}
static inline int atomicMax(int* a, int v) {
  return dsc_emu_atomic_update(a, [v](int old) { return old < v ? v : old; });
}
static inline int atomicMin(int* a, int v) {
  return dsc_emu_atomic_update(a, [v](int old) { return v < old ? v : old; });
}

// Integer and float min/max, CUDA's overloads.
#define DSC_EMU_MIN_MAX(T)                                                                         \
  static inline T min(T a, T b) {                                                                  \
    return b < a ? b : a;                                                                          \
  }                                                                                                \
  static inline T max(T a, T b) {                                                                  \
    return a < b ? b : a;                                                                          \
  }
DSC_EMU_MIN_MAX(int)
DSC_EMU_MIN_MAX(unsigned int)
DSC_EMU_MIN_MAX(long)
DSC_EMU_MIN_MAX(unsigned long)
DSC_EMU_MIN_MAX(long long)
DSC_EMU_MIN_MAX(unsigned long long)
#undef DSC_EMU_MIN_MAX
static inline float min(float a, float b) {
  return fminf(a, b);
}
static inline float max(float a, float b) {
  return fmaxf(a, b);
}
static inline double min(double a, double b) {
  return fmin(a, b);
}
static inline double max(double a, double b) {
  return fmax(a, b);
}

// Bit casts and bit counts.
static inline float __int_as_float(int v) {
  return dsc_emu::from_bits<float>(dsc_emu::to_bits(v));
}
static inline int __float_as_int(float v) {
  return dsc_emu::from_bits<int>(dsc_emu::to_bits(v));
}
static inline float __uint_as_float(unsigned v) {
  return dsc_emu::from_bits<float>(dsc_emu::to_bits(v));
}
static inline unsigned __float_as_uint(float v) {
  return dsc_emu::from_bits<unsigned>(dsc_emu::to_bits(v));
}
static inline double __longlong_as_double(long long v) {
  return dsc_emu::from_bits<double>(dsc_emu::to_bits(v));
}
static inline long long __double_as_longlong(double v) {
  return dsc_emu::from_bits<long long>(dsc_emu::to_bits(v));
}
static inline int __popc(unsigned v) {
  return __builtin_popcount(v);
}
static inline int __popcll(unsigned long long v) {
  return __builtin_popcountll(v);
}
static inline int __clz(int v) {
  return v == 0 ? 32 : __builtin_clz(static_cast<unsigned>(v));
}
static inline int __clzll(long long v) {
  return v == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(v));
}
static inline int __ffs(int v) {
  return __builtin_ffs(v);
}
static inline int __ffsll(long long v) {
  return __builtin_ffsll(v);
}

// CUDA's math that the C library lacks, or may declare under the same name (glibc declares
// some __-prefixed names, and newer ones C23's rsqrt), hence macros over dsc_emu functions.
namespace dsc_emu {
inline float rsqrt_f(float x) {
  return 1.0f / sqrtf(x);
}
inline double rsqrt_d(double x) {
  return 1.0 / sqrt(x);
}
inline float saturate(float x) {
  return x < 0.0f ? 0.0f : x > 1.0f ? 1.0f : x;
}
} // namespace dsc_emu
#define rsqrtf(x) ::dsc_emu::rsqrt_f(x)
#define rsqrt(x) ::dsc_emu::rsqrt_d(x)
#define __saturatef(x) ::dsc_emu::saturate(x)
#define __expf(x) expf(x)
#define __exp10f(x) exp10f(x)
#define __logf(x) logf(x)
#define __log2f(x) log2f(x)
#define __log10f(x) log10f(x)
#define __sinf(x) sinf(x)
#define __cosf(x) cosf(x)
#define __tanf(x) tanf(x)
#define __powf(x, y) powf(x, y)
#define __fdividef(x, y) ((x) / (y))
#define __frcp_rn(x) (1.0f / (x))
#define __fsqrt_rn(x) sqrtf(x)
#define __fmaf_rn(x, y, z) fmaf(x, y, z)
#define __fadd_rn(x, y) ((x) + (y))
#define __fmul_rn(x, y) ((x) * (y))

#endif // DSC_CUDA_EMULATOR_H
