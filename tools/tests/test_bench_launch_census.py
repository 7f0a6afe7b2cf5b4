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
"""bench/launch_census.py: what one call of main launches, by kind, from the compiled module."""

import pathlib
import sys

import numpy as np
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

import launch_census  # noqa: E402  pylint: disable=wrong-import-position,import-error

# The shape of VMExecutable.as_text(): main calls a helper VM function, two PrimFuncs (one of
# them twice, and one of two kernels), a copy between scopes and VM builtins.
EXECUTABLE_TEXT = """@main:
  call  vm.builtin.alloc_storage in: %vm, c[1], i0 dst: %0
  call  te_layout_transform in: %0, %1     dst: %void
  call  helper           in: %1           dst: %2
  call  runtime.TVMTensorCopyFromTo in: %2, %3 dst: %4
  call  fused_conv2d_NCHWc_add in: %4, %5 dst: %void
  ret   %5

@helper:
  call  fused_conv2d_NCHWc_add in: %0, %1 dst: %void
  call  vm.builtin.null_value in:        dst: %2
  ret   %1

@vm.builtin.alloc_storage packed_func;

@fused_conv2d_NCHWc_add packed_func;
"""
OPENCL_SOURCE = """
__kernel void te_layout_transform_kernel(__global float* a) {}
__kernel void fused_conv2d_NCHWc_add_kernel(__write_only image2d_t out) {}
__kernel void fused_conv2d_NCHWc_add_kernel_1(__write_only image2d_t out) {}
__kernel void te_layout_transform_kernel(__global float* a) {}
"""


def test_calls_follow_vm_functions_in_order():
    """main's calls in order, a VM function's calls in its place; an absent entry is an error
    that lists the functions there are."""
    assert launch_census.called_functions(EXECUTABLE_TEXT) == [
        "vm.builtin.alloc_storage",
        "te_layout_transform",
        "fused_conv2d_NCHWc_add",
        "vm.builtin.null_value",
        "runtime.TVMTensorCopyFromTo",
        "fused_conv2d_NCHWc_add",
    ]
    with pytest.raises(ValueError, match="no function 'absent'"):
        launch_census.called_functions(EXECUTABLE_TEXT, "absent")


def test_census_counts_kernels_and_copies_apart():
    """Each call launches all kernels of its PrimFunc (a kernel listed by two modules counts
    once); the recorded kind wins over the name; copies are not launches."""
    got = launch_census.census(EXECUTABLE_TEXT, OPENCL_SOURCE, {"fused_conv2d_NCHWc_add": "pad"})
    assert got["launches"] == 5 and got["runtime_copies"] == 1
    assert got["functions"] == {"te_layout_transform": 1, "fused_conv2d_NCHWc_add": 4}
    expected = dict.fromkeys(launch_census.KINDS, 0)
    expected.update({"pad": 4, "layout transform": 1})
    assert got["by_kind"] == expected
    assert got["by_name"] == 1  # te_layout_transform was not recorded: classified by name


# main of a network with one layout transform at each position: the input's (after a pad of
# the argument), one between two convs, and the output's (through a copy kernel and builtins).
POSITIONS_TEXT = """@main:
  call  vm.builtin.cached_static_alloc in: %vm, f[main_static_alloc], i0 dst: %9
  call  vm.builtin.check_tensor_info in: %0, i4, c[2], c[44] dst: %void
  call  vm.builtin.tuple_getitem in: %9, i0     dst: %1
  call  pad              in: %0, %1     dst: %void
  call  te_layout_transform in: %1, %2   dst: %void
  call  fused_conv2d_add in: %2, %20, %3 dst: %void
  call  te_layout_transform1 in: %3, %4   dst: %void
  call  fused_conv2d1_add in: %4, %21, %5 dst: %void
  call  te_layout_transform2 in: %5, %6   dst: %void
  call  fused_reshape_concatenate in: %6, %7 dst: %void
  call  vm.builtin.null_value in:              dst: %6
  call  vm.builtin.make_tuple in: %7, %5     dst: %8
  call  vm.builtin.tuple_getitem in: %8, i0      dst: %10
  call  vm.builtin.match_shape in: %10, %void, i3, c[122] dst: %void
  ret   %8
"""
POSITIONS_KINDS = {
    "pad": "pad",
    "te_layout_transform": "layout transform",
    "te_layout_transform1": "layout transform",
    "te_layout_transform2": "layout transform",
    "fused_conv2d_add": "conv",
    "fused_conv2d1_add": "conv",
    "fused_reshape_concatenate": "copy",
}


def test_layout_transforms_by_position():
    """A transform fed by main's argument through data moves is at the input, one whose result
    reaches main's result through data moves and builtins is at the output, and one feeding a
    conv is inside; a transform whose result also feeds a conv is inside."""
    got = launch_census.transform_positions(POSITIONS_TEXT, POSITIONS_KINDS)
    assert got == {"input": 1, "output": 1, "inside": 1}
    # The output's transform now also feeds a conv: inside, whatever else reads it.
    also_computed = POSITIONS_TEXT.replace(
        "  call  vm.builtin.null_value in:              dst: %6\n",
        "  call  fused_conv2d_add in: %6, %20, %11 dst: %void\n",
    )
    got = launch_census.transform_positions(also_computed, POSITIONS_KINDS)
    assert got == {"input": 1, "output": 0, "inside": 2}
    # A transform of a conv's result that nothing reads is not at the output.
    unread = POSITIONS_TEXT.replace("make_tuple in: %7, %5", "make_tuple in: %5")
    unread = unread.replace(
        "fused_reshape_concatenate in: %6, %7", "fused_reshape_concatenate in: %3, %7"
    )
    got = launch_census.transform_positions(unread, POSITIONS_KINDS)
    assert got == {"input": 1, "output": 0, "inside": 2}


