#include "runtime/ThreadPool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "runtime/dsc_runtime.h"

namespace dsc::runtime {
namespace {

// Runs a loop and checks that every index in [0, n) is visited exactly once, by chunks of
// at least `grain` iterations (the last one excepted).
void check_cover(ThreadPool& pool, int64_t n, int64_t grain) {
  std::vector<std::atomic<int>> visits(static_cast<size_t>(std::max<int64_t>(n, 0)));
  std::mutex mutex;
  std::vector<std::pair<int64_t, int64_t>> chunks;
  pool.parallel_for(n, grain, [&](int64_t b, int64_t e) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      chunks.emplace_back(b, e);
    }
    for (int64_t i = b; i < e; ++i)
      visits[static_cast<size_t>(i)].fetch_add(1);
  });
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(visits[static_cast<size_t>(i)].load(), 1) << "index " << i << " of " << n;
  if (n <= 0) {
    EXPECT_TRUE(chunks.empty());
    return;
  }
  for (auto [b, e] : chunks) {
    EXPECT_LT(b, e);
    if (e != n) {
      EXPECT_GE(e - b, std::max<int64_t>(grain, 1)) << "n " << n << " grain " << grain;
    }
  }
}

TEST(ThreadPool, CoversEveryIndexOnceAtEverySizeAndGrain) {
  ThreadPool pool(4);
  EXPECT_EQ(pool.num_threads(), 4);
  for (int64_t n : {0, 1, 2, 3, 7, 16, 100, 1001, 65537})
    for (int64_t grain : {-5, 0, 1, 3, 64, 1000, 1 << 30})
      check_cover(pool, n, grain);
}

TEST(ThreadPool, ZeroAndNegativeRangesRunNothing) {
  ThreadPool pool(3);
  int calls = 0;
  pool.parallel_for(0, 1, [&](int64_t, int64_t) { ++calls; });
  pool.parallel_for(-7, 1, [&](int64_t, int64_t) { ++calls; });
  EXPECT_EQ(calls, 0);
}

TEST(ThreadPool, OneIterationRunsInlineOnTheCaller) {
  ThreadPool pool(4);
  std::thread::id who;
  int64_t begin = -1, end = -1;
  pool.parallel_for(1, 1, [&](int64_t b, int64_t e) {
    who = std::this_thread::get_id();
    begin = b;
    end = e;
  });
  EXPECT_EQ(who, std::this_thread::get_id());
  EXPECT_EQ(begin, 0);
  EXPECT_EQ(end, 1);
}

TEST(ThreadPool, RangeWithinOneGrainRunsInline) {
  ThreadPool pool(4);
  int calls = 0;
  pool.parallel_for(100, 100, [&](int64_t b, int64_t e) {
    ++calls;
    EXPECT_EQ(b, 0);
    EXPECT_EQ(e, 100);
  });
  EXPECT_EQ(calls, 1);
}

TEST(ThreadPool, SingleThreadPoolRunsEverythingOnTheCaller) {
  ThreadPool pool(1);
  std::set<std::thread::id> threads;
  pool.parallel_for(1000, 1, [&](int64_t, int64_t) { threads.insert(std::this_thread::get_id()); });
  EXPECT_EQ(threads, std::set<std::thread::id>{std::this_thread::get_id()});
}

TEST(ThreadPool, WorkersTakePart) {
  ThreadPool pool(4);
  std::mutex mutex;
  std::set<std::thread::id> threads;
  pool.parallel_for(64, 1, [&](int64_t, int64_t) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      threads.insert(std::this_thread::get_id());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  });
  EXPECT_GT(threads.size(), 1u);
}

TEST(ThreadPool, SumsOverRanges) {
  ThreadPool pool(4);
  for (int64_t n : {1, 10, 1000, 123457}) {
    std::atomic<int64_t> sum{0};
    pool.parallel_for(n, 7, [&](int64_t b, int64_t e) {
      int64_t local = 0;
      for (int64_t i = b; i < e; ++i)
        local += i;
      sum.fetch_add(local);
    });
    EXPECT_EQ(sum.load(), n * (n - 1) / 2);
  }
}

