"""Texture census of a compiled model: how many operators run on textures, how many on buffers.

``census(lowered_mod)`` takes the Relax module after the texture target's legalization phase
(``relax.pipeline.legalize_passes``; there ``SpecializePrimFuncBasedOnCallSite`` has written
the memory scope of every PrimFunc parameter) and classifies each PrimFunc, and each call to
it, by the scopes of its parameters:

``texture``  some parameter lives in a ``global.texture*`` scope (the op reads or writes images)
``buffer``   every parameter is a plain buffer

Layout transforms (packing to and unpacking from NCHW4c) are counted apart from operators: they
are the price of the texture path, not part of the model.  The PrimFunc name decides that, so
the split is a report, not a check.

It also accepts a built ``VMExecutable``: then the OpenCL source decides (a kernel with an
``image2d_array_t`` parameter is a texture kernel), which works for a module loaded from disk.

The result is a flat dict of ints (plus ``"source"``), ready for ``json.dumps``.

``buffer_reasons(lowered_mod, target)`` says, for every operator call left on buffers, why:
the first of these that holds (``REASONS`` has the wording):

- ``symbolic-shape``: a tensor of the call has a dimension unknown at compile time;
- ``image-limits``: a blocked (``...x4``) tensor would not fit the target's image limits;
- ``not-4d``: no tensor of the call is a 4-D image candidate (``[N, C/4, H, W, 4]`` needs a
  4-D NCHW/NHWC original): flattened features, logits, boxes;
- ``channels``: a 4-D tensor with a channel count that is not a multiple of 4 (on the
  model's channel axis): no whole RGBA pixels, so no conversion;
- ``no-layout-rule``: a 4-D tensor the pipeline did not convert to ``NCHW4c``: the op has no
  layout rule that keeps it in blocked channels;
- ``no-texture-rule``: blocked tensors that fit, but the op is one the texture annotation
  keeps on buffers (no texture schedule for it).

``half_storage_census(lowered_mod, target)`` continues the lowering of a legalized module up to
the texture storage plan and says, for every tensor a function allocates, whether float16
texture storage (``HalfTextureStorage``, the option ``relax.adreno.float16_storage``) keeps it
in half pixels, and why not (``HalfTextureStorage``'s ``REASONS``: a buffer, another dtype, a
texture the plan leaves to flat storage, a texture passed to a packed function).

``census_model(path, input_shapes)`` imports an ``.onnx`` or ``.tflite`` file and returns
both; ``python -m adreno_ws census MODEL`` prints them, with the progress of the import and of
every legalization pass on stderr (``adreno_ws.progress``: in place on a terminal, a line per
step in a log).
"""

from __future__ import annotations

import re
from typing import Dict, Iterable, List

TEXTURE_SCOPE_PREFIX = "global.texture"
_LAYOUT_HINT = "layout_transform"


def _scopes_of(prim_func) -> List[str]:
    """Storage scope of each PrimFunc parameter (a buffer parameter's type is a BufferType
    carrying ``storage_scope``; scalar parameters have none)."""
    return [str(getattr(p.ty, "storage_scope", "") or "global") for p in prim_func.params]


def _is_layout_transform(name: str) -> bool:
    return _LAYOUT_HINT in name


def _call_tir_targets(mod) -> List[str]:
    """Names of the PrimFuncs called by call_tir, one entry per call site, in program order."""
    import tvm  # pylint: disable=import-outside-toplevel
    from tvm import relax  # pylint: disable=import-outside-toplevel

    op = tvm.ir.Op.get("relax.call_tir")
    names: List[str] = []

    def _visit(expr):
        if isinstance(expr, relax.Call) and expr.op.same_as(op):
            names.append(expr.args[0].name_hint)

    for _, func in mod.functions_items():
        if isinstance(func, relax.Function):
            relax.analysis.post_order_visit(func, _visit)
    return names


def _tally(kinds: Dict[str, str], names: Iterable[str], prefix: str) -> Dict[str, int]:
    counts = {f"{prefix}texture": 0, f"{prefix}buffer": 0, f"{prefix}layout_transform": 0}
    for name in names:
        if _is_layout_transform(name):
            counts[f"{prefix}layout_transform"] += 1
        else:
            counts[f"{prefix}{kinds[name]}"] += 1
    return counts


