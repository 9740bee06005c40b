"""What the importer checks share: running a command with a time limit, telling a crash from a
clean error, the line of output that says why, and the numeric tolerance

    every element must satisfy |out - ref| <= TOL * (rms(ref) + |ref|),  TOL = 1e-4,

an error of 1e-4 of the output's typical magnitude plus 1e-4 relative (check_onnx_import.py
explains the choice). Callers import it after checking that numpy is installed.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass

import numpy as np

TOL = 1e-4

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


def compare(out: np.ndarray, ref: np.ndarray) -> tuple[bool, str]:
    """|out - ref| <= TOL * (rms(ref) + |ref|)."""
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
    ratio = err / (TOL * (scale + np.abs(r)))
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
