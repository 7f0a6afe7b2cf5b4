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
# pylint: disable=invalid-name,missing-docstring,no-self-argument,not-callable,no-method-argument
"""Tests of AllocStorageOnPhysicalDevice: storage of every scope goes to its physical device."""

import tvm
import tvm.testing
from tvm.relax.backend.adreno.transform import AllocStorageOnPhysicalDevice
from tvm.script import ir as I
from tvm.script import relax as R


def test_texture_storage_uses_the_index_of_its_physical_device():
    """vdevice 1 (global.texture) is the OpenCL device of vdevice 0; the host stays 2."""

    @I.ir_module
    class Before:
        I.module_global_infos(
            {
                "vdevice": [
                    I.vdevice("opencl", 0, "global"),
                    I.vdevice("opencl", 0, "global.texture"),
                    I.vdevice("llvm", 0, "global"),
                ]
            }
        )

        @R.function(pure=False)
        def main() -> R.Tuple:
            _buf = R.vm.alloc_storage(R.shape([64]), R.prim_value(0), R.dtype("uint8"), "global")
            _tex = R.vm.alloc_storage(
                R.shape([1, 2, 2, 2, 4]), R.prim_value(1), R.dtype("float32"), "global.texture"
            )
            _host = R.vm.alloc_storage(R.shape([8]), R.prim_value(2), R.dtype("uint8"), "global")
            return R.tuple()

    @I.ir_module
    class Expected:
        I.module_global_infos(
            {
                "vdevice": [
                    I.vdevice("opencl", 0, "global"),
                    I.vdevice("opencl", 0, "global.texture"),
                    I.vdevice("llvm", 0, "global"),
                ]
            }
        )

        @R.function(pure=False)
        def main() -> R.Tuple:
            _buf = R.vm.alloc_storage(R.shape([64]), R.prim_value(0), R.dtype("uint8"), "global")
            _tex = R.vm.alloc_storage(
                R.shape([1, 2, 2, 2, 4]), R.prim_value(0), R.dtype("float32"), "global.texture"
            )
            _host = R.vm.alloc_storage(R.shape([8]), R.prim_value(2), R.dtype("uint8"), "global")
            return R.tuple()

    tvm.ir.assert_structural_equal(AllocStorageOnPhysicalDevice()(Before), Expected)


def test_distinct_devices_keep_their_indices():
    """Two OpenCL devices (ids 0 and 1) are two physical devices."""

    @I.ir_module
    class Before:
        I.module_global_infos(
            {
                "vdevice": [
                    I.vdevice("opencl", 0, "global.texture"),
                    I.vdevice("opencl", 1, "global.texture"),
                ]
            }
        )

        @R.function(pure=False)
        def main() -> R.Tuple:
            _first = R.vm.alloc_storage(
                R.shape([64]), R.prim_value(0), R.dtype("float32"), "global.texture"
            )
            _second = R.vm.alloc_storage(
                R.shape([64]), R.prim_value(1), R.dtype("float32"), "global.texture"
            )
            return R.tuple()

    tvm.ir.assert_structural_equal(AllocStorageOnPhysicalDevice()(Before), Before)


if __name__ == "__main__":
    tvm.testing.main()
