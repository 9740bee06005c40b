"""torch.compile's dsc backend, and torch.export to .dsc ahead of time.

    register()                                     # torch.compile's backend="dsc"
    compiled = torch.compile(model, backend="dsc", dynamic=True)
    with torch.no_grad():
        y = compiled(x)           # compiles once; later shapes reuse the same dsc function

    art = export(model, (x,), dynamic_shapes={"x": {0: Dim("B", min=1, max=64)}})
    art.source, art.entry, art.weights   # the .dsc text, its function, its weight tensors

How the backend reads a dynamo graph (the importer it reuses is importers/dscimport, the one
torch2dsc runs; docs/importers.md):

1. The graph is copied and made a function of tensors alone. Dynamo passes each dynamic size
   as an int input too (`s77`); a size that some tensor input's shape holds is read from that
   tensor instead (`aten.sym_size`). Any other number (an int argument, a float such as
   LayerNorm's eps, which dynamo passes as a 0-d tensor under `dynamic=True`) is specialized
   to its value at compile time; a later call with another value runs the graph eagerly.
2. torch.export traces the copy to aten ops (non-strict), each of dynamo's dynamic dims as a
   `Dim.DYNAMIC` with dynamo's range. Parameters and buffers, which dynamo passes as inputs,
   stay inputs: the dsc function takes them at every call, so it sees their current values.
3. The importer turns the program into one dsc function. Dynamo's symbols name the dsc
   symbols (`s77`); their ranges and torch's guards on them become `where` clauses.
4. When the importer refuses some nodes, the program is cut
   (torch.fx's CapabilityBasedPartitioner): each part of the nodes it can read becomes one dsc
   function, and the rest runs eagerly as aten ops, with one warning on the "dsc" logger
   naming those ops. A size that one part computes and another uses crosses the cut as a
   SymInt, which the importer reads as its expression over the part's tensor dims.

dsc compiles a function once for every shape its `where` clauses allow, so a dynamo graph with
dynamic shapes compiles once. Dynamo itself specializes sizes 0 and 1 (its symbols start at
2): a call at size 1 is a new graph, dynamo's choice. The functions are for inference: with
autograd on and an input that requires grad, the graph runs eagerly.
"""

from __future__ import annotations

import itertools
import logging
import operator
import re
import weakref
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import torch
import torch._dynamo
import torch._guards
import torch.fx
from torch.export import Dim
from torch.export.graph_signature import (ExportGraphSignature, InputKind, InputSpec,
                                          OutputKind, OutputSpec, SymIntArgument,
                                          TensorArgument)
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
from torch.fx.passes.operator_support import OperatorSupportBase

from . import _dsc

logger = logging.getLogger("dsc")

def _compile_source(source: str, entry: str, target: str) -> Callable[..., Any]:
    """The dsc function `entry` of the module `source`, compiled for `target` ("cpu" or
    "cuda"): it takes torch tensors (its parameters in order) and returns a tensor or a tuple
    of them. The one place the backend calls the compiler."""
    from . import compile as dsc_compile
    return dsc_compile(source, target=target)[entry]


def _dscimport():
    """The torch.export importer's package (importers/dscimport, installed beside dsc), imported
    on first use, with the modules the backend reads: common, program, torch_import,
    torch_node, torch_symbols."""
    import dscimport
    from dscimport import common, program, torch_import, torch_node, torch_symbols  # noqa: F401
    return dscimport


# ---------------------------------------------------------------------------------------------
# Ahead of time: torch.export
# ---------------------------------------------------------------------------------------------

@dataclass
class Exported:
    """A module as dsc source: call `entry` with the module's inputs (in order), then
    `weights.values()` (in order)."""
    source: str
    entry: str
    weights: dict[str, torch.Tensor]
    inputs: list[str]   # the function's input parameters, before the weights
    summary: str        # the importer's one line: ops read, statements, symbols, parameters


