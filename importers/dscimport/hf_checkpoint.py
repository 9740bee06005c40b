"""A checkpoint directory written by transformers' `save_pretrained`: `config.json`, and the
weights in `model.safetensors` or in the shards that `model.safetensors.index.json` lists.

Only the safetensors headers are read when the checkpoint is opened (each tensor's dtype and
shape), so that every problem with the tensors can be listed before any data is loaded; `load`
reads one tensor's data. Neither torch nor transformers is needed here.
"""

from __future__ import annotations

import json
import os
import struct
from dataclasses import dataclass

import numpy as np

from . import dtypes

CONFIG = "config.json"
WEIGHTS = "model.safetensors"
INDEX = "model.safetensors.index.json"

# safetensors' dtype names -> the numpy dtype of the data (BF16's bits as uint16, which `load`
# makes float32 values); the names without one (F8_*, ...) cannot be loaded, only reported.
NUMPY_DTYPES = {"F64": np.float64, "F32": np.float32, "F16": np.float16, "BF16": np.uint16,
                "I64": np.int64, "I32": np.int32, "I16": np.int16, "I8": np.int8,
                "U8": np.uint8, "BOOL": np.bool_}
HEADER_LIMIT = 100 << 20  # a safetensors header longer than this is not a real one


class CheckpointError(Exception):
    """The directory is not a readable checkpoint; one line."""


@dataclass(frozen=True)
class TensorInfo:
    file: str          # the .safetensors file that holds it
    dtype: str         # safetensors' name: "F32", "BF16", ...
    shape: tuple[int, ...]
    start: int         # the data's byte range in the file, from the start of the file
    end: int


class Checkpoint:
    def __init__(self, path: str):
        self.path = path
        self.config = read_config(path)
        self.tensors: dict[str, TensorInfo] = {}
        for file in weight_files(path):
            for name, info in read_header(file).items():
                if name in self.tensors:
                    raise CheckpointError(f"tensor '{name}' is in both {self.tensors[name].file} "
                                          f"and {file}")
                self.tensors[name] = info

    def load(self, name: str) -> np.ndarray:
        """The data of tensor `name`, whose dtype numpy has; a BF16 tensor as float32 values."""
        info = self.tensors[name]
        dtype = np.dtype(NUMPY_DTYPES[info.dtype]).newbyteorder("<")
        with open(info.file, "rb") as f:
            f.seek(info.start)
            data = f.read(info.end - info.start)
        a = np.frombuffer(data, dtype=dtype).astype(dtype.newbyteorder("=")).reshape(info.shape)
        return dtypes.bf16_values(a) if info.dtype == "BF16" else a


def read_json(path: str) -> object:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except OSError as e:
        raise CheckpointError(f"cannot read {path}: {e.strerror or e}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise CheckpointError(f"{path} is not valid JSON ({e})") from None


def read_config(path: str) -> dict:
    if not os.path.isdir(path):
        raise CheckpointError(f"{path} is not a directory (hf2dsc reads a directory written by "
                              f"transformers' save_pretrained)")
    config = read_json(os.path.join(path, CONFIG))
    if not isinstance(config, dict):
        raise CheckpointError(f"{os.path.join(path, CONFIG)} is not a JSON object")
    return config


def weight_files(path: str) -> list[str]:
    """model.safetensors, or the shards the index names (each once, in the index's order)."""
    single = os.path.join(path, WEIGHTS)
    index = os.path.join(path, INDEX)
    if os.path.isfile(single):
        return [single]
    if not os.path.isfile(index):
        others = sorted(f for f in os.listdir(path) if f.endswith((".bin", ".pt", ".pth")))
        hint = (f" (found {', '.join(others)}: PyTorch pickles are not read; save with "
                f"safe_serialization, the default)") if others else ""
        raise CheckpointError(f"{path} has neither {WEIGHTS} nor {INDEX}{hint}")
    data = read_json(index)
    weight_map = data.get("weight_map") if isinstance(data, dict) else None
    if not isinstance(weight_map, dict) or not all(isinstance(v, str)
                                                   for v in weight_map.values()):
        raise CheckpointError(f"{index} has no weight_map of tensor names to files")
    files = []
    for shard in dict.fromkeys(weight_map.values()):
        if os.path.basename(shard) != shard:
            raise CheckpointError(f"{index} names the shard '{shard}', which is not a file "
                                  f"name in the checkpoint directory")
        files.append(os.path.join(path, shard))
    return files


def read_header(file: str) -> dict[str, TensorInfo]:
    """The tensors of one .safetensors file, from its header: 8 bytes of little-endian header
    length, then a JSON object of name -> {dtype, shape, data_offsets}."""
    try:
        size = os.path.getsize(file)
        with open(file, "rb") as f:
            head = f.read(8)
            if len(head) < 8:
                raise CheckpointError(f"{file} is not a safetensors file (shorter than its "
                                      f"header length)")
            (n,) = struct.unpack("<Q", head)
            if n > min(HEADER_LIMIT, size - 8):
                raise CheckpointError(f"{file} is not a safetensors file (a header of {n} "
                                      f"bytes in a file of {size})")
            header = json.loads(f.read(n))
    except OSError as e:
        raise CheckpointError(f"cannot read {file}: {e.strerror or e}") from None
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise CheckpointError(f"{file} is not a safetensors file (its header is not "
                              f"JSON)") from None
    if not isinstance(header, dict):
        raise CheckpointError(f"{file} is not a safetensors file (its header is not an object)")
    base = 8 + n
    out = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        try:
            dtype, shape = str(entry["dtype"]), tuple(int(d) for d in entry["shape"])
            start, end = (int(x) for x in entry["data_offsets"])
        except (KeyError, TypeError, ValueError):
            raise CheckpointError(f"{file}: the header's entry for '{name}' lacks a dtype, "
                                  f"shape or data_offsets") from None
        if not 0 <= start <= end <= size - base:
            raise CheckpointError(f"{file}: tensor '{name}' lies outside the file (is it "
                                  f"truncated?)")
        item = np.dtype(NUMPY_DTYPES[dtype]).itemsize if dtype in NUMPY_DTYPES else None
        if item is not None and (end - start) != item * int(np.prod(shape, dtype=np.int64)):
            raise CheckpointError(f"{file}: tensor '{name}' has {end - start} bytes, not what "
                                  f"a {dtype} tensor of shape {list(shape)} takes")
        out[name] = TensorInfo(file, dtype, shape, base + start, base + end)
    return out
