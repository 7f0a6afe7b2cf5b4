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
"""Lower ``relax.nn.conv2d_transpose`` to the Adreno texture compute.

``ConvertLayout`` cannot give a transposed convolution a channel-blocked layout: the C++
layout inference of ``conv2d_transpose`` (``src/relax/op/nn/convolution.cc``) only permutes
axes (``TransposeLike`` needs layouts of equal rank), so ``NCHW4c`` fails. The Adreno backend
therefore lowers the op itself: the ``NCHW`` activation is blocked into ``NCHW4c`` (channels
zero-padded to a multiple of 4), the ``IOHW`` weight into ``[O // 4, I, H, W, 4]``, the
convolution is ``topi.nn.conv2d_transpose_NCHWc`` (its reduction block annotated for
``dl.adreno.GroupConv2d``), and the result is unblocked (and cropped to the real channel
count). The layout transforms are Relax ops, so the texture pipeline
(``relax.backend.adreno.transform.FoldTextureLayoutTransforms``) can cancel them against the
ones ``ConvertLayout`` put around the op.

The memory scope annotation (``relax.backend.adreno.transform.AnnotateTextureScope``) finds
the compute by that annotation and places its data in a texture and its weight in a buffer.
"""

from tvm import relax, topi
from tvm.relax.utils import gen_call_tir_inputs, get_static_shape
from tvm.s_tir.dlight.adreno.base import CONV2D_TRANSPOSE
from tvm.topi.adreno.utils import CHANNEL_BLOCK

from .convolution import with_schedule_rule


def conv2d_transpose_supported(call: relax.Call) -> bool:
    """Whether :py:func:`conv2d_transpose_NCHWc` lowers ``call``.

    Supported: ``NCHW`` data, ``IOHW`` weight, ``NCHW`` output, one group, dilation 1, static
    shapes. Anything else keeps the generic (buffer) legalization.

    Parameters
    ----------
    call : relax.Call
        A ``relax.nn.conv2d_transpose`` call.

    Returns
    -------
    supported : bool
    """
    attrs = call.attrs
    if (attrs.data_layout, attrs.kernel_layout, attrs.out_layout) != ("NCHW", "IOHW", "NCHW"):
        return False
    if int(attrs.groups) != 1 or [int(d) for d in attrs.dilation] != [1, 1]:
        return False
    return all(get_static_shape(e.ty) is not None for e in (call.args[0], call.args[1], call))


def conv2d_transpose_NCHWc(bb: relax.BlockBuilder, call: relax.Call) -> relax.Expr:
    """Lower an ``NCHW`` / ``IOHW`` transposed conv2d to a channel-blocked ``call_tir``.

    Parameters
    ----------
    bb : relax.BlockBuilder
        The block builder to emit into.
    call : relax.Call
        The ``relax.nn.conv2d_transpose`` call; see :py:func:`conv2d_transpose_supported`.

    Returns
    -------
    expr : relax.Expr
        The ``NCHW`` result: blocked inputs, the convolution, the unblocked output.
    """
    if not conv2d_transpose_supported(call):
        raise ValueError(
            f"conv2d_transpose with layouts {call.attrs.data_layout}/{call.attrs.kernel_layout}"
            f", groups {call.attrs.groups}, dilation {list(call.attrs.dilation)} has no Adreno "
            "texture lowering (NCHW/IOHW, one group, dilation 1, static shapes)"
        )
    data, weight = call.args
    in_channels, out_channels = get_static_shape(weight.ty)[:2]
    in_padded = -(-in_channels // CHANNEL_BLOCK) * CHANNEL_BLOCK
    if in_padded != in_channels:
        weight = bb.emit(relax.op.nn.pad(weight, [0, in_padded - in_channels, 0, 0, 0, 0, 0, 0]))
    data4 = bb.emit(
        relax.op.layout_transform(
            data, lambda n, c, h, w: (n, c // CHANNEL_BLOCK, h, w, c % CHANNEL_BLOCK), pad_value=0.0
        )
    )
    weight4 = bb.emit(
        relax.op.layout_transform(
            weight,
            lambda i, o, h, w: (o // CHANNEL_BLOCK, i, h, w, o % CHANNEL_BLOCK),
            pad_value=0.0,
        )
    )
    func, args, ty = gen_call_tir_inputs(
        topi.nn.conv2d_transpose_NCHWc,
        data4,
        weight4,
        strides=call.attrs.strides,
        padding=call.attrs.padding,
        out_dtype=str(call.ty.dtype),
        output_padding=call.attrs.output_padding,
    )
    func = with_schedule_rule(func, CONV2D_TRANSPOSE)
    out4 = bb.emit(relax.call_tir(bb.add_func(func, "conv2d_transpose_NCHWc"), args, ty))
    out = relax.op.layout_transform(out4, lambda n, c, h, w, b: (n, c * CHANNEL_BLOCK + b, h, w))
    if -(-out_channels // CHANNEL_BLOCK) * CHANNEL_BLOCK != out_channels:
        out = relax.op.strided_slice(bb.emit(out), axes=[1], begin=[0], end=[out_channels])
    return out
