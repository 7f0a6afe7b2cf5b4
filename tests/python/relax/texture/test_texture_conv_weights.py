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
"""Convolution weights in textures (the option ``relax.adreno.conv_weights_in_textures``): every kind of conv the
texture target legalizes reads its weight through the image path and stays equal to LLVM.

The cases are the suites' own: the direct convs (KxK, 1x1, strided, the 7x7 stem, fused
epilogues, split-K), the depthwise and grouped ones, Winograd F(2x2) and F(4x4), whose
weight transform reads the weight texture, and the small networks; one network also with its
weights lifted into ``main_transform_params``, as a deployment runs them once.
"""

import pytest

import tvm
from tvm import relax

import texture_testing as tt
import test_texture_conv_direct as direct
import test_texture_conv_grouped as grouped
import test_texture_conv_winograd as winograd
import test_texture_networks as networks

CASES = {
    **{f"direct/{name}": (case, "auto") for name, case in direct.CASES.items()},
    **{f"grouped/{name}": (case, "auto") for name, case in grouped.CASES.items()},
    "winograd/F4x4": (tt.Case(winograd.conv3x3(16, 16, 8)), "4"),
    "winograd/F2x2": (tt.Case(winograd.conv3x3(16, 20, 6)), "2"),
    **{f"networks/{name}": (case, "auto") for name, case in networks.CASES.items()},
}


def _conv_image_params(case, mode, weights_in_textures):
    """Per kernel of the case whose name holds ``conv2d`` (the convs, and Winograd's weight
    transform and product), how many image parameters it takes."""
    with tt.adreno_options(conv_weights_in_textures=weights_in_textures, winograd=mode):
        _, executable = tt.check_compile(case, "float32")
    return {
        name: len(kernel.image_params)
        for name, kernel in tt.kernel_sources(executable).items()
        if "conv2d" in name
    }


@pytest.mark.parametrize("name", list(CASES))
def test_conv_reads_its_weight_from_an_image(name):
    """Against the default build, the conv kernels take one more image per convolution (its
    weight, or for Winograd the transformed weight) and none takes fewer."""
    case, mode = CASES[name]
    default = _conv_image_params(case, mode, False)
    textures = _conv_image_params(case, mode, True)
    assert default.keys() == textures.keys(), (default, textures)
    assert all(textures[n] >= default[n] for n in default), (default, textures)
    assert sum(textures.values()) - sum(default.values()) >= case.convs, (default, textures)


@pytest.mark.requires_opencl
@pytest.mark.parametrize("name", list(CASES))
def test_numerics(name, rng):
    """Equal to the LLVM build on fresh random inputs."""
    case, mode = CASES[name]
    with tt.adreno_options(conv_weights_in_textures=True, winograd=mode):
        tt.check_case(case, "float32", rng, name=f"{name} (weights in textures)")


def _lifted_texture_build(mod):
    """``mod`` for the texture target with the weights' transformations lifted into
    ``main_transform_params`` after the legalization (``num_input`` marks the inputs)."""
    target = tt.texture_target()

    @tvm.transform.module_pass(opt_level=0)
    def _pipeline(mod, _ctx):
        with target:
            return tvm.transform.Sequential(
                relax.pipeline.library_dispatch_passes(target)
                + relax.pipeline.legalize_passes(target)
                + [relax.transform.LiftTransformParams(), relax.transform.DeadCodeElimination()]
                + relax.pipeline.dataflow_lower_passes(target)
                + relax.pipeline.finalize_passes(target)
            )(mod)

    return tvm.compile(mod, target=target, relax_pipeline=_pipeline)


@pytest.mark.requires_opencl
def test_lifted_weights_numerics(rng):
    """The blocked weights come out of ``main_transform_params`` as the textures ``main``
    reads: run once, then the network, equal to LLVM."""
    case = networks.CASES["resnet_small"]
    mod = tt.build_network(case.fn, "float32")
    mod["main"] = mod["main"].with_attr("num_input", 1)
    with tt.adreno_options(conv_weights_in_textures=True):
        executable = _lifted_texture_build(mod)
    inputs = tt.random_inputs(mod, rng)
    dev = tt.tvm_device()
    machine = relax.VirtualMachine(executable, dev)
    weights = machine["main_transform_params"]([tvm.runtime.tensor(a, dev) for a in inputs[1:]])
    out = machine["main"](tvm.runtime.tensor(inputs[0], dev), *weights)
    actual = [out.numpy()] if hasattr(out, "numpy") else [o.numpy() for o in out]
    tt.assert_close(
        actual,
        tt.reference(case.fn, inputs),
        "float32",
        context="resnet_small, weights lifted into textures",
    )
