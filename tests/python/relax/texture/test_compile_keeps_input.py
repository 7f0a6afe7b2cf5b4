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
"""Compiling does not consume its input.

Every pass of the Adreno texture pipeline, applied one at a time, must leave the module it was
given structurally equal to a copy taken before (a pass that edits its input in place would
make a second compile of the same module see a half-lowered graph).  Then the whole
``tvm.compile`` leaves the module unchanged, and compiling it again, for the texture target or
for the generic OpenCL target, gives the kernels a compile of a pristine copy gives.  The
module mixes the ops the Adreno passes rewrite: conv2d, depthwise and grouped conv,
conv2d_transpose, batch and layer norm, clip, pooling, a channel reduction, softmax, dense;
once with its weights as parameters and once with them bound as constants (constants are
nodes a pass can reach from both modules).
"""

import pytest

import tvm
from tvm import relax

import texture_testing as tt


def _mixed(nb: tt.NetBuilder):
    x = nb.input((1, 8, 16, 16))
    y = nb.emit(relax.op.nn.relu(nb.bias(nb.conv2d(x, 16))))
    y = nb.emit(relax.op.clip(nb.conv2d(y, 16, groups=16), 0.0, 6.0))
    y = nb.conv2d(y, 16, groups=4)
    gamma = nb.param("g", (16,))
    beta = nb.param("b", (16,))
    mean = nb.param("m", (16,))
    var = nb.param("g", (16,))
    y = nb.emit(relax.op.nn.batch_norm(y, gamma, beta, mean, var, axis=1)[0])
    w_t = nb.param("w", (16, 8, 2, 2))
    y = nb.emit(relax.op.nn.conv2d_transpose(y, w_t, strides=2))
    y = nb.emit(relax.op.nn.max_pool2d(y, pool_size=2, strides=2))
    y = nb.emit(relax.op.nn.avg_pool2d(nb.conv2d(y, 8, kernel=1), pool_size=3, padding=1))
    gl = nb.param("g", (16,))
    bl = nb.param("b", (16,))
    z = nb.emit(relax.op.nn.layer_norm(y, gl, bl, axes=[-1]))
    mean_c = nb.emit(relax.op.mean(z, axis=[1], keepdims=True))
    pooled = nb.emit(relax.op.reshape(relax.op.nn.adaptive_avg_pool2d(z, 1), (1, 8)))
    logits = nb.emit(relax.op.nn.softmax(nb.dense(pooled, 10)))
    return logits, mean_c


def _network(weights: str, rng) -> tvm.IRModule:
    """The mixed module, its weights parameters or (``bound``) random constants."""
    mod = tt.build_network(_mixed, "float32")
    if weights == "params":
        return mod
    values = {
        param.name: rng.uniform(-1, 1, [int(d) for d in param.ty.shape]).astype(str(param.ty.dtype))
        for param in mod["main"].params[1:]
    }
    return relax.transform.BindParams("main", values)(mod)


WEIGHTS = pytest.mark.parametrize("weights", ["params", "bound"])


def _snapshot(mod: tvm.IRModule) -> tvm.IRModule:
    return tvm.ir.load_json(tvm.ir.save_json(mod))


def _texture_pass_list(target):
    return (
        relax.pipeline.library_dispatch_passes(target)
        + relax.pipeline.legalize_passes(target)
        + relax.pipeline.dataflow_lower_passes(target)
        + relax.pipeline.finalize_passes(target)
    )


@WEIGHTS
def test_no_adreno_pass_edits_its_input(weights, rng):
    """Each pass of the texture pipeline, one at a time, leaves its input as it was."""
    target = tt.texture_target()
    mod = _network(weights, rng)
    with target:
        for pipeline_pass in _texture_pass_list(target):
            before = _snapshot(mod)
            after = pipeline_pass(mod)
            try:
                tvm.ir.assert_structural_equal(mod, before)
            except ValueError as err:
                raise AssertionError(f"{pipeline_pass.info.name} edited its input") from err
            mod = after
    assert any(
        isinstance(f, tvm.tirx.PrimFunc) for _, f in mod.functions_items()
    ), "the pipeline produced no PrimFunc"


def _generic_build(mod):
    return tvm.compile(mod, target=tvm.target.Target("opencl", host="llvm"))


@WEIGHTS
def test_compile_leaves_module_unchanged_and_repeats(weights, rng):
    """tvm.compile for the texture target leaves ``mod`` as it was; compiling it again for the
    texture target and for the generic OpenCL target gives the kernels of a pristine copy."""
    mod = _network(weights, rng)
    pristine = _snapshot(mod)
    first = tt.build_texture(mod)
    tvm.ir.assert_structural_equal(mod, pristine)
    second = tt.build_texture(mod)
    tvm.ir.assert_structural_equal(mod, pristine)
    assert tt.device_sources(second) == tt.device_sources(first)
    generic = _generic_build(mod)
    tvm.ir.assert_structural_equal(mod, pristine)
    assert tt.device_sources(generic) == tt.device_sources(_generic_build(_snapshot(pristine)))


@pytest.mark.requires_opencl
def test_mixed_module_numerics_on_texture(rng):
    """The texture build of the mixed module computes the network (LLVM reference), its
    training-mode batch norm included (it normalizes with the batch's statistics)."""
    mod = tt.build_network(_mixed, "float32")
    inputs = tt.random_inputs(mod, rng)
    actual = tt.run_vm(tt.build_texture(mod), tt.tvm_device(), inputs)
    desired = tt.reference(_mixed, inputs)
    tt.assert_close(actual, desired, "float32", context="mixed module on texture")
