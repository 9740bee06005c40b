#!/usr/bin/env python3
"""`dscc build` is deterministic: the same input gives a byte-identical .so (code and embedded
manifest), whatever the machine's load.

    tests/e2e/check_deterministic_build.py --dscc build/tools/dscc/dscc [--no-zoo] [--keep DIR]

Builds every example (examples/*.dsc) and, with torch installed, the zoo's models imported by
dsc.export (the torch.export route; PYTHONPATH must reach the package, build/python), once on
a quiet machine and once under a CPU-burning load of twice the cores (busy processes), then
compares the two builds' bytes. Z3 runs under a resource count, not a time limit
(docs/dscc.md), which is what makes the loaded build decide as the quiet one did; anything
else that depended on timing, hashing of pointers or the order of a hash table would show
here as differing bytes.

Exit status: 0 when every pair is identical, 1 otherwise.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def burn(stop) -> None:
    """A busy loop until `stop` is set: one core's worth of load."""
    x = 0
    while not stop.is_set():
        for _ in range(100000):
            x = (x * 1103515245 + 12345) & 0xFFFFFFFF


def example_sources() -> dict[str, str]:
    folder = os.path.join(ROOT, "examples")
    return {name[:-4]: os.path.join(folder, name) for name in sorted(os.listdir(folder))
            if name.endswith(".dsc")}


def zoo_sources(work: str) -> dict[str, str]:
    """The zoo's models (full width) as .dsc through dsc.export."""
    import dsc
    sys.path.insert(0, os.path.join(ROOT, "importers"))
    from zoo import models
    out = {}
    for name in ("bert", "gpt2", "llama", "resnet18"):
        model, z = models.build(name, "full")
        model.eval()
        inputs = z.make_inputs(z.example, models.SEED)
        e = dsc.export(model, tuple(inputs.values()), dynamic_shapes=z.dynamic_shapes(),
                       name=f"zoo_{name}")
        path = os.path.join(work, f"zoo_{name}.dsc")
        with open(path, "w") as f:
            f.write(e.source)
        out[f"zoo_{name}"] = path
    return out


def build_all(dscc: str, sources: dict[str, str], out_dir: str) -> dict[str, bytes]:
    os.makedirs(out_dir, exist_ok=True)
    built = {}
    for name, path in sources.items():
        so = os.path.join(out_dir, f"{name}.so")
        r = subprocess.run([dscc, "build", path, "-o", so, "-q"], capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"FAIL dscc build {path}:\n{r.stderr}")
        with open(so, "rb") as f:
            built[name] = f.read()
    return built


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dscc", required=True)
    ap.add_argument("--no-zoo", action="store_true", help="the examples only (no torch)")
    ap.add_argument("--keep", help="keep the sources and libraries here")
    args = ap.parse_args()
    work = args.keep or tempfile.mkdtemp(prefix="deterministic_build_")
    os.makedirs(work, exist_ok=True)
    sources = example_sources()
    if not args.no_zoo:
        try:
            sources.update(zoo_sources(work))
        except ImportError as e:
            print(f"skipped: the zoo needs torch and the dsc package ({e})")
            return 77

    t0 = time.perf_counter()
    quiet = build_all(args.dscc, sources, os.path.join(work, "quiet"))
    quiet_s = time.perf_counter() - t0

    stop = multiprocessing.Event()
    burners = [multiprocessing.Process(target=burn, args=(stop,), daemon=True)
               for _ in range(2 * (os.cpu_count() or 1))]
    for p in burners:
        p.start()
    try:
        t0 = time.perf_counter()
        loaded = build_all(args.dscc, sources, os.path.join(work, "loaded"))
        loaded_s = time.perf_counter() - t0
    finally:
        stop.set()
        for p in burners:
            p.join()

    failed = 0
    for name in sources:
        same = quiet[name] == loaded[name]
        failed += 0 if same else 1
        detail = f"{len(quiet[name])} bytes" if same else \
            f"{len(quiet[name])} and {len(loaded[name])} bytes differ (kept in {work})"
        print(f"{'PASS' if same else 'FAIL'} {name}: {detail}")
    print(f"{len(sources) - failed} identical, {failed} different; quiet build {quiet_s:.1f} s, "
          f"under {len(burners)} busy processes {loaded_s:.1f} s")
    if not failed and not args.keep:
        import shutil
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
