#pragma once
// Internal-bug channel: `internal_assert(cond) << "why"` aborts with file and line when cond is
// false. User errors never come through here; they are diagnostics returned as failure.

#include <sstream>
#include <string>

namespace dsc {

class InternalError {
public:
  InternalError(const char* file, int line, const char* cond);
  InternalError(const InternalError&) = delete;
  InternalError& operator=(const InternalError&) = delete;
  [[noreturn]] ~InternalError();

  template <typename T> InternalError& operator<<(const T& value) {
    message_ << value;
    return *this;
  }

private:
  std::ostringstream message_;
};

} // namespace dsc

#define internal_assert(cond)                                                                      \
  if (cond) {                                                                                      \
  } else                                                                                           \
    ::dsc::InternalError(__FILE__, __LINE__, #cond)

#define internal_error ::dsc::InternalError(__FILE__, __LINE__, nullptr)
