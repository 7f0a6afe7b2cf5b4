# Licensed to the Apache Software Foundation (ASF) under one
# or more contributor license agreements.  See the NOTICE file
# distributed with this work for additional information
# regarding copyright ownership.  The ASF licenses this file
# to you under the Apache License, Version 2.0 (the
# "License"); you may not use this file except in compliance
# with the License.  You may obtain a copy of the License at
#
#   http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing,
# software distributed under the License is distributed on an
# "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY
# KIND, either express or implied.  See the License for the
# specific language governing permissions and limitations
# under the License.
"""Helpers for the Adreno texture test suite.

The suite runs on any host with an OpenCL device (PoCL, Intel's CPU runtime, a GPU driver, a
phone over RPC later).  This module answers four questions for the tests:

* Which OpenCL device will the runtime use, and what does it support?  (``opencl_device()``)
* How is a Relax module built for the texture target?  (``build_texture``)
* Did the texture path really happen?  (``texture_call_scopes``, ``assert_conv2d_uses_texture``,
  ``kernel_sources``, ``assert_kernels_use_images``)
* Are the numbers right?  (``random_inputs``, ``run_vm``, ``reference``, ``assert_close``)

Dtype modes
-----------
``float32``
    every tensor float32.
``float16``
    every tensor float16, and conv2d/matmul accumulate in float16 (``out_dtype="float16"``).
``float16_storage``
    every tensor float32 as the user wrote it, compiled with float16 texture storage
    (``HalfTextureStorage``): the images between kernels hold half pixels, the kernels compute
    in float32 (``read_imagef`` / ``write_imagef``), no ``cl_khr_fp16`` needed.  The
    ``dtype_mode`` fixture compiles every texture build of the test that way
    (``float16_storage_builds``).
``float16_acc32``
    every tensor between ops is float16, but conv2d/matmul are emitted with
    ``out_dtype="float32"`` and their result is cast back to float16 right away
    (``astype(conv2d(x, w, out_dtype="float32"), "float16")``).  That is float16 storage with
    float32 accumulation, the same contract as the Relay-era "float16_acc32" tests, written so
    a fusing backend can keep the cast inside the conv kernel.

The reference for every mode is the same network built in float32 for LLVM, fed the inputs of
the device run (for the float16 modes: the float16 inputs upcast exactly to float32).
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import functools
import math
import os
import re
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

import tvm
import tvm_ffi
from tvm import relax

TEXTURE_TARGET_TAG = "qcom/adreno-opencl-texture"
DTYPE_MODES = ("float32", "float16", "float16_acc32")
# A compile option rather than a dtype: kernel-running tests only (the ``dtype_mode`` fixture).
FLOAT16_STORAGE_MODE = "float16_storage"
FP16_MODES = ("float16", "float16_acc32")
TEXTURE_SCOPE_PREFIX = "global.texture"

# Tolerances per dtype mode, as (rtol, atol relative to the largest |reference| value).
#   float32: kernels reorder sums (tiling, vector lanes); over the short reductions used here
#     (<= 9*64 products) float32 reassociation stays below 1e-5 of the output scale.
#   float16: storage and accumulation in half (10-bit mantissa, eps 9.8e-4); a 144..576-term
#     dot product accumulates a few ulp: 2e-2 of the output scale.
#   float16_acc32: half storage (each tensor rounded once per op, 4.9e-4 relative), float32
#     sums: 1e-2.
TOLERANCES = {
    "float32": (1e-4, 1e-5),
    "float16": (2e-2, 2e-2),
    "float16_acc32": (1e-2, 1e-2),
    #   float16_storage: the same half rounding of each tensor written, float32 arithmetic
    #     throughout: the float16_acc32 bound.
    "float16_storage": (1e-2, 1e-2),
}


# ----------------------------------------------------------------------------------------
# OpenCL device discovery
# ----------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ClDevice:
    """The OpenCL device the TVM runtime runs on, as the runtime's enumeration read it."""

    platform: str
    name: str
    image_support: bool
    extensions: Tuple[str, ...]
    # CL_DEVICE_IMAGE2D_MAX_WIDTH, _HEIGHT and CL_DEVICE_IMAGE_MAX_ARRAY_SIZE (0: no images)
    image_limits: Tuple[int, int, int] = (0, 0, 0)

    @property
    def label(self) -> str:
        return f"{self.name.strip()} ({self.platform.strip()})"

    def has(self, extension: str) -> bool:
        return extension in self.extensions


@dataclasses.dataclass(frozen=True)
class DeviceInfo:
    """What the tests know about the OpenCL device the TVM runtime will use."""

    available: bool
    reason: str  # why it is not available, or a description of it
    cl: Optional[ClDevice] = None

    @property
    def label(self) -> str:
        return self.cl.label if self.cl is not None else "unknown OpenCL device"

    @property
    def has_fp16(self) -> bool:
        return self.cl is not None and self.cl.has("cl_khr_fp16")


