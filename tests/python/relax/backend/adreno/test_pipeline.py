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
# pylint: disable=invalid-name,missing-docstring,no-self-argument,not-callable
"""Tests of the Adreno Relax pipeline: which passes run, in which order, for texture and
buffer targets, and what the whole pipeline makes of a conv2d."""

import collections
import logging

import numpy as np
import pytest

import tvm
import tvm.testing
from tvm import relax
from tvm.relax.backend import adreno
from tvm.script import ir as I
from tvm.script import relax as R

TEXTURE = tvm.target.Target("qcom/adreno-opencl-texture", host="llvm")
BUFFER = tvm.target.Target("qcom/adreno-opencl", host="llvm")
ALLOC_STORAGE = tvm.ir.Op.get("relax.vm.alloc_storage")


def _legalize_names(target):
    with target:
        return [p.info.name for p in adreno.legalize_passes(target)]


def test_layout_rewrites_run_around_convert_layout():
    names = _legalize_names(TEXTURE)
    convert = names.index("ConvertLayout")
    before = [
        "SplitChannelReductionKeepdims",
        "ClipToMinMax",
        "DecomposePReLU",
        "AlignBroadcastRank",
        "BroadcastChannelOperands",
        "LowerConv2dTransposeNCHWc",
        "PadConvChannels",
        "KeepPaddedChannels",
        "LegalizeChannelNorms",
        "SplitIndicesToSections",
    ]
    assert names[convert - len(before) : convert] == before
    assert names[convert + 1 : convert + 3] == [
        "PackChannelArgReduce",
        "FoldTextureLayoutTransforms",
    ]


def test_texture_scopes_are_annotated_by_the_backend_pass_in_place_of_the_cpp_one():
    names = _legalize_names(TEXTURE)
    assert "AnnotateCustomMemoryScope" not in names
    assert names.index("AnnotateTIROpPattern") < names.index("AnnotateTextureScope")


def test_scopes_are_balanced_after_fusion_and_before_specialization():
    names = _legalize_names(TEXTURE)
    after_fusion = names[names.index("FuseTIR") :]
    order = [
        "FoldVDeviceScopeChange",
        "BalanceTextureScope",
        "RewriteBufferReshapeToView",
        "SpecializeTextureCallSites",
    ]
    assert [name for name in after_fusion if name in order] == order
    assert after_fusion.index("SpecializeTextureCallSites") < after_fusion.index(
        "ApplyDefaultSchedule"
    )


def test_buffer_target_runs_no_texture_pass():
    names = _legalize_names(BUFFER)
    texture_passes = {
        "ClipToMinMax",
        "DecomposePReLU",
        "ConvertLayout",
        "AnnotateTextureScope",
        "BalanceTextureScope",
        "SpecializeTextureCallSites",
    }
    assert not texture_passes.intersection(names)


def test_dataflow_reshape_rewrite_is_left_out_for_textures_only():
    texture = [p.info.name for p in adreno.dataflow_lower_passes(TEXTURE)]
    buffer = [p.info.name for p in adreno.dataflow_lower_passes(BUFFER)]
    assert "RewriteDataflowReshape" not in texture
    # The texture storage plan (its vdevice copies, its image storage) is texture-only too.
    texture_only = ["LowerVDeviceCopy", "PlanTextureStorage", "HalfTextureStorage"]
    assert all(name in texture and name not in buffer for name in texture_only)
    assert buffer == ["RewriteDataflowReshape"] + [n for n in texture if n not in texture_only]


def test_storage_is_moved_to_its_physical_device_then_hoisted_last():
    """Both read VM-lowered storage; the hoist copies the device index into its function."""
    names = [p.info.name for p in adreno.finalize_passes(TEXTURE)]
    assert names[-2:] == ["AllocStorageOnPhysicalDevice", "HoistStaticAllocations"]


@I.ir_module
class ConvRelu6:
    @R.function
    def main(
        x: R.Tensor((1, 8, 8, 8), "float32"), w: R.Tensor((8, 8, 3, 3), "float32")
    ) -> R.Tensor((1, 8, 8, 8), "float32"):
        with R.dataflow():
            conv = R.nn.conv2d(x, w, padding=[1, 1, 1, 1])
            y = R.clip(conv, 0.0, 6.0)
            R.output(y)
        return y


def _lowered(mod):
    with TEXTURE:
        return adreno.get_default_pipeline(TEXTURE)(mod)  # pylint: disable=no-value-for-parameter


def _opencl_source(executable):
    sources = []

    def _walk(module):
        for imported in module.imports:
            if imported.kind == "opencl":
                sources.append(imported.inspect_source())
            _walk(imported)

    _walk(executable.mod)
    return "\n".join(sources)


@pytest.mark.skipif(
    tvm.get_global_func("relax.ext.openclml", allow_missing=True) is not None,
    reason="this TVM has the CLML codegen: the offload would take the convolution",
)
def test_clml_beside_textures_without_the_clml_codegen(caplog):
    """A target with the clml and texture keys, on a TVM built without CLML's codegen: the
    offload takes nothing (one warning says why) and the texture path compiles the module
    exactly as for the texture target."""
    both = tvm.target.Target("qcom/adreno-opencl-clml-texture", host="llvm")
    assert {"clml", "texture"} <= set(both.keys)
    with caplog.at_level(logging.WARNING, logger="tvm.relax.backend.adreno.pipeline"):
        with_clml = tvm.compile(ConvRelu6, target=both)
    warnings = [r.getMessage() for r in caplog.records if "USE_CLML=OFF" in r.getMessage()]
    assert len(warnings) == 1, warnings
    source = _opencl_source(with_clml)
    assert "read_imagef" in source and "write_imagef" in source
    assert source == _opencl_source(tvm.compile(ConvRelu6, target=TEXTURE))


