"""Runs an entry of a model built by `dscc build` through the runtime's C API
(runtime/dsc_runtime.h) with ctypes, for the checks whose tensors .npy cannot hold: NumPy has
no bfloat16, so `dscc run` takes no bf16 input from a .npy file and writes no bf16 output. Here
every tensor passes as it is, by DLPack: a bf16 tensor is its bits (uint16) with DLPack's
kDLBfloat type.

    rt = Runtime(find_runtime(dscc))
    model = rt.load("model.so")
    outs = model.run("forward", {"x": x}, weights=read_safetensors("model.safetensors"))

The arrays are NumPy's: a bf16 input is given as float32 values (each already a bf16 value;
one that is not is rounded to nearest even), and a bf16 output comes back as float32 holding
its values exactly. `run` returns (array, dsc dtype) per output.
"""

from __future__ import annotations

import ctypes
import json
import os
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "importers"))
from dscimport.dtypes import bf16_bits, bf16_values  # noqa: E402

KDL_CPU = 1
# dsc dtype -> (DLPack type code, bits, the NumPy type of its storage).
DL_TYPES = {"f32": (2, 32, np.float32), "f64": (2, 64, np.float64), "f16": (2, 16, np.float16),
            "bf16": (4, 16, np.uint16), "i64": (0, 64, np.int64), "i32": (0, 32, np.int32),
            "i8": (0, 8, np.int8), "bool": (1, 8, np.bool_)}
DL_NAMES = {(code, bits): name for name, (code, bits, _) in DL_TYPES.items()}
SAFETENSORS = {"F32": "f32", "F64": "f64", "F16": "f16", "BF16": "bf16", "I64": "i64",
               "I32": "i32", "I8": "i8", "BOOL": "bool"}


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                            ("deleter", ctypes.CFUNCTYPE(None,
                                                         ctypes.POINTER(DLManagedTensor)))]


class RuntimeFailure(Exception):
    """A call of the C API failed; the message is dsc_last_error()'s."""


def find_runtime(dscc: str) -> str | None:
    """libdsc_runtime.so for a dscc binary: beside it (an installed or copied dscc), or in the
    build tree's runtime/ (build/tools/dscc/dscc)."""
    d = os.path.dirname(os.path.abspath(dscc))
    for p in (os.path.join(d, "libdsc_runtime.so"),
              os.path.join(d, "..", "..", "runtime", "libdsc_runtime.so")):
        if os.path.isfile(p):
            return os.path.normpath(p)
    return None


def read_safetensors(path: str) -> dict[str, tuple[np.ndarray, str]]:
    """A .safetensors file's tensors: name -> (the stored array, its dsc dtype); bf16 as its
    bits (uint16)."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        dtype = SAFETENSORS[e["dtype"]]
        lo, hi = e["data_offsets"]
        a = np.frombuffer(data[8 + n + lo:8 + n + hi], dtype=np.dtype(DL_TYPES[dtype][2])
                          .newbyteorder("<"))
        out[name] = (a.reshape(e["shape"]).copy(), dtype)
    return out


class Runtime:
    def __init__(self, path: str):
        self.lib = lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        lib.dsc_last_error.restype = ctypes.c_char_p
        lib.dsc_model_load.restype = ctypes.c_void_p
        lib.dsc_model_load.argtypes = [ctypes.c_char_p]
        lib.dsc_model_free.argtypes = [ctypes.c_void_p]
        lib.dsc_model_num_params.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
        for f in (lib.dsc_model_param_name, lib.dsc_model_param_type):
            f.restype = ctypes.c_char_p
            f.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
        lib.dsc_model_run.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                      ctypes.POINTER(ctypes.POINTER(DLTensor)), ctypes.c_int,
                                      ctypes.POINTER(ctypes.POINTER(DLManagedTensor)),
                                      ctypes.c_int, ctypes.POINTER(ctypes.c_int)]

    def error(self) -> str:
        return (self.lib.dsc_last_error() or b"").decode(errors="replace")

    def load(self, so: str) -> "Model":
        h = self.lib.dsc_model_load(os.path.abspath(so).encode())
        if not h:
            raise RuntimeFailure(f"dsc_model_load({so}): {self.error()}")
        return Model(self, h)


class Model:
    def __init__(self, rt: Runtime, handle: int):
        self.rt = rt
        self.handle = handle

    def params(self, fn: str) -> list[tuple[str, str]]:
        """(name, type text such as "bf16[B, 32]") of each parameter of entry fn."""
        lib = self.rt.lib
        n = lib.dsc_model_num_params(self.handle, fn.encode())
        if n < 0:
            raise RuntimeFailure(f"no entry '{fn}'")
        return [(lib.dsc_model_param_name(self.handle, fn.encode(), i).decode(),
                 lib.dsc_model_param_type(self.handle, fn.encode(), i).decode())
                for i in range(n)]

    def run(self, fn: str, inputs: dict, weights: dict | None = None,
            max_outputs: int = 256) -> list[tuple[np.ndarray, str]]:
        """Calls entry fn with each parameter from `inputs` (name -> array, its values in
        the parameter's dtype), else from `weights` (read_safetensors's). Returns each output
        as (array, dsc dtype), a bf16 one as float32 values."""
        keep = []  # the buffers must outlive the call
        ptrs = []
        for name, type_text in self.params(fn):
            dtype = type_text.split("[", 1)[0]
            code, bits, store = DL_TYPES[dtype]
            if name in inputs:
                a = np.asarray(inputs[name])
                a = bf16_bits(a) if dtype == "bf16" else a.astype(store)
            elif weights is not None and name in weights:
                a, stored = weights[name]
                if stored != dtype:
                    raise RuntimeFailure(f"weight '{name}' is {stored} in the file; the "
                                         f"parameter is {type_text}")
            else:
                raise RuntimeFailure(f"no value for parameter '{name}' ({type_text})")
            a = np.ascontiguousarray(a)
            shape = (ctypes.c_int64 * max(a.ndim, 1))(*a.shape)
            t = DLTensor(a.ctypes.data if a.size else None, DLDevice(KDL_CPU, 0), a.ndim,
                         DLDataType(code, bits, 1), shape, None, 0)
            keep += [a, shape, t]
            ptrs.append(ctypes.pointer(t))
        args = (ctypes.POINTER(DLTensor) * max(len(ptrs), 1))(*ptrs)
        outs = (ctypes.POINTER(DLManagedTensor) * max_outputs)()
        n_out = ctypes.c_int(0)
        if self.rt.lib.dsc_model_run(self.handle, fn.encode(), args, len(ptrs), outs,
                                     max_outputs, ctypes.byref(n_out)) != 0:
            raise RuntimeFailure(f"dsc_model_run({fn}): {self.rt.error()}")
        results = []
        for i in range(n_out.value):
            m = outs[i].contents
            t = m.dl_tensor
            dtype = DL_NAMES[(t.dtype.code, t.dtype.bits)]
            shape = tuple(t.shape[k] for k in range(t.ndim))
            store = np.dtype(DL_TYPES[dtype][2])
            count = int(np.prod(shape, dtype=np.int64))
            if count:
                raw = ctypes.string_at(t.data + t.byte_offset, count * store.itemsize)
                a = np.frombuffer(raw, dtype=store).reshape(shape).copy()
            else:
                a = np.zeros(shape, dtype=store)
            m.deleter(outs[i])
            results.append((bf16_values(a) if dtype == "bf16" else a, dtype))
        return results

    def __del__(self):
        if getattr(self, "handle", None):
            self.rt.lib.dsc_model_free(self.handle)
            self.handle = None
