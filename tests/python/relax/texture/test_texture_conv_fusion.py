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
"""Bias, activation (ReLU, ReLU6 as clip) and residual add fuse into the texture conv kernel.

For each conv implementation (direct, depthwise, group, Winograd) the epilogue
``act(conv(x) + b) + x`` must be one fused PrimFunc with the conv, reading textures, and match
the float32 LLVM build.
"""

import pytest

from tvm import relax

import texture_testing as tt

C, H = 16, 8


def _block(kind, act):
    def fn(nb):
        x = nb.input((1, C, H, H))
        groups = {"direct": 1, "winograd": 1, "depthwise": C, "group": 4}[kind]
        kernel = 1 if kind == "direct" else 3
        y = nb.bias(nb.conv2d(x, C, kernel=kernel, groups=groups))
        if act == "relu":
            y = nb.emit(relax.op.nn.relu(y))
        else:
            y = nb.emit(relax.op.clip(y, 0, 6))
        return nb.emit(relax.op.add(y, x))

    return fn


KINDS = ["direct", "winograd", "depthwise", "group"]
ACTS = ["relu", "relu6"]


@pytest.mark.parametrize("act", ACTS)
@pytest.mark.parametrize("kind", KINDS)
def test_one_kernel(kind, act):
    mod = tt.build_network(_block(kind, act), "float32")
    with tt.adreno_options(winograd="4" if kind == "winograd" else "off"):
        lowered = tt.lower_to_scopes(mod)
    convs = tt.conv2d_calls(lowered)
    assert len(convs) == 1, tt.describe_scopes(lowered)
    name = convs[0].func
    assert "add" in name and ("relu" in name or "maximum" in name), tt.describe_scopes(lowered)
    assert (kind == "winograd") == ("winograd" in name), name
    # bias and residual are the conv kernel's inputs: nothing else runs on the conv output
    # (Winograd's input transform and batched product run before it, on its input).
    others = [c for c in tt.texture_call_scopes(lowered) if c.func != name]
    stages = ("layout_transform", "weight_transform", "input_transform", "batched_product")
    assert all(any(s in c.func for s in stages) for c in others), tt.describe_scopes(lowered)
    assert tt.is_texture(convs[0].inputs[0]), tt.describe_scopes(lowered)


@pytest.mark.requires_opencl
@pytest.mark.parametrize("kind", KINDS)
def test_numerics(kind, dtype_mode, rng):
    with tt.adreno_options(winograd="4" if kind == "winograd" else "off"):
        tt.check_numerics(
            _block(kind, "relu6"), dtype_mode, rng, name=f"{kind} + bias + relu6 + add"
        )
