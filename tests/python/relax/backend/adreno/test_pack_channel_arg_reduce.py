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
# pylint: disable=invalid-name,missing-docstring,no-self-argument,not-callable
"""Tests of PackChannelArgReduce: argmax/argmin over the channels of an unpacked NCHW4c tensor
reduce the packed tensor itself, padded lanes excluded."""

import numpy as np
import pytest

import tvm
import tvm.testing
from tvm import relax
from tvm.relax.backend.adreno.transform import PackChannelArgReduce
from tvm.script import ir as I
from tvm.script import relax as R


@I.ir_module
class ArgmaxOfSixChannels:
    """An NCHW4c tensor of 8 channels, unpacked, sliced to its 6 real channels, argmax."""

    @R.function
    def main(x: R.Tensor((1, 2, 3, 3, 4), "float32")) -> R.Tensor((1, 3, 3), "int64"):
        with R.dataflow():
            unpacked = R.layout_transform(x, index_map=lambda n, c, h, w, l: (n, c * 4 + l, h, w))
            real = R.strided_slice(unpacked, axes=[1], begin=[0], end=[6], assume_inbound=True)
            y = R.argmax(real, axis=1)
            R.output(y)
        return y


@I.ir_module
class ArgminKeepdims:
    @R.function
    def main(x: R.Tensor((1, 2, 3, 3, 4), "float32")) -> R.Tensor((1, 1, 3, 3), "int64"):
        with R.dataflow():
            unpacked = R.layout_transform(x, index_map=lambda n, c, h, w, l: (n, c * 4 + l, h, w))
            y = R.argmin(unpacked, axis=1, keepdims=True)
            R.output(y)
        return y


def _bindings(mod):
    return [b.value for block in mod["main"].body.blocks for b in block.bindings]


@pytest.mark.parametrize("before", [ArgmaxOfSixChannels, ArgminKeepdims])
def test_unpacking_copy_is_replaced_by_one_packed_reduction(before):
    values = _bindings(PackChannelArgReduce()(before))
    assert len(values) == 1, values
    call = values[0]
    assert call.op.same_as(tvm.ir.Op.get("relax.call_tir"))
    assert call.args[1].fields[0].same_as(before["main"].params[0])
    tvm.ir.assert_structural_equal(call.ty, before["main"].ret_ty)


def test_argmax_without_unpacking_is_kept():
    @I.ir_module
    class Before:
        @R.function
        def main(x: R.Tensor((1, 8, 3, 3), "float32")) -> R.Tensor((1, 3, 3), "int64"):
            with R.dataflow():
                y = R.argmax(x, axis=1)
                R.output(y)
            return y

    tvm.ir.assert_structural_equal(PackChannelArgReduce()(Before), Before)


def test_padded_lanes_never_win_and_ties_go_to_the_first_channel():
    rng = np.random.default_rng()
    data = rng.uniform(-1.0, 1.0, size=(1, 2, 3, 3, 4)).astype("float32")
    data[:, 1, :, :, 2:] = 100.0  # channels 6 and 7: padding, larger than every real one
    data[0, 0, 0, 0, 1] = data[0, 1, 0, 0, 0] = 10.0  # a tie between channels 1 and 4
    nchw = data.transpose(0, 1, 4, 2, 3).reshape(1, 8, 3, 3)[:, :6]
    expected = np.argmax(nchw, axis=1)
    assert expected[0, 0, 0] == 1

    mod = PackChannelArgReduce()(ArgmaxOfSixChannels)
    executable = tvm.compile(mod, target="llvm")
    vm = relax.VirtualMachine(executable, tvm.cpu())
    result = vm["main"](tvm.runtime.tensor(data)).numpy()
    tvm.testing.assert_allclose(result, expected)


if __name__ == "__main__":
    tvm.testing.main()
