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
"""What a kernel launch costs the host and the device, with plain OpenCL (ctypes, no TVM).

A "call" is ``--launches`` back-to-back launches of one small kernel (a stand-in for a small
network's inference); ``--calls`` calls run back to back with one ``clFinish`` at the end.
Each queue mode runs the same calls:

- ``plain``: an in-order queue without ``CL_QUEUE_PROFILING_ENABLE``;
- ``profiling``: a profiling queue, commands enqueued without events (the runtime's default);
- ``profiling+events``: a profiling queue, an event per launch, released at once;
- ``plain+flush N``: ``clFlush`` after every N launches;
- ``plain+finish``: ``clFinish`` after every call (one inference at a time);
- ``plain+set args``: both kernel arguments set again before every launch (what a launcher
  that does not remember the arguments of the last launch pays);
- ``command-buffer``: the call's launches recorded once into a ``cl_khr_command_buffer``
  (plain queue), each call one ``clEnqueueCommandBufferKHR`` (a row saying ``unsupported``
  where the device lacks the extension).

Printed per mode and kernel size (CSV): wall clock per launch (us, ``time.perf_counter``
around the calls and the final ``clFinish``), host enqueue time per launch (the same clock
around the enqueues alone) and the kernel's device time (profiling events, median).  The
host times include ctypes' own call cost, the same in every mode.

    python bench/launch_cost.py [--select nvidia] [--launches 46] [--calls 100]
"""

from __future__ import annotations

import argparse
import ctypes
import os
import statistics
import sys
import time

import clbench

u32, sz, vp = clbench.u32, clbench.sz, clbench.vp

SPIN_SRC = r"""
__kernel void spin(__global float* out, int iters) {
  size_t g = get_global_id(0);
  float x = g * 1e-6f;
  for (int i = 0; i < iters; ++i) x = fma(x, 0.9999f, 0.0001f);
  out[g] = x;
}
"""


def _launcher(ocl, kernel, items):
    global_size = (clbench.sz * 1)(items)
    local_size = (clbench.sz * 1)(128)
    enqueue = ocl.lib.clEnqueueNDRangeKernel
    queue = ocl.queue

    def launch(event=None):
        code = enqueue(queue, kernel, 1, None, global_size, local_size, 0, None, event)
        if code != 0:
            raise RuntimeError(f"clEnqueueNDRangeKernel failed with OpenCL error {code}")

    return launch


CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR = 0x12A9
CL_COMMAND_BUFFER_CAPABILITY_SIMULTANEOUS_USE_KHR = 1 << 2
CL_COMMAND_BUFFER_FLAGS_KHR = 0x1293
CL_COMMAND_BUFFER_SIMULTANEOUS_USE_KHR = 1 << 0


class CommandBuffer:
    """A ``cl_khr_command_buffer`` on ``ocl``'s queue, holding ``launches`` launches of
    ``kernel`` (its arguments as set when recorded)."""

    def __init__(self, ocl, kernel, items, launches):
        lib = self.lib = ocl.lib
        lookup = lib.clGetExtensionFunctionAddressForPlatform
        lookup.restype, lookup.argtypes = vp, [vp, ctypes.c_char_p]

        def entry(name, restype, *argtypes):
            addr = lookup(ocl.platform, name.encode())
            if not addr:
                raise RuntimeError(f"{name} not found")
            return ctypes.CFUNCTYPE(restype, *argtypes)(addr)

        i32 = ctypes.c_int32
        create = entry(
            "clCreateCommandBufferKHR", vp, u32, ctypes.POINTER(vp), vp, ctypes.POINTER(i32)
        )
        record = entry(
            "clCommandNDRangeKernelKHR",
            i32,
            vp,
            vp,
            vp,
            vp,
            u32,
            vp,
            ctypes.POINTER(sz),
            ctypes.POINTER(sz),
            u32,
            vp,
            vp,
            vp,
        )
        finalize = entry("clFinalizeCommandBufferKHR", i32, vp)
        self._enqueue = entry(
            "clEnqueueCommandBufferKHR", i32, u32, ctypes.POINTER(vp), vp, u32, vp, vp
        )
        self._release = entry("clReleaseCommandBufferKHR", i32, vp)
        self.queue = vp(ocl.queue)
        caps = ctypes.c_uint64(0)
        lib.clGetDeviceInfo(
            ocl.device, CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR, 8, ctypes.byref(caps), None
        )
        # Without simultaneous use a command buffer cannot be enqueued again while a run of it
        # is pending: each enqueue then waits for the previous run.
        self.simultaneous = bool(caps.value & CL_COMMAND_BUFFER_CAPABILITY_SIMULTANEOUS_USE_KHR)
        props = (ctypes.c_uint64 * 3)(
            CL_COMMAND_BUFFER_FLAGS_KHR, CL_COMMAND_BUFFER_SIMULTANEOUS_USE_KHR, 0
        )
        err = i32(0)
        self.handle = create(
            1, ctypes.byref(self.queue), props if self.simultaneous else None, ctypes.byref(err)
        )
        self.pending = vp()
        if err.value != 0:
            raise RuntimeError(f"clCreateCommandBufferKHR failed with OpenCL error {err.value}")
        global_size, local_size = (sz * 1)(items), (sz * 1)(128)
        for _ in range(launches):
            code = record(
                self.handle,
                None,
                None,
                kernel,
                1,
                None,
                global_size,
                local_size,
                0,
                None,
                None,
                None,
            )
            if code != 0:
                raise RuntimeError(f"clCommandNDRangeKernelKHR failed with OpenCL error {code}")
        code = finalize(self.handle)
        if code != 0:
            raise RuntimeError(f"clFinalizeCommandBufferKHR failed with OpenCL error {code}")

    def enqueue(self):
        """One run of the recorded launches."""
        if self.pending:
            self.lib.clWaitForEvents(1, ctypes.byref(self.pending))
            self.lib.clReleaseEvent(self.pending)
            self.pending = vp()
        event = None if self.simultaneous else ctypes.byref(self.pending)
        code = self._enqueue(1, ctypes.byref(self.queue), self.handle, 0, None, event)
        if code != 0:
            raise RuntimeError(f"clEnqueueCommandBufferKHR failed with OpenCL error {code}")

    def release(self):
        """Release the command buffer (and the event of its last run)."""
        if self.pending:
            self.lib.clReleaseEvent(self.pending)
        self._release(self.handle)