TEST(ThreadPool, NestedLoopsRunInline) {
  ThreadPool pool(4);
  std::atomic<int64_t> sum{0};
  std::atomic<bool> nested_inline{true};
  pool.parallel_for(16, 1, [&](int64_t b, int64_t e) {
    EXPECT_TRUE(ThreadPool::inside_parallel_region());
    for (int64_t i = b; i < e; ++i) {
      std::thread::id outer = std::this_thread::get_id();
      pool.parallel_for(100, 1, [&](int64_t ib, int64_t ie) {
        if (std::this_thread::get_id() != outer || ib != 0 || ie != 100) nested_inline = false;
        for (int64_t j = ib; j < ie; ++j)
          sum.fetch_add(j);
      });
    }
  });
  EXPECT_TRUE(nested_inline.load());
  EXPECT_EQ(sum.load(), 16 * (99 * 100 / 2));
  EXPECT_FALSE(ThreadPool::inside_parallel_region());
}

TEST(ThreadPool, ManySmallLoopsInARow) {
  ThreadPool pool(3);
  int64_t total = 0;
  for (int call = 0; call < 5000; ++call) {
    std::atomic<int64_t> sum{0};
    int64_t n = call % 37;
    pool.parallel_for(n, 1, [&](int64_t b, int64_t e) { sum.fetch_add(e - b); });
    ASSERT_EQ(sum.load(), n) << "call " << call;
    total += sum.load();
  }
  EXPECT_GT(total, 0);
}

TEST(ThreadPool, ConcurrentCallersAllFinish) {
  ThreadPool pool(4);
  std::vector<std::thread> callers;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&, t] {
      for (int call = 0; call < 300; ++call) {
        std::atomic<int64_t> sum{0};
        int64_t n = 50 + t + call % 11;
        pool.parallel_for(n, 2, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i)
            sum.fetch_add(i);
        });
        if (sum.load() != n * (n - 1) / 2) ++wrong;
      }
    });
  }
  for (std::thread& c : callers)
    c.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(ThreadPool, Resize) {
  ThreadPool pool(2);
  for (int n : {1, 3, 8, 2, 0, -4, 16}) {
    pool.set_num_threads(n);
    EXPECT_EQ(pool.num_threads(), std::clamp(n, 1, ThreadPool::kMaxThreads));
    check_cover(pool, 777, 3);
  }
}

TEST(ThreadPool, ResizeFromInsideALoopIsIgnored) {
  ThreadPool pool(3);
  pool.parallel_for(8, 1, [&](int64_t, int64_t) { pool.set_num_threads(6); });
  EXPECT_EQ(pool.num_threads(), 3);
}

TEST(ThreadPool, CApiLoopAndNestedCApiLoop) {
  struct Context {
    std::atomic<int64_t> sum{0};
  } context;
  auto inner = [](void* c, int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      static_cast<Context*>(c)->sum.fetch_add(i);
  };
  auto outer = [](void* c, int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      dsc_rt_parallel_for(
          +[](void* cc, int64_t ib, int64_t ie) {
            for (int64_t j = ib; j < ie; ++j)
              static_cast<Context*>(cc)->sum.fetch_add(j);
          },
          c, 10, 1);
  };
  dsc_rt_parallel_for(inner, &context, 1000, 10);
  EXPECT_EQ(context.sum.load(), 999 * 1000 / 2);
  context.sum = 0;
  dsc_rt_parallel_for(outer, &context, 20, 1);
  EXPECT_EQ(context.sum.load(), 20 * 45);
  dsc_rt_parallel_for(nullptr, &context, 20, 1); // ignored
}

TEST(ThreadPool, GlobalPoolSize) {
  int before = dsc_get_num_threads();
  EXPECT_GE(before, 1);
  dsc_set_num_threads(3);
  EXPECT_EQ(dsc_get_num_threads(), 3);
  dsc_set_num_threads(1);
  EXPECT_EQ(dsc_get_num_threads(), 1);
  dsc_set_num_threads(0); // the default
  EXPECT_GE(dsc_get_num_threads(), 1);
  dsc_set_num_threads(before);
}

// The environment is read when the global pool is created, so each case runs in a fresh
// process (the "threadsafe" death-test style re-runs the binary).
TEST(ThreadPoolDeathTest, NumThreadsFromTheEnvironment) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("DSC_NUM_THREADS", "3", 1);
        std::exit(dsc_get_num_threads());
      },
      ::testing::ExitedWithCode(3), "");
  EXPECT_EXIT(
      {
        setenv("DSC_NUM_THREADS", "5x", 1); // not a number: the default
        std::exit(dsc_get_num_threads() >= 1 ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

} // namespace
} // namespace dsc::runtime
