"""What the importer checks share: running a command with a time limit, telling a crash from a
clean error, the line of output that says why, and the numeric tolerance

    every element must satisfy |out - ref| <= TOL * (rms(ref) + |ref|),  TOL = 1e-4,

an error of 1e-4 of the output's typical magnitude plus 1e-4 relative (check_onnx_import.py
explains the choice), or TOLERANCES[dtype] for a model in bf16 or f16 (below). Callers import
it after checking that numpy is installed.
"""

from __future__ import annotations

import difflib
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass

import numpy as np

TOL = 1e-4
# The tolerance of a model computed in each dtype, in the form above, against a reference in the
# same dtype (torch's) or in f32 (transformers', ONNX Runtime's); stated here only. A value
# rounded to a float of p significant bits is off by at most u = 2^-p relative: 2^-24 (f32),
# 2^-11 = 4.9e-4 (f16), 2^-8 = 3.9e-3 (bf16). check_low_precision.py's models round a residual
# stream a few dozen times (weights, matmuls, norms, residual adds; two layers deep), and the
# two sides round differently (dsc rounds once per stored value of a fused kernel, torch once
# per op, an f32 reference never), so errors of a few u are expected: there, as a fraction of
# `rms + |ref|`, dsc is at most 7e-3 (1.9u) from torch in bf16 and 1.7e-2 (4.4u) from f32
# transformers, where torch's own bf16 forward is 1.6e-2 from f32; in f16, 9e-4 (1.9u) and
# 2.3e-3 (4.6u). bf16's tolerance is 3e-2 (7.7u; 2e-2 left torch's own bf16 forward a margin
# of 20%), f16's 5e-3 (10u): a weight in the wrong dtype or layout, a lost mask or a NaN from
# an overflowing mask value is far outside them. (The rounding itself is checked bit for bit.)
TOLERANCES = {"f32": TOL, "f16": 5e-3, "bf16": 3e-2}

CRASH_MARKERS = [re.compile(p) for p in (
    r"Sanitizer", r"Segmentation fault", r"core dumped", r"\bAborted\b", r"terminate called",
    r"internal error", r"\.(?:cpp|cc|h):\d+:\d+: runtime error:", r"Assertion .* failed",
    r"Traceback \(most recent call last\)")]


@dataclass
class Run:
    rc: int | None
    stdout: str
    stderr: str


def run(cmd: list[str], timeout: float) -> Run:
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, errors="replace",
                           timeout=timeout, stdin=subprocess.DEVNULL)
        return Run(p.returncode, p.stdout, p.stderr)
    except subprocess.TimeoutExpired as e:
        def text(b):
            return b.decode(errors="replace") if isinstance(b, bytes) else (b or "")
        return Run(None, text(e.stdout), text(e.stderr))


def crash_reason(r: Run) -> str | None:
    if r.rc is None:
        return "timed out"
    if r.rc < 0 or r.rc >= 128:
        return f"exit code {r.rc} (a signal or an abort)"
    for m in CRASH_MARKERS:
        if m.search(r.stdout + r.stderr):
            return f"crash marker /{m.pattern}/ in the output"
    return None


def first_line(text: str, limit: int = 300) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if not lines:
        return "(empty)"
    line = next((ln for ln in lines if re.search(r"(?i)\berror\b", ln)), lines[0])
    return line if len(line) <= limit else line[:limit] + "..."


def compare(out: np.ndarray, ref: np.ndarray, tol: float = TOL) -> tuple[bool, str]:
    """|out - ref| <= tol * (rms(ref) + |ref|)."""
    if out.shape != ref.shape:
        return False, f"shape {out.shape}, expected {ref.shape}"
    if out.dtype != ref.dtype:
        return False, f"dtype {out.dtype}, expected {ref.dtype}"
    if not np.all(np.isfinite(out)):
        return False, "non-finite values in the output"
    if ref.size == 0:
        return True, "empty"
    r = ref.astype(np.float64)
    err = np.abs(out.astype(np.float64) - r)
    scale = float(np.sqrt(np.mean(r * r))) or 1.0
    ratio = err / (tol * (scale + np.abs(r)))
    worst = float(np.max(ratio))
    detail = f"max|err| {float(np.max(err)):.2e}, worst err/tol {worst:.3f}"
    if worst > 1.0:
        idx = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
        detail += f" at {tuple(int(i) for i in idx)}: got {float(out[idx]):.7g}, " \
                  f"expected {float(ref[idx]):.7g}"
    return worst <= 1.0, detail


