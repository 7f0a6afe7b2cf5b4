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
"""The Relax Adreno GPU backend compilation pipeline and other passes."""

import tvm
from tvm import relax
from tvm.relax.transform.legalize_ops import adreno as legalize_adreno
from tvm.relax.backend.adreno.transform.broadcast_rank import AlignBroadcastRank
from tvm.relax.backend.adreno.transform.clip_to_min_max import ClipToMinMax
from tvm.relax.backend.adreno.transform.channel_norm_layout import LegalizeChannelNorms
from tvm.relax.backend.adreno.transform.texture_call_site import SpecializeTextureCallSites
from tvm.relax.backend.adreno.transform.conv2d_transpose_layout import (
    FoldTextureLayoutTransforms,
    LowerConv2dTransposeNCHWc,
)
from tvm.relax.backend.adreno.transform.conv_channel_padding import PadConvChannels
from tvm.relax.backend.adreno.transform.fold_constant_on_host import FoldConstantOnHost


@tvm.transform.module_pass(opt_level=0, name="MetaScheduleApplyDatabase")
def _apply_database_keeping_global_infos(mod: tvm.ir.IRModule, _ctx) -> tvm.ir.IRModule:
    """``relax.transform.MetaScheduleApplyDatabase``, keeping the module's global infos.

    The C++ pass (src/relax/transform/meta_schedule.cc, ApplyDatabase) returns a module built
    from its functions alone: the ``vdevice`` list, which every texture-scoped tensor refers
    to, is gone, and CallTIRRewrite then fails with "key is not in Map".
    """
    result = relax.transform.MetaScheduleApplyDatabase()(mod)
    for name, infos in mod.global_infos.items():
        result.update_global_info(name, infos)
    return result.with_attrs(mod.attrs) if mod.attrs else result


def library_dispatch_passes(target: tvm.target.Target):  # pylint: disable=unused-argument
    """The default library dispatch passes for Adreno GPU backend."""
    if "clml" in target.keys:
        return [
            relax.backend.adreno.clml.OpenCLMLOffLoadForLLM(target),
            relax.backend.adreno.clml.OpenCLMLOffLoad(),
        ]
    else:
        return []


