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
# pylint: disable=invalid-name
"""Legalize conv2d for Adreno GPU textures.

This is where the Adreno backend picks the implementation of a convolution (what Relay's op
strategy did). The texture pipeline converts conv2d to ``NCHW4c`` / ``OIHW4o`` first; here each
call is lowered by one TOPI compute chosen from its attributes and shapes:

* ``groups == 1``: direct convolution (``topi.nn.conv2d_NCHWc_OIHWo``);
* ``groups == in_channels`` (one input channel per group, any channel multiplier):
  depthwise (``topi.adreno.depthwise_conv2d_NCHWc_OIHWo``);
* any other ``groups``: group convolution (``topi.adreno.group_conv2d_NCHWc_OIHWo``).

PrimFunc names keep ``conv2d_NCHWc`` so that later passes and tests can find the convolution.
"""

from tvm import relax, topi
from tvm.topi import adreno as topi_adreno


def _common_args(call: relax.Call) -> dict:
    # The call's inferred dtype already resolves an unset out_dtype to the input dtype.
    # Without forwarding it, TOPI's float32 default makes a float16 conv2d return float32
    # and the legalized call fails type checking.
    return {
        "stride": call.attrs.strides,
        "padding": call.attrs.padding,
        "dilation": call.attrs.dilation,
        "out_dtype": call.ty.dtype,
    }


def _is_depthwise(call: relax.Call) -> bool:
    """One input channel per group: the weight's input-channel axis has extent 1."""
    return int(call.attrs.groups) > 1 and int(call.args[1].ty.shape[1]) == 1


def conv2d_direct(bb: relax.BlockBuilder, call: relax.Call) -> relax.Expr:
    """Direct convolution, ``groups == 1``."""
    return bb.call_te(
        topi.nn.conv2d_NCHWc_OIHWo,
        data=call.args[0],
        kernel=call.args[1],
        layout=call.attrs.data_layout,
        out_layout=call.attrs.out_layout,
        ty_args=call.ty_args,
        primfunc_name_hint="conv2d_NCHWc_OIHWo",
        **_common_args(call),
    )


def conv2d_depthwise(bb: relax.BlockBuilder, call: relax.Call) -> relax.Expr:
    """Depthwise convolution: one input channel per group, any channel multiplier."""
    return bb.call_te(
        topi_adreno.depthwise_conv2d_NCHWc_OIHWo,
        call.args[0],
        call.args[1],
        ty_args=call.ty_args,
        primfunc_name_hint="depthwise_conv2d_NCHWc_OIHWo",
        **_common_args(call),
    )


def conv2d_group(bb: relax.BlockBuilder, call: relax.Call) -> relax.Expr:
    """Group convolution with more than one input channel per group."""
    return bb.call_te(
        topi_adreno.group_conv2d_NCHWc_OIHWo,
        call.args[0],
        call.args[1],
        groups=int(call.attrs.groups),
        ty_args=call.ty_args,
        primfunc_name_hint="group_conv2d_NCHWc_OIHWo",
        **_common_args(call),
    )


def conv2d_NCHWc_OIHWo(bb: relax.BlockBuilder, call: relax.Call) -> relax.Expr:
    """Legalize a ``NCHW4c`` / ``OIHW4o`` conv2d with the implementation its shape calls for.

    Parameters
    ----------
    bb : relax.BlockBuilder
        The block builder of the legalization.
    call : relax.Call
        The ``relax.nn.conv2d`` call.

    Returns
    -------
    expr : relax.Expr
        The ``call_tir`` computing it.
    """
    if int(call.attrs.groups) == 1:
        return conv2d_direct(bb, call)
    if _is_depthwise(call):
        return conv2d_depthwise(bb, call)
    return conv2d_group(bb, call)
