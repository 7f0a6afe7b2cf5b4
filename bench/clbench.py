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
"""Device ceilings through plain OpenCL (ctypes on libOpenCL.so.1, no TVM): device facts, fp32
FMA peak and copy bandwidth, timed with OpenCL event profiling.

    python bench/clbench.py [--select nvidia]
"""

from __future__ import annotations

import ctypes
import json
import os
import statistics
import sys
from pathlib import Path
from typing import Dict, List, Optional

# The workspace's one OpenCL enumeration without TVM (tools/adreno_ws/opencl.py); the device
# bundle carries it beside this file (bench/run.py).
_HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(_HERE.parent / "tools" if (_HERE.parent / "tools").is_dir() else _HERE))
from adreno_ws import opencl  # noqa: E402  pylint: disable=wrong-import-position

vp = ctypes.c_void_p
sz = ctypes.c_size_t
u32 = ctypes.c_uint32

CL_PLATFORM_NAME, CL_PLATFORM_VERSION = 0x0902, 0x0901
CL_DEVICE_NAME, CL_DRIVER_VERSION, CL_DEVICE_VERSION = 0x102B, 0x102D, 0x102F
CL_DEVICE_MAX_COMPUTE_UNITS, CL_DEVICE_MAX_CLOCK_FREQUENCY = 0x1002, 0x100C
CL_DEVICE_EXTENSIONS, CL_DEVICE_GLOBAL_MEM_SIZE, CL_DEVICE_IMAGE_SUPPORT = 0x1030, 0x101F, 0x1016
CL_MEM_READ_WRITE = 1
CL_QUEUE_PROFILING_ENABLE = 2
CL_PROFILING_COMMAND_START, CL_PROFILING_COMMAND_END = 0x1282, 0x1283
CL_PROGRAM_BUILD_LOG = 0x1183

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