def export(module: torch.nn.Module, example_inputs: Sequence, dynamic_shapes=None, *,
           name: str | None = None, dtype: str | None = None,
           strict: bool = False) -> Exported:
    """`module` exported by torch.export.export(module, example_inputs, dynamic_shapes=...,
    strict=strict) and imported as a dsc function named `name` (default: the module's class
    in snake case). The Dims of dynamic_shapes name the symbols, and their ranges are its
    `where` clauses. Parameters and buffers become weights (a Linear's stored transposed,
    [in, out]); dtype ("bf16", "f16", "f32") converts every floating-point tensor. Raises
    dscimport's ImportFailure (every node that cannot be imported) or ModelError."""
    dsci = _dscimport()
    ep = torch.export.export(module, tuple(example_inputs), dynamic_shapes=dynamic_shapes,
                             strict=strict)
    name = name or _snake(type(module).__name__)
    result = dsci.torch_import.import_program(ep, name, source=type(module).__name__,
                                         dynamic_shapes=dynamic_shapes, dtype=dtype)
    inputs = [s.arg.name for s in ep.graph_signature.input_specs
              if s.kind == InputKind.USER_INPUT and isinstance(s.arg, TensorArgument)]
    return Exported(result.text, dsci.program.identifier(name, "model"),
                    {k: _tensor(a) for k, a in result.weights.items()},
                    inputs, result.summary(type(module).__name__))


