"""ONNX to dsc: one graph becomes one dsc function (program.py prints it).

    result = import_model(onnx.load(path), name="bert")
    result.text      # the .dsc source
    result.weights   # {parameter name: numpy array}, for the .safetensors file

How a graph is read:
- Graph inputs are parameters. Each `dim_param` becomes a symbol (sanitized to a dsc
  identifier; the same dim_param is the same symbol everywhere), each unnamed dynamic dim a
  fresh symbol `D0`, `D1`, ...; every symbol gets `where SYM >= 1`.
- Initializers and Constant nodes are values known at import time (numpy arrays). A run-time
  op that reads one makes it a weight parameter, named after the initializer and stored in the
  .safetensors file under that name; a scalar (or a uniform constant that does not change the
  result's shape) is written as a literal instead.
- Shape computations are folded at import time: `Shape` gives a vector of symbolic Dims, and
  Gather, Concat, Unsqueeze, Squeeze, Slice, Reshape, Cast, arithmetic, Equal, Where, Expand,
  ConstantOfShape and Range on such vectors are evaluated by numpy on object arrays. Reshape,
  Expand, Slice and ConstantOfShape then take the folded dims, so the .dsc says
  `reshape(q, [B, S, 2, 8])`, not a run-time shape tensor.
- Every other node becomes dsc ops through CONVERTERS (onnx_node.py), one function per ONNX op
  type: arithmetic, activations, normalization, matmul and reductions in onnx_ops.py, shapes
  and layout in onnx_layout.py, convolutions, batch norms and pools in onnx_conv.py, GatherND,
  GatherElements, CumSum and IsNaN in onnx_index.py.

Failure: every node whose op type has no converter, or whose attributes or inputs a converter
cannot express, is collected (`Problem`), and `ImportFailure` lists them all at once. A model
that is not valid ONNX (a cycle, a value nothing defines, a bad attribute) is `ModelError`.
"""

from __future__ import annotations

from collections import Counter

from . import dtypes, onnx_conv, onnx_index, onnx_layout, onnx_ops, symdim
from .common import (ImportFailure, ImportResult, ModelError, Problem, Unsupported,
                     no_converter)
from .onnx_node import (CONVERTERS, MAX_OPSET, MIN_OPSET, Node, TensorProto, dtype_of_enum,
                        is_symbolic, tensor_array, to_dims, weight_hint)
from .program import Program, Value
from .symdim import Dim, Undecided


# The converters register themselves in onnx_node's CONVERTERS when their modules are imported.
CONVERTER_MODULES = (onnx_ops, onnx_layout, onnx_conv, onnx_index)


# ---------------------------------------------------------------------------------------------
# The importer
# ---------------------------------------------------------------------------------------------

