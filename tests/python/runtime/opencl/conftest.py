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
"""Fixtures of the OpenCL runtime tests (libtvm_runtime_opencl.so).

Fixtures
  ``dev``  ``tvm.opencl(0)``; the test is skipped, with the reason, when no device is visible.

Running
  pytest tests/python/runtime/opencl, with ``TVM_OPENCL_DEVICE=portable`` (PoCL) or
  ``TVM_OPENCL_DEVICE=intel`` (Intel's CPU OpenCL: cl_khr_fp16, cl_khr_image2d_from_buffer) and
  ``OCL_ICD_VENDORS=.venv/etc/OpenCL/vendors-tvm`` where setup registered both.
"""

import pytest

import tvm


def pytest_report_header(config):  # pylint: disable=unused-argument
    dev = tvm.opencl(0)
    if not dev.exist:
        return ["OpenCL runtime tests: no OpenCL device visible (tests that need one are skipped)"]
    return [f"OpenCL runtime tests: device {dev.device_name!r}, driver {dev.driver_version!r}"]


@pytest.fixture(name="dev")
def fixture_dev():
    """The first OpenCL device, or a skip saying why there is none."""
    dev = tvm.opencl(0)
    if not dev.exist:
        pytest.skip(
            "no OpenCL device: tvm.opencl(0).exist is False (runtime library or driver missing)"
        )
    return dev
