#pragma once
// The compiler's walkers recurse over expressions, and a chain of binary operators at one level
// (`x1 + x2 + ... + xn`) counts as one level of nesting however long (lang/Ast.h): tens of
// thousands of links nest that deep in the tree. dscc, the Python package and the fuzz targets
// therefore compile on a thread with a large stack, as rustc and clang do for deep input. Only
// the pages a compilation touches are ever committed.

#include <cstddef>
#include <functional>
#include <optional>
#include <type_traits>
#include <utility>

namespace dsc {

inline constexpr size_t kCompilerStackBytes = size_t{1} << 30;

// Runs `fn` on a new thread whose stack holds `bytes` and returns when it does; an exception
// `fn` throws is rethrown here. Where no such thread can be made, runs `fn` on this one.
void run_on_large_stack(const std::function<void()>& fn, size_t bytes = kCompilerStackBytes);

// `f()` run so, its result returned.
template <typename F> std::invoke_result_t<F> on_large_stack(F&& f) {
  using Result = std::invoke_result_t<F>;
  if constexpr (std::is_void_v<Result>) {
    run_on_large_stack(f);
  } else {
    std::optional<Result> result;
    run_on_large_stack([&] { result.emplace(f()); });
    return std::move(*result);
  }
}

} // namespace dsc
