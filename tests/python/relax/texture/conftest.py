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
"""Fixtures and markers of the texture suite.

Markers
  ``requires_opencl``  the test runs kernels: skipped with "no OpenCL device: <why>".
  ``requires_fp16``    the device needs cl_khr_fp16: skipped with "device X lacks cl_khr_fp16".

Fixtures
  ``any_dtype_mode``      float32, float16, float16_acc32, unmarked: for tests that compile first
                          and then call ``tt.require_device(mode)`` (``tt.check_case`` does).
  ``dtype_mode``          the same modes, float16 ones marked requires_fp16, and
                          float16_storage (float32 tensors, half textures, any device).
  ``compile_dtype_mode``  the same modes, for compile-only tests.
  ``rng``                 a fresh numpy Generator per test; the seed is printed on failure.

Running
  pytest tests/python/relax/texture -n 2
  TVM_OPENCL_DEVICE=portable (PoCL) or TVM_OPENCL_DEVICE=intel, with
  OCL_ICD_VENDORS from ``ci/opencl-intel.sh VENV`` when Intel's runtime is wanted.

Environment
  ``TVM_OPENCL_DEVICE``   picks the device (case-insensitive substring of platform or device
                          name), read by the runtime; the suite reports the same device.
                          PoCL's names are "Portable Computing Language" and "pthread-<cpu>".
  ``TEXTURE_TESTS_SEED``  fixes the seed of every test (to replay a failure).
  ``TEXTURE_TESTS_SEED_SWEEP``  N > 0: seed-sweep mode. Only tests that take the ``rng``
                          fixture are collected, and each runs its body once per seed of a
                          sweep of N seeds (``TEXTURE_TESTS_SEED_SWEEP_BASE`` picks the sweep;
                          default 0); a failure lists every failing seed with its replay line.
                          ``python -m adreno_ws seed-sweep`` drives it on each device.
  ``TEXTURE_TESTS_BUILD`` ``plain`` or ``workaround`` (see texture_testing.build_mode).
"""

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import texture_testing as tt  # noqa: E402  pylint: disable=wrong-import-position
from seed_sweep_plugin import (  # noqa: E402,F401  pylint: disable=wrong-import-position,unused-import
    pytest_collection_modifyitems,
    pytest_pyfunc_call,
)


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "requires_opencl: runs kernels on an OpenCL device with image support"
    )
    config.addinivalue_line("markers", "requires_fp16: the OpenCL device must offer cl_khr_fp16")
    config.addinivalue_line("markers", "slow: a long test (real models); deselect with -m 'not slow'")


def pytest_report_header(config):  # pylint: disable=unused-argument
    info = tt.opencl_device()
    exts = ""
    if info.cl is not None:
        exts = " fp16=" + ("yes" if info.has_fp16 else "no")
        exts += " image2d_from_buffer=" + (
            "yes" if info.cl.has("cl_khr_image2d_from_buffer") else "no"
        )
    state = "available" if info.available else "NOT available"
    return [f"texture suite: OpenCL device {state}: {info.reason}{exts}"]


def pytest_runtest_setup(item):
    needs_fp16 = item.get_closest_marker("requires_fp16") is not None
    if item.get_closest_marker("requires_opencl") is None and not needs_fp16:
        return
    reason = tt.device_skip_reason("float16" if needs_fp16 else "float32")
    if reason is not None:
        pytest.skip(reason)


@pytest.fixture(
    params=[
        "float32",
        pytest.param("float16", marks=pytest.mark.requires_fp16),
        pytest.param("float16_acc32", marks=pytest.mark.requires_fp16),
        tt.FLOAT16_STORAGE_MODE,
    ]
)
def dtype_mode(request):
    """Dtype modes for tests that run kernels from the start: the float16 ones carry
    requires_fp16; under float16_storage every texture build of the test stores its textures
    in half (float32 kernels), which needs no cl_khr_fp16."""
    if request.param != tt.FLOAT16_STORAGE_MODE:
        yield request.param
        return
    with tt.float16_storage_builds():
        yield request.param


@pytest.fixture(params=list(tt.DTYPE_MODES))
def compile_dtype_mode(request):
    """Dtype modes for compile-only tests: no device needed, so no fp16 requirement."""
    return request.param


@pytest.fixture(params=list(tt.DTYPE_MODES))
def any_dtype_mode(request):
    """Every dtype mode, unmarked, for tests that compile first and then call
    ``tt.require_device(mode)`` (``tt.check_case`` does): the compile-side checks run
    everywhere, the kernels only where the device can run the mode."""
    return request.param


@pytest.fixture
def rng(request):
    """A fresh numpy Generator per test; its seed is printed when the test fails."""
    env = os.environ.get("TEXTURE_TESTS_SEED")
    if env is not None:
        seed = int(env)
    else:
        seed = int(np.random.SeedSequence().entropy % (2**32))
    request.node.user_properties.append(("seed", seed))
    request.node._texture_seed = seed  # pylint: disable=protected-access
    return np.random.default_rng(seed)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    seed = getattr(item, "_texture_seed", None)
    if seed is not None and report.failed:
        report.sections.append(
            ("texture seed", f"seed={seed} (replay: TEXTURE_TESTS_SEED={seed})")
        )


@pytest.fixture
def device_info():
    return tt.opencl_device()
