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
"""Device ceilings through plain OpenCL (no TVM): device facts, fp32 FMA peak and copy
bandwidth, timed with OpenCL event profiling. The OpenCL calls are the workspace's one binding,
``tools/adreno_ws/opencl.py`` (its docstring says why it is ctypes); the device bundle carries
it beside this file (``bench/run.py bundle``).

    python bench/clbench.py [--select nvidia]
"""

from __future__ import annotations

import ctypes
import json
import os
import statistics
import sys
from pathlib import Path
from typing import Dict

_HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(_HERE.parent / "tools" if (_HERE.parent / "tools").is_dir() else _HERE))
from adreno_ws import opencl  # noqa: E402  pylint: disable=wrong-import-position

PEAK_SRC = r"""
__kernel void peak(__global float* out, float a, float b) {
  size_t g = get_global_id(0);
  float4 x0 = (float4)(g * 1e-9f, 1.0f, 2.0f, 3.0f), x1 = x0 + 0.1f, x2 = x0 + 0.2f,
         x3 = x0 + 0.3f, x4 = x0 + 0.4f, x5 = x0 + 0.5f, x6 = x0 + 0.6f, x7 = x0 + 0.7f;
  for (int i = 0; i < ITERS; ++i) {
    x0 = fma(x0, a, b); x1 = fma(x1, a, b); x2 = fma(x2, a, b); x3 = fma(x3, a, b);
    x4 = fma(x4, a, b); x5 = fma(x5, a, b); x6 = fma(x6, a, b); x7 = fma(x7, a, b);
  }
  float4 s = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;
  out[g] = s.x + s.y + s.z + s.w;
}
__kernel void copy4(__global const float4* a, __global float4* b) {
  size_t i = get_global_id(0);
  b[i] = a[i];
}
"""
ITERS = 1024
FLOP_PER_ITEM = ITERS * 8 * 4 * 2  # 8 float4 FMAs per iteration


def device_info(ctx: opencl.Context) -> Dict:
    """What the results record of the device: platform, versions, driver, compute units,
    clock, memory, image support and the two extensions the texture path cares about."""
    exts = ctx.device_string(opencl.CL_DEVICE_EXTENSIONS).split()
    return {
        "platform": ctx.platform_string(opencl.CL_PLATFORM_NAME),
        "platform_version": ctx.platform_string(opencl.CL_PLATFORM_VERSION),
        "device": ctx.device_string(opencl.CL_DEVICE_NAME),
        "device_version": ctx.device_string(opencl.CL_DEVICE_VERSION),
        "driver": ctx.device_string(opencl.CL_DRIVER_VERSION),
        "compute_units": ctx.device_scalar(opencl.CL_DEVICE_MAX_COMPUTE_UNITS),
        "clock_mhz": ctx.device_scalar(opencl.CL_DEVICE_MAX_CLOCK_FREQUENCY),
        "global_mem_gib": round(
            ctx.device_scalar(opencl.CL_DEVICE_GLOBAL_MEM_SIZE, ctypes.c_uint64) / 2**30, 1
        ),
        "image_support": bool(ctx.device_scalar(opencl.CL_DEVICE_IMAGE_SUPPORT)),
        "cl_khr_fp16": "cl_khr_fp16" in exts,
        "cl_khr_image2d_from_buffer": "cl_khr_image2d_from_buffer" in exts,
    }


def describe(select: str = "") -> Dict:
    """:func:`device_info` of the first device that matches ``select``, measuring nothing."""
    return device_info(opencl.Context(select))


def measure(select: str = "", items: int = 0, copy_mib: int = 0, repeat: int = 10) -> Dict:
    """Device facts, fp32 FMA peak (GFLOP/s) and copy bandwidth (GB/s, bytes read + written)."""
    ctx = opencl.Context(select)
    info = device_info(ctx)
    gpu = "cpu" not in info["device"].lower() and "pthread" not in info["device"].lower()
    items = items or (
        ctx.device_scalar(opencl.CL_DEVICE_MAX_COMPUTE_UNITS) * 2048 * 8 if gpu else 4096
    )
    copy_mib = copy_mib or (1024 if gpu else 64)
    prog = ctx.program(PEAK_SRC, f"-DITERS={ITERS if gpu else 64} -cl-mad-enable")
    flop_per_item = (ITERS if gpu else 64) * 8 * 4 * 2
    peak = ctx.kernel(prog, "peak")
    out = ctx.buffer(items * 4)
    ctx.set_args(peak, out, 0.9999, 0.0001)
    ctx.run(peak, items)  # warm-up
    times = [ctx.run(peak, items) for _ in range(repeat)]
    info["peak_gflops"] = round(items * flop_per_item / min(times) / 1e9, 1)
    info["peak_gflops_median"] = round(items * flop_per_item / statistics.median(times) / 1e9, 1)
    nbytes = copy_mib << 20
    a, b = ctx.buffer(nbytes), ctx.buffer(nbytes)
    copy4 = ctx.kernel(prog, "copy4")
    ctx.set_args(copy4, a, b)
    ctx.run(copy4, nbytes // 16)
    ktimes = [ctx.run(copy4, nbytes // 16) for _ in range(repeat)]
    ctx.copy(a, b, nbytes)
    ctimes = [ctx.copy(a, b, nbytes) for _ in range(repeat)]
    info["bandwidth_gbs"] = round(2 * nbytes / statistics.median(ktimes) / 1e9, 1)
    info["copy_buffer_gbs"] = round(2 * nbytes / statistics.median(ctimes) / 1e9, 1)
    info["peak_items"], info["copy_mib"] = items, copy_mib
    for mem in (out, a, b):
        ctx.release(mem)
    return info


if __name__ == "__main__":
    sel = (
        sys.argv[sys.argv.index("--select") + 1]
        if "--select" in sys.argv
        else os.environ.get("TVM_OPENCL_DEVICE", "")
    )
    print(json.dumps(measure(sel), indent=1))
