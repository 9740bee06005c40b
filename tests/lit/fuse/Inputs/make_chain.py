# Prints a fn of N chained statements `y{i+1} = y{i} * 1.0001 + 0.5` (2N elementwise ops).
import sys

n = int(sys.argv[1])
print("fn f(x: f32[N]) -> f32[N] {")
print("  let y0 = x")
for i in range(n):
    print(f"  let y{i + 1} = y{i} * 1.0001 + 0.5")
print(f"  return y{n}")
print("}")