class Importer:
    def __init__(self, model, name: str, source: str):
        self.model = model
        self.graph = model.graph
        self.prog = Program(name)
        self.source = source
        self.values: dict[str, Value] = {}
        self.poisoned: set[str] = set()
        self.problems: list[tuple[int, Problem]] = []  # with the node's index in the graph
        self.opset = self._opset()
        self._uses = Counter()
        self._readers: dict[str, list] | None = None
        # A node's output already computed by an earlier node that folded it in (a
        # BatchNormalization folded into its Conv, onnx_conv.py): output name -> value.
        self.folded: dict[str, Value] = {}

    def _opset(self) -> int:
        versions = {o.domain: o.version for o in self.model.opset_import}
        v = versions.get("", versions.get("ai.onnx"))
        if v is None:
            raise ModelError("the model imports no version of the default ONNX domain")
        if not MIN_OPSET <= v <= MAX_OPSET:
            raise ModelError(f"opset {v} is not supported (this importer reads opsets "
                             f"{MIN_OPSET} to {MAX_OPSET}; onnx.version_converter can convert)")
        return v

    def is_used(self, name: str) -> bool:
        return self._uses[name] > 0

    def readers(self, name: str) -> list:
        """The nodes that read `name`, once per read; a graph output is a None entry. For
        converters that look one node ahead (a Conv folding the BatchNormalization after it)."""
        if self._readers is None:
            self._readers = {}
            for nd in self.graph.node:
                for x in _node_inputs(nd):
                    self._readers.setdefault(x, []).append(nd)
            for o in self.graph.output:
                self._readers.setdefault(o.name, []).append(None)
        return self._readers.get(name, [])

    # -- graph ----------------------------------------------------------------------------

    def _sorted_nodes(self) -> list[tuple[int, object]]:
        """Nodes in a topological order (stable); a cycle or an undefined input is an error."""
        g = self.graph
        nodes = list(enumerate(g.node))
        defined = {i.name for i in g.input} | {t.name for t in g.initializer} | {""}
        producer: dict[str, int] = {}
        for i, nd in nodes:
            for o in nd.output:
                if o:
                    if o in producer or o in defined:
                        raise ModelError(f"value '{o}' is defined twice (node "
                                         f"'{nd.name or nd.op_type}')")
                    producer[o] = i
        deps: dict[int, set[int]] = {}
        for i, nd in nodes:
            ds = set()
            for name in _node_inputs(nd):
                if name in defined:
                    continue
                if name not in producer:
                    raise ModelError(f"node '{nd.name or nd.op_type}' (#{i}) reads '{name}', "
                                     f"which no node, input or initializer defines")
                ds.add(producer[name])
            deps[i] = ds
        order, done = [], set()
        remaining = [i for i, _ in nodes]
        while remaining:
            progress = [i for i in remaining if deps[i] <= done]
            if not progress:
                names = [g.node[i].name or f"{g.node[i].op_type}#{i}" for i in remaining[:6]]
                raise ModelError("the graph has a cycle: nodes " + ", ".join(
                    f"'{s}'" for s in names) + (" ..." if len(remaining) > 6 else "") +
                    " depend on each other")
            for i in progress:
                done.add(i)
                order.append(i)
            remaining = [i for i in remaining if i not in done]
        return [(i, g.node[i]) for i in order]

    def _inputs(self) -> None:
        init_names = {t.name for t in self.graph.initializer}
        symbols: dict[str, str] = {}
        fresh = 0
        for inp in self.graph.input:
            if inp.name in init_names:
                continue
            t = inp.type
            if t.WhichOneof("value") != "tensor_type":
                raise ModelError(f"input '{inp.name}' is not a tensor")
            dtype = dtype_of_enum(t.tensor_type.elem_type, f"input '{inp.name}'")
            if not t.tensor_type.HasField("shape"):
                raise ModelError(f"input '{inp.name}' has no shape (rank unknown)")
            dims = []
            for d in t.tensor_type.shape.dim:
                if d.HasField("dim_value") and d.dim_value >= 0:
                    dims.append(int(d.dim_value))
                    continue
                key = d.dim_param if d.HasField("dim_param") and d.dim_param else None
                if key is None:
                    while f"D{fresh}" in symbols.values():
                        fresh += 1
                    name = self.prog.add_symbol(f"D{fresh}")
                    fresh += 1
                elif key in symbols:
                    name = symbols[key]
                else:
                    name = self.prog.add_symbol(key)
                    symbols[key] = name
                dims.append(Dim.symbol(name))
            v = self.prog.add_input(inp.name, dtype, dims)
            if v.name != inp.name:
                self.prog.header.append(f"ONNX input '{inp.name}' is the parameter {v.name}.")
            self.values[inp.name] = v
        for t in self.graph.initializer:
            if t.data_location == TensorProto.EXTERNAL and not t.raw_data:
                raise ModelError(f"initializer '{t.name}' lives in an external file that was "
                                 f"not loaded")
            arr, dtype = tensor_array(t, f"initializer '{t.name}'")
            self.values[t.name] = self.prog.constant(arr, dtype, weight_hint(t.name))

    def run(self) -> ImportResult:
        g = self.graph
        _check_strings(self.model)
        order = self._sorted_nodes()
        for _, nd in order:
            for name in _node_inputs(nd):
                self._uses[name] += 1
        for o in g.output:
            self._uses[o.name] += 1
        try:
            self._inputs()
        except Unsupported as e:
            raise ModelError(str(e)) from None
        counts: Counter = Counter(nd.op_type for _, nd in order)
        for i, nd in order:
            domain = nd.domain if nd.domain not in ("", "ai.onnx") else ""
            op = f"{domain}.{nd.op_type}" if domain else nd.op_type
            if domain or nd.op_type not in CONVERTERS:
                why = (f"ops of domain '{domain}' are not supported" if domain
                       else no_converter(nd.op_type))
                self._fail(op, nd, i, why)
                continue
            n = Node(self, nd, i)
            if any(name in self.poisoned for name in _node_inputs(nd)):
                try:
                    n.check_schema()
                    precheck = CONVERTERS.precheck(nd.op_type)
                    if precheck is not None:
                        precheck(n)
                except (Unsupported, ModelError) as e:
                    self._fail(op, nd, i, str(e))
                self._poison(nd)
                continue
            try:
                n.check_schema()
                precheck = CONVERTERS.precheck(nd.op_type)
                if precheck is not None:
                    precheck(n)
                CONVERTERS.get(nd.op_type)(n)
                extra = n.unread_attrs()
                if extra:
                    raise Unsupported("attribute" + ("s " if len(extra) > 1 else " ") +
                                      ", ".join(f"'{a}'" for a in extra) + " not supported")
                for k, o in enumerate(nd.output):
                    if o and o not in self.values and self.is_used(o):
                        raise Unsupported(f"output {k} ('{o}') is not supported")
            except (Unsupported, Undecided) as e:
                self._fail(op, nd, i, str(e))
            except ModelError as e:
                self._fail(op, nd, i, f"invalid node: {e}")
        if self.problems:
            raise ImportFailure([p for _, p in sorted(self.problems, key=lambda ip: ip[0])])
        if not g.output:
            raise ModelError("the graph has no outputs")
        outs = []
        for o in g.output:
            if o.name not in self.values:
                raise ModelError(f"graph output '{o.name}' is not defined")
            v = self.values[o.name]
            if v.is_const() and is_symbolic(v.const):
                raise ModelError(f"graph output '{o.name}' is the shape value "
                                 f"{to_dims(v.const)}, which a dsc function cannot return")
            outs.append(v)
        self.prog.set_returns(outs)
        self.prog.header.insert(0, f"Imported from {self.source} by importers/onnx2dsc.py "
                                   f"(ONNX opset {self.opset}, {len(order)} node"
                                   f"{'' if len(order) == 1 else 's'}).")
        text = self.prog.text()
        weights = self.prog.weight_arrays()
        used_syms = [s for s in self.prog.symbols
                     if any(s in symdim.as_dim(d).symbols() for v in self.prog.inputs
                            for d in v.shape)]
        return ImportResult(text=text, weights=weights, op_counts=counts, op_unit="ONNX node",
                            symbols=used_syms, n_inputs=len(self.prog.inputs),
                            n_statements=self.prog.statement_count)

    def _fail(self, op: str, nd, i: int, reason: str) -> None:
        self.problems.append((i, Problem(op, nd.name, f"#{i}", reason)))
        self._poison(nd)

    def _poison(self, nd) -> None:
        for o in nd.output:
            if o:
                self.poisoned.add(o)


