#pragma once
// A 128-bit integer for overflow-free intermediate arithmetic on int64 values (GCC/Clang
// extension; `__extension__` keeps -Wpedantic quiet).

namespace dsc {
__extension__ typedef __int128 i128;
} // namespace dsc