class OpenCL:
    """Just enough of the OpenCL C API."""

    def __init__(self, select: str = "", queue_properties: int = CL_QUEUE_PROFILING_ENABLE):
        lib = opencl.load_library()
        if lib is None:
            raise RuntimeError("no OpenCL ICD loader (libOpenCL.so.1) on this machine")
        self.lib = lib
        lib.clGetPlatformIDs.argtypes = [u32, ctypes.POINTER(vp), ctypes.POINTER(u32)]
        lib.clGetPlatformInfo.argtypes = [vp, u32, sz, vp, ctypes.POINTER(sz)]
        lib.clGetDeviceIDs.argtypes = [
            vp,
            ctypes.c_uint64,
            u32,
            ctypes.POINTER(vp),
            ctypes.POINTER(u32),
        ]
        lib.clGetDeviceInfo.argtypes = [vp, u32, sz, vp, ctypes.POINTER(sz)]
        lib.clCreateContext.restype = vp
        lib.clCreateContext.argtypes = [
            vp,
            u32,
            ctypes.POINTER(vp),
            vp,
            vp,
            ctypes.POINTER(ctypes.c_int32),
        ]
        lib.clCreateCommandQueue.restype = vp
        lib.clCreateCommandQueue.argtypes = [
            vp,
            vp,
            ctypes.c_uint64,
            ctypes.POINTER(ctypes.c_int32),
        ]
        lib.clCreateBuffer.restype = vp
        lib.clCreateBuffer.argtypes = [vp, ctypes.c_uint64, sz, vp, ctypes.POINTER(ctypes.c_int32)]
        lib.clCreateProgramWithSource.restype = vp
        lib.clCreateProgramWithSource.argtypes = [
            vp,
            u32,
            ctypes.POINTER(ctypes.c_char_p),
            ctypes.POINTER(sz),
            ctypes.POINTER(ctypes.c_int32),
        ]
        lib.clBuildProgram.argtypes = [vp, u32, ctypes.POINTER(vp), ctypes.c_char_p, vp, vp]
        lib.clGetProgramBuildInfo.argtypes = [vp, vp, u32, sz, vp, ctypes.POINTER(sz)]
        lib.clCreateKernel.restype = vp
        lib.clCreateKernel.argtypes = [vp, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int32)]
        lib.clSetKernelArg.argtypes = [vp, u32, sz, vp]
        lib.clEnqueueNDRangeKernel.argtypes = [
            vp,
            vp,
            u32,
            ctypes.POINTER(sz),
            ctypes.POINTER(sz),
            ctypes.POINTER(sz),
            u32,
            vp,
            ctypes.POINTER(vp),
        ]
        lib.clEnqueueCopyBuffer.argtypes = [vp, vp, vp, sz, sz, sz, u32, vp, ctypes.POINTER(vp)]
        lib.clGetEventProfilingInfo.argtypes = [vp, u32, sz, vp, ctypes.POINTER(sz)]
        lib.clWaitForEvents.argtypes = [u32, ctypes.POINTER(vp)]
        lib.clReleaseEvent.argtypes = [vp]
        lib.clReleaseMemObject.argtypes = [vp]
        lib.clFinish.argtypes = [vp]
        lib.clFlush.argtypes = [vp]
        self.platform, self.device = self._pick(select)
        err = ctypes.c_int32(0)
        dev = vp(self.device)
        self.ctx = lib.clCreateContext(None, 1, ctypes.byref(dev), None, None, ctypes.byref(err))
        self._check(err.value, "clCreateContext")
        self.queue = lib.clCreateCommandQueue(
            self.ctx, self.device, queue_properties, ctypes.byref(err)
        )
        self._check(err.value, "clCreateCommandQueue")

    @staticmethod
    def _check(code, what):
        if code != 0:
            raise RuntimeError(f"{what} failed with OpenCL error {code}")

    def _scalar(self, param, ctype):
        value = ctype(0)
        self.lib.clGetDeviceInfo(
            self.device, param, ctypes.sizeof(value), ctypes.byref(value), None
        )
        return value.value

    def _pick(self, select: str):
        listed = opencl.device_handles(self.lib)
        if not listed:
            raise RuntimeError("no OpenCL platform with a device (clGetPlatformIDs found none)")
        for plat, pname, dev, dname in listed:
            if select.lower() in f"{pname} {dname}".lower():
                return plat, dev
        raise RuntimeError(f"no OpenCL device matches {select!r}")

    def info(self) -> Dict:
        def device(param):
            return opencl.info_string(self.lib.clGetDeviceInfo, self.device, param)

        def platform(param):
            return opencl.info_string(self.lib.clGetPlatformInfo, self.platform, param)

        exts = self.extensions()
        return dict(
            platform=platform(CL_PLATFORM_NAME),
            platform_version=platform(CL_PLATFORM_VERSION),
            device=device(CL_DEVICE_NAME),
            device_version=device(CL_DEVICE_VERSION),
            driver=device(CL_DRIVER_VERSION),
            compute_units=self._scalar(CL_DEVICE_MAX_COMPUTE_UNITS, u32),
            clock_mhz=self._scalar(CL_DEVICE_MAX_CLOCK_FREQUENCY, u32),
            global_mem_gib=round(
                self._scalar(CL_DEVICE_GLOBAL_MEM_SIZE, ctypes.c_uint64) / 2**30, 1
            ),
            image_support=bool(self._scalar(CL_DEVICE_IMAGE_SUPPORT, u32)),
            cl_khr_fp16="cl_khr_fp16" in exts,
            cl_khr_image2d_from_buffer="cl_khr_image2d_from_buffer" in exts,
        )

    def extensions(self) -> List[str]:
        """The device's extension names."""
        return opencl.info_string(
            self.lib.clGetDeviceInfo, self.device, CL_DEVICE_EXTENSIONS
        ).split()

    def buffer(self, nbytes: int):
        err = ctypes.c_int32(0)
        mem = self.lib.clCreateBuffer(self.ctx, CL_MEM_READ_WRITE, nbytes, None, ctypes.byref(err))
        self._check(err.value, f"clCreateBuffer({nbytes})")
        return mem

    def program(self, src: str, options: str = ""):
        err = ctypes.c_int32(0)
        text = ctypes.c_char_p(src.encode())
        prog = self.lib.clCreateProgramWithSource(
            self.ctx, 1, ctypes.byref(text), None, ctypes.byref(err)
        )
        self._check(err.value, "clCreateProgramWithSource")
        dev = vp(self.device)
        code = self.lib.clBuildProgram(prog, 1, ctypes.byref(dev), options.encode(), None, None)
        if code != 0:
            log = opencl.info_string(
                lambda h, p, s, b, r: self.lib.clGetProgramBuildInfo(h, self.device, p, s, b, r),
                prog,
                CL_PROGRAM_BUILD_LOG,
            )
            raise RuntimeError(f"clBuildProgram failed ({code}): {log[:500]}")
        return prog

    def kernel(self, prog, name: str):
        err = ctypes.c_int32(0)
        k = self.lib.clCreateKernel(prog, name.encode(), ctypes.byref(err))
        self._check(err.value, f"clCreateKernel({name})")
        return k

    def set_args(self, kernel, *args):
        for i, arg in enumerate(args):
            if isinstance(arg, float):
                val = ctypes.c_float(arg)
            else:
                val = vp(arg)
            self._check(
                self.lib.clSetKernelArg(kernel, i, ctypes.sizeof(val), ctypes.byref(val)),
                "clSetKernelArg",
            )

    def _elapsed(self, event) -> float:
        start, end = ctypes.c_uint64(0), ctypes.c_uint64(0)
        self.lib.clWaitForEvents(1, ctypes.byref(event))
        self.lib.clGetEventProfilingInfo(
            event, CL_PROFILING_COMMAND_START, 8, ctypes.byref(start), None
        )
        self.lib.clGetEventProfilingInfo(
            event, CL_PROFILING_COMMAND_END, 8, ctypes.byref(end), None
        )
        self.lib.clReleaseEvent(event)
        return (end.value - start.value) * 1e-9

    def run(self, kernel, global_size: int, local_size: Optional[int] = 256) -> float:
        event = vp()
        gs = (sz * 1)(global_size)
        ls = (sz * 1)(local_size) if local_size else None
        self._check(
            self.lib.clEnqueueNDRangeKernel(
                self.queue, kernel, 1, None, gs, ls, 0, None, ctypes.byref(event)
            ),
            "clEnqueueNDRangeKernel",
        )
        return self._elapsed(event)

    def copy(self, src, dst, nbytes) -> float:
        event = vp()
        self._check(
            self.lib.clEnqueueCopyBuffer(
                self.queue, src, dst, 0, 0, nbytes, 0, None, ctypes.byref(event)
            ),
            "clEnqueueCopyBuffer",
        )
        return self._elapsed(event)


