#include "backends/cpu/LlvmFatalErrors.h"

#include <llvm/Support/ErrorHandling.h>

#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace dsc::cpu {

namespace {

struct Guard {
  std::jmp_buf back;
  std::string reason;
};

// The innermost guard of this thread; null outside every guard.
thread_local Guard* t_guard = nullptr;

void on_fatal_error(void* /*data*/, const char* reason, bool /*gen_crash_diag*/) {
  if (Guard* g = t_guard) {
    g->reason = reason ? reason : "(no reason given)";
    std::longjmp(g->back, 1);
  }
  std::fprintf(stderr, "dsc: error: LLVM failed: %s\n", reason ? reason : "(no reason given)");
  std::fflush(stderr);
  std::_Exit(1); // LLVM would abort after a handler that returns
}

// The body in a frame of its own, so that the longjmp skips only its frames and LLVM's.
[[gnu::noinline]] bool run_guarded(Guard* guard, const std::function<bool()>& body, bool* failed) {
  Guard* const outer = t_guard;
  if (setjmp(guard->back) != 0) {
    t_guard = outer;
    *failed = true;
    return false;
  }
  t_guard = guard;
  const bool ok = body();
  t_guard = outer;
  return ok;
}

} // namespace

bool guard_llvm_fatal_errors(const std::string& what, const std::function<bool()>& body,
                             std::string* error) {
  static std::once_flag installed;
  std::call_once(installed, [] { llvm::install_fatal_error_handler(on_fatal_error, nullptr); });
  Guard guard;
  bool failed = false;
  const bool ok = run_guarded(&guard, body, &failed);
  if (failed && error) *error = "LLVM failed while compiling " + what + ": " + guard.reason;
  return ok && !failed;
}

} // namespace dsc::cpu