def census_of_module(lowered_mod) -> Dict[str, object]:
    """Census from the PrimFunc parameter scopes of a legalized Relax module."""
    from tvm import tirx  # pylint: disable=import-outside-toplevel

    kinds: Dict[str, str] = {}
    for gvar, func in lowered_mod.functions_items():
        if isinstance(func, tirx.PrimFunc):
            texture = any(s.startswith(TEXTURE_SCOPE_PREFIX) for s in _scopes_of(func))
            kinds[gvar.name_hint] = "texture" if texture else "buffer"
    result: Dict[str, object] = {"source": "primfunc-scopes"}
    result.update(_tally(kinds, sorted(kinds), "kernels_"))
    called = [n for n in _call_tir_targets(lowered_mod) if n in kinds]
    result.update(_tally(kinds, called, "calls_"))
    return result


_KERNEL_RE = re.compile(r"__kernel\s+void\s+(\w+)\s*\(([^)]*)\)")


def census_of_executable(executable) -> Dict[str, object]:
    """Census from the OpenCL source of a built executable (kernels, not call sites)."""
    sources: List[str] = []

    def _walk(module):
        for imported in module.imports:
            if imported.kind == "opencl":
                sources.append(imported.inspect_source())
            _walk(imported)

    _walk(executable.mod)
    kinds: Dict[str, str] = {}
    for name, params in _KERNEL_RE.findall("\n".join(sources)):
        # TVM splits a PrimFunc into kernels named <func>_kernel[_N]; count each once.
        kinds[name] = "texture" if "image2d_array_t" in params else "buffer"
    result: Dict[str, object] = {"source": "opencl-kernels"}
    result.update(_tally(kinds, sorted(kinds), "kernels_"))
    return result


def census(lowered_mod) -> Dict[str, object]:
    """Texture census of a legalized Relax module (or of a built VMExecutable).

    Keys: ``kernels_texture``, ``kernels_buffer``, ``kernels_layout_transform`` (distinct
    PrimFuncs or OpenCL kernels) and, for a module, ``calls_texture``, ``calls_buffer``,
    ``calls_layout_transform`` (call sites, so a kernel reused by ten layers counts ten times).
    """
    from tvm import ir  # pylint: disable=import-outside-toplevel

    if isinstance(lowered_mod, ir.IRModule):
        return census_of_module(lowered_mod)
    if hasattr(lowered_mod, "mod") and hasattr(lowered_mod.mod, "imports"):
        return census_of_executable(lowered_mod)
    raise TypeError(
        f"census() takes a legalized tvm.IRModule or a relax VMExecutable, "
        f"not {type(lowered_mod).__name__}"
    )


REASONS = {
    "symbolic-shape": "symbolic shape: a dimension is unknown at compile time",
    "image-limits": "shape over the image limits of the target",
    "not-4d": "not a 4-D image tensor (flattened features, logits, boxes)",
    "channels": "channels not a multiple of 4: the tensor was not converted to NCHW4c",
    "no-layout-rule": "layout not converted: the op has no NCHW4c layout rule",
    "no-texture-rule": "no texture schedule for the op: it stays on buffers in NCHW4c",
}


def _static_dims(buffer_shape) -> List[int] | None:
    dims = []
    for dim in buffer_shape:
        if not hasattr(dim, "value"):
            return None
        dims.append(int(dim.value))
    return dims


def _reason_of(prim_func, limits, channel_axis: int) -> str:
    """Why a PrimFunc whose parameters are all buffers stays there (a key of REASONS)."""
    # pylint: disable=import-outside-toplevel
    from tvm.relax.backend.adreno.transform.balance_texture_scope import choose_texture_scope

    shapes = []
    for param in prim_func.params:
        shape = getattr(param.ty, "shape", None)  # a BufferType; scalars have none
        if shape is None:
            continue
        dims = _static_dims(shape)
        if dims is None:
            return "symbolic-shape"
        shapes.append(dims)
    blocked = [d for d in shapes if len(d) >= 3 and d[-1] == 4]
    if any(choose_texture_scope(d, limits) == "global" for d in blocked):
        return "image-limits"
    if blocked:
        return "no-texture-rule"
    if any(len(d) == 4 and d[channel_axis] % 4 for d in shapes):
        return "channels"
    if any(len(d) == 4 for d in shapes):
        return "no-layout-rule"
    return "not-4d"


