#!/usr/bin/env python3
"""tools/scripts/lint_identity.py must catch what it is for: run on a small tree made of the
real tables and one file, it fails on an op, an intrinsic and a routine named by a string,
passes the same names in a comment, in a longer string and under a waiver, and passes a file
the lint allows. Exits 1 when the lint does not behave so.
"""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
LINT = os.path.join(ROOT, "tools", "scripts", "lint_identity.py")

BAD = '''// "tanh" in a comment is fine
PrimExpr a = Intrinsic::make(d, "tanh", {x});
bool b = routine == "dsc.sgemm";
if (call.callee == "matmul") {}
std::string c = "tanh of the input";
'''
WAIVED = '''// identity-lint: a keyword of the language
const char* const kWords[] = {"where",
                              "cast"};
const char* d = "max"; // identity-lint: the printer's spelling
'''


def run(files):
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "ir"))
        for table in ("Ops.def", "Intrinsics.def", "LibraryRoutines.def"):
            shutil.copy(os.path.join(ROOT, "ir", table), os.path.join(root, "ir", table))
        for rel, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w") as f:
                f.write(text)
        r = subprocess.run([sys.executable, LINT, "--root", root], capture_output=True, text=True)
        return r.returncode, r.stdout


def main():
    failures = []
    code, out = run({"passes/Bad.cpp": BAD})
    expected = ['passes/Bad.cpp:2: "tanh" (op and intrinsic name',
                'passes/Bad.cpp:3: "dsc.sgemm" (routine', 'passes/Bad.cpp:4: "matmul" (op name']
    if code != 1 or any(e not in out for e in expected) or out.count("passes/Bad.cpp") != 3:
        failures.append(f"a file naming ops by string: exit {code}, output:\n{out}")
    code, out = run({"backends/Waived.cpp": WAIVED, "lang/Resolve.cpp": BAD,
                     "ir/ops/Rows.cpp": BAD})
    if code != 0:
        failures.append(f"waived lines and allowed files: exit {code}, output:\n{out}")
    for f in failures:
        print("FAIL:", f)
    print(f"check_lint_identity: {2 - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
