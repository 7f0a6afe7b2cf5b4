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
"""Lower transposed convolutions to the ``NCHW4c`` texture compute.

``ConvertLayout`` cannot give ``conv2d_transpose`` a channel-blocked layout: its C++ layout
inference only permutes axes (``TransposeLike`` in ``src/relax/transform/infer_layout_utils.cc``
needs layouts of equal rank), and it even fails outright when the op's input comes out of a
converted ``NCHW4c`` conv2d.

``LowerConv2dTransposeNCHWc`` (before ``ConvertLayout``) lowers each supported
``conv2d_transpose`` with ``legalize_ops.adreno.conv2d_transpose_NCHWc``: layout transforms into
``NCHW4c``, the blocked compute (a ``call_tir``, which ``ConvertLayout`` leaves alone), a layout
transform back to ``NCHW``.

``FoldTextureLayoutTransforms`` (after ``ConvertLayout``) then cancels the layout transforms
around the compute against those ``ConvertLayout`` put around the op.
"""

import tvm
from tvm import relax
from tvm.ir import Op
from tvm.relax.transform.legalize_ops import adreno as legalize_adreno

from .utils import rewrite_relax_functions


@relax.expr_functor.mutator
class _TransposeLowering(relax.PyExprMutator):  # pylint: disable=abstract-method
    transpose_op = Op.get("relax.nn.conv2d_transpose")

    def visit_call_(self, call: relax.Call) -> relax.Expr:  # pylint: disable=arguments-renamed
        call = super().visit_call_(call)
        if call.op.same_as(self.transpose_op) and legalize_adreno.conv2d_transpose_supported(call):
            return legalize_adreno.conv2d_transpose_NCHWc(self.builder_, call)
        return call


@tvm.transform.module_pass(opt_level=0, name="LowerConv2dTransposeNCHWc")
class LowerConv2dTransposeNCHWc:  # pylint: disable=too-few-public-methods
    """Lower supported ``conv2d_transpose`` calls to the ``NCHW4c`` texture compute.

    Run before ``ConvertLayout``; see the module docstring.

    Returns
    -------
    ret : tvm.transform.Pass
        The pass.
    """

    def transform_module(self, mod: tvm.IRModule, _ctx: tvm.transform.PassContext) -> tvm.IRModule:
        """Lower the transposed convolutions of every Relax function of ``mod``."""
        return rewrite_relax_functions(mod, _TransposeLowering(mod))