def compare_nonfinite(out: np.ndarray, ref: np.ndarray) -> tuple[bool, str]:
    """compare, after the NaNs and infinities of ref are matched exactly (a mask of -inf, an
    all-masked row): where ref is finite, out must be finite and within the tolerance."""
    if out.shape == ref.shape and out.dtype == ref.dtype and ref.dtype.kind in "fc":
        bad = ~np.isfinite(ref)
        if bad.any():
            if not np.array_equal(out[bad], ref[bad], equal_nan=True):
                return False, "NaN or infinities differ from the reference's"
            out, ref = np.where(bad, 0, out), np.where(bad, 0, ref)
    return compare(out, ref)


def save_inputs(inputs: dict, folder: str) -> list[str]:
    """Each input (a NumPy array or a CPU tensor) as FOLDER/NAME.npy; `dscc run`'s --input
    arguments for them."""
    os.makedirs(folder, exist_ok=True)
    args = []
    for name, value in inputs.items():
        path = os.path.join(folder, f"{name}.npy")
        np.save(path, np.asarray(value), allow_pickle=False)
        args += ["--input", f"{name}={path}"]
    return args


def exit_problem(r: Run, prefix: str = "exit") -> str | None:
    """Why a command that should have succeeded did not: a crash, or PREFIX and the nonzero
    exit status with the first line of stderr; None when it exited 0."""
    return crash_reason(r) or (f"{prefix} {r.rc}: {first_line(r.stderr)}" if r.rc else None)


def compare_outputs(out_dir: str, refs: list[tuple[str, np.ndarray]], ref_owner: str,
                    cmp=compare) -> tuple[bool, str]:
    """Compares out_dir/output{i}.npy with each (name, reference) of refs by cmp, and checks
    that there is no output past them; whether all agree, and the details."""
    details, ok = [], True
    for i, (name, ref) in enumerate(refs):
        path = os.path.join(out_dir, f"output{i}.npy")
        if not os.path.isfile(path):
            ok = False
            details.append(f"{name}: no {path}")
            continue
        good, detail = cmp(np.load(path), ref)
        ok &= good
        details.append(f"{name}: {detail}")
    if os.path.exists(os.path.join(out_dir, f"output{len(refs)}.npy")):
        ok = False
        details.append(f"more outputs than {ref_owner}'s {len(refs)}")
    return ok, "; ".join(details)


def failure_problems(r: Run, start: str, must_say: list[str]) -> list[str]:
    """What is wrong with `r` as a clean failure: no crash, exit status 1, stderr's first line
    starting with `start` (`tool: error: `), and each of must_say said on stderr."""
    problems = []
    crash = crash_reason(r)
    if crash:
        problems.append(crash)
    if r.rc != 1:
        problems.append(f"exit {r.rc}, expected 1")
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    if not lines or not lines[0].startswith(start):
        problems.append(f"stderr does not start with '{start}': {first_line(r.stderr)}")
    for s in must_say:
        if s not in r.stderr:
            problems.append(f"stderr does not say '{s}'")
    return problems


def report_failure(tally: "Tally", name: str, r: Run, start: str, must_say: list[str]) -> None:
    """Reports case `name`: `r` must be a clean failure (failure_problems), its stderr's first
    line quoted when it is not."""
    problems = failure_problems(r, start, must_say)
    tally.report(name, "; ".join(problems) + f": {first_line(r.stderr)}" if problems else None)


def hf2dsc_build(importer: str, dscc: str, checkpoint: str, out: str, so: str,
                 entries: list[str], timeout: float) -> str | None:
    """Imports a save_pretrained directory with hf2dsc into `out` and builds `entries` into
    `so`; the step that failed and its first line of stderr, or None."""
    r = run([sys.executable, importer, checkpoint, "-o", out], timeout)
    if r.rc != 0:
        return f"hf2dsc: exit {r.rc}: {first_line(r.stderr)}"
    r = run([dscc, "build", os.path.join(out, "model.dsc"), *[f"--entry={e}" for e in entries],
             "-o", so], timeout)
    if r.rc != 0:
        return f"dscc build: exit {r.rc}: {first_line(r.stderr)}"
    return None


class Tally:
    """A check's cases: a PASS or FAIL line each, then `N passed, M failed`."""

    def __init__(self):
        self.passed = self.failed = 0

    def report(self, name: str, problem: str | None) -> None:
        """Records case `name`: passed when `problem` is None, else failed for it."""
        if problem:
            print(f"FAIL {name}: {problem}", flush=True)
            self.failed += 1
        else:
            print(f"PASS {name}", flush=True)
            self.passed += 1

    def finish(self) -> int:
        """Prints the totals; the exit status (1 when a case failed)."""
        print(f"{self.passed} passed, {self.failed} failed")
        return 1 if self.failed else 0


