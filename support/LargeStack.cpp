#include "support/LargeStack.h"

#include <pthread.h>

#include <exception>

namespace dsc {

namespace {

struct Task {
  const std::function<void()>* fn;
  std::exception_ptr error;
};

void* run_task(void* arg) {
  auto* task = static_cast<Task*>(arg);
  try {
    (*task->fn)();
  } catch (...) {
    task->error = std::current_exception();
  }
  return nullptr;
}

} // namespace

void run_on_large_stack(const std::function<void()>& fn, size_t bytes) {
  Task task{&fn, nullptr};
  pthread_attr_t attr;
  pthread_t thread;
  bool started = pthread_attr_init(&attr) == 0;
  if (started) {
    started = pthread_attr_setstacksize(&attr, bytes) == 0 &&
              pthread_create(&thread, &attr, run_task, &task) == 0;
    pthread_attr_destroy(&attr);
  }
  if (!started) {
    fn();
    return;
  }
  pthread_join(thread, nullptr);
  if (task.error) std::rethrow_exception(task.error);
}

} // namespace dsc
