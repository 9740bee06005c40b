#include "runtime/RoutineFailure.h"

#include <utility>

namespace dsc::runtime {

namespace {

thread_local std::optional<std::string> t_failure;

} // namespace

void record_routine_failure(std::string message) {
  if (!t_failure) t_failure = std::move(message);
}

std::optional<std::string> take_routine_failure() {
  return std::exchange(t_failure, std::nullopt);
}

} // namespace dsc::runtime