def measure(select: str = "", items: int = 0, copy_mib: int = 0, repeat: int = 10) -> Dict:
    """Device facts, fp32 FMA peak (GFLOP/s) and copy bandwidth (GB/s, bytes read + written)."""
    cl = OpenCL(select)
    info = cl.info()
    gpu = "cpu" not in info["device"].lower() and "pthread" not in info["device"].lower()
    items = items or (cl._scalar(CL_DEVICE_MAX_COMPUTE_UNITS, u32) * 2048 * 8 if gpu else 4096)
    copy_mib = copy_mib or (1024 if gpu else 64)
    prog = cl.program(PEAK_SRC, f"-DITERS={ITERS if gpu else 64} -cl-mad-enable")
    flop_per_item = (ITERS if gpu else 64) * 8 * 4 * 2
    peak = cl.kernel(prog, "peak")
    out = cl.buffer(items * 4)
    cl.set_args(peak, out, 0.9999, 0.0001)
    cl.run(peak, items)  # warm-up
    times = [cl.run(peak, items) for _ in range(repeat)]
    info["peak_gflops"] = round(items * flop_per_item / min(times) / 1e9, 1)
    info["peak_gflops_median"] = round(items * flop_per_item / statistics.median(times) / 1e9, 1)
    nbytes = copy_mib << 20
    a, b = cl.buffer(nbytes), cl.buffer(nbytes)
    copy4 = cl.kernel(prog, "copy4")
    cl.set_args(copy4, a, b)
    cl.run(copy4, nbytes // 16)
    ktimes = [cl.run(copy4, nbytes // 16) for _ in range(repeat)]
    cl.copy(a, b, nbytes)
    ctimes = [cl.copy(a, b, nbytes) for _ in range(repeat)]
    info["bandwidth_gbs"] = round(2 * nbytes / statistics.median(ktimes) / 1e9, 1)
    info["copy_buffer_gbs"] = round(2 * nbytes / statistics.median(ctimes) / 1e9, 1)
    info["peak_items"], info["copy_mib"] = items, copy_mib
    for mem in (out, a, b):
        cl.lib.clReleaseMemObject(mem)
    return info


if __name__ == "__main__":
    sel = (
        sys.argv[sys.argv.index("--select") + 1]
        if "--select" in sys.argv
        else os.environ.get("TVM_OPENCL_DEVICE", "")
    )
    print(json.dumps(measure(sel), indent=1))
