#!/usr/bin/env python3
"""Writes the valid seed inputs of the loader fuzz targets into tests/fuzz/corpus/<target>/.

The seeds are small (a few KB in all) and committed; rerun this after a format changes. The
.npy seeds come from numpy itself when it is installed (so they are exactly what numpy writes)
and are otherwise written byte for byte the way numpy 1.x writes them. Inputs that once crashed
a target are added beside these by hand and never rewritten here.
"""

import json
import pathlib
import random
import struct

CORPUS = pathlib.Path(__file__).resolve().parent / "corpus"


def write(target, name, data):
    d = CORPUS / target
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_bytes(data.encode() if isinstance(data, str) else data)


def npy_by_hand(descr, shape, payload):
    shape_text = "(" + "".join(f"{n}, " for n in shape).rstrip(" ")
    if len(shape) != 1:
        shape_text = shape_text.rstrip(",")
    header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape_text}), }}"
    pad = 64 - (10 + len(header) + 1) % 64
    header += " " * (pad % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + payload


def npy_seeds():
    try:
        import io

        import numpy as np
    except ImportError:
        np = None
    arrays = [
        ("f32_2x3", "<f4", (2, 3), struct.pack("<6f", 0, 1, -2.5, 3, float("inf"), 1e-3)),
        ("f64_4", "<f8", (4,), struct.pack("<4d", 1, 2, 3, 4)),
        ("f16_2x2", "<f2", (2, 2), struct.pack("<4e", 0.5, -1, 2, 65504)),
        ("i64_scalar", "<i8", (), struct.pack("<q", -7)),
        ("i32_0x5", "<i4", (0, 5), b""),
        ("i8_3", "|i1", (3,), bytes([1, 0x80, 0x7F])),
        ("bool_2x1x2", "|b1", (2, 1, 2), bytes([1, 0, 0, 1])),
    ]
    for name, descr, shape, payload in arrays:
        if np is not None:
            a = np.frombuffer(payload, dtype=np.dtype(descr)).reshape(shape)
            buf = io.BytesIO()
            np.save(buf, a)
            data = buf.getvalue()
        else:
            data = npy_by_hand(descr, shape, payload)
        write("fuzz_npy", name + ".npy", data)
    # A version 2.0 header, which dsc reads but numpy only writes for huge headers.
    v1 = npy_by_hand("<f4", (1,), struct.pack("<f", 1))
    header = v1[10:]
    write("fuzz_npy", "v2_f32_1.npy", b"\x93NUMPY\x02\x00" + struct.pack("<I", len(header)) + header)


def safetensors(tensors, metadata=None):
    header, data = {}, b""
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, (dtype, shape, payload) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [len(data), len(data) + len(payload)]}
        data += payload
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


def safetensors_seeds():
    write("fuzz_safetensors", "two_tensors.safetensors", safetensors({
        "w": ("F32", [2, 2], struct.pack("<4f", 1, 2, 3, 4)),
        "b": ("I64", [2], struct.pack("<2q", -1, 1)),
    }))
    write("fuzz_safetensors", "every_dtype.safetensors", safetensors({
        "a": ("F64", [1], struct.pack("<d", 0.25)),
        "b": ("F16", [2], struct.pack("<2e", 1, -1)),
        "c": ("BF16", [1], b"\x80\x3f"),
        "d": ("I8", [2], b"\x01\xff"),
        "e": ("I32", [1, 1], struct.pack("<i", 42)),
        "f": ("BOOL", [3], b"\x01\x00\x01"),
        "g": ("F32", [], struct.pack("<f", 7)),
    }, metadata={"format": "pt"}))
    write("fuzz_safetensors", "empty_tensor.safetensors", safetensors({
        "z": ("F32", [0, 4], b""),
    }))
    write("fuzz_safetensors", "no_tensors.safetensors", safetensors({}))


def manifest_seeds():
    def tensor(name, dtype, dims):
        return {"name": name, "dtype": dtype, "dims": dims}

    def output(name, dtype, dims, updates_param=-1):
        return {**tensor(name, dtype, dims), "updates_param": updates_param}

    layer = {
        "name": "layer", "host_symbol": "dsc_host_layer", "device": "cpu",
        "params": [tensor("x", "f32", ["B", "S", "768"]), tensor("mask", "bool", ["B", "S"])],
        "outputs": [output("output0", "f32", ["B", "S", "768"])],
        "where_clauses": ["S <= 512"], "arena_bytes": "B*S*3072", "peak_bytes": "B*S*3072",
    }
    gather = {
        "name": "gather", "host_symbol": "dsc_host_gather", "device": "cuda",
        "params": [tensor("t", "bf16", ["N"]), tensor("i", "i64", ["K"])],
        "outputs": [output("output0", "bf16", ["K"]), output("output1", "i32", []),
                    output("output2", "bf16", ["N"], updates_param=0)],
        "where_clauses": [], "arena_bytes": "0", "peak_bytes": "max(K*2, N/4)",
    }
    compact = dict(separators=(",", ":"))
    write("fuzz_manifest", "one_function.json", json.dumps({"version": 7, "functions": [layer]}, **compact))
    write("fuzz_manifest", "two_functions.json",
          json.dumps({"version": 7, "functions": [layer, gather]}, indent=1))
    write("fuzz_manifest", "no_functions.json", '{"version":7,"functions":[]}')


def prove_expr_seeds():
    seeds = {
        "chain.txt": "1 <= S <= 512",
        "floordiv.txt": "(B * S) / S == B\n1 <= S",
        "mod.txt": "(2*N + 1) % 2 == 1",
        "minmax.txt": "min(A, B) + max(A, B) == A + B",
        "assume.txt": "S % 64 == 0\nS == 64 * K\nK >= 1",
        "logic.txt": "!(A < B) || A != B && B >= 0",
        "arith.txt": "-(3 - N * N) % 7 / -2",
        "disproved.txt": "N * N > N",
    }
    for name, text in seeds.items():
        write("fuzz_prove_expr", name, text)


def compile_seeds():
    # Any bytes choose a graph (fuzz_compile.cpp); these are a few of each length, so the run
    # starts from graphs of many sizes rather than from the empty input's tiny one.
    rng = random.Random(7)
    for length in (8, 24, 48, 96, 160):
        for i in range(2):
            write("fuzz_compile", f"graph_{length}_{i}.bin",
                  bytes(rng.randrange(256) for _ in range(length)))


if __name__ == "__main__":
    compile_seeds()
    npy_seeds()
    safetensors_seeds()
    manifest_seeds()
    prove_expr_seeds()
