#!/usr/bin/env python3
"""Checks bench/models/gpu.py's flow without a GPU (--device cpu: eager on the CPU, dsc-run
under the CUDA block emulator), and its rule for an import there that is not the packed one:

  flow        --pack of the small BERT layer, then --zoo: its output matches eager's;
  same-weights  the manifest's .dsc sha256 changed (as another torch's guard comments change
              the text) over the same weights: a note, the model still runs, exit 0;
  other-weights both sha256s changed: the model fails, exit 1, unless --allow-dsc-mismatch.

    check_zoo_gpu_flow.py --dscc build/tools/dscc/dscc --dsc-run build/tools/dsc_run/dsc-run

Prints PASS or FAIL per case and `N passed, M failed`; exits 1 when a case failed, 77 (a skip
for ctest) when torch or the zoo's other dependencies are missing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GPU_PY = os.path.join(ROOT, "bench", "models", "gpu.py")


def gpu_py(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, DSC_NUM_THREADS="1")
    return subprocess.run([sys.executable, GPU_PY, *args], capture_output=True, text=True,
                          env=env, timeout=300)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dscc", required=True)
    ap.add_argument("--dsc-run", required=True)
    ns = ap.parse_args()
    try:
        from harness import Tally  # needs numpy, as gpu.py does
    except ImportError as e:
        print(f"SKIP: {e.name or e} is not installed: run tools/scripts/install_python_deps.sh "
              f"--tests")
        return 77
    tally = Tally()
    report = tally.report

    with tempfile.TemporaryDirectory(prefix="dsc-zoo-gpu-flow-") as work:
        pack = os.path.join(work, "pack")
        r = gpu_py("--pack", pack, "--dscc", ns.dscc, "--size", "small", "--models", "bert")
        if r.returncode == 77:
            print(r.stdout.strip() or "SKIP: gpu.py's dependencies are missing")
            return 77
        if r.returncode != 0:
            report("flow", f"--pack exited {r.returncode}: {r.stderr.strip()[-400:]}")
            return tally.finish()
        run = ["--zoo", pack, "--dsc-run", ns.dsc_run, "--device", "cpu", "--runs", "1",
               "--warmup", "1", "--shape", "bert:B=1,S=3"]

        def zoo(*extra: str) -> tuple[int, str]:
            r = gpu_py(*run, *extra)
            return r.returncode, r.stdout + r.stderr

        code, out = zoo()
        report("flow", None if code == 0 and "all outputs match" in out
               else f"exit {code}: {out.strip()[-400:]}")

        manifest_path = os.path.join(pack, "manifest.json")
        with open(manifest_path) as f:
            manifest = json.load(f)

        def tamper(**fields: str) -> None:
            m = json.loads(json.dumps(manifest))
            m["models"]["bert"].update(fields)
            with open(manifest_path, "w") as f:
                json.dump(m, f)

        tamper(dsc_sha256="0" * 64)
        code, out = zoo()
        report("same-weights",
               None if code == 0 and "note bert: the .dsc imported here" in out
               and "all outputs match" in out else f"exit {code}: {out.strip()[-400:]}")

        tamper(dsc_sha256="0" * 64, weights_sha256="1" * 64)
        code, out = zoo()
        report("other-weights",
               None if code == 1 and "FAIL bert: the .dsc imported here" in out
               and "the weights differ too" in out else f"exit {code}: {out.strip()[-400:]}")
        code, out = zoo("--allow-dsc-mismatch")
        report("other-weights, allowed",
               None if code == 0 and "WARN bert" in out and "all outputs match" in out
               else f"exit {code}: {out.strip()[-400:]}")

    return tally.finish()


if __name__ == "__main__":
    sys.exit(main())