def _runtime_device(index: int = 0) -> ClDevice:
    """Device ``index`` of the runtime (``TVM_OPENCL_DEVICE`` selects among the loader's)."""
    text = tvm.get_global_func("runtime.opencl.device_string")
    # None for a device without images: the runtime reads their limits only where supported.
    limits = tvm.opencl(index).texture_limits()
    return ClDevice(
        platform=str(text(index, "platform")),
        name=str(text(index, "name")),
        image_support=limits is not None,
        extensions=tuple(str(text(index, "extensions")).split()),
        image_limits=limits or (0, 0, 0),
    )


@functools.lru_cache(maxsize=None)
def opencl_device() -> DeviceInfo:
    """Describe the OpenCL device the TVM runtime will run on, or why there is none."""
    if not tvm.runtime.enabled("opencl"):
        return DeviceInfo(
            False,
            "TVM has no OpenCL runtime (libtvm_runtime_opencl.so is not installed beside "
            "libtvm_runtime.so, so tvm.runtime.enabled('opencl') is False)",
        )
    if not tvm.opencl(0).exist:
        reason = tvm.get_global_func("runtime.opencl.no_device_reason")()
        return DeviceInfo(False, f"TVM's OpenCL runtime found no device: {reason}")
    cl = _runtime_device()
    if not cl.image_support:
        return DeviceInfo(False, f"{cl.label} has no image support", cl)
    return DeviceInfo(True, cl.label, cl)


def tvm_device():
    return tvm.opencl(0)


def device_skip_reason(dtype_mode: str = "float32") -> Optional[str]:
    """Why kernels of ``dtype_mode`` cannot run here (None: they can).  The reasons are the
    suite's skip messages: "no OpenCL device: ..." and "device X lacks cl_khr_fp16"."""
    info = opencl_device()
    if not info.available:
        return f"no OpenCL device: {info.reason}"
    if dtype_mode in FP16_MODES and not info.has_fp16:
        return f"device {info.label} lacks cl_khr_fp16"
    return None


def require_device(dtype_mode: str = "float32", done: str = "") -> None:
    """Skip the rest of a test, with the reason, when the device cannot run ``dtype_mode``.
    ``done`` says what the test already checked (e.g. the compile-side assertions)."""
    reason = device_skip_reason(dtype_mode)
    if reason is not None:
        import pytest  # pylint: disable=import-outside-toplevel

        pytest.skip(f"{reason}{f' ({done})' if done else ''}")


# ----------------------------------------------------------------------------------------
# Building
# ----------------------------------------------------------------------------------------


def texture_target() -> tvm.target.Target:
    return tvm.target.Target(TEXTURE_TARGET_TAG, host="llvm")


def config_at_extreme(config_cls, target: tvm.target.Target, pick: Callable):
    """``config_cls`` with every knob at ``pick`` (``min`` or ``max``) of its choices that
    ``target`` takes (work-group sizes up to its thread limit)."""
    limit = int(target.attrs["max_num_threads"])
    values = {}
    for name, choices in config_cls.choices().items():
        if name in config_cls.THREAD_KNOBS:
            choices = [v for v in choices if v <= limit]
        values[name] = pick(choices)
    return config_cls(**values)


def force_configs(monkeypatch, configs) -> None:
    """For the rest of the test, each config's class returns it from ``from_target``."""
    for config in configs:
        monkeypatch.setattr(
            type(config), "from_target", classmethod(lambda _cls, _target, cfg=config: cfg)
        )


def count_schedules(monkeypatch, rules) -> Dict[str, int]:
    """For the rest of the test, how many PrimFuncs each schedule rule class of ``rules``
    schedules, by class name (filled as they do; a rule that schedules none is absent)."""
    taken: Dict[str, int] = {}
    for rule in rules:

        def _counting(self, func, target, tunable, _apply=rule.apply, _name=rule.__name__):
            sch = _apply(self, func, target, tunable)
            if sch is not None:
                taken[_name] = taken.get(_name, 0) + 1
            return sch

        monkeypatch.setattr(rule, "apply", _counting)
    return taken


_WORKAROUND_TIR_PIPELINE = "texture-tests-adreno-base-workaround"


def _adreno_tir_factory():
    # Importing the Adreno backend registers its TIR pipeline under the name "adreno".
    import tvm.s_tir.backend.adreno  # noqa: F401  pylint: disable=import-outside-toplevel
    from tvm.tirx import compilation_pipeline  # pylint: disable=import-outside-toplevel

    return compilation_pipeline.PIPELINE_MAP["adreno"]


