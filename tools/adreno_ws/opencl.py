"""The workspace's one OpenCL binding without TVM: ctypes on the ICD loader (libOpenCL.so.1).

It lists the platforms and devices (``adreno_ws setup``, ``adreno_ws opencl``, the tests) and
gives the plain OpenCL benchmarks of ``bench/clbench.py`` (the ceilings of every bench run) a
context, a profiling queue, buffers, programs and kernels (:class:`Context`). Code that has
TVM asks TVM's runtime instead; the runtime tests keep an oracle of their own, independent of
the runtime and of this module (``tests/python/runtime/test_device_texture_limits.py``).

Why ctypes and not pyopencl (issue 50, checked 2026-12-06): the listing must work in an
interpreter that has nothing but the standard library. ``adreno_ws setup`` runs it in the
python3 that creates the venv (``PYTHONPATH=tools python3 -m adreno_ws setup``: the system
interpreter, 3.11.7 here, without pyopencl), and ``python3 -m adreno_ws opencl`` is how a
machine whose setup failed is diagnosed. pyopencl 2026.1.4 does work here (installed apart,
it lists PoCL and Intel's CPU OpenCL through ``OCL_ICD_VENDORS``, 0.37 s to import and list
against 0.15 s for this module), but it is a compiled wheel with numpy, pytools,
platformdirs, typing_extensions and siphash24 (another compiled wheel) beside it: none of that
is in the system interpreter, and on the GPU box, which has no package registry, the bench
bundle would carry 1.1 MB of cp312 wheels built against a numpy the box may not have. With
ctypes staying for the listing, pyopencl for the benchmarks would be a second binding, so the
benchmarks use this one and ``bench/run.py bundle`` carries this file to the box.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from pathlib import Path
from typing import Optional

PACKAGES = ("pocl-opencl-icd", "ocl-icd-libopencl1", "opencl-headers", "clinfo")
CL_PLATFORM_NAME, CL_PLATFORM_VERSION = 0x0902, 0x0901
CL_DEVICE_TYPE_ALL = 0xFFFFFFFF
CL_DEVICE_NAME, CL_DRIVER_VERSION, CL_DEVICE_VERSION = 0x102B, 0x102D, 0x102F
CL_DEVICE_MAX_COMPUTE_UNITS, CL_DEVICE_MAX_CLOCK_FREQUENCY = 0x1002, 0x100C
CL_DEVICE_EXTENSIONS, CL_DEVICE_GLOBAL_MEM_SIZE, CL_DEVICE_IMAGE_SUPPORT = 0x1030, 0x101F, 0x1016
CL_MEM_READ_WRITE = 1
CL_QUEUE_PROFILING_ENABLE = 2
CL_PROFILING_COMMAND_START, CL_PROFILING_COMMAND_END = 0x1282, 0x1283
CL_PROGRAM_BUILD_LOG = 0x1183

_VP, _SZ, _U32, _I32 = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint32, ctypes.c_int32
# restype (None: the error code, an int), argtypes of every entry point used here
_SIGNATURES = {
    "clGetPlatformIDs": (None, [_U32, ctypes.POINTER(_VP), ctypes.POINTER(_U32)]),
    "clGetPlatformInfo": (None, [_VP, _U32, _SZ, _VP, ctypes.POINTER(_SZ)]),
    "clGetDeviceIDs": (
        None,
        [_VP, ctypes.c_uint64, _U32, ctypes.POINTER(_VP), ctypes.POINTER(_U32)],
    ),
    "clGetDeviceInfo": (None, [_VP, _U32, _SZ, _VP, ctypes.POINTER(_SZ)]),
    "clCreateContext": (_VP, [_VP, _U32, ctypes.POINTER(_VP), _VP, _VP, ctypes.POINTER(_I32)]),
    "clCreateCommandQueue": (_VP, [_VP, _VP, ctypes.c_uint64, ctypes.POINTER(_I32)]),
    "clCreateBuffer": (_VP, [_VP, ctypes.c_uint64, _SZ, _VP, ctypes.POINTER(_I32)]),
    "clCreateProgramWithSource": (
        _VP,
        [_VP, _U32, ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(_SZ), ctypes.POINTER(_I32)],
    ),
    "clBuildProgram": (None, [_VP, _U32, ctypes.POINTER(_VP), ctypes.c_char_p, _VP, _VP]),
    "clGetProgramBuildInfo": (None, [_VP, _VP, _U32, _SZ, _VP, ctypes.POINTER(_SZ)]),
    "clCreateKernel": (_VP, [_VP, ctypes.c_char_p, ctypes.POINTER(_I32)]),
    "clSetKernelArg": (None, [_VP, _U32, _SZ, _VP]),
    "clEnqueueNDRangeKernel": (
        None,
        [
            _VP,
            _VP,
            _U32,
            ctypes.POINTER(_SZ),
            ctypes.POINTER(_SZ),
            ctypes.POINTER(_SZ),
            _U32,
            _VP,
            ctypes.POINTER(_VP),
        ],
    ),
    "clEnqueueCopyBuffer": (None, [_VP, _VP, _VP, _SZ, _SZ, _SZ, _U32, _VP, ctypes.POINTER(_VP)]),
    "clGetEventProfilingInfo": (None, [_VP, _U32, _SZ, _VP, ctypes.POINTER(_SZ)]),
    "clWaitForEvents": (None, [_U32, ctypes.POINTER(_VP)]),
    "clReleaseEvent": (None, [_VP]),
    "clReleaseMemObject": (None, [_VP]),
    "clFinish": (None, [_VP]),
}


def load_library() -> ctypes.CDLL | None:
    """The OpenCL ICD loader with the signatures of the entry points this module calls, or
    None when no loader is installed."""
    for name in ("libOpenCL.so.1", ctypes.util.find_library("OpenCL")):
        if not name:
            continue
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        for func, (restype, argtypes) in _SIGNATURES.items():
            entry = getattr(lib, func)
            entry.argtypes = argtypes
            if restype is not None:
                entry.restype = restype
        return lib
    return None


def info_string(func, handle, param) -> str:
    """A string parameter of ``clGetPlatformInfo`` / ``clGetDeviceInfo``; "?" when refused."""
    size = ctypes.c_size_t()
    if func(ctypes.c_void_p(handle), param, 0, None, ctypes.byref(size)) != 0:
        return "?"
    buf = ctypes.create_string_buffer(size.value)
    func(ctypes.c_void_p(handle), param, size, buf, None)
    return buf.value.decode("utf-8", "replace").strip()


def device_handles(lib: ctypes.CDLL) -> list[tuple[int, str, int, str]]:
    """``(platform, platform name, device, device name)`` for every device of every platform
    the loader ``lib`` lists, in its order; handles are plain integers.

    ``devices`` below (setup, ``opencl``) and :class:`Context` (the benchmarks) use it.
    """
    count = ctypes.c_uint()
    if lib.clGetPlatformIDs(0, None, ctypes.byref(count)) != 0 or count.value == 0:
        return []
    platforms = (ctypes.c_void_p * count.value)()
    lib.clGetPlatformIDs(count, platforms, None)
    found = []
    every = ctypes.c_ulonglong(CL_DEVICE_TYPE_ALL)
    for platform in platforms:
        pname = info_string(lib.clGetPlatformInfo, platform, CL_PLATFORM_NAME)
        ndev = ctypes.c_uint()
        if lib.clGetDeviceIDs(ctypes.c_void_p(platform), every, 0, None, ctypes.byref(ndev)):
            continue
        devs = (ctypes.c_void_p * ndev.value)()
        lib.clGetDeviceIDs(ctypes.c_void_p(platform), every, ndev, devs, None)
        for dev in devs:
            found.append(
                (platform, pname, dev, info_string(lib.clGetDeviceInfo, dev, CL_DEVICE_NAME))
            )
    return found


def devices(select: str = "") -> list[str] | None:
    """``"platform / device"`` for every device ``select`` picks (:func:`select_devices`; all
    by default); None when no OpenCL loader is installed."""
    lib = load_library()
    if lib is None:
        return None
    listed = select_devices(device_handles(lib), select)
    return [f"{pname} / {dname}" for _, pname, _, dname in listed]


def select_devices(listed, select: str):
    """The entries of ``listed`` (``device_handles``) that ``select`` picks, as the TVM runtime
    reads ``TVM_OPENCL_DEVICE``: a case-insensitive substring of a platform name selects that
    platform's devices; only when it names no platform are device names matched ("intel" is
    Intel's platform, though PoCL's CPU device is named "...Intel(R) Xeon(R)...")."""
    wanted = select.lower()
    by_platform = [d for d in listed if wanted in d[1].lower()]
    return by_platform or [d for d in listed if wanted in d[3].lower()]


class Context:
    """A context and a command queue on one device: just enough of the OpenCL C API to build
    kernels from source and time them with event profiling (``bench/clbench.py``).

    Parameters
    ----------
    select : str
        A substring of ``"platform device"`` (any case); the first device of
        :func:`device_handles` that contains it is opened ("" : the first device).
    queue_properties : int
        The command queue's properties (default: profiling on).

    Raises
    ------
    RuntimeError
        No loader, no device, no device that matches, or a call that failed (its error code).
    """

    def __init__(self, select: str = "", queue_properties: int = CL_QUEUE_PROFILING_ENABLE):
        lib = load_library()
        if lib is None:
            raise RuntimeError("no OpenCL ICD loader (libOpenCL.so.1) on this machine")
        self.lib = lib
        listed = device_handles(lib)
        if not listed:
            raise RuntimeError("no OpenCL platform with a device (clGetPlatformIDs found none)")
        chosen = select_devices(listed, select)
        if not chosen:
            raise RuntimeError(f"no OpenCL device matches {select!r}")
        self.platform, _, self.device, _ = chosen[0]
        err = _I32(0)
        dev = _VP(self.device)
        self.ctx = lib.clCreateContext(None, 1, ctypes.byref(dev), None, None, ctypes.byref(err))
        _check(err.value, "clCreateContext")
        self.queue = lib.clCreateCommandQueue(
            self.ctx, self.device, queue_properties, ctypes.byref(err)
        )
        _check(err.value, "clCreateCommandQueue")

    def device_string(self, param: int) -> str:
        """A string parameter of the device (``CL_DEVICE_NAME``...); "?" when refused."""
        return info_string(self.lib.clGetDeviceInfo, self.device, param)

    def platform_string(self, param: int) -> str:
        """A string parameter of the device's platform; "?" when refused."""
        return info_string(self.lib.clGetPlatformInfo, self.platform, param)

    def device_scalar(self, param: int, ctype=_U32) -> int:
        """A scalar parameter of the device, read as ``ctype`` (``cl_uint`` by default)."""
        value = ctype(0)
        self.lib.clGetDeviceInfo(
            self.device, param, ctypes.sizeof(value), ctypes.byref(value), None
        )
        return value.value

    def buffer(self, nbytes: int) -> int:
        """A read-write buffer of ``nbytes`` (its handle; :meth:`release` frees it)."""
        err = _I32(0)
        mem = self.lib.clCreateBuffer(self.ctx, CL_MEM_READ_WRITE, nbytes, None, ctypes.byref(err))
        _check(err.value, f"clCreateBuffer({nbytes})")
        return mem

    def release(self, mem: int) -> None:
        """Free a buffer of :meth:`buffer`."""
        self.lib.clReleaseMemObject(mem)

    def program(self, src: str, options: str = "") -> int:
        """A program built from OpenCL C ``src`` for the device; the build log in the error
        when it does not build."""
        err = _I32(0)
        text = ctypes.c_char_p(src.encode())
        prog = self.lib.clCreateProgramWithSource(
            self.ctx, 1, ctypes.byref(text), None, ctypes.byref(err)
        )
        _check(err.value, "clCreateProgramWithSource")
        dev = _VP(self.device)
        code = self.lib.clBuildProgram(prog, 1, ctypes.byref(dev), options.encode(), None, None)
        if code != 0:
            log = info_string(
                lambda h, p, s, b, r: self.lib.clGetProgramBuildInfo(h, self.device, p, s, b, r),
                prog,
                CL_PROGRAM_BUILD_LOG,
            )
            raise RuntimeError(f"clBuildProgram failed ({code}): {log[:500]}")
        return prog

    def kernel(self, prog: int, name: str) -> int:
        """The kernel ``name`` of a program of :meth:`program`."""
        err = _I32(0)
        k = self.lib.clCreateKernel(prog, name.encode(), ctypes.byref(err))
        _check(err.value, f"clCreateKernel({name})")
        return k

    def set_args(self, kernel: int, *args) -> None:
        """Set the kernel's arguments in order: a float is a ``float``, anything else a
        handle (a buffer)."""
        for i, arg in enumerate(args):
            val = ctypes.c_float(arg) if isinstance(arg, float) else _VP(arg)
            _check(
                self.lib.clSetKernelArg(kernel, i, ctypes.sizeof(val), ctypes.byref(val)),
                "clSetKernelArg",
            )

    def run(self, kernel: int, global_size: int, local_size: Optional[int] = 256) -> float:
        """Run a 1-D range of the kernel and wait; its profiled time in seconds."""
        event = _VP()
        global_work = (_SZ * 1)(global_size)
        local_work = (_SZ * 1)(local_size) if local_size else None
        _check(
            self.lib.clEnqueueNDRangeKernel(
                self.queue, kernel, 1, None, global_work, local_work, 0, None, ctypes.byref(event)
            ),
            "clEnqueueNDRangeKernel",
        )
        return self._elapsed(event)

    def copy(self, src: int, dst: int, nbytes: int) -> float:
        """``clEnqueueCopyBuffer`` of ``nbytes`` and wait; its profiled time in seconds."""
        event = _VP()
        _check(
            self.lib.clEnqueueCopyBuffer(
                self.queue, src, dst, 0, 0, nbytes, 0, None, ctypes.byref(event)
            ),
            "clEnqueueCopyBuffer",
        )
        return self._elapsed(event)

    def _elapsed(self, event) -> float:
        start, end = ctypes.c_uint64(0), ctypes.c_uint64(0)
        self.lib.clWaitForEvents(1, ctypes.byref(event))
        for param, value in ((CL_PROFILING_COMMAND_START, start), (CL_PROFILING_COMMAND_END, end)):
            self.lib.clGetEventProfilingInfo(event, param, 8, ctypes.byref(value), None)
        self.lib.clReleaseEvent(event)
        return (end.value - start.value) * 1e-9