def test_collect_writes_one_row_per_census(tmp_path):
    """A CSV row per build with a census (the reference build has none); no census: exit 1."""
    meta = tmp_path / "work" / "meta"
    meta.mkdir(parents=True)
    got = launch_census.census(EXECUTABLE_TEXT, OPENCL_SOURCE)
    (meta / "net__t.json").write_text(
        launch_census.json.dumps({"model": "net", "config": "t", "census": got})
    )
    (meta / "net__ref.json").write_text('{"model": "net", "config": "ref"}')
    out = tmp_path / "census.csv"
    assert launch_census.main(["collect", "--work", str(tmp_path / "work"), "--out", str(out)]) == 0
    lines = out.read_text().splitlines()
    assert lines[0].startswith("model,config,launches,runtime_copies,by_name,conv,depthwise_conv")
    # 4 conv launches, no depthwise, no dense, 1 layout transform: all 5 classified by name
    assert lines[1].startswith("net,t,5,1,5,4,0,0,1,")
    assert launch_census.main(["collect", "--work", str(tmp_path), "--out", str(out)]) == 1


def _small_network():
    """A conv, a depthwise conv, a max pool, a 1x1 conv and a mean, NCHW, weights as inputs."""
    from tvm import relax  # pylint: disable=import-outside-toplevel

    builder = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((1, 8, 16, 16), "float32"))
    conv_w = relax.Var("conv_w", relax.TensorType((16, 8, 3, 3), "float32"))
    depthwise_w = relax.Var("depthwise_w", relax.TensorType((16, 1, 3, 3), "float32"))
    pointwise_w = relax.Var("pointwise_w", relax.TensorType((8, 16, 1, 1), "float32"))
    with builder.function("main", [x, conv_w, depthwise_w, pointwise_w]):
        with builder.dataflow():
            y = builder.emit(relax.op.nn.relu(relax.op.nn.conv2d(x, conv_w, padding=1)))
            y = builder.emit(relax.op.nn.conv2d(y, depthwise_w, padding=1, groups=16))
            y = builder.emit(relax.op.nn.max_pool2d(y, pool_size=2, strides=2))
            y = builder.emit(relax.op.nn.conv2d(y, pointwise_w))
            out = builder.emit_output(relax.op.mean(y, axis=[2, 3], keepdims=True))
        builder.emit_func_output(out)
    return builder.get()


def test_census_matches_the_runtime_counters():
    """The kinds come from the PrimFuncs' blocks; on an OpenCL device the census's launches
    and copies are what the runtime counts for one steady-state call."""
    tvm = pytest.importorskip("tvm")
    from tvm import relax  # pylint: disable=import-outside-toplevel

    import build_worker  # pylint: disable=import-outside-toplevel,import-error

    mod = _small_network()
    target = build_worker.texture_target()
    kinds = {}
    executable = tvm.compile(
        mod, target=target, relax_pipeline=build_worker.lifted_pipeline(target, kinds)
    )
    got = launch_census.census_of_library(executable, kinds)
    assert got["by_name"] == 0
    by_kind = {k: n for k, n in got["by_kind"].items() if n}
    assert by_kind == EXPECTED_SMALL_NETWORK, list(got["functions"])
    # The input's and the weights' transforms read only main's arguments.
    assert got["layout_transforms"] == {"input": 4, "output": 0, "inside": 0}

    if not tvm.runtime.enabled("opencl") or not tvm.opencl(0).exist:
        pytest.skip("no OpenCL device: the census's kinds were checked, not its counts")
    dev = tvm.opencl(0)
    machine = relax.VirtualMachine(executable, [dev] * build_worker.vdevice_count(mod, target))
    rng = np.random.default_rng()
    args = [
        tvm.runtime.tensor(rng.standard_normal([int(d) for d in p.ty.shape]).astype("float32"), dev)
        for p in mod["main"].params
    ]
    machine["main"](*args)
    dev.sync()
    tvm.get_global_func("runtime.opencl.reset_counters")()
    machine["main"](*args)
    counted = {str(k): int(v) for k, v in tvm.get_global_func("runtime.opencl.counters")().items()}
    dev.sync()
    assert got["launches"] == counted["kernel_launches"]
    assert got["runtime_copies"] == counted["buffer_image_copies"] + counted["device_copies"]


# The input and the three weights (parameters of main here, not lifted) go into blocked
# channels: 4 layout transforms; the mean reads blocked channels and writes the NCHW output.
EXPECTED_SMALL_NETWORK = {
    "conv": 2,
    "depthwise conv": 1,
    "layout transform": 4,
    "reduction/pooling": 2,
}