def _register_workaround_pipeline() -> str:
    """Register the base's Adreno TIR pipeline in the (pipeline, host, device) form tvm.compile
    expects.  Only used while the base registers it as a single Pass."""
    from tvm.s_tir import pipeline as s_tir_pipeline  # pylint: disable=import-outside-toplevel
    from tvm.tirx import compilation_pipeline  # pylint: disable=import-outside-toplevel

    factory = _adreno_tir_factory()

    def _factory(**kwargs):
        result = factory(**kwargs)
        if isinstance(result, tuple):
            return result
        return result, s_tir_pipeline.finalize_host_passes, s_tir_pipeline.finalize_device_passes

    compilation_pipeline.register_tir_pipeline(_WORKAROUND_TIR_PIPELINE, _factory)
    return _WORKAROUND_TIR_PIPELINE


@dataclasses.dataclass
class BuildMode:
    plain: bool  # True: tvm.compile(mod, target) as a user would write it
    note: str


def _probe_module() -> tvm.IRModule:
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((1, 8, 6, 6), "float32"))
    w = relax.Var("w", relax.TensorType((8, 8, 3, 3), "float32"))
    with bb.function("main", [x, w]):
        with bb.dataflow():
            y = bb.emit_output(relax.op.nn.conv2d(x, w, padding=1))
        bb.emit_func_output(y)
    return bb.get()


@functools.lru_cache(maxsize=None)
def build_mode() -> BuildMode:
    """Decide once per process how texture modules are built.

    The goal is the plain call ``tvm.compile(mod, target=Target("qcom/adreno-opencl-texture",
    host="llvm"))``.  It is used when it works and runs the Adreno TIR pipeline (observed by
    wrapping the registered factory).  On the unfixed base it does not (the generic TIR pipeline
    runs and emits invalid OpenCL, and the Adreno pipeline cannot be named because it is
    registered as a single Pass); then the Adreno TIR pipeline is passed by name in the form
    tvm.compile expects.  ``TEXTURE_TESTS_BUILD=plain|workaround`` forces one.
    ``test_plain_compile_uses_adreno_tir_pipeline`` fails as long as the workaround is needed.
    """
    forced = os.environ.get("TEXTURE_TESTS_BUILD", "").lower()
    if forced == "plain":
        return BuildMode(True, "forced by TEXTURE_TESTS_BUILD=plain")
    if forced == "workaround":
        _register_workaround_pipeline()
        return BuildMode(False, "forced by TEXTURE_TESTS_BUILD=workaround")
    used, error = plain_compile_uses_adreno_tir_pipeline()
    if used:
        return BuildMode(True, "plain tvm.compile runs the Adreno TIR pipeline")
    _register_workaround_pipeline()
    return BuildMode(False, f"plain tvm.compile does not run the Adreno TIR pipeline: {error}")


def plain_compile_uses_adreno_tir_pipeline() -> Tuple[bool, str]:
    """Compile a tiny conv2d with the plain call; report whether the Adreno TIR pipeline ran."""
    from tvm.tirx import compilation_pipeline  # pylint: disable=import-outside-toplevel

    factory = _adreno_tir_factory()
    calls = []

    def _spy(**kwargs):
        calls.append(1)
        return factory(**kwargs)

    compilation_pipeline.PIPELINE_MAP["adreno"] = _spy
    try:
        tvm.compile(_probe_module(), target=texture_target())
    except Exception as err:  # pylint: disable=broad-except
        return False, f"{type(err).__name__}: {str(err).strip().splitlines()[-1][:200]}"
    finally:
        compilation_pipeline.PIPELINE_MAP["adreno"] = factory
    if not calls:
        return False, "it compiled with another TIR pipeline (the generic one)"
    return True, ""


_SWEEP_BUILDS: list = []


def adreno_options(**options) -> tvm.transform.PassContext:
    """A PassContext with the Adreno backend's options ``relax.adreno.<name>`` set, e.g.
    ``adreno_options(winograd="4", conv_weights_in_textures=True)``."""
    return tvm.transform.PassContext(
        config={f"relax.adreno.{name}": value for name, value in options.items()}
    )


def _sweep_cached(build: Callable[[], object], mod: tvm.IRModule, key: str):
    """In seed-sweep mode (``TEXTURE_TESTS_SEED_SWEEP``), a test body runs once per seed:
    a module that does not depend on the seed is compiled once and its executable reused.
    Outside the sweep every call compiles."""
    if int(os.environ.get("TEXTURE_TESTS_SEED_SWEEP", "0") or 0) <= 0:
        return build()
    ctx = tvm.transform.PassContext.current()
    # The Adreno options (relax.adreno.*) are PassContext config: part of the key.
    key = (
        f"{key}|{texture_target()}|{dict(ctx.config)}|{list(ctx.disabled_pass)}"
        f"|half={_FLOAT16_STORAGE_BUILDS.get()}"
    )
    for cached_key, cached_mod, executable in _SWEEP_BUILDS:
        if cached_key == key and tvm_ffi.structural_equal(cached_mod, mod, map_free_vars=True):
            return executable
    snapshot = tvm.ir.load_json(tvm.ir.save_json(mod))
    executable = build()
    _SWEEP_BUILDS.append((key, snapshot, executable))
    del _SWEEP_BUILDS[:-64]
    return executable