class Checker:
    """What both importers' checks do: report each result, run the importer's command line,
    compare an imported text with its golden file and expect a command-line failure."""

    def __init__(self, importer: str, dscc: str | None, work: str, timeout: float,
                 verbose: bool):
        self.importer_path = importer
        self.tool = os.path.splitext(os.path.basename(importer))[0]
        self.dscc = dscc
        self.work = work
        self.timeout = timeout
        self.verbose = verbose
        self.results: list[tuple[str, bool, str]] = []

    def report(self, label: str, ok: bool, detail: str) -> None:
        self.results.append((label, ok, detail))
        print(f"{'PASS' if ok else 'FAIL'} {label}: {detail}", flush=True)

    def cli(self, args: list[str]) -> Run:
        return run([sys.executable, self.importer_path, *args], self.timeout)

    def check_golden(self, got: str, path: str, update: bool, imported_name: str) -> str | None:
        """Compares the imported text got with the golden file at path (written first when
        update), then runs `dscc check` on the golden; the golden text, or None if unreadable."""
        rel = f"golden/{os.path.basename(path)}"
        label = f"golden {os.path.basename(path)}"
        if update:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(got)
            print(f"wrote {path}")
        try:
            with open(path) as f:
                want = f.read()
        except OSError as e:
            self.report(label, False, f"cannot read {path}: {e.strerror}")
            return None
        if got == want:
            self.report(label, True, f"the imported text equals {rel}")
        else:
            diff = "".join(difflib.unified_diff(want.splitlines(True), got.splitlines(True),
                                                rel, imported_name))
            self.report(label, False, "differs (run with --update-golden if the change is "
                        f"intended):\n{diff}")
        if self.dscc:
            problem = exit_problem(run([self.dscc, "check", path], self.timeout))
            self.report(f"{label} passes dscc check", problem is None, problem or "ok")
        return want

    def expect_failure(self, label: str, args: list[str], must_say: list[str],
                       one_line: bool = False) -> None:
        """Runs the importer on args with a fresh output directory: it must exit 1 with an
        error naming itself, say each of must_say (on one line if one_line) and write nothing."""
        out = os.path.join(self.work, "fail", re.sub(r"\W+", "_", label))
        os.makedirs(out)
        r = self.cli(args + ["-o", out])
        problems = failure_problems(r, f"{self.tool}: error: ", must_say)
        lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
        if one_line and len(lines) != 1:
            problems.append(f"{len(lines)} lines on stderr, expected one")
        left = sorted(os.listdir(out))
        if left:
            problems.append(f"files left in the output directory: {', '.join(left)}")
        detail = "; ".join(problems) if problems else first_line(r.stderr)
        if problems and self.verbose:
            detail += f"\n--- stderr ---\n{r.stderr}"
        self.report(label, not problems, detail)


def check_dscc_arg(script: str, parts: set[str], dscc: str | None) -> bool:
    """Whether --dscc suits the parts asked for (said on stderr when not)."""
    if "numeric" in parts and not dscc:
        print(f"{script}: --dscc is needed for the numeric cases", file=sys.stderr)
        return False
    if dscc and not (os.path.isfile(dscc) and os.access(dscc, os.X_OK)):
        print(f"{script}: {dscc} is not an executable", file=sys.stderr)
        return False
    return True


def remove_work(work: str, keep: bool) -> None:
    """Removes the work directory, or names it on stderr if keep."""
    if keep:
        print(f"files kept in {work}", file=sys.stderr)
    else:
        shutil.rmtree(work, ignore_errors=True)


def run_checks(checker: Checker, parts: set, ns, cases, numeric) -> int:
    """Runs the parts asked for: the golden file, the failures, and `numeric` on each case
    whose name `--filter` matches (an exception fails that case, not the script). Then removes
    the work directory (unless --keep) and returns the tally's exit status."""
    try:
        if "golden" in parts:
            checker.golden(ns.update_golden)
        if "errors" in parts:
            checker.errors()
        if "numeric" in parts:
            for case in cases:
                if ns.filter and not re.search(ns.filter, case.name):
                    continue
                try:
                    numeric(case)
                except Exception as e:  # noqa: BLE001 - a failed case, not a crash of the script
                    checker.report(case.name, False, f"{type(e).__name__}: {e}")
    finally:
        remove_work(checker.work, ns.keep)
    return tally(checker)


def tally(checker: Checker) -> int:
    """Prints how many checks passed and failed; the exit status (1 if any failed or none ran)."""
    passed = sum(1 for _, ok, _ in checker.results if ok)
    failed = len(checker.results) - passed
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not checker.results else 0
