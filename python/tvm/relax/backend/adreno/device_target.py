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
"""The Adreno texture target with the image limits of a real device."""

import warnings
from typing import Optional, Union

import tvm
from tvm.runtime import Device

DEFAULT_TEXTURE_TARGET = "qcom/adreno-opencl-texture"


def texture_target_for_device(
    dev: Device, target: Optional[Union[str, dict, tvm.target.Target]] = None
) -> tvm.target.Target:
    """Return a texture target whose image limits do not exceed those of ``dev``.

    The texture passes keep a tensor in a texture only when its image fits the target's
    ``texture_spatial_limit`` (width and height) and ``texture_depth_limit`` (array layers), and
    otherwise in buffers.  The target's defaults describe Adreno GPUs; a device with smaller
    images would fail to allocate such a tensor at run time.  Compiling with the limits that
    the device reports keeps those tensors in buffers instead.

    Parameters
    ----------
    dev : tvm.runtime.Device
        The OpenCL device the module will run on, local or remote (from an RPC session).
    target : Optional[Union[str, dict, tvm.target.Target]]
        The texture target to start from, ``qcom/adreno-opencl-texture`` by default.

    Returns
    -------
    target : tvm.target.Target
        ``target`` with each limit lowered to the device's where the device's is smaller; the
        target unchanged when the device does not report its limits (a warning says so).
    """
    base = tvm.target.Target(target if target is not None else DEFAULT_TEXTURE_TARGET)
    if "texture" not in base.keys:
        raise ValueError(f"{base} is not a texture target (its keys have no 'texture')")
    limits = dev.texture_limits()
    if limits is None:
        warnings.warn(
            f"{dev} does not report OpenCL image limits; the texture limits of the target "
            "are used unchanged"
        )
        return base
    width, height, layers = limits
    config = dict(base.export())
    config["texture_spatial_limit"] = min(
        int(config.get("texture_spatial_limit", width)), width, height
    )
    config["texture_depth_limit"] = min(int(config.get("texture_depth_limit", layers)), layers)
    return tvm.target.Target(config)