_FLOAT16_STORAGE_BUILDS = contextvars.ContextVar("float16_storage_builds", default=False)


@contextlib.contextmanager
def float16_storage_builds():
    """Within: every texture build of the suite uses float16 texture storage."""
    token = _FLOAT16_STORAGE_BUILDS.set(True)
    try:
        yield
    finally:
        _FLOAT16_STORAGE_BUILDS.reset(token)


def _compile_texture(mod: tvm.IRModule):
    if _FLOAT16_STORAGE_BUILDS.get():
        return build_texture_half_storage(mod)
    target = texture_target()
    if build_mode().plain:
        return tvm.compile(mod, target=target)
    return tvm.compile(mod, target=target, tir_pipeline=_WORKAROUND_TIR_PIPELINE)


def build_texture(mod: tvm.IRModule):
    """Build ``mod`` for the Adreno texture target; returns a VMExecutable."""
    return _sweep_cached(lambda: _compile_texture(mod), mod, f"texture-{build_mode().plain}")


def _has_call_tir(mod: tvm.IRModule) -> bool:
    call_tir = tvm.ir.Op.get("relax.call_tir")
    found = []

    def _visit(expr):
        if not found and isinstance(expr, relax.Call) and expr.op.same_as(call_tir):
            found.append(expr)

    for _, func in mod.functions_items():
        if isinstance(func, relax.Function):
            relax.analysis.post_order_visit(func, _visit)
            if found:
                return True
    return False


@tvm.instrument.pass_instrument
class _LastCallTirModule:
    """Keeps the module after the last Relax pass that still shows ``call_tir``: the state
    after legalization, fusion and scope annotation, before the VM lowering erases the
    per-call scopes.  Only module-level passes over Relax functions are looked at."""

    def __init__(self):
        self.mod = None

    def run_after_pass(self, mod, info):  # pylint: disable=unused-argument
        if any(isinstance(f, relax.Function) for _, f in mod.functions_items()) and _has_call_tir(mod):
            self.mod = mod


def build_texture_with_scopes(mod: tvm.IRModule):
    """``build_texture`` that also returns the module as the pipeline had it before VM
    lowering (the one the scope helpers read), taken from inside the same compilation."""

    def _build():
        snap = _LastCallTirModule()
        current = tvm.transform.PassContext.current()
        with tvm.transform.PassContext(
            opt_level=current.opt_level,
            required_pass=list(current.required_pass),
            disabled_pass=list(current.disabled_pass),
            config=dict(current.config),
            instruments=list(current.instruments) + [snap],
        ):
            ex = _compile_texture(mod)
        assert snap.mod is not None, "the texture pipeline never produced call_tir"
        return snap.mod, ex

    return _sweep_cached(_build, mod, f"texture-scopes-{build_mode().plain}")


def build_llvm(mod: tvm.IRModule):
    return _sweep_cached(lambda: tvm.compile(mod, target=tvm.target.Target("llvm")), mod, "llvm")


def lower_to_scopes(mod: tvm.IRModule) -> tvm.IRModule:
    """Run the Relax pipeline of the texture target up to (and including) legalization.

    That is where memory scopes are decided: every ``call_tir`` argument and result carries a
    ``VDevice`` whose ``memory_scope`` is ``global`` or ``global.texture*``.  The phase lists
    come from ``tvm.relax.pipeline`` (which dispatches on the target), so the check follows
    whatever the Adreno backend registers.
    """
    target = texture_target()
    with target:
        passes = relax.pipeline.library_dispatch_passes(target)
        passes += relax.pipeline.legalize_passes(target)
        return tvm.transform.Sequential(passes)(mod)


# ----------------------------------------------------------------------------------------
# Scope assertions
# ----------------------------------------------------------------------------------------


def _scope_of(sinfo) -> str:
    vdev = getattr(sinfo, "vdevice", None)
    return "global" if vdev is None else str(vdev.memory_scope)


def _scopes(sinfo) -> List[str]:
    if isinstance(sinfo, relax.TupleType):
        return [s for f in sinfo.fields for s in _scopes(f)]
    return [_scope_of(sinfo)]


@dataclasses.dataclass
class CallScopes:
    func: str  # name of the PrimFunc called
    inputs: List[str]
    outputs: List[str]

    def __str__(self):
        return f"{self.func}({', '.join(self.inputs)}) -> ({', '.join(self.outputs)})"


