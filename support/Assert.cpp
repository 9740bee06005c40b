#include "support/Assert.h"

#include <cstdio>
#include <cstdlib>

namespace dsc {

InternalError::InternalError(const char* file, int line, const char* cond) {
  message_ << "dsc internal error at " << file << ":" << line;
  if (cond) message_ << ": assertion `" << cond << "` failed";
  message_ << ": ";
}

InternalError::~InternalError() {
  std::fprintf(stderr, "%s\n", message_.str().c_str());
  std::fflush(stderr);
  std::abort();
}

} // namespace dsc