def buffer_reasons(lowered_mod, target, channel_axis: int = 1) -> List[Dict[str, object]]:
    """For each PrimFunc called on buffers (layout transforms aside), in program order:
    ``{"func", "calls", "reason", "why"}`` (``reason`` a key of REASONS, ``why`` its text).
    ``channel_axis``: the model's channel axis in 4-D tensors (1 for NCHW, 3 for NHWC)."""
    # pylint: disable=import-outside-toplevel
    from tvm import tirx
    from tvm.relax.backend.adreno.transform.balance_texture_scope import TextureLimits

    limits = TextureLimits.from_target(target)
    calls: Dict[str, int] = {}
    for name in _call_tir_targets(lowered_mod):
        calls[name] = calls.get(name, 0) + 1
    rows = []
    for name, count in calls.items():
        func = lowered_mod[name]
        if not isinstance(func, tirx.PrimFunc) or _is_layout_transform(name):
            continue
        if any(s.startswith(TEXTURE_SCOPE_PREFIX) for s in _scopes_of(func)):
            continue
        reason = _reason_of(func, limits, channel_axis)
        rows.append({"func": name, "calls": count, "reason": reason, "why": REASONS[reason]})
    return rows


def format_census(name: str, counts: Dict[str, object]) -> str:
    """One line for logs: ``name: 12 texture / 5 buffer ops (+8 layout transforms), calls ...``."""
    line = (
        f"{name}: {counts['kernels_texture']} texture / {counts['kernels_buffer']} buffer kernels"
        f" (+{counts['kernels_layout_transform']} layout transforms)"
    )
    if "calls_texture" in counts:
        line += (
            f"; calls {counts['calls_texture']} texture / {counts['calls_buffer']} buffer"
            f" (+{counts['calls_layout_transform']} layout transforms)"
        )
    return line


# ----------------------------------------------------------------------------------------
# A model file: import, lower for the texture target, census and reasons
# ----------------------------------------------------------------------------------------

TEXTURE_TARGET = "qcom/adreno-opencl-texture"


def parse_input_shapes(specs: Iterable[str]) -> Dict[str, List[int]]:
    """``["x=1,3,224,224", ...]`` -> ``{"x": [1, 3, 224, 224]}`` (WsError on a bad spec)."""
    from . import WsError  # pylint: disable=import-outside-toplevel

    shapes: Dict[str, List[int]] = {}
    for spec in specs:
        name, sep, dims = spec.partition("=")
        try:
            shape = [int(d) for d in dims.split(",")]
        except ValueError:
            shape = []
        if not sep or not name or not shape or any(d <= 0 for d in shape):
            raise WsError(
                f"--input-shape {spec!r}: write NAME=D0,D1,... with positive integers "
                "(e.g. x=1,3,224,224)"
            )
        shapes[name] = shape
    return shapes


def _dynamic_inputs_error(path, dynamic: Dict[str, str]):
    from . import WsError  # pylint: disable=import-outside-toplevel

    listed = ", ".join(f"{name} {dims}" for name, dims in dynamic.items())
    example = " ".join(f"--input-shape {name}=..." for name in dynamic)
    return WsError(f"{path.name}: input shape not fixed ({listed}): pass {example}")


def _import_onnx(path, shapes: Dict[str, List[int]]):
    from . import WsError  # pylint: disable=import-outside-toplevel

    import onnx  # pylint: disable=import-outside-toplevel
    from tvm.relax.frontend.onnx import from_onnx  # pylint: disable=import-outside-toplevel

    try:
        model = onnx.load(str(path))
    except Exception as err:  # pylint: disable=broad-except
        raise WsError(
            f"{path.name} is not a valid ONNX model ({type(err).__name__}: "
            f"{str(err).strip().splitlines()[0][:160] if str(err).strip() else 'unreadable'}): "
            "check the file"
        ) from None
    initializers = {init.name for init in model.graph.initializer}
    dynamic = {}
    shape_dict = {}
    for value in model.graph.input:
        if value.name in initializers:
            continue
        dims = [
            d.dim_value if d.dim_value > 0 else (d.dim_param or "?")
            for d in value.type.tensor_type.shape.dim
        ]
        if value.name in shapes:
            shape_dict[value.name] = shapes[value.name]
        elif all(isinstance(d, int) for d in dims):
            shape_dict[value.name] = dims
        else:
            dynamic[value.name] = "x".join(str(d) for d in dims)
    if dynamic:
        raise _dynamic_inputs_error(path, dynamic)
    unknown = sorted(set(shapes) - set(shape_dict))
    if unknown:
        raise WsError(
            f"{path.name} has no input named {', '.join(unknown)} "
            f"(inputs: {', '.join(shape_dict)})"
        )
    return from_onnx(model, shape_dict=shape_dict, keep_params_in_input=False)