def texture_call_scopes(lowered: tvm.IRModule) -> List[CallScopes]:
    """The memory scope of every call_tir argument and result, in program order."""
    found: List[CallScopes] = []
    call_tir = tvm.ir.Op.get("relax.call_tir")

    def _visit(expr):
        if isinstance(expr, relax.Call) and expr.op.same_as(call_tir):
            args = expr.args[1]
            arg_list = list(args.fields) if isinstance(args, relax.Tuple) else [args]
            found.append(
                CallScopes(
                    func=expr.args[0].name_hint,
                    inputs=[s for a in arg_list for s in _scopes(a.ty)],
                    outputs=_scopes(expr.ty_args[0]),
                )
            )

    for _, func in lowered.functions_items():
        if isinstance(func, relax.Function):
            relax.analysis.post_order_visit(func, _visit)
    return found


def is_texture(scope: str) -> bool:
    return scope.startswith(TEXTURE_SCOPE_PREFIX)


def count_texture_tensors(lowered: tvm.IRModule) -> int:
    """How many call_tir results are produced into a texture scope."""
    return sum(is_texture(s) for c in texture_call_scopes(lowered) for s in c.outputs)


def describe_scopes(lowered: tvm.IRModule) -> str:
    return "\n  ".join(str(c) for c in texture_call_scopes(lowered)) or "(no call_tir)"


def conv2d_calls(lowered: tvm.IRModule) -> List[CallScopes]:
    return [c for c in texture_call_scopes(lowered) if "conv2d_NCHWc" in c.func]


def assert_conv2d_uses_texture(lowered: tvm.IRModule, min_convs: int = 1) -> None:
    """Every Adreno conv2d kernel reads (or writes) at least one texture, and there are at
    least ``min_convs`` of them: the texture conv2d path was taken, not a buffer fallback."""
    convs = conv2d_calls(lowered)
    assert len(convs) >= min_convs, (
        f"expected >= {min_convs} Adreno conv2d_NCHWc kernels, scopes are:\n  "
        + describe_scopes(lowered)
    )
    for call in convs:
        assert any(is_texture(s) for s in call.inputs + call.outputs), (
            f"{call.func} touches no texture; scopes are:\n  " + describe_scopes(lowered)
        )


def assert_conv2d_output_texture(lowered: tvm.IRModule) -> None:
    """At least one conv2d result lives in a texture (it feeds a texture-capable consumer)."""
    convs = conv2d_calls(lowered)
    assert any(is_texture(s) for c in convs for s in c.outputs), (
        "no conv2d result is in a texture scope; scopes are:\n  " + describe_scopes(lowered)
    )


def assert_scopes(lowered: tvm.IRModule, expected: Dict[str, Tuple[Sequence[str], Sequence[str]]]):
    """Check (input scopes, output scopes) for call_tir targets whose name contains a key."""
    calls = texture_call_scopes(lowered)
    for key, (ins, outs) in expected.items():
        matching = [c for c in calls if key in c.func]
        assert matching, f"no call to a PrimFunc named like {key!r}:\n  " + describe_scopes(lowered)
        assert any(list(c.inputs) == list(ins) and list(c.outputs) == list(outs) for c in matching), (
            f"{key}: expected ({list(ins)}) -> ({list(outs)}); scopes are:\n  "
            + describe_scopes(lowered)
        )


# ----------------------------------------------------------------------------------------
# OpenCL source assertions
# ----------------------------------------------------------------------------------------


def device_sources(ex) -> str:
    """The OpenCL C source of every OpenCL module imported by the executable."""
    sources = []

    def _walk(module):
        for imported in module.imports:
            if imported.kind == "opencl":
                sources.append(imported.inspect_source())
            _walk(imported)

    _walk(ex.mod)
    return "\n".join(sources)


_UNIT_RE = re.compile(r"^// Function: (\w+)\s*$", re.M)
_DEFINITION_RE = r"__kernel\s+void\s+{name}\s*\(([^)]*)\)\s*\{{"


@dataclasses.dataclass
class Kernel:
    name: str
    params: str
    body: str

    @property
    def image_params(self) -> List[str]:
        return re.findall(r"image2d_array_t\s+(\w+)", self.params)

    @property
    def reads_image(self) -> bool:
        return bool(re.search(r"\b(read_image[fh]|READ_IMAGE[FH])\s*\(", self.body))

    @property
    def writes_image(self) -> bool:
        return bool(re.search(r"\bwrite_image[fh]\s*\(", self.body))


def kernel_sources(ex) -> Dict[str, Kernel]:
    """Kernel definitions in the generated OpenCL, by name.

    TVM emits one unit per kernel, each starting with ``// Function: <name>`` and holding the
    preamble, prototypes of all kernels and the one definition; the body of a kernel is the
    text after its definition up to the next unit."""
    src = device_sources(ex)
    units = list(_UNIT_RE.finditer(src))
    kernels = {}
    for i, unit in enumerate(units):
        end = units[i + 1].start() if i + 1 < len(units) else len(src)
        text = src[unit.end() : end]
        name = unit.group(1)
        match = re.search(_DEFINITION_RE.format(name=re.escape(name)), text)
        if match is None:
            continue
        kernels[name] = Kernel(name, match.group(1), text[match.end() :])
    assert kernels or not src.strip(), "cannot find kernel definitions in the OpenCL source"
    return kernels


