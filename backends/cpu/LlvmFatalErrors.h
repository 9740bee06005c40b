#pragma once
// LLVM's fatal errors (report_fatal_error: an instruction LLVM cannot select, an ORC failure
// with no error path) end the process with LLVM's text by default. Inside
// guard_llvm_fatal_errors they come back as a dsc error instead:
//
//   LLVM failed while compiling 'layer': Cannot select: ...
//
// How: a process-wide fatal-error handler (installed once) that, on a thread inside a guard,
// jumps back to the guard (longjmp). What the body had allocated is leaked, not destroyed:
// LLVM's state is not to be trusted after a fatal error, so nothing of it is used again.
// Outside a guard the handler prints "dsc: error: LLVM failed: <reason>" and exits with
// status 1 (never an abort).

#include <functional>

#include <string>

namespace dsc::cpu {

// Runs `body` and returns what it returns; on an LLVM fatal error inside it, returns false
// with `*error` set to "LLVM failed while compiling <what>: <LLVM's reason>". `body` must
// keep what it makes inside the guard (its results go to variables of the caller). Guards
// nest; each thread has its own.
bool guard_llvm_fatal_errors(const std::string& what, const std::function<bool()>& body,
                             std::string* error);

} // namespace dsc::cpu
