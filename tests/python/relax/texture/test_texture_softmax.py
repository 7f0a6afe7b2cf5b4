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
"""Softmax, normalizations and dense/matmul after a texture conv2d: the buffer fallback.

These ops have no texture schedule.  The conv2d still reads its input from a texture, but
writes its result straight into a buffer (no texture-to-buffer copy), and the only kernel
between the conv2d and the op is the one layout change from NCHW4c back to NCHW; a flatten
in between is a view, not a kernel.

Layer, group, instance and RMS norms whose parameters run along the channel axis used to stop
the compilation (ConvertLayout's C++ layout inference moves them to NCHW4c without their gamma
and beta); ``LegalizeChannelNorms`` keeps them in NCHW, with the same single layout change.
"""

import pytest

import tvm
from tvm import relax
from tvm.relax.backend.adreno.transform.legalize_channel_norms import LegalizeChannelNorms

import texture_testing as tt

N, C, H, W = 1, 16, 8, 8
_TO_VDEVICE = "relax.to_vdevice"


def _conv(nb):
    return nb.conv2d(nb.input((N, C, H, W)), C, kernel=3)


def _softmax_c(nb):
    return nb.emit(relax.op.nn.softmax(_conv(nb), axis=1))


def _softmax_w(nb):
    return nb.emit(relax.op.nn.softmax(_conv(nb), axis=-1))


def _layer_norm_hw(nb):
    y = _conv(nb)
    return nb.emit(
        relax.op.nn.layer_norm(y, nb.param("g", (H, W)), nb.param("b", (H, W)), axes=[-2, -1])
    )


def _layer_norm_chw(nb):
    y = _conv(nb)
    return nb.emit(
        relax.op.nn.layer_norm(
            y, nb.param("g", (C, H, W)), nb.param("b", (C, H, W)), axes=[1, 2, 3]
        )
    )


def _layer_norm_c(nb):
    y = _conv(nb)
    return nb.emit(relax.op.nn.layer_norm(y, nb.param("g", (C,)), nb.param("b", (C,)), axes=[1]))


def _group_norm(nb):
    y = _conv(nb)
    return nb.emit(
        relax.op.nn.group_norm(
            y, nb.param("g", (C,)), nb.param("b", (C,)), num_groups=4, channel_axis=1, axes=[2, 3]
        )
    )


def _instance_norm(nb):
    y = _conv(nb)
    return nb.emit(
        relax.op.nn.instance_norm(
            y, nb.param("g", (C,)), nb.param("b", (C,)), channel_axis=1, axes=[2, 3]
        )
    )


def _rms_norm_chw(nb):
    y = _conv(nb)
    return nb.emit(relax.op.nn.rms_norm(y, nb.param("g", (C, H, W)), axes=[1, 2, 3]))


def _dense_flatten(nb):
    y = _conv(nb)
    return nb.dense(nb.emit(relax.op.reshape(y, (N, C * H * W))), 10)


def _dense_global_pool(nb):
    y = nb.emit(relax.op.nn.adaptive_avg_pool2d(_conv(nb), output_size=1))
    return nb.dense(nb.emit(relax.op.reshape(y, (N, C))), 10)


def _matmul_hw(nb):
    return nb.emit(relax.op.matmul(_conv(nb), nb.param("b", (W, 5))))


# name -> (fn, PrimFunc name of the op, whether the flattened layout change may be a view)
CASES = {
    "softmax_channels": (_softmax_c, "softmax"),
    "softmax_width": (_softmax_w, "softmax"),
    "layer_norm_hw": (_layer_norm_hw, "layer_norm"),
    # Normalizations whose parameters run along the channel axis: LegalizeChannelNorms keeps
    # them out of ConvertLayout (its C++ layout inference breaks them), in NCHW on buffers.
    "layer_norm_chw": (_layer_norm_chw, "layer_norm"),
    "layer_norm_c": (_layer_norm_c, "layer_norm"),
    "group_norm": (_group_norm, "group_norm"),
    "instance_norm": (_instance_norm, "instance_norm"),
    "rms_norm_chw": (_rms_norm_chw, "rms_norm"),
    "dense_after_flatten": (_dense_flatten, "matmul"),
    "dense_after_global_pool": (_dense_global_pool, "matmul"),
    "matmul_width": (_matmul_hw, "matmul"),
}


def _kernels_between_conv_and(lowered, op_name):
    """The last kernel reading a texture (the conv2d, or a pool after it) and the kernels
    between it and the op."""
    calls = tt.texture_call_scopes(lowered)
    conv = max(i for i, c in enumerate(calls) if any(tt.is_texture(s) for s in c.inputs))
    ops = [i for i, c in enumerate(calls) if op_name in c.func and i > conv]
    assert ops, tt.describe_scopes(lowered)
    return calls[conv], calls[conv + 1 : ops[0]]


def _check_fallback(fn, op_name, dtype_mode):
    mod = tt.build_network(fn, dtype_mode)
    lowered = tt.lower_to_scopes(mod)
    tt.assert_conv2d_uses_texture(lowered)
    conv, between = _kernels_between_conv_and(lowered, op_name)
    assert conv.outputs == ["global"], tt.describe_scopes(lowered)
    layout_changes = [c for c in between if "layout_transform" in c.func]
    others = [c for c in between if "layout_transform" not in c.func]
    # the op's own weight transpose (dense) is not on the conv's path
    others = [c for c in others if "transpose" not in c.func]
    assert len(layout_changes) <= 1 and not others, tt.describe_scopes(lowered)
    assert _TO_VDEVICE not in lowered["main"].script(), "a texture/buffer copy is left"
    ex = tt.build_texture(mod)
    tt.assert_kernels_use_images(ex)


@pytest.mark.parametrize("case", list(CASES))
def test_compile_fallback(case, compile_dtype_mode):
    _check_fallback(*CASES[case], compile_dtype_mode)


@pytest.mark.requires_opencl
@pytest.mark.parametrize("case", list(CASES))
def test_numerics(case, dtype_mode, rng):
    tt.check_numerics(CASES[case][0], dtype_mode, rng, name=case)


def _norm_ops_left(mod):
    names = []

    def _visit(expr):
        if isinstance(expr, relax.Call) and isinstance(expr.op, tvm.ir.Op):
            if expr.op.name.startswith("relax.nn.") and expr.op.name.endswith("_norm"):
                names.append(expr.op.name)

    relax.analysis.post_order_visit(mod["main"], _visit)
    return names


@pytest.mark.parametrize(
    "case,legalized",
    [
        ("layer_norm_chw", True),
        ("layer_norm_c", True),
        ("group_norm", True),
        ("instance_norm", True),
        ("rms_norm_chw", True),
        # over H and W only: ConvertLayout handles it in NCHW4c, the pass leaves it alone
        ("layer_norm_hw", False),
    ],
)
def test_legalize_channel_norms(case, legalized):
    mod = tt.build_network(CASES[case][0], "float32")
    assert _norm_ops_left(mod)
    after = LegalizeChannelNorms()(mod)
    assert bool(_norm_ops_left(after)) != legalized, after["main"].script()
    if legalized:
        assert any(CASES[case][1] in gv.name_hint for gv in after.get_global_vars())
