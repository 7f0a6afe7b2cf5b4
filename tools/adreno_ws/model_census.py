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