def _import_tflite(path, shapes: Dict[str, List[int]]):
    from . import WsError  # pylint: disable=import-outside-toplevel

    import tflite  # pylint: disable=import-outside-toplevel
    from tvm.relax.frontend.tflite import from_tflite  # pylint: disable=import-outside-toplevel

    data = path.read_bytes()
    if len(data) < 8 or not tflite.Model.ModelBufferHasIdentifier(data, 0):
        raise WsError(
            f"{path.name} is not a TFLite flatbuffer (no 'TFL3' identifier): " "check the file"
        )
    model = tflite.Model.GetRootAsModel(data, 0)
    graph = model.Subgraphs(0)
    dynamic = {}
    for i in range(graph.InputsLength()):
        tensor = graph.Tensors(graph.Inputs(i))
        name = tensor.Name().decode()
        signature = tensor.ShapeSignatureAsNumpy() if tensor.ShapeSignatureLength() else None
        if signature is not None and (signature < 0).any() and name not in shapes:
            dynamic[name] = "x".join("?" if d < 0 else str(d) for d in signature)
    if dynamic:
        raise _dynamic_inputs_error(path, dynamic)
    return from_tflite(model, shape_dict={k: tuple(v) for k, v in shapes.items()} or None)


def import_model(path, shapes: Dict[str, List[int]]):
    """A Relax module from an .onnx or .tflite file; WsError with one line when the file is
    missing, corrupt, has an input shape left dynamic or an operator no frontend converts."""
    from pathlib import Path  # pylint: disable=import-outside-toplevel

    from . import WsError  # pylint: disable=import-outside-toplevel

    path = Path(path)
    if not path.is_file():
        raise WsError(f"{path}: no such file")
    importers = {".onnx": _import_onnx, ".tflite": _import_tflite}
    if path.suffix not in importers:
        raise WsError(f"{path.name}: unknown model format: give an .onnx or .tflite file")
    import warnings  # pylint: disable=import-outside-toplevel

    import tvm  # pylint: disable=import-outside-toplevel

    try:
        with warnings.catch_warnings():
            # the frontends warn about every checker complaint; the errors below say what counts
            warnings.simplefilter("ignore")
            return importers[path.suffix](path, shapes)
    except WsError:
        raise
    except tvm.error.OpNotImplemented as err:
        raise WsError(
            f"{path.name}: the {path.suffix[1:]} frontend cannot convert an operator: "
            f"{_first_line(err)}"
        ) from None
    except Exception as err:  # pylint: disable=broad-except
        raise WsError(
            f"{path.name}: the {path.suffix[1:]} frontend failed ({type(err).__name__}: "
            f"{_first_line(err)}): the model uses something TVM cannot import"
        ) from None


def _first_line(err: BaseException) -> str:
    lines = [l.strip() for l in str(err).splitlines() if l.strip()]
    # TVM errors end with the message; Python ones start with it.
    text = lines[-1] if lines and type(err).__module__.startswith("tvm") else (lines or [""])[0]
    return text[:200]


def texture_target():
    """The texture target the census lowers for (an LLVM host)."""
    import tvm  # pylint: disable=import-outside-toplevel

    return tvm.target.Target(TEXTURE_TARGET, host="llvm")


def legalization_passes(target) -> list:
    """The passes of ``target``'s library dispatch and legalization phases, in order."""
    from tvm import relax  # pylint: disable=import-outside-toplevel

    with target:
        return relax.pipeline.library_dispatch_passes(target) + relax.pipeline.legalize_passes(
            target
        )


def legalize_for_texture(mod, target=None, progress=None):
    """The module after the texture target's legalization phase (scopes decided).

    Parameters
    ----------
    mod : tvm.IRModule
        The imported model.
    target : Optional[tvm.target.Target]
        The texture target (default: :func:`texture_target`).
    progress : Optional[adreno_ws.progress.Progress]
        When given, the passes of :func:`legalization_passes` run one at a time (each as a
        ``Sequential`` of one, so a pass is skipped at the same optimization level as in the
        whole phase) and each is a step of it.

    Returns
    -------
    lowered, target : tvm.IRModule, tvm.target.Target
        The legalized module and the target it was legalized for.
    """
    import tvm  # pylint: disable=import-outside-toplevel

    target = target or texture_target()
    passes = legalization_passes(target)
    with target:
        if progress is None:
            return tvm.transform.Sequential(passes)(mod), target
        for one in passes:
            mod = tvm.transform.Sequential([one])(mod)
            progress.step(one.info.name)
        return mod, target