def test_pipeline_fuses_conv_and_relu6_and_allocates_on_device_0():
    mod = _lowered(ConvRelu6)
    scopes = {str(vdev.memory_scope) for vdev in mod.global_infos["vdevice"]}
    assert any(scope.startswith("global.texture") for scope in scopes), scopes
    indices = []

    def _visit(expr):
        if isinstance(expr, relax.Call) and expr.op.same_as(ALLOC_STORAGE):
            indices.append(int(expr.args[1].value))

    relax.analysis.post_order_visit(mod["main"], _visit)
    assert indices and set(indices) == {0}, indices
    # one kernel packs x, one packs w, one unpacks, and one is the conv with its ReLU6
    kernels = [gv.name_hint for gv, f in mod.functions_items() if isinstance(f, tvm.tirx.PrimFunc)]
    assert len(kernels) == 4, kernels


@pytest.mark.requires_opencl
def test_pipeline_output_matches_numpy():
    rng = np.random.default_rng()
    data = rng.uniform(-1.0, 1.0, size=(1, 8, 8, 8)).astype("float32")
    weight = rng.uniform(-1.0, 1.0, size=(8, 8, 3, 3)).astype("float32")
    padded = np.pad(data, ((0, 0), (0, 0), (1, 1), (1, 1)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(2, 3))
    expected = np.clip(np.einsum("nchwij,ocij->nohw", windows, weight), 0.0, 6.0)

    dev = tvm.opencl(0)
    vm = relax.VirtualMachine(tvm.compile(ConvRelu6, target=TEXTURE), dev)
    out = vm["main"](tvm.runtime.tensor(data, dev), tvm.runtime.tensor(weight, dev))
    tvm.testing.assert_allclose(out.numpy(), expected, rtol=1e-4, atol=1e-5)


@pytest.mark.requires_opencl
def test_steady_state_calls_allocate_nothing_and_outputs_stay_valid():
    """On OpenCL: a conv chain compiled for the texture target allocates no storage after its
    first call; later calls give the LLVM build's answers on fresh inputs, and an output kept
    from one call is not overwritten by the next."""
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((1, 8, 12, 12), "float32"))
    w1 = relax.Var("w1", relax.TensorType((16, 8, 3, 3), "float32"))
    w2 = relax.Var("w2", relax.TensorType((8, 16, 3, 3), "float32"))
    with bb.function("main", [x, w1, w2]):
        with bb.dataflow():
            y = bb.emit(relax.op.nn.relu(relax.op.nn.conv2d(x, w1, padding=1)))
            z = bb.emit(relax.op.nn.conv2d(y, w2, padding=1))
            out = bb.emit_output(relax.op.add(z, x))
        bb.emit_func_output(out)
    mod = bb.get()
    target = tvm.target.Target("qcom/adreno-opencl-texture", host="llvm")
    lowered = adreno.get_default_pipeline(target)(mod)  # pylint: disable=no-value-for-parameter
    assert "main_static_alloc" in [gv.name_hint for gv in lowered.functions]

    dev = tvm.opencl(0)
    executable = tvm.compile(mod, target=target)
    texture = relax.VirtualMachine(executable, dev)
    reference = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())
    rng = np.random.default_rng()
    weights = [
        rng.standard_normal([int(d) for d in v.ty.shape]).astype("float32") for v in (w1, w2)
    ]

    def arguments(device, data):
        return [tvm.runtime.tensor(a, device) for a in [data] + weights]

    def fresh_input():
        return rng.standard_normal((1, 8, 12, 12)).astype("float32")

    counters = tvm.get_global_func("runtime.opencl.counters")
    reset = tvm.get_global_func("runtime.opencl.reset_counters")
    for _ in range(2):  # warm-up: programs built, the cached allocations made
        texture["main"](*arguments(dev, fresh_input()))
    inputs = [fresh_input() for _ in range(2)]
    on_device = [arguments(dev, data) for data in inputs]  # uploaded before the count
    reset()
    results = [texture["main"](*args).numpy() for args in on_device]
    created = {str(k): int(v) for k, v in counters().items() if "created" in str(k)}
    assert created and not any(created.values()), created
    # The VM itself: one steady-state call allocates only what main still allocates (its
    # output), none of the storage hoisted into main_static_alloc.
    builtins = collections.Counter()

    def count(_func, name, before_run, _ret, *_args):
        if before_run:
            builtins[str(name)] += 1

    texture.set_instrument(count)
    texture["main"](*on_device[0])
    per_call = lowered["main"].script().count("R.vm.alloc_storage")
    hoisted = lowered["main_static_alloc"].script().count("R.vm.alloc_storage")
    assert hoisted > 0
    assert builtins["vm.builtin.alloc_storage"] == per_call, builtins
    for data, got in zip(inputs, results):
        expected = reference["main"](*arguments(tvm.cpu(), data)).numpy()
        tvm.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)

    kept = texture["main"](*arguments(dev, fresh_input()))
    kept_value = kept.numpy()
    texture["main"](*arguments(dev, fresh_input()))
    np.testing.assert_array_equal(kept.numpy(), kept_value)

    # Each VM keeps its own planned storage: a second VM of the same executable runs the
    # allocation function on its first call (and only then), beside the first VM's cache.
    second = relax.VirtualMachine(executable, dev)
    second.set_instrument(count)
    allocations = []
    for data in inputs:
        builtins.clear()
        got = second["main"](*arguments(dev, data)).numpy()
        allocations.append(builtins["vm.builtin.alloc_storage"])
        expected = reference["main"](*arguments(tvm.cpu(), data)).numpy()
        tvm.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
    assert allocations == [per_call + hoisted, per_call], allocations


if __name__ == "__main__":
    tvm.testing.main()
