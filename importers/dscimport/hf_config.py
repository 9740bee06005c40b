"""Reading a transformers config.json for hf2dsc: each field the architecture's template needs,
with its type checked, and each field that would change the math in a way the template does
not implement recorded as a problem. Every problem of a config is collected (never just the
first), so that hf2dsc lists them together before it writes anything.
"""

from __future__ import annotations

_MISSING = object()

# transformers' activation names (ACT2FN) -> the nn.dsc function that computes the same.
ACTIVATIONS = {"gelu": "nn.gelu", "gelu_new": "nn.gelu_tanh",
               "gelu_pytorch_tanh": "nn.gelu_tanh", "relu": "nn.relu", "silu": "nn.silu",
               "swish": "nn.silu"}


# The largest size a config field may give (a dim, a count of layers or positions): past it
# the config is refused before anything is allocated from it.
MAX_SIZE = 1 << 24


class Config:
    def __init__(self, config: dict):
        self.data = config
        self.problems: list[str] = []

    def problem(self, text: str) -> None:
        self.problems.append(text)

    def get(self, key: str, default=_MISSING):
        """A field's value (None when it is absent and default is None); a problem when it is
        absent and has no default."""
        if key in self.data:
            return self.data[key]
        if default is _MISSING:
            self.problem(f"config.json has no '{key}'")
            return None
        return default

    def _field(self, key: str, default):
        """(value, missing): get()'s value, a null standing for the field's default as
        transformers reads it; missing when the field is absent and required (get() said so)."""
        v = self.get(key, default)
        if v is None and key in self.data and default is not _MISSING and default is not None:
            v = default
        return v, v is None and key not in self.data and default is not None

    def int(self, key: str, default=_MISSING, minimum: int = 1) -> int:
        """A whole number >= minimum and at most MAX_SIZE. A wrong value is a problem and
        reads as `minimum`, so that the shapes computed from it stay valid while the other
        fields are checked."""
        v, missing = self._field(key, default)
        if missing:
            return minimum
        if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
            self.problem(f"config.json's '{key}' is {v!r}: expected an integer >= {minimum}")
            return minimum
        if v > MAX_SIZE:
            self.problem(f"config.json's '{key}' is {v!r}: expected at most {MAX_SIZE}")
            return minimum
        return v

    def float(self, key: str, default=_MISSING) -> float:
        v, missing = self._field(key, default)
        if missing:
            return 1.0
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            self.problem(f"config.json's '{key}' is {v!r}: expected a number")
            return 1.0
        return float(v)

    def bool(self, key: str, default=_MISSING) -> bool:
        v = self.get(key, default)
        if not isinstance(v, bool):
            self.problem(f"config.json's '{key}' is {v!r}: expected true or false")
            return False
        return v

    def activation(self, key: str, default=_MISSING) -> str:
        """The nn.dsc function of an activation field."""
        v = self.get(key, default)
        if not isinstance(v, str) or v not in ACTIVATIONS:
            self.problem(f"config.json's '{key}' is {v!r}: hf2dsc implements "
                         f"{', '.join(sorted(ACTIVATIONS))}")
            return "nn.relu"
        return ACTIVATIONS[v]

    def refuse_if(self, key: str, default, bad, why: str) -> None:
        """A problem when the field's value (or default) satisfies `bad`: the template does
        not implement it, and `why` says what it would change."""
        v = self.data.get(key, default)
        if bad(v):
            self.problem(f"config.json's '{key}' is {v!r}: {why}")

    def divides(self, whole: int, whole_key: str, part: int, part_key: str) -> None:
        if part and whole % part:
            self.problem(f"config.json's '{whole_key}' ({whole}) is not a multiple of "
                         f"'{part_key}' ({part})")
