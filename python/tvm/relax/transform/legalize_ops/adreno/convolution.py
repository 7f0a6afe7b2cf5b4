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

* ``groups == 1``, 3x3, stride 1, dilation 1, 256 channels or more: Winograd F(4x4, 3x3) or
  F(2x2, 3x3) (``topi.adreno.conv2d_winograd_NCHWc_OIHWo``), see :py:func:`winograd_tile`;
* other ``groups == 1``: direct convolution (``topi.nn.conv2d_NCHWc_OIHWo``);
* ``groups == in_channels`` (one input channel per group, any channel multiplier):
  depthwise (``topi.adreno.depthwise_conv2d_NCHWc_OIHWo``);
* any other ``groups``: group convolution (``topi.adreno.group_conv2d_NCHWc_OIHWo``).

PrimFunc names keep ``conv2d_NCHWc`` so that later passes and tests can find the convolution.

The Winograd choice can be overridden with :py:func:`winograd_mode`::

    with legalize_ops.adreno.winograd_mode("off"):   # or "auto" (default), "2", "4"
        ex = tvm.compile(mod, target)

(A PassContext config key would be the natural place; keys are registered in C++
(``TVM_REGISTER_PASS_CONFIG_OPTION``), which this Python-only change cannot do.)
"""

import contextlib
import contextvars

from tvm import relax, topi
from tvm.s_tir.dlight.adreno.config import WinogradChoiceConfig
from tvm.target import Target
from tvm.topi import adreno as topi_adreno

WINOGRAD_MODES = ("auto", "off", "2", "4")
_WINOGRAD_MODE = contextvars.ContextVar("adreno_conv2d_winograd", default="auto")

#: ``kOutEWiseFusable``: keeps FuseOps from merging the Winograd input transform with
#: injective neighbours (its producer's layout transform, or a previous conv's output
#: transform), so it reads and writes textures in a kernel of its own.
_OUT_ELEMWISE_FUSABLE = 4


@contextlib.contextmanager
def winograd_mode(mode: str):
    """Choose how the Adreno conv2d legalization uses Winograd inside the ``with`` block.

    Parameters
    ----------
    mode : str
        ``"auto"`` (default): by shape, see :py:func:`winograd_tile`; ``"off"``: never;
        ``"2"`` / ``"4"``: F(2x2, 3x3) / F(4x4, 3x3) for every eligible conv (a float16 conv
        gets F(2x2): F(4x4) in half precision loses too much accuracy).

    Yields
    ------
    None
    """
    if mode not in WINOGRAD_MODES:
        raise ValueError(f"Winograd mode {mode!r} is not one of {WINOGRAD_MODES}")
    token = _WINOGRAD_MODE.set(mode)
    try:
        yield
    finally:
        _WINOGRAD_MODE.reset(token)


def winograd_tile(call: relax.Call) -> int:
    """The Winograd output tile for a conv2d call, or 0 for a direct convolution.

    Eligible: ``groups == 1``, a 3x3 kernel, stride 1, dilation 1, static shapes. Then, in
    ``"auto"`` mode, with the knobs of ``WinogradChoiceConfig.from_target`` (the current
    target's; where they come from is said there):

    * fewer than ``min_channels`` input or output channels: direct (0);
    * float32 accumulation and output height and width at least ``tile4_min_extent``:
      F(4x4, 3x3) (4);
    * otherwise F(2x2, 3x3) (2). float16 accumulation always gets F(2x2): the F(4x4)
      transforms multiply by up to 8 and divide by 24. Emulated in numpy float16 over 64
      input channels (200 random tiles, error relative to the tile's largest output):
      F(4x4) median 1.5e-2, worst 1.0e-1; F(2x2) median 2.1e-3, worst 2.6e-2; float32
      F(4x4) worst 9.4e-6.

    Parameters
    ----------
    call : relax.Call
        The ``NCHW4c`` / ``OIHW4o`` conv2d call.

    Returns
    -------
    tile : int
        0, 2 or 4.
    """
    mode = _WINOGRAD_MODE.get()
    attrs = call.attrs
    if mode == "off" or int(attrs.groups) != 1:
        return 0
    if [int(s) for s in attrs.strides] != [1, 1] or [int(d) for d in attrs.dilation] != [1, 1]:
        return 0
    try:
        data_shape = [int(d) for d in call.args[0].ty.shape]
        kernel_shape = [int(d) for d in call.args[1].ty.shape]
        out_shape = [int(d) for d in call.ty.shape]
    except (TypeError, ValueError):
        return 0
    if kernel_shape[2:4] != [3, 3]:
        return 0
    half = call.ty.dtype == "float16"
    if mode in ("2", "4"):
        return 2 if half else int(mode)
    target = Target.current(allow_none=True)
    config = WinogradChoiceConfig.from_target(target) if target else WinogradChoiceConfig()
    in_channels, out_channels = data_shape[1] * data_shape[4], out_shape[1] * out_shape[4]
    if min(in_channels, out_channels) < config.min_channels:
        return 0
    out_h, out_w = out_shape[2], out_shape[3]
    if not half and min(out_h, out_w) >= config.tile4_min_extent:
        return 4
    return 2


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


def _texture_vdevice(bb: relax.BlockBuilder, like):
    """The module's texture VDevice for an intermediate (``BalanceTextureScope`` later picks
    its image shape), or ``like`` when the module has none."""
    infos = bb.get().global_infos
    for vdev in infos["vdevice"] if "vdevice" in infos else []:
        if str(vdev.memory_scope).startswith("global.texture"):
            return vdev
    return like


def conv2d_winograd(bb: relax.BlockBuilder, call: relax.Call, tile: int) -> relax.Expr:
    """Winograd F(tile x tile, 3x3) as four calls: the weight transform (folded at compile
    time when the weights are constants), the input transform, the batched product and the
    output transform. The two intermediates are tensors of their own, put in textures: a
    texture cannot be allocated inside one PrimFunc (C++ ``LowerTVMBuiltin`` rejects the
    ``tvm_stack_make_shape`` of a texture allocation), but between calls it is planned like
    any other."""
    data, kernel = call.args
    out_dtype = call.ty.dtype
    batch, in_chunks, _, _, _ = (int(d) for d in data.ty.shape)
    _, out_chunks, out_h, out_w, _ = (int(d) for d in call.ty.shape)
    alpha = tile + 2
    tiles = batch * (-(-out_h // tile)) * (-(-out_w // tile))
    vdevice = _texture_vdevice(bb, call.ty_args[0].vdevice)

    def _texture(chunks):
        shape = (alpha, alpha, chunks, tiles, 4)
        return [relax.TensorType(shape, out_dtype, vdevice)]

    weight = bb.emit_te(
        topi_adreno.conv2d_winograd_weight_transform,
        kernel,
        tile,
        out_dtype,
        primfunc_name_hint=f"conv2d_winograd{tile}_weight_transform",
    )
    data_pack = bb.emit(
        bb.call_te(
            topi_adreno.conv2d_winograd_input_transform,
            data,
            call.attrs.padding,
            tile,
            out_dtype,
            ty_args=_texture(in_chunks),
            primfunc_name_hint=f"conv2d_winograd{tile}_input_transform",
            primfunc_attrs={"op_pattern": _OUT_ELEMWISE_FUSABLE},
        )
    )
    product = bb.emit(
        bb.call_te(
            topi_adreno.conv2d_winograd_batched_product,
            data_pack,
            weight,
            out_dtype,
            ty_args=_texture(out_chunks),
            primfunc_name_hint=f"conv2d_winograd{tile}_batched_product",
        )
    )
    return bb.call_te(
        topi_adreno.conv2d_winograd_output_transform,
        product,
        (out_h, out_w),
        tile,
        out_dtype,
        ty_args=call.ty_args,
        primfunc_name_hint=f"conv2d_NCHWc_OIHWo_winograd{tile}",
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
        tile = winograd_tile(call)
        if tile:
            return conv2d_winograd(bb, call, tile)
        return conv2d_direct(bb, call)
    if _is_depthwise(call):
        return conv2d_depthwise(bb, call)
    return conv2d_group(bb, call)
