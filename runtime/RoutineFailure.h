#pragma once
// Library routines that compiled code calls (dsc's GEMM, the chained products, the quantized
// and 16-bit products, the convolution) return nothing. When one cannot run (its scratch
// cannot be allocated, or a task of its parallel loop threw), it records why here, on the
// thread running the host program, and returns without writing its result; that call then
// fails with the message when the host program returns (HostCall.cpp), and nothing else of the
// call is trusted. No C++ exception crosses compiled code.

#include <exception>
#include <new>
#include <optional>
#include <string>

namespace dsc::runtime {

// Records `message` for the call running on this thread (the first one recorded stays).
void record_routine_failure(std::string message);
// The failure recorded on this thread since the last take, cleared.
std::optional<std::string> take_routine_failure();

// Runs routine `name`'s body, turning any exception into a recorded failure.
template <typename F> void run_routine(const char* name, F&& body) noexcept {
  try {
    body();
  } catch (const std::bad_alloc&) {
    record_routine_failure(std::string("cannot allocate the scratch memory of ") + name +
                           ": out of memory");
  } catch (const std::exception& e) {
    record_routine_failure(std::string(name) + " failed: " + e.what());
  } catch (...) {
    record_routine_failure(std::string(name) + " failed");
  }
}

} // namespace dsc::runtime