def assert_images_used_as_images(ex) -> None:
    """No image parameter is touched as memory (vload/vstore, indexing, pointer arithmetic):
    the generic TIR pipeline does that to texture buffers and the result is invalid OpenCL."""
    for kernel in kernel_sources(ex).values():
        for img in kernel.image_params:
            bad = re.search(
                rf"(\b{img}\s*\[|vload\w*\([^;]*\b{img}\b|vstore\w*\([^;]*\b{img}\b|\b{img}\s*\+)",
                kernel.body,
            )
            assert bad is None, f"kernel {kernel.name} uses image {img} as memory: {bad.group(0)!r}"


def assert_kernels_use_images(ex, conv_name: str = "conv2d") -> None:
    """The generated OpenCL really reads and writes images: some kernel writes an image
    (packing into a texture), every conv2d kernel set reads one, and images are declared
    ``image2d_array_t``, and no image is touched as memory.  The pixel type (float or half
    reads) is not checked: a backend may read half images with read_imagef."""
    kernels = kernel_sources(ex)
    assert kernels, "no OpenCL kernels in the executable"
    with_images = {n: k for n, k in kernels.items() if k.image_params}
    assert with_images, "no kernel takes an image2d_array_t parameter:\n" + ", ".join(kernels)
    assert any(k.writes_image for k in kernels.values()), "no kernel writes an image"
    conv = {n: k for n, k in kernels.items() if conv_name in n}
    if conv:
        assert any(k.reads_image for k in conv.values()), (
            f"no {conv_name} kernel reads an image: {sorted(conv)}"
        )
    assert_images_used_as_images(ex)


# ----------------------------------------------------------------------------------------
# Networks, inputs, running, comparing
# ----------------------------------------------------------------------------------------