def _snake(cls_name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", cls_name).lower() or "model"


def _tensor(array) -> torch.Tensor:
    """A weight as the importer stores it (bf16 as its bits, uint16, a type dsc lacks) as a
    torch tensor of its dtype."""
    t = torch.from_numpy(array)
    return t.view(torch.bfloat16) if t.dtype == torch.uint16 else t


# ---------------------------------------------------------------------------------------------
# The dynamo backend
# ---------------------------------------------------------------------------------------------

def backend(gm: torch.fx.GraphModule, example_inputs: list) -> Callable[..., Any]:
    """torch.compile's backend: the dynamo graph `gm` compiled by dsc, as a callable taking
    dynamo's arguments. Whatever dsc cannot take runs eagerly, said on the "dsc" logger."""
    name = _graph_name()
    if torch.is_grad_enabled() and any(isinstance(t, torch.Tensor) and t.requires_grad
                                       for t in example_inputs):
        logger.warning("dsc: %s runs eagerly: autograd is on and its inputs require grad, "
                       "and dsc compiles inference only (call it under torch.no_grad())", name)
        return gm.forward
    prepared = _prepare(gm, example_inputs)
    try:
        # Outside dynamo's tracing context, whose shape environment the export would
        # otherwise use, adding its guards (on the copy's inputs) to dynamo's.
        with torch._guards.tracing(None):
            ep = torch.export.export(prepared.gm, tuple(prepared.args),
                                     dynamic_shapes=prepared.dynamic_shapes(), strict=False)
    except Exception as e:  # noqa: BLE001 - torch.export refuses the graph: eager is correct
        logger.warning("dsc: %s runs eagerly: torch.export cannot trace it (%s)", name,
                       _first_line(e))
        return gm.forward
    ep, _ = _dscimport().torch_import.functionalized(ep)
    lost = prepared.lost_dims(ep)
    if lost:
        logger.warning("dsc: %s runs eagerly: torch.export made the dynamic dims %s static",
                       name, ", ".join(lost))
        return gm.forward
    device = next((t.device for t in prepared.args if t.is_cuda), torch.device("cpu"))
    compiled = _Compiler(ep, name, prepared.dim_names(ep), device).run()
    if compiled is None:
        return gm.forward
    weights = [i for i, t in enumerate(example_inputs)
               if isinstance(t, torch.nn.Parameter) and t.device.type == "cpu"]
    return _Compiled(compiled, prepared.arg_index, prepared.specialized, gm.forward, name,
                     _Constants(weights))


def register(name: str = "dsc") -> None:
    """Makes `torch.compile(model, backend=name)` use `backend`; a name already registered
    is left as it is."""
    if name not in torch._dynamo.list_backends(exclude_tags=()):
        torch._dynamo.register_backend(compiler_fn=backend, name=name)


_GRAPHS = itertools.count()


def _graph_name() -> str:
    """A name for the next graph, unique in the process (dynamo's graph keeps no reference
    to the module compiled): `dynamo_0`, `dynamo_1`, ..."""
    return f"dynamo_{next(_GRAPHS)}"


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return f"{type(e).__name__}: {text.splitlines()[0] if text else ''}"


# ---------------------------------------------------------------------------------------------
# Step 1: a function of tensors
# ---------------------------------------------------------------------------------------------

@dataclass
class _Prepared:
    """Dynamo's graph as a function of its tensor inputs. `args` are the example tensors,
    `arg_index` their positions among dynamo's arguments, `dynamic` each input's dynamic
    axes (axis -> dynamo's symbol, or None for a dim that is an expression, and its range),
    `specialized` the numbers fixed to their value (position, value)."""
    gm: torch.fx.GraphModule
    args: list[torch.Tensor]
    names: list[str]
    arg_index: list[int]
    dynamic: list[dict[int, tuple[str | None, int, int | None]]]
    specialized: list[tuple[int, Any]]

    def dynamic_shapes(self) -> dict:
        return {n: {a: Dim.DYNAMIC(min=lo, max=hi) if hi is not None else Dim.DYNAMIC(min=lo)
                    for a, (_, lo, hi) in axes.items()} or None
                for n, axes in zip(self.names, self.dynamic)}

    @staticmethod
    def _exported_shapes(ep) -> list[tuple]:
        """The shapes of the export's user inputs, which are this function's, in order."""
        users = {s.arg.name for s in ep.graph_signature.input_specs
                 if s.kind == InputKind.USER_INPUT}
        return [tuple(n.meta["val"].shape) for n in ep.graph.nodes
                if n.op == "placeholder" and n.name in users]

    def lost_dims(self, ep) -> list[str]:
        """The dims dynamo left dynamic that the export specialized to a number."""
        shapes = self._exported_shapes(ep)
        return [f"{n}.shape[{a}]" for n, shape, axes in zip(self.names, shapes, self.dynamic)
                for a in axes if not isinstance(shape[a], torch.SymInt)]

    def dim_names(self, ep) -> dict[str, str]:
        """The importer's names of the export's symbols: dynamo's (`s77`)."""
        out: dict[str, str] = {}
        for shape, axes in zip(self._exported_shapes(ep), self.dynamic):
            for a, (sym, _, _) in axes.items():
                key = str(shape[a].node.expr)
                if sym is not None and key not in out:
                    out[key] = sym
        return out


def _prepare(gm: torch.fx.GraphModule, example_inputs: list) -> _Prepared:
    """A copy of dynamo's graph (dynamo keeps running the original where dsc cannot) taking
    tensors alone: sizes read from the tensors, other numbers fixed, inputs renamed."""
    graph = torch.fx.Graph()
    graph.output(graph.graph_copy(gm.graph, {}))
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    # Each of dynamo's symbols that a tensor input's dim is, and the first such dim.
    bound: dict = {}
    for node in placeholders:
        value = node.meta.get("example_value")
        if isinstance(value, torch.Tensor):
            for axis, d in enumerate(value.shape):
                if _symbol(d) is not None:
                    bound.setdefault(_symbol(d), (node, axis))
    after = placeholders[-1]
    args, names, arg_index, dynamic, specialized = [], [], [], [], []
    for i, node in enumerate(placeholders):
        value = node.meta.get("example_value", example_inputs[i])
        if isinstance(value, torch.SymInt) and _symbol(value) in bound:
            with graph.inserting_after(after):
                size = graph.call_function(torch.ops.aten.sym_size.int, bound[_symbol(value)])
            size.meta["example_value"] = value
            node.replace_all_uses_with(size)
            graph.erase_node(node)
        elif isinstance(value, torch.Tensor) and not _is_number(node):
            # A tensor of its own for torch.export, which marks its example tensors.
            args.append(example_inputs[i].detach())
            arg_index.append(i)
            dynamic.append(_dynamic_axes(value))
            node._rename(_input_name(node.name))
            node.target = node.name
            names.append(node.name)
        else:
            number = _concrete(example_inputs[i])
            _replace_with_constant(graph, node, number)
            specialized.append((i, number))
    graph.lint()
    return _Prepared(torch.fx.GraphModule(gm, graph), args, names, arg_index, dynamic,
                     specialized)


def _symbol(d) -> str | None:
    """Dynamo's symbol (`s77`) when the size d is exactly one."""
    if isinstance(d, torch.SymInt) and d.node.expr.is_Symbol:
        return str(d.node.expr)
    return None


def _dynamic_axes(value: torch.Tensor) -> dict[int, tuple[str | None, int, int | None]]:
    out = {}
    for axis, d in enumerate(value.shape):
        if not isinstance(d, torch.SymInt) or d.node.maybe_as_int() is not None:
            continue
        vr = d.node.shape_env.bound_sympy(d.node.expr)
        range_bound = _dscimport().torch_symbols.range_bound
        lo, hi = range_bound(vr.lower), range_bound(vr.upper)
        out[axis] = (_symbol(d), 0 if lo is None else lo, hi)
    return out


def _is_number(node: torch.fx.Node) -> bool:
    """A number dynamo passes as a 0-d tensor (an unspecialized float under dynamic=True)
    that the graph only reads with `.item()`."""
    arg = node.meta.get("grapharg")
    return bool(getattr(arg, "pass_arg_as_tensor", False)) and all(
        u.op == "call_method" and u.target == "item" for u in node.users)


def _concrete(v):
    """An example argument as a Python number."""
    if isinstance(v, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        return v.node.hint
    if isinstance(v, torch.Tensor):
        return v.item()
    return v


def _replace_with_constant(graph: torch.fx.Graph, node: torch.fx.Node, number) -> None:
    """Every use of the number `node` (and of its `.item()`) becomes `number` itself."""
    for user in list(node.users):
        if user.op == "call_method" and user.target == "item":
            _replace_with_constant(graph, user, number)
            continue
        user.args = torch.fx.node.map_arg(user.args, lambda n: number if n is node else n)
        user.kwargs = torch.fx.node.map_arg(user.kwargs, lambda n: number if n is node else n)
    graph.erase_node(node)


def _input_name(name: str) -> str:
    """A readable name for dynamo's placeholder: `l_self_modules_qkv_parameters_weight_` is
    `qkv_weight`, `l_x_` is `x`."""
    name = re.sub(r"^l_(self_)?", "", name.lower())
    name = re.sub(r"(^|_)(modules|parameters|buffers)_", r"\1", name).strip("_")
    return name or "input"


# ---------------------------------------------------------------------------------------------
# Steps 2-4: import, cut, compile
# ---------------------------------------------------------------------------------------------

class _DscFunction:
    """A compiled dsc function and where its parameters come from: `params` holds, for each
    parameter in order, the position of its tensor among the caller's arguments or a captured
    tensor (a weight the importer made). Returns a tuple of tensors."""

    def __init__(self, fn: Callable[..., Any], params: list[int | torch.Tensor]):
        self.fn = fn
        self.params = params

    def __call__(self, *args) -> tuple:
        out = self.fn(*[args[p] if isinstance(p, int) else p for p in self.params])
        return tuple(out) if isinstance(out, (tuple, list)) else (out,)


class _Part(torch.nn.Module):
    """A part of a cut program in the partitioned module, run by its dsc function; returns a
    tensor or a tuple as the part's graph did."""

    def __init__(self, fn: _DscFunction, single: bool):
        super().__init__()
        self.fn = fn
        self.single = single

    def forward(self, *args):
        out = self.fn(*args)
        return out[0] if self.single else out


class _Compiler:
    """An ExportedProgram (dynamo's graph as aten ops) compiled as one dsc function, or cut
    into parts dsc compiles with the rest left to torch."""

    def __init__(self, ep, name: str, dim_names: dict[str, str], device: torch.device):
        self.ep = ep
        self.name = name
        self.dim_names = dim_names
        self.device = device  # the inputs', where the captured weights go
        self.target = "cuda" if device.type == "cuda" else "cpu"
        self.eager_ops: Counter = Counter()

    def run(self) -> Callable[..., tuple] | None:
        """A callable taking the export's user inputs, or None when nothing compiled."""
        common = _dscimport().common
        try:
            fn = self.compile(self.ep, self.name)
        except common.ImportFailure as failure:
            return self.cut(failure)
        except common.ModelError as e:
            logger.warning("dsc: %s runs eagerly: %s", self.name, e)
            return None
        return fn

    def compile(self, ep, name: str) -> _DscFunction | None:
        """ep's user inputs (in order), compiled; None when the compiler refuses it (said
        on the logger). Raises the importer's ImportFailure and ModelError."""
        dsci = _dscimport()
        result = dsci.torch_import.import_program(
            ep, name, source=f"dynamo graph {self.name}", dim_names=self.dim_names)
        entry = dsci.program.identifier(name, "model")
        logger.info("dsc: %s", result.summary(entry))
        logger.debug("dsc: the source of %s:\n%s", entry, result.text)
        try:
            fn = _compile_source(result.text, entry, self.target)
        except Exception as e:  # noqa: BLE001 - the compiler's refusal: eager is correct
            logger.warning("dsc: %s runs eagerly: dsc cannot compile it (%s)", entry,
                           _first_line(e))
            return None
        specs = [s for s in ep.graph_signature.input_specs if s.kind == InputKind.USER_INPUT]
        params: list[int | torch.Tensor] = [i for i, s in enumerate(specs)
                                            if isinstance(s.arg, TensorArgument)]
        params += [_tensor(a).to(self.device) for a in result.weights.values()]
        return _DscFunction(fn, params)

    def cut(self, failure) -> Callable[..., tuple] | None:
        """The program with each part the importer can read compiled, the rest eager."""
        gm = self.ep.graph_module
        nodes = {n.name: n for n in gm.graph.nodes}
        refused = {p.node for p in failure.problems}
        for p in failure.problems:
            if p.node in nodes and nodes[p.node].op == "call_function":
                self.eager_ops[p.op] += 1
        support = _ImporterSupport(refused, _dscimport().torch_node)
        partitioner = CapabilityBasedPartitioner(gm, support, allows_single_node_partition=True)
        cut = partitioner.fuse_partitions(partitioner.propose_partitions())
        n_parts = 0
        for node in list(cut.graph.nodes):
            if node.op != "call_module":
                continue
            part = self.compile_part(getattr(cut, node.target), f"{self.name}_{n_parts}")
            if part is not None:
                setattr(cut, node.target, part)
                n_parts += 1
        if self.eager_ops:
            ops = ", ".join(op + (f" ({k} nodes)" if k > 1 else "")
                            for op, k in sorted(self.eager_ops.items()))
            logger.warning("dsc: %s: ops the dsc importer does not support run eagerly: %s "
                           "(the rest runs in %d dsc function%s)", self.name, ops, n_parts,
                           "" if n_parts == 1 else "s")
        if n_parts == 0:
            return None
        return _Outer(cut, self.ep)

    def compile_part(self, sub: torch.fx.GraphModule, name: str) -> _Part | None:
        """One part as a dsc function; None when it stays eager: the importer refuses some
        of its nodes after all (counted among the eager ops), or the part itself."""
        common = _dscimport().common
        out_node = next(n for n in sub.graph.nodes if n.op == "output")
        single = not isinstance(out_node.args[0], (tuple, list))
        try:
            fn = self.compile(_part_program(sub, self.ep), name)
        except common.ImportFailure as failure:
            self.eager_ops.update(p.op for p in failure.problems)
            return None
        except common.ModelError as e:
            logger.warning("dsc: %s runs eagerly: %s", name, e)
            return None
        return None if fn is None else _Part(fn, single)


class _ImporterSupport(OperatorSupportBase):
    """The nodes a dsc part may hold: aten ops with a converter that the importer did not
    refuse, computing tensors (sizes stay with torch and cross the cut as SymInts)."""

    def __init__(self, refused: set[str], torch_node):
        super().__init__()
        self.refused = refused
        self.torch_node = torch_node

    def is_node_supported(self, submodules, node: torch.fx.Node) -> bool:
        if node.op != "call_function" or node.name in self.refused:
            return False
        value = node.meta.get("val")
        values = value if isinstance(value, (tuple, list)) else [value]
        if not values or not all(isinstance(v, torch.Tensor) for v in values):
            return False
        if node.target is operator.getitem:
            return True
        return self.torch_node.op_name(node.target) in self.torch_node.CONVERTERS


def _part_program(sub: torch.fx.GraphModule, ep) -> torch.export.ExportedProgram:
    """A part of the cut program as an ExportedProgram of its own, for the importer: its
    placeholders are user inputs (tensors, and sizes as SymInts), its results user outputs,
    its symbols and their ranges the whole program's."""
    graph = torch.fx.Graph()
    outputs = graph.graph_copy(sub.graph, {})
    outputs = tuple(outputs) if isinstance(outputs, (tuple, list)) else (outputs,)
    graph.output(outputs)
    inputs = []
    for node in graph.nodes:
        if node.op == "placeholder":
            arg = TensorArgument(node.name) if isinstance(node.meta.get("val"), torch.Tensor) \
                else SymIntArgument(node.name)
            inputs.append(InputSpec(InputKind.USER_INPUT, arg, None))
    signature = ExportGraphSignature(
        inputs, [OutputSpec(OutputKind.USER_OUTPUT, TensorArgument(o.name), None)
                 for o in outputs])
    return torch.export.ExportedProgram(torch.fx.GraphModule(sub, graph), graph, signature, {},
                                        ep.range_constraints, [])


class _Outer:
    """The cut program: the export's graph module, with its parts replaced by dsc functions,
    called with the export's user inputs (its lifted constants added)."""

    def __init__(self, gm: torch.fx.GraphModule, ep):
        self.gm = gm
        self.inputs: list[int | torch.Tensor] = []
        n_user = 0
        for spec in ep.graph_signature.input_specs:
            if spec.kind == InputKind.USER_INPUT:
                self.inputs.append(n_user)
                n_user += 1
            elif spec.target in ep.state_dict:
                self.inputs.append(ep.state_dict[spec.target])
            else:
                self.inputs.append(ep.constants[spec.target])

    def __call__(self, *args) -> tuple:
        out = self.gm(*[args[p] if isinstance(p, int) else p for p in self.inputs])
        return tuple(out) if isinstance(out, (tuple, list)) else (out,)


class _Constants:
    """The module's parameters, which dynamo passes as arguments, declared constant to the
    runtime (dsc_declare_constant), so that matmuls pack each weight once instead of on every
    call, as dsc.Module.bind does. A parameter changed in place (an optimizer step,
    load_state_dict) bumps its version counter: it is then declared again, and packed again."""

    def __init__(self, positions: list[int]):
        self.positions = positions
        self.declared: dict[int, tuple[int, int, torch.Tensor]] = {}  # position -> ptr, version
        weakref.finalize(self, _release_all, self.declared)

    def refresh(self, args: tuple) -> None:
        for i in self.positions:
            t = args[i]
            seen = self.declared.get(i)
            if seen is not None and seen[0] == t.data_ptr() and seen[1] == t._version:
                continue
            if seen is not None:
                _release(seen[2])
            value = t.detach()
            _release(value)  # a stale declaration of this memory, by anyone
            try:
                _dsc.declare_constant(value)
            except Exception:  # noqa: BLE001 - not declarable (empty): packed per call
                self.declared.pop(i, None)
                continue
            self.declared[i] = (t.data_ptr(), t._version, value)


def _release(value: torch.Tensor) -> None:
    try:
        _dsc.release_constant(value)
    except Exception:  # noqa: BLE001 - not declared
        pass


def _release_all(declared: dict) -> None:
    for _, _, value in declared.values():
        _release(value)


class _Compiled:
    """What the backend returns to dynamo: called with dynamo's arguments; its tensors go to
    the compiled program. A specialized number that differs runs the graph eagerly."""

    def __init__(self, program: Callable[..., tuple], arg_index: list[int],
                 specialized: list[tuple[int, Any]], eager: Callable[..., Any], name: str,
                 constants: _Constants):
        self.program = program
        self.constants = constants
        self.arg_index = arg_index
        self.specialized = specialized
        self.eager = eager
        self.name = name
        self.warned = False

    def __call__(self, *args):
        for i, value in self.specialized:
            if _concrete(args[i]) != value:
                if not self.warned:
                    logger.warning("dsc: %s runs eagerly: argument %d is %r, compiled as %r "
                                   "(said once)", self.name, i, _concrete(args[i]), value)
                    self.warned = True
                return self.eager(*args)
        self.constants.refresh(args)
        return self.program(*[args[i] for i in self.arg_index])
