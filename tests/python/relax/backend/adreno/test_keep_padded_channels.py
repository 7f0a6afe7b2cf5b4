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
"""Tests of KeepPaddedChannels: after a channel-padded conv, ops that keep zeros run on the
padded channel count, and the slices back to the real channels go."""

import numpy as np

import tvm
import tvm.testing
from tvm import relax
from tvm.relax.backend.adreno.transform.keep_padded_channels import KeepPaddedChannels
from tvm.script import ir as I
from tvm.script import relax as R


@I.ir_module
class PaddedConvUnit:
    """BlazeFace's 42-channel unit in small: a conv to 6 channels computed as 8 with zero
    filters (as PadConvChannels leaves it), bias, a shortcut widened 4 -> 6, ReLU, and the
    next conv's input pad 6 -> 8."""

    @R.function
    def main(
        x: R.Tensor((1, 4, 4, 8), "float32"),
        w: R.Tensor((1, 1, 8, 6), "float32"),
        b: R.Tensor((1, 1, 1, 6), "float32"),
        r: R.Tensor((1, 4, 4, 4), "float32"),
    ) -> R.Tensor((1, 4, 4, 8), "float32"):
        with R.dataflow():
            wp = R.nn.pad(w, pad_width=[0, 0, 0, 0, 0, 0, 0, 2], pad_value=0.0)
            c = R.nn.conv2d(x, wp, data_layout="NHWC", kernel_layout="HWIO", out_layout="NHWC")
            s = R.strided_slice(c, axes=[3], begin=[0], end=[6], assume_inbound=True)
            y = R.add(s, b)
            rp = R.nn.pad(r, pad_width=[0, 0, 0, 0, 0, 0, 0, 2], pad_value=0.0)
            z = R.add(rp, y)
            a = R.nn.relu(z)
            out = R.nn.pad(a, pad_width=[0, 0, 0, 0, 0, 0, 0, 2], pad_value=0.0)
            R.output(out)
        return out


def test_unit_runs_on_the_padded_channels():
    @I.ir_module
    class Expected:
        @R.function
        def main(
            x: R.Tensor((1, 4, 4, 8), "float32"),
            w: R.Tensor((1, 1, 8, 6), "float32"),
            b: R.Tensor((1, 1, 1, 6), "float32"),
            r: R.Tensor((1, 4, 4, 4), "float32"),
        ) -> R.Tensor((1, 4, 4, 8), "float32"):
            with R.dataflow():
                wp = R.nn.pad(w, pad_width=[0, 0, 0, 0, 0, 0, 0, 2], pad_value=0.0)
                c = R.nn.conv2d(x, wp, data_layout="NHWC", kernel_layout="HWIO", out_layout="NHWC")
                bp = R.nn.pad(b, pad_width=[0, 0, 0, 0, 0, 0, 0, 2], pad_value=0.0)
                y = R.add(c, bp)
                rp = R.nn.pad(r, pad_width=[0, 0, 0, 0, 0, 0, 0, 4], pad_value=0.0)
                z = R.add(rp, y)
                a = R.nn.relu(z)
                out = a
                R.output(out)
            return out

    tvm.ir.assert_structural_equal(KeepPaddedChannels()(PaddedConvUnit), Expected)


def test_rewritten_unit_computes_the_same():
    rng = np.random.default_rng()
    args = [
        rng.uniform(-1, 1, [int(d) for d in p.ty.shape]).astype("float32")
        for p in PaddedConvUnit["main"].params
    ]

    def _run(mod):
        vm = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())
        return vm["main"](*[tvm.runtime.tensor(a) for a in args]).numpy()

    expected = _run(PaddedConvUnit)
    np.testing.assert_allclose(_run(KeepPaddedChannels()(PaddedConvUnit)), expected, 1e-6, 1e-6)


def test_ops_that_do_not_keep_zeros_and_unpadded_convs_are_kept():
    """A sigmoid makes the zero channels 0.5; a conv of 8 real filters sliced to 6 has no
    zero channels: both slices stay."""

    @I.ir_module
    class Before:
        @R.function
        def main(
            x: R.Tensor((1, 4, 4, 8), "float32"),
            w: R.Tensor((1, 1, 8, 6), "float32"),
            v: R.Tensor((1, 1, 8, 8), "float32"),
        ) -> R.Tuple(R.Tensor((1, 4, 4, 6), "float32"), R.Tensor((1, 4, 4, 6), "float32")):
            with R.dataflow():
                wp = R.nn.pad(w, pad_width=[0, 0, 0, 0, 0, 0, 0, 2], pad_value=0.0)
                c = R.nn.conv2d(x, wp, data_layout="NHWC", kernel_layout="HWIO", out_layout="NHWC")
                s = R.strided_slice(c, axes=[3], begin=[0], end=[6], assume_inbound=True)
                y = R.sigmoid(s)
                d = R.nn.conv2d(x, v, data_layout="NHWC", kernel_layout="HWIO", out_layout="NHWC")
                t = R.strided_slice(d, axes=[3], begin=[0], end=[6], assume_inbound=True)
                z = R.nn.relu(t)
                out = (y, z)
                R.output(out)
            return out

    tvm.ir.assert_structural_equal(KeepPaddedChannels()(Before), Before)


if __name__ == "__main__":
    tvm.testing.main()