def run_mode(select, mode, iters, items, launches, calls):
    """The mode's label, and the wall and enqueue time per launch (us) of ``calls`` calls in
    that queue mode."""
    profiling = mode.startswith("profiling")
    ocl = clbench.OpenCL(select, clbench.CL_QUEUE_PROFILING_ENABLE if profiling else 0)
    prog = ocl.program(SPIN_SRC)
    kernel = ocl.kernel(prog, "spin")
    out = ocl.buffer(items * 4)
    arg = clbench.vp(out)
    ocl.lib.clSetKernelArg(kernel, 0, ctypes.sizeof(arg), ctypes.byref(arg))
    n = ctypes.c_int32(iters)
    ocl.lib.clSetKernelArg(kernel, 1, 4, ctypes.byref(n))
    launch = _launcher(ocl, kernel, items)
    flush_every = int(mode.split()[-1]) if "flush" in mode else 0
    with_events = mode == "profiling+events"
    set_args = mode == "plain+set args"
    event = clbench.vp()
    recorded = None
    if mode == "command-buffer":
        if "cl_khr_command_buffer" not in ocl.extensions():
            return mode, "unsupported", "unsupported", ""
        recorded = CommandBuffer(ocl, kernel, items, launches)
        if not recorded.simultaneous:
            mode += " (waits for its previous run)"

    def one_call():
        if recorded is not None:
            recorded.enqueue()
            return
        for i in range(launches):
            if set_args:
                ocl.lib.clSetKernelArg(kernel, 0, ctypes.sizeof(arg), ctypes.byref(arg))
                ocl.lib.clSetKernelArg(kernel, 1, 4, ctypes.byref(n))
            if with_events:
                launch(ctypes.byref(event))
                ocl.lib.clReleaseEvent(event)
            else:
                launch()
            if flush_every and (i + 1) % flush_every == 0:
                ocl.lib.clFlush(ocl.queue)
        if mode == "plain+finish":
            ocl.lib.clFinish(ocl.queue)

    one_call()  # warm-up: the driver compiles lazily
    ocl.lib.clFinish(ocl.queue)
    enqueue_s = 0.0
    begin = time.perf_counter()
    for _ in range(calls):
        call_start = time.perf_counter()
        one_call()
        enqueue_s += time.perf_counter() - call_start
    ocl.lib.clFinish(ocl.queue)
    wall = time.perf_counter() - begin
    total = launches * calls
    device_us = ""
    if profiling:
        device_us = f"{statistics.median(ocl.run(kernel, items, 128) for _ in range(20)) * 1e6:.2f}"
    if recorded is not None:
        recorded.release()
    ocl.lib.clReleaseMemObject(out)
    return mode, wall * 1e6 / total, enqueue_s * 1e6 / total, device_us


def main() -> int:
    """Print one CSV row per queue mode and kernel size."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    parser.add_argument("--select", default=os.environ.get("TVM_OPENCL_DEVICE", ""))
    parser.add_argument("--launches", type=int, default=46)
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--items", type=int, default=16384)
    parser.add_argument("--iters", default="0,256,1024", help="FMA loop lengths (kernel sizes)")
    args = parser.parse_args()
    modes = [
        "plain",
        "profiling",
        "profiling+events",
        "plain+flush 1",
        "plain+flush 4",
        "plain+flush 16",
        "plain+finish",
        "plain+set args",
        "command-buffer",
    ]
    print("mode,iters,items,wall_us_per_launch,enqueue_us_per_launch,kernel_device_us")
    for iters in (int(x) for x in args.iters.split(",")):
        for mode in modes:
            label, wall, enq, dev = run_mode(
                args.select, mode, iters, args.items, args.launches, args.calls
            )
            if isinstance(wall, float):
                wall, enq = f"{wall:.2f}", f"{enq:.2f}"
            print(f"{label},{iters},{args.items},{wall},{enq},{dev}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
