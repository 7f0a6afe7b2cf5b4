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
"""Markers of the Adreno backend tests.

``requires_opencl`` marks a test that runs kernels: it is skipped, with the reason, when this
build has no OpenCL runtime or no OpenCL device is visible.
"""

from typing import Optional

import pytest

import tvm


def _opencl_skip_reason() -> Optional[str]:
    if not tvm.runtime.enabled("opencl"):
        return "the OpenCL runtime is not enabled in this build"
    if not tvm.opencl(0).exist:
        return (
            "no OpenCL device found (OCL_ICD_VENDORS names the ICDs, TVM_OPENCL_DEVICE picks one)"
        )
    return None


def pytest_configure(config):
    config.addinivalue_line("markers", "requires_opencl: runs kernels on an OpenCL device")


def pytest_runtest_setup(item):
    if item.get_closest_marker("requires_opencl") is not None:
        reason = _opencl_skip_reason()
        if reason is not None:
            pytest.skip(reason)
