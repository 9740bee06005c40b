#!/usr/bin/env python3
"""Which kernels OpenBLAS runs on this CPU, and OPENBLAS_CORETYPE where it needs setting.

OpenBLAS (DYNAMIC_ARCH) picks its kernels from the CPU model. A CPU newer than the installed
OpenBLAS knows gets an old fallback core (Prescott, Core2, ..., no AVX2) and runs several
times slower. Where that happens and the CPU has AVX2 and FMA, the bench scripts set
OPENBLAS_CORETYPE (Zen on AMD, Haswell on Intel) before OpenBLAS is loaded, and report it.

    openblas_core.py               # prints what OpenBLAS picks here and what would be set
    openblas_core.py --self-test   # the decision on made-up CPUs; exit status 1 on a failure
"""
import ctypes
import os
import subprocess
import sys

# Cores of OpenBLAS 0.3 without AVX2 kernels: what an unknown x86-64 CPU falls back to.
FALLBACK_CORES = {"prescott", "core2", "penryn", "dunnington", "nehalem", "atom", "katmai",
                  "coppermine", "northwood", "banias", "opteron", "opteron_sse3", "barcelona",
                  "bobcat", "sandybridge", "bulldozer", "piledriver", "steamroller",
                  "excavator", "generic", "unknown", ""}


def coretype_for(core: str, vendor: str, flags: set[str]) -> str | None:
    """The OPENBLAS_CORETYPE to set, or None when OpenBLAS's own pick is right."""
    if core.strip().lower() not in FALLBACK_CORES:
        return None
    if not {"avx2", "fma"} <= flags:
        return None  # an old CPU: the fallback is the right core
    return "Zen" if vendor == "AuthenticAMD" else "Haswell"


def cpu_vendor_and_flags() -> tuple[str, set[str]]:
    vendor, flags = "?", set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "vendor_id":
                    vendor = value.strip()
                elif key.strip() == "flags":
                    flags = set(value.split())
                    break
    except OSError:
        pass
    return vendor, flags


def openblas_core() -> str:
    """The core OpenBLAS picks in a fresh process with this environment ("?" if unknown).

    A subprocess, because OpenBLAS reads OPENBLAS_CORETYPE once, when it is loaded."""
    probe = ("import ctypes\n"
             "for name in ('libopenblas.so.0', 'libopenblas.so'):\n"
             "    try:\n"
             "        lib = ctypes.CDLL(name)\n"
             "        break\n"
             "    except OSError:\n"
             "        lib = None\n"
             "lib.openblas_get_corename.restype = ctypes.c_char_p\n"
             "print(lib.openblas_get_corename().decode())\n")
    try:
        out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                             timeout=60)
        return out.stdout.strip() or "?"
    except (OSError, subprocess.SubprocessError):
        return "?"


def choose_coretype() -> str:
    """Sets OPENBLAS_CORETYPE in os.environ where OpenBLAS would fall back to an old core;
    returns a line for the report: the core in use and why."""
    if os.environ.get("OPENBLAS_CORETYPE"):
        return f"{os.environ['OPENBLAS_CORETYPE']} (from the environment)"
    core = openblas_core()
    vendor, flags = cpu_vendor_and_flags()
    chosen = coretype_for(core, vendor, flags)
    if chosen is None:
        return f"{core} (OpenBLAS's own pick)"
    os.environ["OPENBLAS_CORETYPE"] = chosen
    return (f"{chosen} (set by the bench: OpenBLAS does not know this {vendor} CPU and would "
            f"run its {core} kernels)")


def self_test() -> int:
    cases = [
        (("Prescott", "AuthenticAMD", {"avx2", "fma"}), "Zen"),
        (("Core2", "GenuineIntel", {"avx2", "fma", "avx512f"}), "Haswell"),
        (("Prescott", "GenuineIntel", {"sse3"}), None),
        (("Zen", "AuthenticAMD", {"avx2", "fma"}), None),
        (("SkylakeX", "GenuineIntel", {"avx2", "fma", "avx512f"}), None),
        (("Haswell", "GenuineIntel", {"avx2", "fma"}), None),
    ]
    failures = 0
    for args, want in cases:
        got = coretype_for(*args)
        ok = got == want
        failures += not ok
        print(f"{'PASS' if ok else 'FAIL'} coretype_for{args[0], args[1]} = {got} (want {want})")
    return 1 if failures else 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    print("OpenBLAS core here:", choose_coretype())
