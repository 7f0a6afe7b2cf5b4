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
"""Where the OpenCL runtime keeps a texture tensor: the image of each texture memory scope.

A texture tensor ``[d0, ..., d(r-2), 4]`` is stored as an ``image2d_array`` whose pixel is the
last axis; its scope names the axis that separates the image's height from its width. The
compiler and the OpenCL runtime (``runtime.opencl.texture_image_extent``) map a shape to an
image the same way. The compiler keeps this copy because it also runs where no OpenCL runtime
is loaded (when it cross-compiles). It lives in the TIR backend because both the Relax passes
that choose scopes and the TIR passes that lower texture reads need it.
"""

from typing import List, Tuple

TEXTURE_SCOPES = ("global.texture", "global.texture-nhwc", "global.texture-weight")


def _prod(values) -> int:
    out = 1
    for v in values:
        out *= v
    return out


def image_extent(shape: List[int], scope: str) -> Tuple[int, int, int]:
    """The (width, height, layers) of the image holding a tensor of ``shape`` in ``scope``.

    Parameters
    ----------
    shape : List[int]
        The static tensor shape; its last axis is the 4-channel pixel.
    scope : str
        One of ``TEXTURE_SCOPES``.

    Returns
    -------
    extent : Tuple[int, int, int]
        Width, height and number of layers in pixels.
    """
    rank = len(shape)
    sep = {
        "global.texture": rank - 2,
        "global.texture-nhwc": 2,
        "global.texture-weight": 1,
    }[scope]
    return (_prod(shape[sep : rank - 1]), shape[sep - 1], _prod(shape[: sep - 1]))
