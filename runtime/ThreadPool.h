#pragma once
// The runtime's thread pool: persistent workers that run the parallel loops of compiled code
// (dsc_rt_parallel_for in HostABI.h) and the batch loop of dsc_rt_matmul_f32.
//
// A pool of N threads has N - 1 workers; the thread that calls parallel_for is the N-th and
// runs chunks too. One loop runs at a time: a loop started while another is running (from
// another application thread) runs inline on its own thread rather than waiting, and a loop
// started from inside a loop body (on any pool thread) runs inline as well. Workers spin
// briefly after a loop before they sleep, so that back-to-back loops (one per kernel) do not
// pay a wake-up each.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

#include "runtime/HostABI.h"

namespace dsc::runtime {

class ThreadPool {
public:
  // num_threads counts the calling thread; it is clamped to [1, kMaxThreads], and lowered
  // when the system refuses to create more threads.
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  static constexpr int kMaxThreads = 1024;

  int num_threads() const { return num_threads_.load(std::memory_order_relaxed); }
  // Stops the workers and starts num_threads - 1 new ones, after any running loop ends. Does
  // nothing when called from inside a loop body.
  void set_num_threads(int num_threads);

  // Runs body(context, b, e) over [0, n) split into chunks of at least max(grain, 1)
  // iterations, about 4 per thread; returns when all are done. Inline when the range fits one
  // chunk, the pool has one thread, or another loop is running.
  void parallel_for(dsc_parallel_body body, void* context, int64_t n, int64_t grain);

  // For any callable f(int64_t begin, int64_t end). An exception f throws on any thread (a
  // GEMM scratch that cannot be allocated) is rethrown here once the loop is over, the first
  // one thrown; the chunks not started by then are skipped.
  template <typename F> void parallel_for(int64_t n, int64_t grain, F&& f) {
    struct Loop {
      std::remove_reference_t<F>* f = nullptr;
      std::atomic<bool> failed{false};
      std::exception_ptr error;
    } loop;
    loop.f = &f;
    parallel_for(
        [](void* c, int64_t b, int64_t e) {
          auto* l = static_cast<Loop*>(c);
          if (l->failed.load(std::memory_order_relaxed)) return;
          try {
            (*l->f)(b, e);
          } catch (...) {
            if (!l->failed.exchange(true)) l->error = std::current_exception();
          }
        },
        &loop, n, grain);
    if (loop.error) std::rethrow_exception(loop.error);
  }

  // Whether the current thread is running a chunk of a loop (a worker, or a caller inside
  // parallel_for).
  static bool inside_parallel_region();

private:
  void start_workers(int num_threads);
  void stop_workers();
  void worker_main(uint64_t seen); // seen: the loop generation when it was started
  void run_chunks();

  std::atomic<int> num_threads_{1};
  std::mutex loop_mutex_; // held by the thread whose loop the pool is running
  std::vector<std::thread> workers_;

  // The current loop. Written under mutex_ while no worker is in it (busy_ == 0).
  std::mutex mutex_;
  std::condition_variable wake_; // workers: a new loop, or stop
  std::condition_variable idle_; // the caller: busy_ went to 0
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> busy_{0}; // workers inside the current loop
  bool stop_ = false;
  dsc_parallel_body body_ = nullptr;
  void* context_ = nullptr;
  int64_t n_ = 0, chunk_ = 1, num_chunks_ = 0;
  std::atomic<int64_t> next_chunk_{0};
};

// The pool compiled code and the C API use. Created on first use with DSC_NUM_THREADS threads
// (a positive integer), else std::thread::hardware_concurrency(); never destroyed, so that it
// outlives every static object that might still run a loop at exit. Its size also sets
// OpenBLAS's thread count (see Matmul.h).
ThreadPool& global_thread_pool();
// Resizes the global pool (and OpenBLAS); n < 1 means the default above.
void set_global_num_threads(int n);

} // namespace dsc::runtime
