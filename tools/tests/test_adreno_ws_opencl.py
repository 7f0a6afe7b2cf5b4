"""The workspace's one OpenCL binding without TVM (adreno_ws.opencl) and its users."""

import sys
from pathlib import Path

import pytest

from adreno_ws import opencl

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture(name="listed")
def fixture_listed():
    lib = opencl.load_library()
    if lib is None:
        pytest.skip("no OpenCL ICD loader (libOpenCL.so.1) on this machine")
    listed = opencl.device_handles(lib)
    if not listed:
        pytest.skip("the OpenCL ICD loader lists no device (check OCL_ICD_VENDORS)")
    return listed


def test_devices_are_the_enumerated_handles(listed):
    """``devices()`` names exactly the devices ``device_handles`` enumerates, in its order, and
    every handle is a live pointer."""
    assert opencl.devices() == [f"{pname} / {dname}" for _, pname, _, dname in listed]
    for platform, pname, device, dname in listed:
        assert platform and device and pname != "?" and dname != "?", (pname, dname)


def test_selection_prefers_a_platform_name():
    """A selection naming a platform takes that platform's devices only, though a device of
    another platform is named after the CPU it runs on; one naming no platform matches device
    names, case-insensitively."""
    pocl = (1, "Portable Computing Language", 11, "pthread-skylake-avx512-Intel(R) Xeon(R)")
    intel = (2, "Intel(R) OpenCL", 21, "Intel(R) Xeon(R) Processor")
    nvidia = (3, "NVIDIA CUDA", 31, "NVIDIA H100 80GB HBM3")
    listed = [pocl, intel, nvidia]
    assert opencl.select_devices(listed, "intel") == [intel]
    assert opencl.select_devices(listed, "portable") == [pocl]
    assert opencl.select_devices(listed, "xeon") == [pocl, intel]
    assert opencl.select_devices(listed, "h100") == [nvidia]
    assert opencl.select_devices(listed, "") == listed
    assert not opencl.select_devices(listed, "adreno")


def test_context_opens_the_enumerated_device(listed):
    """``Context`` opens the first device of ``select_devices`` (here by a device name no
    platform carries), and refuses a selection that matches none in one line."""
    dname = listed[-1][3]
    ctx = opencl.Context(dname)
    first = next(d for d in listed if dname.lower() in d[3].lower())
    assert (ctx.platform, ctx.device) == (first[0], first[2])
    assert ctx.device_string(opencl.CL_DEVICE_NAME) == first[3]
    assert ctx.platform_string(opencl.CL_PLATFORM_NAME) == first[1]
    with pytest.raises(RuntimeError, match="no OpenCL device matches 'no-such-opencl-device'"):
        opencl.Context("no-such-opencl-device")


def test_context_builds_and_times_a_kernel(listed):
    """A kernel built from source runs on a buffer and has a profiled time; a source that
    does not build raises with the build log's error."""
    ctx = opencl.Context(listed[0][3])
    prog = ctx.program(
        "__kernel void fill(__global float* o, float v) { o[get_global_id(0)] = v; }"
    )
    out, other = ctx.buffer(64 * 4), ctx.buffer(64 * 4)
    fill = ctx.kernel(prog, "fill")
    ctx.set_args(fill, out, 2.5)
    assert ctx.run(fill, 64, 16) >= 0 and ctx.copy(out, other, 64 * 4) >= 0
    for mem in (out, other):
        ctx.release(mem)
    with pytest.raises(RuntimeError, match="clBuildProgram failed"):
        ctx.program("__kernel void broken( {")


def test_clbench_describes_through_the_binding(listed, monkeypatch):
    """bench/clbench.py has no OpenCL calls of its own: its device facts are the binding's."""
    monkeypatch.syspath_prepend(str(BENCH))
    sys.modules.pop("clbench", None)
    import clbench  # pylint: disable=import-outside-toplevel

    assert clbench.opencl is opencl
    pname = listed[-1][1]
    dname = next(d[3] for d in listed if d[1] == pname)  # the platform's first device
    facts = clbench.describe(pname)
    assert (facts["platform"], facts["device"]) == (pname, dname)
    assert facts["compute_units"] > 0 and isinstance(facts["cl_khr_fp16"], bool)


def test_venv_icds_fill_only_an_unset_variable(tmp_path):
    with_venv_icds = opencl.with_venv_icds
    assert not with_venv_icds({}, tmp_path)  # setup wrote no ICD list: nothing to point at
    vendors = tmp_path / "etc" / "OpenCL" / "vendors-tvm"
    vendors.mkdir(parents=True)
    assert with_venv_icds({"A": "1"}, tmp_path) == {"A": "1", "OCL_ICD_VENDORS": str(vendors)}
    chosen = {"OCL_ICD_VENDORS": "/elsewhere"}
    assert with_venv_icds(chosen, tmp_path) == {"OCL_ICD_VENDORS": "/elsewhere"}