def _check(code: int, what: str) -> None:
    if code != 0:
        raise RuntimeError(f"{what} failed with OpenCL error {code}")


def missing_packages(status: Path = Path("/var/lib/dpkg/status")) -> list[str]:
    """The Debian packages of :data:`PACKAGES` that dpkg does not list as installed."""
    if not status.is_file():
        return list(PACKAGES)
    installed = set()
    for stanza in status.read_text(encoding="utf-8", errors="replace").split("\n\n"):
        fields = dict(
            line.split(":", 1) for line in stanza.splitlines() if ":" in line and line[0] != " "
        )
        if "install ok installed" in fields.get("Status", ""):
            installed.add(fields.get("Package", "").strip())
    return [p for p in PACKAGES if p not in installed]


def with_venv_icds(env: dict[str, str], venv: Path) -> dict[str, str]:
    """``env`` with ``OCL_ICD_VENDORS`` at the ICD list that setup writes into ``venv``
    (``etc/OpenCL/vendors-tvm``: PoCL and Intel's CPU runtime), unless ``env`` names one."""
    vendors = venv / "etc" / "OpenCL" / "vendors-tvm"
    if vendors.is_dir():
        env.setdefault("OCL_ICD_VENDORS", str(vendors))
    return env


def is_root() -> bool:
    """True when running as root (apt-get works without sudo)."""
    return hasattr(os, "geteuid") and os.geteuid() == 0