def legalize_passes(target: tvm.target.Target):  # pylint: disable=unused-argument
    """The default legalization passes for Adreno GPU backend."""
    desired_layouts = {"relax.nn.conv2d": ["NCHW4c", "OIHW4o", "NCHW4c"]}
    skip_ops = [
        "relax.nn.conv2d",
        "relax.nn.max_pool2d",
        "relax.nn.avg_pool2d",
        "relax.nn.adaptive_avg_pool2d",
    ]
    pass_list = []

    pass_list.extend(
        [
            tvm.tirx.transform.BindTarget(tvm.target.Target.current(allow_none=False)),
            relax.transform.DecomposeOpsForInference(),
        ]
    )
    if "texture" in target.keys:
        pass_list.extend(
            [
                relax.backend.adreno.transform.SplitChannelReductionKeepdims(),
                ClipToMinMax(),
                AlignBroadcastRank(),
                LowerConv2dTransposeNCHWc(),
                PadConvChannels(),
                LegalizeChannelNorms(),
                relax.transform.ConvertLayout(desired_layouts),
                relax.backend.adreno.transform.PackChannelArgReduce(),
                FoldTextureLayoutTransforms(),
                relax.transform.Normalize(),
                FoldConstantOnHost(),
                relax.transform.FoldConstant(),
                relax.transform.LegalizeOps(skip_ops=skip_ops),
                relax.transform.AnnotateTIROpPattern(),
                relax.backend.adreno.transform.AnnotateReductionMemoryScope(target),
            ]
        )
    pass_list.extend([tvm.relax.transform.LegalizeOps()])
    if "texture" in target.keys:
        pass_list.extend(
            [
                relax.transform.LegalizeOps(
                    {"relax.nn.conv2d": legalize_adreno.conv2d_NCHWc_OIHWo},
                )
            ]
        )

    pass_list.extend(
        [
            relax.transform.AnnotateTIROpPattern(),
            relax.transform.FoldConstant(),
            relax.transform.FuseOps(),
            relax.transform.FuseTIR(),
            relax.transform.DeadCodeElimination(),
        ]
    )
    if "texture" in target.keys:
        pass_list.extend(
            [
                relax.backend.adreno.transform.FoldVDeviceScopeChange(),
                relax.backend.adreno.transform.BalanceTextureScope(target),
                relax.backend.adreno.transform.RewriteBufferReshapeToView(),
                relax.transform.DeadCodeElimination(),
                SpecializeTextureCallSites(),
            ]
        )
    from tvm.s_tir import dlight as dl  # pylint: disable=import-outside-toplevel
    from tvm.s_tir import meta_schedule as ms  # pylint: disable=import-outside-toplevel

    pass_list.extend([relax.transform.Normalize()])
    if ms.Database.current() is not None:
        # Under a tuning database (``with database:``) its best schedule of each workload it
        # holds; the rules below schedule the rest.
        pass_list.append(_apply_database_keeping_global_infos)
    pass_list.extend(
        [
            dl.ApplyDefaultSchedule(
                dl.adreno.SymbolicShapeFallback(),
                dl.adreno.Conv2d(),
                dl.adreno.Winograd(),
                dl.adreno.GroupConv2d(),
                dl.adreno.LayoutTransform(),
                dl.adreno.Reduction(),
                dl.adreno.Pool2D(),
                dl.adreno.Fallback(),
            )
        ]
    )
    pass_list.extend(
        [
            dl.ApplyDefaultSchedule(
                dl.gpu.Reduction(),
                dl.gpu.GeneralReduction(),
                dl.gpu.Fallback(),
            )
        ]
    )
    # Fused names join every operator; drivers choke on kernel names of hundreds of chars.
    pass_list.append(relax.backend.gpu_generic.BoundKernelNames())
    return pass_list


def dataflow_lower_passes(target: tvm.target.Target):  # pylint: disable=unused-argument
    """The default dataflow lowering passes for Adreno GPU backend."""
    passes = relax.backend.gpu_generic.dataflow_lower_passes(target)
    if "texture" in target.keys:
        # RewriteBufferReshapeToView already turned the buffer reshapes into views.  The C++
        # RewriteDataflowReshape ignores memory scopes: it would also turn a layout transform
        # that writes a texture into a view of its buffer input (and leave the uses of the
        # retyped variable undefined).
        passes = [p for p in passes if p.info.name != "RewriteDataflowReshape"]
        # Scope changes on one device copy into planned memory, without a host wait; texture
        # tensors get image storage of their own geometry, before StaticPlanBlockMemory would
        # give them flat storage and views that copy on devices without image-from-buffer.
        passes.extend(
            [
                relax.backend.adreno.transform.LowerVDeviceCopy(),
                relax.backend.adreno.transform.PlanTextureStorage(),
            ]
        )
    return passes


def finalize_passes(target: tvm.target.Target):  # pylint: disable=unused-argument
    """The default finalization passes for Adreno GPU backend."""
    return relax.backend.gpu_generic.finalize_passes(target) + [
        relax.backend.adreno.transform.AllocStorageOnPhysicalDevice(),
    ]


def get_default_pipeline(target: tvm.target.Target):
    """Return the default compilation pipeline for Adreno GPU."""

    @tvm.transform.module_pass(opt_level=0)
    def _pipeline(mod: tvm.ir.IRModule, _ctx: tvm.transform.PassContext):
        with target:
            seq = tvm.transform.Sequential(
                library_dispatch_passes(target)
                + legalize_passes(target)
                + dataflow_lower_passes(target)
                + finalize_passes(target)
            )
            mod = seq(mod)
        return mod

    return _pipeline
