"""Which OpenCL platforms and devices this machine has, read through the ICD loader (ctypes)."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from pathlib import Path

PACKAGES = ("pocl-opencl-icd", "ocl-icd-libopencl1", "opencl-headers", "clinfo")
_PLATFORM_NAME = 0x0902
_DEVICE_TYPE_ALL = 0xFFFFFFFF
_DEVICE_NAME = 0x102B


def load_library() -> ctypes.CDLL | None:
    """The OpenCL ICD loader, or None when none is installed."""
    for name in ("libOpenCL.so.1", ctypes.util.find_library("OpenCL")):
        if not name:
            continue
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
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

    The workspace's one enumeration without TVM: ``devices`` below (setup, ``opencl``) and the
    plain OpenCL benchmarks of ``bench/clbench.py`` use it; code with TVM asks its runtime.
    """
    count = ctypes.c_uint()
    if lib.clGetPlatformIDs(0, None, ctypes.byref(count)) != 0 or count.value == 0:
        return []
    platforms = (ctypes.c_void_p * count.value)()
    lib.clGetPlatformIDs(count, platforms, None)
    found = []
    every = ctypes.c_ulonglong(_DEVICE_TYPE_ALL)
    for platform in platforms:
        pname = info_string(lib.clGetPlatformInfo, platform, _PLATFORM_NAME)
        ndev = ctypes.c_uint()
        if lib.clGetDeviceIDs(ctypes.c_void_p(platform), every, 0, None, ctypes.byref(ndev)):
            continue
        devs = (ctypes.c_void_p * ndev.value)()
        lib.clGetDeviceIDs(ctypes.c_void_p(platform), every, ndev, devs, None)
        for dev in devs:
            found.append(
                (platform, pname, dev, info_string(lib.clGetDeviceInfo, dev, _DEVICE_NAME))
            )
    return found


def devices() -> list[str] | None:
    """``"platform / device"`` for every device; None when no OpenCL loader is installed."""
    lib = load_library()
    if lib is None:
        return None
    return [f"{pname} / {dname}" for _, pname, _, dname in device_handles(lib)]


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