def _check_strings(msg) -> None:
    """ModelError for a string field that is not UTF-8 (protobuf then gives bytes, not str:
    a corrupt name or op type would reach the converters)."""
    for fd, value in msg.ListFields():
        if fd.type == fd.TYPE_STRING:
            for v in [value] if isinstance(value, (str, bytes)) else value:
                if not isinstance(v, str):
                    raise ModelError(f"a {msg.DESCRIPTOR.name}'s {fd.name} is not UTF-8 text: "
                                     f"{v[:60]!r}")
        elif fd.type == fd.TYPE_MESSAGE:
            for m in [value] if hasattr(value, "ListFields") else value:
                _check_strings(m)


def _node_inputs(nd) -> list[str]:
    """The values a node reads, those of its subgraphs (If/Loop bodies) included."""
    names = [x for x in nd.input if x]
    for a in nd.attribute:
        for sub in ([a.g] if a.HasField("g") else []) + list(a.graphs):
            inner = {o for n in sub.node for o in n.output} | {i.name for i in sub.input} | \
                    {t.name for t in sub.initializer}
            for n2 in sub.node:
                names += [x for x in _node_inputs(n2) if x not in inner]
    return names


def import_model(model, name: str, source: str = "model.onnx",
                 dtype: str | None = None) -> ImportResult:
    """The .dsc text and weights of an ONNX model; dtype ("bf16", "f16", "f32") converts every
    floating-point tensor to it (dtypes.py). Raises ImportFailure or ModelError."""
    with dtypes.converting(dtype):
        imp = Importer(model, name, source)
        if dtype:
            imp.prog.header.append(dtypes.note(dtype))
        return imp.run()


def supported_ops() -> list[str]:
    return CONVERTERS.ops()