class NetBuilder:
    """Builds a Relax ``main`` whose parameters are created on use.

    Weights are parameters (not constants), so every run gets fresh random weights as well as
    fresh activations.  Parameter names carry their role for ``random_inputs``:
    ``w*`` conv/dense weights (scaled by 1/sqrt(fan_in)), ``g*`` gains around 1, anything else
    activations or biases.
    """

    def __init__(self, dtype_mode: str = "float32"):
        assert dtype_mode in DTYPE_MODES + (FLOAT16_STORAGE_MODE,), dtype_mode
        self.mode = dtype_mode
        self.dtype = "float16" if dtype_mode in FP16_MODES else "float32"
        self.bb = relax.BlockBuilder()
        self.params: List[relax.Var] = []
        self._names: Dict[str, int] = {}
        self._func_scope = self.bb.function("main")
        self._func_scope.__enter__()
        self._df_scope = self.bb.dataflow()
        self._df_scope.__enter__()

    def param(self, prefix: str, shape: Sequence[int], dtype: Optional[str] = None) -> relax.Var:
        idx = self._names.get(prefix, 0)
        self._names[prefix] = idx + 1
        var = relax.Var(f"{prefix}{idx}", relax.TensorType(list(shape), dtype or self.dtype))
        self.params.append(var)
        return var

    def input(self, shape: Sequence[int]) -> relax.Var:
        return self.param("x", shape)

    def emit(self, expr) -> relax.Var:
        return self.bb.emit(expr)

    def const(self, value: float) -> relax.Constant:
        return relax.const(value, self.dtype)

    def conv2d(self, x, out_channels: int, kernel: int = 3, stride: int = 1, padding=None, groups: int = 1):
        in_channels = int(x.ty.shape[1])
        w = self.param("w", (out_channels, in_channels // groups, kernel, kernel))
        pad = kernel // 2 if padding is None else padding
        if self.mode == "float16_acc32":
            acc = self.emit(
                relax.op.nn.conv2d(x, w, strides=stride, padding=pad, groups=groups, out_dtype="float32")
            )
            return self.emit(relax.op.astype(acc, "float16"))
        return self.emit(
            relax.op.nn.conv2d(x, w, strides=stride, padding=pad, groups=groups, out_dtype=self.dtype)
        )

    def bias(self, x):
        """Add a per-channel bias (1, C, 1, 1) broadcast over N, H, W."""
        channels = int(x.ty.shape[1])
        b = self.param("b", (1, channels, 1, 1))
        return self.emit(relax.op.add(x, b))

    def dense(self, x, units: int):
        in_units = int(x.ty.shape[-1])
        w = self.param("w", (units, in_units))
        wt = self.emit(relax.op.permute_dims(w))
        if self.mode == "float16_acc32":
            acc = self.emit(relax.op.matmul(x, wt, out_dtype="float32"))
            return self.emit(relax.op.astype(acc, "float16"))
        return self.emit(relax.op.matmul(x, wt, out_dtype=self.dtype))

    def finish(self, *outputs) -> tvm.IRModule:
        out = outputs[0] if len(outputs) == 1 else relax.Tuple(list(outputs))
        gv = self.bb.emit_output(out)
        self._df_scope.__exit__(None, None, None)
        self.bb.emit_func_output(gv, params=self.params)
        self._func_scope.__exit__(None, None, None)
        return self.bb.finalize()


def build_network(fn: Callable[[NetBuilder], Sequence], dtype_mode: str) -> tvm.IRModule:
    """``fn(nb)`` emits ops on a NetBuilder and returns the output(s)."""
    nb = NetBuilder(dtype_mode)
    outs = fn(nb)
    if not isinstance(outs, (list, tuple)):
        outs = [outs]
    return nb.finish(*outs)


def _param_infos(mod: tvm.IRModule) -> List[Tuple[str, Tuple[int, ...], str]]:
    infos = []
    for p in mod["main"].params:
        sinfo = p.ty
        infos.append((p.name, tuple(int(d) for d in sinfo.shape), str(sinfo.dtype)))
    return infos


def random_inputs(mod: tvm.IRModule, rng: np.random.Generator) -> List[np.ndarray]:
    """Fresh inputs for ``main``: no zeros, mixed signs, magnitudes that keep every layer
    (and float16) away from saturation.  |x| is uniform in [0.25, 1], the sign random;
    weights ``w*`` are divided by sqrt(fan_in) so conv outputs stay O(1); gains ``g*`` are
    in [0.5, 1.5]."""
    arrays = []
    for name, shape, dtype in _param_infos(mod):
        mag = rng.uniform(0.25, 1.0, size=shape)
        sign = np.where(rng.random(size=shape) < 0.5, -1.0, 1.0)
        value = mag * sign
        if name.startswith("w"):
            value = value / math.sqrt(max(1, int(np.prod(shape[1:]))))
        elif name.startswith("g"):
            value = rng.uniform(0.5, 1.5, size=shape)
        arrays.append(value.astype(dtype))
    return arrays


def _to_numpy(value) -> List[np.ndarray]:
    if isinstance(value, (list, tuple)) or type(value).__name__ == "Array":
        return [a for v in value for a in _to_numpy(v)]
    return [value.numpy()]


def run_vm(ex, dev, inputs: Sequence[np.ndarray]) -> List[np.ndarray]:
    """Run ``main`` the way a user does: ``relax.VirtualMachine(ex, dev)``.

    (The unfixed base needs one device per VDevice of the lowered module, because its texture
    allocations name a VDevice index; the suite does not work around that.)"""
    vm = relax.VirtualMachine(ex, dev)
    args = [tvm.runtime.tensor(a, dev) for a in inputs]
    return _to_numpy(vm["main"](*args))


def reference(fn: Callable[[NetBuilder], Sequence], inputs: Sequence[np.ndarray]) -> List[np.ndarray]:
    """The float32 network on LLVM, fed ``inputs`` upcast to float32."""
    mod = build_network(fn, "float32")
    ex = build_llvm(mod)
    return run_vm(ex, tvm.cpu(), [np.asarray(a, dtype="float32") for a in inputs])


@dataclasses.dataclass
class Mismatch:
    index: int
    fraction: float
    max_abs: float
    max_rel: float
    scale: float

    def __str__(self):
        return (
            f"output {self.index}: {100 * self.fraction:.1f}% of elements outside tolerance, "
            f"max |err| {self.max_abs:.3g} (output scale {self.scale:.3g}, "
            f"max rel err {self.max_rel:.3g})"
        )


def compare(
    actual: Sequence[np.ndarray],
    desired: Sequence[np.ndarray],
    dtype_mode: str,
    scales: Optional[Sequence[float]] = None,
) -> List[Mismatch]:
    """Mismatches of each output beyond ``TOLERANCES[dtype_mode]``; the atol is relative to
    ``scales[i]`` when given (the magnitude the rounding errors scale with), else to the
    largest |reference| value of the output."""
    rtol, atol_rel = TOLERANCES[dtype_mode]
    assert len(actual) == len(desired), f"{len(actual)} outputs, expected {len(desired)}"
    problems = []
    for i, (a, d) in enumerate(zip(actual, desired)):
        a = np.asarray(a, dtype="float64")
        d = np.asarray(d, dtype="float64")
        assert a.shape == d.shape, f"output {i}: shape {a.shape}, expected {d.shape}"
        if scales is not None:
            scale = float(scales[i])
        else:
            scale = float(np.max(np.abs(d))) if d.size else 0.0
        err = np.abs(a - d)
        bad = ~(err <= atol_rel * scale + rtol * np.abs(d))  # NaN counts as bad
        if bad.any():
            problems.append(
                Mismatch(
                    index=i,
                    fraction=float(bad.mean()),
                    max_abs=float(np.nanmax(np.where(np.isnan(err), np.inf, err))),
                    max_rel=float(np.nanmax(err / np.maximum(np.abs(d), 1e-12))),
                    scale=scale,
                )
            )
    return problems


def assert_close(actual, desired, dtype_mode: str, context: str = "", scales=None) -> None:
    problems = compare(actual, desired, dtype_mode, scales)
    if problems:
        rtol, atol_rel = TOLERANCES[dtype_mode]
        raise AssertionError(
            f"{context}: texture result differs from the LLVM reference "
            f"({dtype_mode}, rtol={rtol}, atol={atol_rel}*scale):\n  "
            + "\n  ".join(str(p) for p in problems)
        )


@dataclasses.dataclass(frozen=True)
class Case:
    """One test network and what its texture build must show.

    fn: emits the network on a NetBuilder, returns the output(s).
    convs: how many conv2d kernels must read or write a texture (0: no texture expected, e.g.
        an elementwise op alone, which the Adreno pipeline keeps in buffers).
    conv_output_texture: some conv2d result must stay in a texture because its consumer takes
        textures (pooling, concat, a second conv).
    """

    fn: Callable[[NetBuilder], Sequence]
    convs: int = 1
    conv_output_texture: bool = False


def check_compile(case: Case, dtype_mode: str):
    """Compile-side checks (no device): scopes after legalization, images in the OpenCL.
    Returns (lowered module, executable)."""
    return _check_compile(case, dtype_mode)[1:]


def _check_compile(case: Case, dtype_mode: str):
    mod = build_network(case.fn, dtype_mode)
    lowered, ex = build_texture_with_scopes(mod)
    if case.convs:
        assert_conv2d_uses_texture(lowered, min_convs=case.convs)
    if case.conv_output_texture:
        assert_conv2d_output_texture(lowered)
    if case.convs:
        assert_kernels_use_images(ex)
    else:
        assert_images_used_as_images(ex)
    return mod, lowered, ex


def check_case(case: Case, dtype_mode: str, rng: np.random.Generator, name: str = "") -> None:
    """The whole check of one case: compile side, then (when the device can run the dtype
    mode) numerics on fresh random inputs against the float32 LLVM reference.  Without a
    suitable device the test is skipped after the compile-side checks, with the reason."""
    mod, lowered, ex = _check_compile(case, dtype_mode)
    require_device(dtype_mode, done="compile-side checks passed")
    inputs = random_inputs(mod, rng)
    actual = run_vm(ex, tvm_device(), inputs)
    desired = reference(case.fn, inputs)
    assert_close(actual, desired, dtype_mode, context=f"{name} on {opencl_device().label}")


def check_numerics(fn, dtype_mode: str, rng: np.random.Generator, name: str = "") -> None:
    """Numerics only: build ``fn`` for the texture target, run it on the OpenCL device with
    fresh random inputs, compare with the float32 LLVM reference."""
    mod = build_network(fn, dtype_mode)
    ex = build_texture(mod)
    inputs = random_inputs(mod, rng)
    actual = run_vm(ex, tvm_device(), inputs)
    desired = reference(fn, inputs)
    assert_close(actual, desired, dtype_mode, context=f"{name} on {opencl_device().label}")


# ----------------------------------------------------------------------------------------
# Half-float texture storage (float32 arithmetic)
# ----------------------------------------------------------------------------------------

FLOAT16_STORAGE_OPTION = "relax.adreno.float16_storage"
# Half storage, float32 arithmetic: each tensor written to a texture is rounded once to half
# (relative 2**-11 = 4.9e-4 of its value); the float32 kernels add float32 reassociation only.
# Over the short chains of the suite (<= 8 rounded tensors feeding O(1)-scaled convs) that is
# the float16_acc32 bound: 1e-2 of the output scale.
HALF_STORAGE_TOLERANCE = (1e-2, 1e-2)


def build_texture_half_storage(mod: tvm.IRModule):
    """Build ``mod`` for the texture target with float16 texture storage: the current
    PassContext with the option ``relax.adreno.float16_storage`` set."""
    target = texture_target()
    kwargs = {} if build_mode().plain else {"tir_pipeline": _WORKAROUND_TIR_PIPELINE}
    current = tvm.transform.PassContext.current()
    config = dict(current.config)
    config[FLOAT16_STORAGE_OPTION] = True
    with tvm.transform.PassContext(
        opt_level=current.opt_level,
        required_pass=list(current.required_pass),
        disabled_pass=list(current.disabled_pass),
        config=config,
        instruments=list(current.instruments),
    ):
        return tvm.compile(mod, target=target, **kwargs)
