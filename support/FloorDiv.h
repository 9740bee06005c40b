#pragma once
// Integer floor division and modulo on int64, the meaning of `/` and `%` on integers in .dsc
// (graph, prim and dim code alike) and of symbolic FloorDiv/FloorMod. Every evaluator of those
// operators calls these, so that the interpreter, the simplifier, bounds and the compiled code
// agree to the last corner case.
//
// As in Python, the quotient rounds toward negative infinity and the remainder takes the
// divisor's sign: floor_div(-7, 2) == -4, floor_mod(-7, 2) == 1, floor_mod(7, -2) == -1.
// The cases Python raises on are total here, the same way the generated code makes them total
// (backends/llvm/SymbolicCodegen.h): x / 0 == 0 and x % 0 == x, so that a division guarded by a
// shape check never traps; INT64_MIN / -1 wraps to INT64_MIN and INT64_MIN % -1 == 0. A caller
// that must not wrap (constant folding, overflow-checked evaluation) rules that case out first.

#include <cstdint>

namespace dsc {

constexpr int64_t floor_div(int64_t a, int64_t b) {
  if (b == 0) return 0;
  // Negation through unsigned: C++ leaves both -INT64_MIN and INT64_MIN / -1 undefined.
  if (b == -1) return static_cast<int64_t>(0 - static_cast<uint64_t>(a));
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}

constexpr int64_t floor_mod(int64_t a, int64_t b) {
  if (b == 0) return a;
  if (b == -1) return 0; // INT64_MIN % -1 is undefined in C++
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

} // namespace dsc