def census_model(
    path, shapes: Dict[str, List[int]] | None = None, stream=None, float16_storage=False
):
    """(census counts, buffer reasons) of a model file on the texture target.

    Parameters
    ----------
    path : str or Path
        An ``.onnx`` or ``.tflite`` file.
    shapes : Optional[Dict[str, List[int]]]
        Shapes of the inputs the file leaves dynamic.
    stream : Optional[TextIO]
        Where the progress of the import and of every legalization pass goes
        (:class:`~adreno_ws.progress.Progress`: a line redrawn in place on a terminal, a line
        per step otherwise); None: no progress. A file that does not import prints none.
    float16_storage : bool
        Also lower to the texture storage plan and add ``counts["float16_storage"]``
        (:func:`half_storage_census`).

    Returns
    -------
    counts, reasons : Dict[str, object], List[Dict[str, object]]
        As :func:`census` and :func:`buffer_reasons` give them.
    """
    from pathlib import Path  # pylint: disable=import-outside-toplevel

    from . import WsError  # pylint: disable=import-outside-toplevel
    from .progress import Progress  # pylint: disable=import-outside-toplevel

    target, progress = texture_target(), None
    if stream is not None:
        # the import, every legalization pass, the census; a line once the import is done
        total = len(legalization_passes(target)) + 2
        progress = Progress("census", total, "steps", stream)
    mod = import_model(path, shapes or {})
    if progress is not None:
        progress.step(f"imported {Path(path).name}")
    try:
        lowered, target = legalize_for_texture(mod, target, progress)
    except Exception as err:  # pylint: disable=broad-except
        if progress is not None:
            progress.close()
        raise WsError(
            f"the texture pipeline failed on this model ({type(err).__name__}: "
            f"{_first_line(err)}): report it with the model attached"
        ) from None
    channel_axis = 3 if str(path).endswith(".tflite") else 1  # TFLite models are NHWC
    counts, reasons = census(lowered), buffer_reasons(lowered, target, channel_axis)
    if float16_storage:
        try:
            counts["float16_storage"] = half_storage_census(lowered, target)
        except Exception as err:  # pylint: disable=broad-except
            if progress is not None:
                progress.close()
            raise WsError(
                f"the texture storage plan failed on this model ({type(err).__name__}: "
                f"{_first_line(err)}): report it with the model attached"
            ) from None
    if progress is not None:
        progress.step("census")
        progress.close()
    return counts, reasons


def half_storage_census(lowered_mod, target) -> Dict[str, object]:
    """Which tensors float16 texture storage keeps in half, and why the others stay float32.

    Parameters
    ----------
    lowered_mod : tvm.IRModule
        The module after the texture target's legalization (:func:`legalize_for_texture`).
    target : tvm.target.Target
        The texture target it was legalized for.

    Returns
    -------
    counts : Dict[str, object]
        ``{"tensors": {reason: count}, "reasons": {reason: wording}}``, the reasons being
        ``HalfTextureStorage``'s (``half`` for the tensors it keeps in half pixels).
    """
    import tvm  # pylint: disable=import-outside-toplevel
    from tvm import relax  # pylint: disable=import-outside-toplevel
    from tvm.relax.backend.adreno.transform import (  # pylint: disable=import-outside-toplevel
        half_storage_decisions,
        half_texture_storage,
    )

    with target:
        passes = []
        for one in relax.pipeline.dataflow_lower_passes(target):
            passes.append(one)
            if one.info.name == "PlanTextureStorage":
                break
        planned = tvm.transform.Sequential(passes)(lowered_mod)
    tensors: Dict[str, int] = {}
    for decisions in half_storage_decisions(planned).values():
        for decision in decisions:
            tensors[decision.reason] = tensors.get(decision.reason, 0) + 1
    return {"tensors": tensors, "reasons": dict(half_texture_storage.REASONS)}


def format_half_storage(counts: Dict[str, object]) -> List[str]:
    """Lines for :func:`half_storage_census`: the tensors in half, then the others by reason."""
    tensors = counts["tensors"]
    lines = [f"float16 texture storage: {tensors.get('half', 0)} tensors in half pixels"]
    for reason, text in counts["reasons"].items():
        if reason != "half" and tensors.get(reason):
            lines.append(f"    float32, {text}: {tensors[reason]} tensors")
    return lines


def format_reasons(rows: List[Dict[str, object]]) -> List[str]:
    """Lines for the calls on buffers, grouped by reason."""
    lines = []
    for reason, text in REASONS.items():
        group = [r for r in rows if r["reason"] == reason]
        if group:
            calls = sum(int(r["calls"]) for r in group)
            lines.append(f"on buffers, {text}: {len(group)} kernels, {calls} calls")
            lines.extend(f"    {r['func']} ({r['calls']}x)" for r in group)
    return lines
