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
"""Compile a small convolutional network for the Adreno texture target and run it.

Run by tests/docs/test_examples.py on the host's OpenCL device (PoCL in CI):

    python docs/examples/compile_and_run.py [--dtype float32|float16|float16_acc32] [--compile-only]

The float16 modes need an OpenCL device with cl_khr_fp16 to run; ``--compile-only`` checks
that they compile anywhere.
"""

import argparse
import sys
from pathlib import Path

import numpy as np

import tvm
from tvm import relax
from tvm.script import relax as R

# The census helper lives in the workspace tooling (tools/adreno_ws), not in TVM.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
from adreno_ws.model_census import census, format_census  # noqa: E402


@tvm.script.ir_module
class Net:  # pylint: disable=too-few-public-methods
    """conv3x3 -> relu -> conv1x1 -> global average pool: a typical vision block."""

    @R.function
    def main(
        x: R.Tensor((1, 16, 32, 32), "float32"),
        w1: R.Tensor((32, 16, 3, 3), "float32"),
        w2: R.Tensor((32, 32, 1, 1), "float32"),
    ):
        with R.dataflow():
            y = R.nn.relu(R.nn.conv2d(x, w1, padding=1))
            z = R.nn.conv2d(y, w2)
            out = R.mean(z, axis=[2, 3], keepdims=True)
            R.output(out)
        return out


def to_precision(mod: tvm.IRModule, dtype: str) -> tvm.IRModule:
    """float32 as is; float16: fp16 storage and math; float16_acc32: fp16 storage,
    conv2d and matmul accumulate in float32."""
    if dtype == "float32":
        return mod
    out_dtype = {"float16": "float16", "float16_acc32": "float32"}[dtype]
    return relax.transform.ToMixedPrecision(out_dtype=out_dtype)(mod)


def census_line() -> str:
    """The census of ``Net`` in float32 as one line (the docs build shows it as sample output)."""
    target = tvm.target.Target("qcom/adreno-opencl-texture", host="llvm")
    with target:
        lowered = tvm.transform.Sequential(
            relax.pipeline.library_dispatch_passes(target) + relax.pipeline.legalize_passes(target)
        )(Net)
    return format_census("net", census(lowered))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--dtype", default="float32", choices=["float32", "float16", "float16_acc32"]
    )
    parser.add_argument("--compile-only", action="store_true")
    args = parser.parse_args()

    mod = to_precision(Net, args.dtype)

    # [compile-begin]
    target = tvm.target.Target("qcom/adreno-opencl-texture", host="llvm")
    executable = tvm.compile(mod, target=target)
    # [compile-end]

    # [census-begin]
    with target:
        lowered = tvm.transform.Sequential(
            relax.pipeline.library_dispatch_passes(target) + relax.pipeline.legalize_passes(target)
        )(mod)
    print(format_census("net", census(lowered)))
    # [census-end]
    counts = census(lowered)
    assert counts["calls_texture"] >= 2, counts  # both convolutions run on textures

    if args.compile_only:
        print(f"compiled ({args.dtype})")
        return 0

    # [run-begin]
    dev = tvm.opencl(0)
    vm = relax.VirtualMachine(executable, dev)
    rng = np.random.default_rng(0)
    inputs = [
        rng.uniform(-1, 1, size=[int(d) for d in p.ty.shape]).astype(str(p.ty.dtype))
        for p in mod["main"].params
    ]
    result = vm["main"](*[tvm.runtime.tensor(a, dev) for a in inputs]).numpy()
    # [run-end]

    # [device-target-begin]
    from tvm.relax.backend.adreno import texture_target_for_device

    print("image limits (width, height, layers):", dev.texture_limits())
    device_target = texture_target_for_device(dev, target)
    executable = tvm.compile(mod, target=device_target)
    # [device-target-end]
    vm = relax.VirtualMachine(executable, dev)
    again = vm["main"](*[tvm.runtime.tensor(a, dev) for a in inputs]).numpy()
    np.testing.assert_array_equal(again, result)  # this net fits any device's images

    # [weights-begin]
    with tvm.transform.PassContext(config={"relax.adreno.conv_weights_in_textures": True}):
        executable = tvm.compile(mod, target=target)
    # [weights-end]
    vm = relax.VirtualMachine(executable, dev)
    with_texture_weights = vm["main"](*[tvm.runtime.tensor(a, dev) for a in inputs]).numpy()

    # The reference: the float32 model on the CPU.
    ref_vm = relax.VirtualMachine(tvm.compile(Net, target="llvm"), tvm.cpu())
    expected = ref_vm["main"](*[tvm.runtime.tensor(a.astype("float32")) for a in inputs]).numpy()
    tol = 1e-4 if args.dtype == "float32" else 2e-2
    np.testing.assert_allclose(result.astype("float32"), expected, rtol=tol, atol=tol)
    np.testing.assert_allclose(with_texture_weights.astype("float32"), expected, rtol=tol, atol=tol)
    print(
        f"ok: {dev.device_name}, {args.dtype}, max abs error "
        f"{np.abs(result.astype('float32') - expected).max():.2e}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
