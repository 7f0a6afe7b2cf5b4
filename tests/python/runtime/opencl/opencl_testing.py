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
# pylint: disable=invalid-name,missing-docstring,no-self-argument
"""The model the OpenCL runtime tests compile: three kernels (an add, a row sum, a multiply)
over two 4x64 inputs, and its numpy reference."""

from tvm.script import ir as I
from tvm.script import relax as R


@I.ir_module
class ElementwiseChain:  # pylint: disable=too-few-public-methods
    @R.function
    def main(x: R.Tensor((4, 64), "float32"), y: R.Tensor((4, 64), "float32")):
        with R.dataflow():
            z = R.add(x, y)
            s = R.sum(z, axis=1, keepdims=True)
            o = R.multiply(z, s)
            R.output(o)
        return o


def elementwise_chain_reference(x, y):
    """What ``ElementwiseChain`` computes, in numpy."""
    z = x + y
    return z * z.sum(axis=1, keepdims=True)
