#include "runtime/ThreadPool.h"

#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <system_error>

#include "runtime/FaultInjection.h"
#include "runtime/Matmul.h"

namespace dsc::runtime {

namespace {

// True while this thread runs chunks of a loop (always, on a worker): nested loops run inline.
thread_local bool t_in_region = false;

class RegionGuard {
public:
  RegionGuard() : saved_(t_in_region) { t_in_region = true; }
  ~RegionGuard() { t_in_region = saved_; }
  RegionGuard(const RegionGuard&) = delete;
  RegionGuard& operator=(const RegionGuard&) = delete;

private:
  bool saved_;
};

// How long a worker polls for the next loop (and the caller for the last worker) before it
// blocks: a few tens of microseconds, about the gap between two kernels of one call.
constexpr int kSpinIterations = 2000;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

int clamp_threads(int n) {
  return std::clamp(n, 1, ThreadPool::kMaxThreads);
}

// DSC_NUM_THREADS when it is a positive integer, else the CPUs this process may run on.
int default_num_threads() {
  if (const char* env = std::getenv("DSC_NUM_THREADS")) {
    char* end = nullptr;
    long v = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && v >= 1)
      return clamp_threads(static_cast<int>(std::min<long>(v, ThreadPool::kMaxThreads)));
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
    return clamp_threads(CPU_COUNT(&set));
  return clamp_threads(static_cast<int>(std::thread::hardware_concurrency()));
}

} // namespace

ThreadPool::ThreadPool(int num_threads) {
  start_workers(clamp_threads(num_threads));
}

ThreadPool::~ThreadPool() {
  stop_workers();
}

bool ThreadPool::inside_parallel_region() {
  return t_in_region;
}

void ThreadPool::start_workers(int num_threads) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = false;
  }
  workers_.reserve(static_cast<size_t>(num_threads - 1));
  // The generation now, read here rather than by the new thread: a loop may start before it
  // first runs, and it must take part in that one.
  const uint64_t generation = generation_.load(std::memory_order_relaxed);
  for (int i = 1; i < num_threads; ++i) {
    try {
      if (faults::fail_now(faults::Site::ThreadStart))
        throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again));
      workers_.emplace_back([this, generation] { worker_main(generation); });
    } catch (const std::system_error&) {
      break; // the system will not give more threads (ulimit, pids.max): use those we have
    }
  }
  num_threads_.store(static_cast<int>(workers_.size()) + 1, std::memory_order_relaxed);
}

void ThreadPool::stop_workers() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    generation_.fetch_add(1, std::memory_order_relaxed); // ends the spinners' wait at once
  }
  wake_.notify_all();
  for (std::thread& t : workers_)
    t.join();
  workers_.clear();
}

void ThreadPool::set_num_threads(int num_threads) {
  if (t_in_region) return;
  num_threads = clamp_threads(num_threads);
  std::lock_guard<std::mutex> loop(loop_mutex_);
  if (num_threads == this->num_threads()) return;
  stop_workers();
  start_workers(num_threads);
}

void ThreadPool::worker_main(uint64_t seen) {
  t_in_region = true;
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    lock.unlock();
    for (int i = 0; i < kSpinIterations && generation_.load(std::memory_order_relaxed) == seen; ++i)
      cpu_relax();
    lock.lock();
    wake_.wait(lock, [&] { return stop_ || generation_.load(std::memory_order_relaxed) != seen; });
    if (stop_) return;
    seen = generation_.load(std::memory_order_relaxed);
    // Joining under the mutex: the caller does not rewrite the loop while busy_ > 0.
    busy_.fetch_add(1, std::memory_order_relaxed);
    lock.unlock();
    run_chunks();
    lock.lock();
    if (busy_.fetch_sub(1, std::memory_order_acq_rel) == 1) idle_.notify_all();
  }
}

void ThreadPool::run_chunks() {
  for (;;) {
    int64_t c = next_chunk_.fetch_add(1, std::memory_order_relaxed);
    if (c >= num_chunks_) return;
    int64_t begin = c * chunk_;
    body_(context_, begin, begin + std::min(chunk_, n_ - begin));
  }
}

void ThreadPool::parallel_for(dsc_parallel_body body, void* context, int64_t n, int64_t grain) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  if (n <= grain || t_in_region || num_threads() == 1) {
    body(context, 0, n);
    return;
  }
  std::unique_lock<std::mutex> loop(loop_mutex_, std::try_to_lock);
  if (!loop.owns_lock()) { // another application thread's loop is running
    body(context, 0, n);
    return;
  }
  int64_t threads = num_threads();
  int64_t target = threads * 4; // chunks, so that uneven chunks still balance
  int64_t chunk = std::max(grain, n / target + (n % target != 0));
  int64_t num_chunks = (n - 1) / chunk + 1;
  if (num_chunks == 1 || threads == 1) {
    loop.unlock();
    body(context, 0, n);
    return;
  }
  {
    std::unique_lock<std::mutex> lock(mutex_);
    // A worker that woke late for the previous loop may still be leaving it.
    idle_.wait(lock, [&] { return busy_.load(std::memory_order_relaxed) == 0; });
    body_ = body;
    context_ = context;
    n_ = n;
    chunk_ = chunk;
    num_chunks_ = num_chunks;
    next_chunk_.store(0, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_relaxed);
  }
  wake_.notify_all();
  {
    RegionGuard guard;
    run_chunks();
  }
  // Every chunk is claimed; wait for the workers still running one.
  for (int i = 0; i < kSpinIterations && busy_.load(std::memory_order_acquire) != 0; ++i)
    cpu_relax();
  if (busy_.load(std::memory_order_acquire) != 0) {
    std::unique_lock<std::mutex> lock(mutex_);
    idle_.wait(lock, [&] { return busy_.load(std::memory_order_acquire) == 0; });
  }
}

ThreadPool& global_thread_pool() {
  static ThreadPool* pool = [] {
    int n = default_num_threads();
    set_blas_num_threads(n);
    return new ThreadPool(n);
  }();
  return *pool;
}

void set_global_num_threads(int n) {
  ThreadPool& pool = global_thread_pool();
  pool.set_num_threads(n < 1 ? default_num_threads() : n);
  set_blas_num_threads(pool.num_threads());
}

} // namespace dsc::runtime

extern "C" void dsc_rt_parallel_for(dsc_parallel_body body, void* context, int64_t n,
                                    int64_t grain) {
  if (!body || n <= 0) return;
  if (n <= grain || dsc::runtime::ThreadPool::inside_parallel_region()) {
    body(context, 0, n);
    return;
  }
  dsc::runtime::global_thread_pool().parallel_for(body, context, n, grain);
}
