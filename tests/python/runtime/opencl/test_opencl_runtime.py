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
"""Tests of the OpenCL runtime library (libtvm_runtime_opencl.so): device, memory, copies,
texture views in the Relax VM, module launch/export, threads, timer, no-platform behaviour."""

import threading
import time

import numpy as np
import pytest

import tvm
import tvm.testing
import tvm_ffi
from tvm import relax
from tvm.script import ir as I
from tvm.script import relax as R

from opencl_testing import ElementwiseChain, elementwise_chain_reference, run_python

TEXTURE_SCOPES = ["global.texture", "global.texture-nhwc", "global.texture-weight"]


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    # Each test gets its own program cache so tests never see each other's entries.
    monkeypatch.setenv("TVM_OPENCL_CACHE_DIR", str(tmp_path / "clcache"))


@pytest.fixture(name="generic_exec", scope="module")
def fixture_generic_exec():
    return tvm.compile(ElementwiseChain, target=tvm.target.Target("opencl", host="llvm"))


def _run_vm(executable, dev, x, y):
    vm = relax.VirtualMachine(executable, dev)
    return vm["main"](tvm.runtime.tensor(x, dev), tvm.runtime.tensor(y, dev)).numpy()


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    return rng.random((4, 64), dtype="float32"), rng.random((4, 64), dtype="float32")


def test_device_attributes(dev):
    assert tvm.runtime.enabled("opencl")
    assert isinstance(dev.device_name, str) and dev.device_name
    assert dev.max_threads_per_block >= 1
    assert dev.warp_size >= 1
    assert dev.max_shared_memory_per_block > 0
    assert dev.multi_processor_count >= 1
    assert dev.total_global_memory > 0
    assert dev.compute_version.count(".") == 1
    assert dev.driver_version
    dims = dev.max_thread_dimensions  # the Python side parses the JSON string
    dims = list(dims) if not isinstance(dims, str) else __import__("json").loads(dims)
    assert len(dims) >= 1 and all(d >= 1 for d in dims)
    assert not tvm.opencl(1000).exist


def test_device_strings(dev):
    """``runtime.opencl.device_string`` gives what the runtime's enumeration read for the
    device: the name and driver agree with the device attributes, the extensions are OpenCL
    extension names, and an unknown field is refused, naming the fields there are."""
    text = tvm.get_global_func("runtime.opencl.device_string")
    assert text(0, "name") == dev.device_name
    assert text(0, "driver") == dev.driver_version
    assert text(0, "platform")
    assert text(0, "version").startswith("OpenCL ")
    extensions = text(0, "extensions").split()
    assert extensions and all(name.startswith("cl_") for name in extensions), extensions
    with pytest.raises(ValueError, match="unknown field 'vendor' .platform, name, extensions"):
        text(0, "vendor")
    assert tvm.get_global_func("runtime.opencl.no_device_reason")() == ""


def test_unmatched_selection_lists_the_devices_present(dev):
    """A ``TVM_OPENCL_DEVICE`` that matches no device: no device exists, and the reason names
    the selection and the devices there are, so that a user sees what to select."""
    script = (
        "import tvm\n"
        "assert tvm.opencl(0).exist is False, 'exist'\n"
        "print('WHY:' + tvm.get_global_func('runtime.opencl.no_device_reason')())\n"
    )
    proc = run_python(["-c", script], {"TVM_OPENCL_DEVICE": "no-such-opencl-device"})
    (why,) = [line for line in proc.stdout.splitlines() if line.startswith("WHY:")]
    assert "no OpenCL device matches TVM_OPENCL_DEVICE='no-such-opencl-device'" in why, why
    assert dev.device_name in why, why


_LIST_DEVICES = (
    "import tvm\n"
    "text = tvm.get_global_func('runtime.opencl.device_string')\n"
    "for i in range(64):\n"
    "    if tvm.opencl(i).exist:\n"
    "        print('DEV:' + text(i, 'platform') + '|' + text(i, 'name'))\n"
)


def _selected(selection):
    """``(platform, device)`` of every device the runtime enumerates under ``selection``."""
    proc = run_python(["-c", _LIST_DEVICES], {"TVM_OPENCL_DEVICE": selection})
    lines = [line[len("DEV:") :] for line in proc.stdout.splitlines() if line.startswith("DEV:")]
    return [tuple(line.split("|", 1)) for line in lines]


def test_selection_naming_a_platform_takes_only_its_devices(dev):
    """A ``TVM_OPENCL_DEVICE`` that names a platform selects that platform's devices alone,
    though another platform's device name may contain it too (PoCL's CPU device is named
    after the Intel Xeon it runs on, and "intel" must select Intel's platform); a selection
    that names no platform matches device names."""
    every = _selected(None)
    assert dev.device_name in [name for _, name in every]
    for platform in sorted({platform for platform, _ in every}):
        word = platform.split()[0]
        named = {p for p, _ in every if word.lower() in p.lower()}
        assert {p for p, _ in _selected(word)} == named, (word, every)
    device_word = dev.device_name.split()[-1]
    if not any(device_word.lower() in p.lower() for p, _ in every):
        assert dev.device_name in [name for _, name in _selected(device_word)]


# Widths 5, 7, 13 are not multiples of any pitch alignment; rank 3 to 5.
ROUND_TRIP_SHAPES = [(1, 2, 3, 5, 4), (2, 7, 4), (3, 1, 13, 4), (1, 1, 1, 4), (2, 3, 2, 7, 4)]


@pytest.mark.parametrize("scope", TEXTURE_SCOPES)
@pytest.mark.parametrize("shape", ROUND_TRIP_SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_texture_round_trip(dev, scope, shape, dtype):
    data = (np.arange(np.prod(shape)) % 251).astype(dtype).reshape(shape)
    tex = tvm.runtime.empty(shape, dtype, dev, mem_scope=scope)
    tex.copyfrom(data)
    np.testing.assert_array_equal(tex.numpy(), data)


def test_copies_every_direction(dev):
    shape = (1, 2, 3, 5, 4)
    data = np.random.default_rng(1).random(shape, dtype="float32")
    buf = tvm.runtime.tensor(data, dev)  # host -> buffer
    img_a = tvm.runtime.empty(shape, "float32", dev, mem_scope="global.texture")
    img_b = tvm.runtime.empty(shape, "float32", dev, mem_scope="global.texture")
    img_c = tvm.runtime.empty(shape, "float32", dev, mem_scope="global.texture-nhwc")
    buf2 = tvm.runtime.empty(shape, "float32", dev)
    buf.copyto(img_a)  # buffer -> image
    img_a.copyto(img_b)  # image -> image, same geometry
    img_b.copyto(img_c)  # image -> image, other geometry
    img_c.copyto(buf2)  # image -> buffer
    buf3 = tvm.runtime.empty(shape, "float32", dev)
    buf2.copyto(buf3)  # buffer -> buffer
    np.testing.assert_array_equal(buf3.numpy(), data)  # buffer -> host
    np.testing.assert_array_equal(img_c.numpy(), data)  # image -> host
    img_d = tvm.runtime.empty(shape, "float32", dev, mem_scope="global.texture-weight")
    img_d.copyfrom(data)  # host -> image
    np.testing.assert_array_equal(img_d.numpy(), data)


def test_texture_shape_errors_are_clear(dev):
    with pytest.raises(Exception, match="last axis of a texture tensor"):
        tvm.runtime.empty((2, 3, 5), "float32", dev, mem_scope="global.texture")
    with pytest.raises(Exception, match="float32 and float16"):
        tvm.runtime.empty((2, 3, 4), "int32", dev, mem_scope="global.texture")
    with pytest.raises(Exception, match="CL_INVALID_IMAGE_SIZE|image"):
        tvm.runtime.empty((1, 1 << 20, 4), "float32", dev, mem_scope="global.texture-weight")


@pytest.mark.parametrize("scope", TEXTURE_SCOPES)
def test_compiler_and_runtime_agree_on_image_extents(dev, scope):  # pylint: disable=unused-argument
    """The compiler sizes images with its own copy of the scope-to-image mapping (it runs
    without an OpenCL runtime when it cross-compiles); it gives the geometry the runtime
    allocates, for tensors of every rank a scope takes."""
    # pylint: disable-next=import-outside-toplevel
    from tvm.s_tir.backend.adreno.texture import image_extent

    runtime_extent = tvm.get_global_func("runtime.opencl.texture_image_extent")
    rng = np.random.default_rng()
    for rank in range(3, 7):
        for _ in range(4):
            shape = [int(d) for d in rng.integers(1, 10, size=rank - 1)] + [4]
            assert tuple(runtime_extent(shape, scope)) == image_extent(shape, scope), shape


def test_alloc_nd_free_nd(dev):
    import ctypes  # pylint: disable=import-outside-toplevel

    alloc = tvm.get_global_func("device_api.opencl.alloc_nd")
    free = tvm.get_global_func("device_api.opencl.free_nd")
    shape = (ctypes.c_int64 * 3)(5, 3, 2)
    for bits in (128, 64):
        # kDLOpenCL = 4; dtype code 2 = float; the shape is {width, height, depth}.
        handle = alloc(
            4, 0, 2, bits // 4, "global.texture", 3, ctypes.cast(shape, ctypes.c_void_p), bits
        )
        assert handle
        free(4, 0, "global.texture", handle)


def test_generic_module_runs(dev, generic_exec):
    x, y = _inputs()
    tvm.testing.assert_allclose(
        _run_vm(generic_exec, dev, x, y), elementwise_chain_reference(x, y), rtol=1e-5
    )


def test_export_and_load(dev, generic_exec, tmp_path):
    path = str(tmp_path / "model.so")
    generic_exec.export_library(path)
    loaded = tvm.runtime.load_module(path)
    x, y = _inputs(2)
    tvm.testing.assert_allclose(
        _run_vm(loaded, dev, x, y), elementwise_chain_reference(x, y), rtol=1e-5
    )
    kinds = []

    def walk(mod):
        kinds.append(mod.kind)
        for sub in mod.imports:
            walk(sub)

    walk(loaded)
    assert "opencl" in kinds


def _opencl_module(executable):
    stack = [executable.mod if isinstance(executable, relax.VMExecutable) else executable]
    while stack:
        mod = stack.pop()
        if mod.kind == "opencl":
            return mod
        stack.extend(mod.imports)
    raise AssertionError("no opencl module")


def test_precompiled_programs(dev, generic_exec, tmp_path):
    path = str(tmp_path / "model.so")
    generic_exec.export_library(path)
    x, y = _inputs(3)
    first = tvm.runtime.load_module(path)
    _run_vm(first, dev, x, y)
    blob = _opencl_module(first).get_function("opencl.GetPreCompiledPrograms")()
    assert len(bytes(blob)) > 8
    second = tvm.runtime.load_module(path)
    _opencl_module(second).get_function("opencl.SetPreCompiledPrograms")(blob)
    tvm.testing.assert_allclose(
        _run_vm(second, dev, x, y), elementwise_chain_reference(x, y), rtol=1e-5
    )
    with pytest.raises(Exception, match="Malformed OpenCL precompiled programs"):
        _opencl_module(second).get_function("opencl.SetPreCompiledPrograms")(bytes(blob)[:-3])


def test_two_threads_one_module(dev, generic_exec):
    vm_inputs = [_inputs(10 + i) for i in range(2)]
    errors = []

    def worker(i):
        try:
            x, y = vm_inputs[i]
            vm = relax.VirtualMachine(generic_exec, dev)
            for _ in range(25):
                out = vm["main"](tvm.runtime.tensor(x, dev), tvm.runtime.tensor(y, dev)).numpy()
                tvm.testing.assert_allclose(out, elementwise_chain_reference(x, y), rtol=1e-5)
        except Exception as err:  # pylint: disable=broad-except
            errors.append(err)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_device_timer_measures_device_work(dev, generic_exec):
    """runtime.timer.opencl reports the span of the timed device commands: positive for a call
    that launches kernels, and shorter than the host's wall clock around that same call."""
    assert tvm.get_global_func("runtime.timer.opencl", allow_missing=True) is not None
    vm = relax.VirtualMachine(generic_exec, dev)
    x, y = _inputs()
    args = [tvm.runtime.tensor(x, dev), tvm.runtime.tensor(y, dev)]
    timer = vm.time_evaluator("main", dev, number=1, repeat=3, min_repeat_ms=0)
    vm["main"](*args)  # build the programs outside the measured calls
    wall = []

    def timed(*call_args):
        start = time.perf_counter()
        out = timer(*call_args)
        wall.append(time.perf_counter() - start)
        return out

    res = timed(*args)
    assert len(res.results) == 3
    assert all(t > 0 for t in res.results), res.results
    # Each wall measurement spans 4 calls of main (one warm-up, three timed), each with its host
    # work and a queue wait: one call's device span must be shorter than that.
    assert max(res.results) < wall[0], (res.results, wall)


@I.ir_module
class NoDeviceWork:
    @R.function
    def main(x: R.Tensor((4, 64), "float32")):
        return x


def test_device_timer_ignores_host_time(dev):
    """A call that enqueues nothing on the device takes no device time (a host clock around
    queue waits would report the VM's own time here)."""
    exe = tvm.compile(NoDeviceWork, target=tvm.target.Target("opencl", host="llvm"))
    vm = relax.VirtualMachine(exe, dev)
    data = tvm.runtime.tensor(np.random.default_rng(7).random((4, 64), dtype="float32"), dev)
    res = vm.time_evaluator("main", dev, number=5, repeat=2, min_repeat_ms=0)(data)
    assert list(res.results) == [0.0, 0.0], res.results


def _trace(dev, work):
    """The commands ``work()`` enqueued on ``dev``: (label, start_ns, end_ns) each."""
    tvm.get_global_func("runtime.opencl.start_command_trace")(dev)
    try:
        work()
    finally:
        commands = tvm.get_global_func("runtime.opencl.stop_command_trace")(dev)
    return [(str(label), int(start), int(end)) for label, start, end in commands]


def _opencl_source(executable):
    sources = []

    def walk(mod):
        if mod.kind == "opencl":
            sources.append(mod.inspect_source())
        for imported in mod.imports:
            walk(imported)

    walk(executable.mod)
    assert sources, "the executable holds no OpenCL module"
    return sources[0]


def test_command_trace_lists_each_command(dev, generic_exec):
    """Every kernel and copy of a call, labelled, in queue order, each with its device time."""
    vm = relax.VirtualMachine(generic_exec, dev)
    x, y = _inputs(8)
    args = [tvm.runtime.tensor(x, dev), tvm.runtime.tensor(y, dev)]
    vm["main"](*args)  # build the programs outside the trace
    dev.sync()
    _reset_counters()
    commands = _trace(dev, lambda: vm["main"](*args))
    launches = _counters()["kernel_launches"]
    source = _opencl_source(generic_exec)
    assert launches > 0 and len(commands) == launches, (commands, launches)
    for label, start, end in commands:
        assert f"{label}(" in source, f"{label!r} is not a kernel of the module"
        assert 0 <= start <= end
    # An in-order queue runs one command after the other.
    for (_, _, prev_end), (_, start, _) in zip(commands, commands[1:]):
        assert start >= prev_end
    busy = sum(end - start for _, start, end in commands)
    assert 0 < busy <= commands[-1][2]

    data = np.random.default_rng(9).random((1, 2, 3, 5, 4), dtype="float32")
    image = tvm.runtime.empty(data.shape, "float32", dev, mem_scope="global.texture")
    buffer = tvm.runtime.empty(data.shape, "float32", dev)
    copies = _trace(dev, lambda: (buffer.copyfrom(data), buffer.copyto(image)))
    assert [label for label, _, _ in copies] == ["write host->buffer", "copy buffer->image"]
    np.testing.assert_array_equal(image.numpy(), data)


def test_command_trace_and_timer_see_the_same_commands(dev, generic_exec):
    """The device timer's time of a call is the span of that call's traced commands, up to the
    end of the marker that closes it (a marker ends after the commands before it)."""
    vm = relax.VirtualMachine(generic_exec, dev)
    x, y = _inputs(10)
    args = [tvm.runtime.tensor(x, dev), tvm.runtime.tensor(y, dev)]
    vm["main"](*args)
    dev.sync()
    timer = vm.time_evaluator("main", dev, number=1, repeat=1, min_repeat_ms=0)
    results = []
    commands = _trace(dev, lambda: results.append(timer(*args).results[0]))
    # time_evaluator makes one untimed warm-up call, then the timed one: two equal halves.
    assert len(commands) % 2 == 0 and commands
    timed = commands[len(commands) // 2 :]
    span_ns = timed[-1][2] - timed[0][1]
    timer_ns = results[0] * 1e9
    assert span_ns - 1.0 <= timer_ns <= span_ns * 1.1 + 50e3, (timer_ns, span_ns)


def test_device_timer_asks_for_two_events_per_span(dev, generic_exec):
    """A timed span carries an event on its first command and on its end marker only, however
    many commands it holds: the commands in between launch as untimed ones do."""
    vm = relax.VirtualMachine(generic_exec, dev)
    x, y = _inputs(11)
    args = [tvm.runtime.tensor(x, dev), tvm.runtime.tensor(y, dev)]
    vm["main"](*args)
    dev.sync()
    vm.time_evaluator("main", dev, number=1, repeat=1, min_repeat_ms=0)(*args)  # queue, probe
    for number, repeat in ((1, 1), (6, 1), (3, 2)):
        _reset_counters()
        res = vm.time_evaluator("main", dev, number=number, repeat=repeat, min_repeat_ms=0)(*args)
        counts = _counters()
        # time_evaluator makes one untimed warm-up call before the timed ones
        assert counts["kernel_launches"] % (number * repeat + 1) == 0, counts
        assert counts["events_created"] == 2 * repeat, (number, repeat, counts)
        assert all(t > 0 for t in res.results), res.results


HOST_PAUSE_S = 0.02


@I.ir_module
class HostPauseBetweenKernels:
    @R.function(pure=False)
    def main(x: R.Tensor((256, 1024), "float32")):
        doubled = R.add(x, x)
        paused = R.call_packed("testing.opencl_host_pause", doubled, ty_args=R.Object)
        after = R.match_cast(paused, R.Tensor((256, 1024), "float32"))
        return R.multiply(after, x)


@pytest.fixture(name="host_pause")
def fixture_host_pause():
    def pause(tensor):
        time.sleep(HOST_PAUSE_S)
        return tensor

    tvm.register_global_func("testing.opencl_host_pause", pause, override=True)
    yield
    tvm_ffi.remove_global_func("testing.opencl_host_pause")


def test_timed_spans_show_the_device_waiting_for_the_host(dev, host_pause):
    """runtime.opencl.timed_spans gives, per finished timer span, the span itself and when its
    first and closing commands were enqueued: a span whose calls pause on the host between two
    kernels took that long to enqueue, and ended soon after its closing marker was enqueued."""
    take_spans = tvm.get_global_func("runtime.opencl.timed_spans")
    exe = tvm.compile(HostPauseBetweenKernels, target=tvm.target.Target("opencl", host="llvm"))
    vm = relax.VirtualMachine(exe, dev)
    x_np = np.random.default_rng(12).random((256, 1024), dtype="float32")
    x = tvm.runtime.tensor(x_np, dev)
    np.testing.assert_allclose(vm["main"](x).numpy(), 2 * x_np * x_np, rtol=1e-6)
    take_spans(dev)  # forget spans of earlier tests
    number, repeat = 2, 3
    res = vm.time_evaluator("main", dev, number=number, repeat=repeat, min_repeat_ms=0)(x)
    spans = [{key: int(value) for key, value in span.items()} for span in take_spans(dev)]
    assert len(spans) == repeat, spans
    assert not take_spans(dev), "reading the spans forgets them"
    for per_call_s, span in zip(res.results, spans):
        assert abs(span["span_ns"] - per_call_s * number * 1e9) < 1e3, (per_call_s, span)
        assert span["start_delay_ns"] >= 0 and span["drain_ns"] >= 0, span
        # The four stamps are one timeline read from the queue's profiling clock.
        assert span["start_delay_ns"] + span["span_ns"] == (
            span["host_enqueue_ns"] + span["drain_ns"]
        ), span
        # Each call paused the host between its kernels, and the device with it: from the first
        # command's enqueue to its end the span covers every pause (the device may start the
        # first kernel late, so the span alone can be shorter by that delay), and it ended
        # soon after the host enqueued its closing marker.
        assert span["host_enqueue_ns"] >= number * HOST_PAUSE_S * 1e9, span
        assert span["start_delay_ns"] + span["span_ns"] >= number * HOST_PAUSE_S * 1e9, span
        assert span["drain_ns"] < HOST_PAUSE_S * 1e9, span


@I.ir_module
class Halfway:
    @R.function
    def main(x: R.Tensor((512, 1024), "float32"), y: R.Tensor((512, 1024), "float32")):
        with R.dataflow():
            o = R.multiply(R.add(x, y), R.const(0.5, "float32"))
            R.output(o)
        return o


def test_commands_keep_their_order_across_timers(dev):
    """Untimed commands go to a plain queue, timed and traced ones to a profiling queue: each
    switch waits for the queue it leaves, so a call that reads the previous call's output,
    enqueued with no sync in between, sees its finished values. Every step of the chain
    halves the distance to ``y``, so a stale read changes the result."""
    exe = tvm.compile(Halfway, target=tvm.target.Target("opencl", host="llvm"))
    vm = relax.VirtualMachine(exe, dev)
    rng = np.random.default_rng(12)
    x = rng.random((512, 1024), dtype="float32")
    y = rng.random((512, 1024), dtype="float32")
    y_dev = tvm.runtime.tensor(y, dev)
    vm["main"](tvm.runtime.tensor(x, dev), y_dev)  # build the programs first
    dev.sync()
    timer = vm.time_evaluator("main", dev, number=1, repeat=1, min_repeat_ms=0)
    value, steps = tvm.runtime.tensor(x, dev), 0

    def untimed_chain(value, steps):
        for _ in range(6):
            value, steps = vm["main"](value, y_dev), steps + 1
        return value, steps

    value, steps = untimed_chain(value, steps)  # plain queue, not waited for
    traced = []
    _trace(dev, lambda: traced.append(vm["main"](value, y_dev)))  # profiling queue
    value, steps = untimed_chain(traced[0], steps + 1)
    assert timer(value, y_dev).results[0] > 0
    value, steps = untimed_chain(value, steps)
    expected = x
    for _ in range(steps):
        expected = (expected + y) * np.float32(0.5)
    np.testing.assert_allclose(value.numpy(), expected, rtol=1e-6)


def test_command_trace_misuse_is_clear(dev):
    stop = tvm.get_global_func("runtime.opencl.stop_command_trace")
    start = tvm.get_global_func("runtime.opencl.start_command_trace")
    with pytest.raises(Exception, match="no command trace runs on .*start_command_trace first"):
        stop(dev)
    start(dev)
    try:
        with pytest.raises(Exception, match="a command trace already runs on"):
            start(dev)
    finally:
        assert list(stop(dev)) == []  # nothing was enqueued


COUNTER_NAMES = {
    "kernel_launches",
    "buffer_image_copies",
    "host_device_copies",
    "device_copies",
    "buffers_created",
    "images_created",
    "images_over_buffers",
    "half_images_created",
    "image_bytes_created",
    "programs_built",
    "programs_from_binary",
    "kernels_created",
    "queue_finishes",
    "events_created",
}


def _counters():
    return {str(k): int(v) for k, v in tvm.get_global_func("runtime.opencl.counters")().items()}


def _reset_counters():
    tvm.get_global_func("runtime.opencl.reset_counters")()


def test_counters_count_copies_and_objects(dev):
    """Each copy direction and object kind lands in its own counter, and reset clears them."""
    shape = (1, 2, 3, 5, 4)
    data = np.random.default_rng(5).random(shape, dtype="float32")
    _reset_counters()
    assert set(_counters()) == COUNTER_NAMES
    buf = tvm.runtime.tensor(data, dev)  # one buffer, one host -> device copy
    img = tvm.runtime.empty(shape, "float32", dev, mem_scope="global.texture")  # one image
    buf.copyto(img)  # buffer -> image
    buf2 = tvm.runtime.empty(shape, "float32", dev)
    buf.copyto(buf2)  # buffer -> buffer
    np.testing.assert_array_equal(img.numpy(), data)  # image -> host
    got = _counters()
    assert got["buffers_created"] == 2, got
    assert got["images_created"] == 1, got
    assert got["buffer_image_copies"] == 1, got
    assert got["device_copies"] == 1, got
    assert got["host_device_copies"] == 2, got
    assert got["kernel_launches"] == 0, got
    _reset_counters()
    assert all(v == 0 for v in _counters().values())


@pytest.mark.parametrize(
    "scope", ["global.texture", "global.texture-nhwc", "global.texture-weight"]
)
def test_half_scope_keeps_float32_in_half_pixels(dev, scope):
    """A float32 tensor in ``<scope>-half`` is an image of the scope's geometry with
    CL_HALF_FLOAT pixels: half the bytes of the float32 image, values rounded to half on the
    way in (as numpy rounds), and copies to and from float32 tensors convert."""
    shape = (2, 3, 5, 7, 4)
    data = (np.random.default_rng(11).standard_normal(shape) * 300).astype("float32")
    as_half = data.astype("float16").astype("float32")
    _reset_counters()
    full = tvm.runtime.empty(shape, "float32", dev, mem_scope=scope)
    full_counts = _counters()
    _reset_counters()
    half = tvm.runtime.empty(shape, "float32", dev, mem_scope=scope + "-half")
    half_counts = _counters()
    assert (full_counts["half_images_created"], half_counts["half_images_created"]) == (0, 1)
    assert 2 * half_counts["image_bytes_created"] == full_counts["image_bytes_created"]
    half.copyfrom(data)
    np.testing.assert_array_equal(half.numpy(), as_half)
    half.copyto(full)  # half image -> float32 image of the same geometry
    np.testing.assert_array_equal(full.numpy(), as_half)
    buf = tvm.runtime.tensor(data, dev)
    buf.copyto(half)  # float32 buffer -> half image
    np.testing.assert_array_equal(half.numpy(), as_half)


def test_half_scope_is_for_float_tensors(dev):
    """Other dtypes in a -half scope, and unknown suffixes, are one clear error."""
    with pytest.raises(ValueError, match="supports float32 and float16 only"):
        tvm.runtime.empty((1, 2, 3, 4), "int32", dev, mem_scope="global.texture-half")
    with pytest.raises(ValueError, match="Unknown OpenCL texture scope 'global.texture-quarter'"):
        tvm.runtime.empty((1, 2, 3, 4), "float32", dev, mem_scope="global.texture-quarter")


def test_counters_steady_state_and_threads(dev):
    """A first VM run builds one program and kernel per kernel; a warm run launches the same
    kernels again and builds or creates nothing; the counts from two threads add up exactly
    (atomic counters)."""
    # A module of its own: programs of the shared fixture may already be built.
    generic_exec = tvm.compile(ElementwiseChain, target=tvm.target.Target("opencl", host="llvm"))
    vm = relax.VirtualMachine(generic_exec, dev)
    x, y = _inputs(6)
    inputs = [tvm.runtime.tensor(x, dev), tvm.runtime.tensor(y, dev)]
    _reset_counters()
    first_out = vm["main"](*inputs)
    first = _counters()
    assert first["kernel_launches"] > 0
    assert first["programs_built"] + first["programs_from_binary"] == first["kernel_launches"]
    assert first["kernels_created"] == first["kernel_launches"]
    _reset_counters()
    tvm.testing.assert_allclose(vm["main"](*inputs).numpy(), first_out.numpy(), rtol=0, atol=0)
    warm = _counters()
    assert warm["kernel_launches"] == first["kernel_launches"], (first, warm)
    assert warm["programs_built"] == warm["programs_from_binary"] == 0, warm
    assert warm["kernels_created"] == 0, warm

    runs = 20
    _reset_counters()

    def worker():
        local_vm = relax.VirtualMachine(generic_exec, dev)
        for _ in range(runs):
            local_vm["main"](*inputs)

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert _counters()["kernel_launches"] == 2 * runs * first["kernel_launches"]


@I.ir_module
class TwoConvs:
    @R.function
    def main(x: R.Tensor((1, 8, 6, 6), "float32"), w: R.Tensor((8, 8, 3, 3), "float32")):
        with R.dataflow():
            y = R.nn.conv2d(x, w, padding=1)
            z = R.nn.relu(y)
            o = R.nn.conv2d(z, w, padding=1)
            R.output(o)
        return o


def _texture_exec():
    target = tvm.target.Target("qcom/adreno-opencl-texture", host="llvm")
    try:
        return tvm.compile(TwoConvs, target=target)
    except Exception as err:  # pylint: disable=broad-except
        pytest.skip(
            f"the texture pipeline of this TVM base does not compile: {err}".splitlines()[0]
        )


def test_texture_views_in_vm(dev):
    """Texture tensors live between kernels as views over pooled VM storage (CreateView)."""
    exe = _texture_exec()
    text = exe.as_text()
    assert "alloc_tensor" in text
    source = _opencl_module(exe).inspect_source()
    assert "image2d_array_t" in source
    rng = np.random.default_rng(4)
    x = rng.random((1, 8, 6, 6), dtype="float32")
    w = rng.random((8, 8, 3, 3), dtype="float32")
    # How many virtual devices the executable names (and in what order) depends on the compiler
    # version; every OpenCL one maps to `dev`. Pick the first list that the VM accepts.
    candidates = [[dev], [dev, dev], [tvm.cpu(), dev, dev], [dev, tvm.cpu()], [dev, dev, dev]]
    vm, outs, last_err = None, None, None
    for devices in candidates:
        try:
            vm = relax.VirtualMachine(exe, devices)
            outs = [vm["main"](tvm.runtime.tensor(x, dev), tvm.runtime.tensor(w, dev)).numpy()]
            break
        except Exception as err:  # pylint: disable=broad-except
            last_err, vm = err, None
    if vm is None:
        pytest.skip(f"no device list fits this executable: {last_err}".splitlines()[0])
    outs += [
        vm["main"](tvm.runtime.tensor(x, dev), tvm.runtime.tensor(w, dev)).numpy() for _ in range(2)
    ]
    assert np.all(np.isfinite(outs[0]))
    # Storage is reused across tensors and runs: the views must give the same answer each time.
    for out in outs[1:]:
        np.testing.assert_array_equal(out, outs[0])
    fresh = relax.VirtualMachine(exe, devices)
    np.testing.assert_array_equal(
        fresh["main"](tvm.runtime.tensor(x, dev), tvm.runtime.tensor(w, dev)).numpy(), outs[0]
    )


def _conv3x3_same(x, w):
    """Reference NCHW 3x3 convolution with padding 1 (float64)."""
    n, _, h, wd = x.shape
    xp = np.pad(x.astype("float64"), ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((n, w.shape[0], h, wd))
    for kh in range(3):
        for kw in range(3):
            out += np.einsum("nchw,oc->nohw", xp[:, :, kh : kh + h, kw : kw + wd], w[:, :, kh, kw])
    return out


def test_texture_steady_state_creates_no_opencl_objects(dev):
    """In steady state a texture conv module creates no OpenCL object (storage, view images and
    kernels are reused), launches the same kernels and makes the same copies. The pool is full
    after two calls: the second allocates one more output buffer, as the first call's output
    is still alive while it runs."""
    exe = _texture_exec()
    rng = np.random.default_rng(14)
    x = rng.random((1, 8, 6, 6), dtype="float32")
    w = rng.random((8, 8, 3, 3), dtype="float32") - 0.5
    args = [tvm.runtime.tensor(x, dev), tvm.runtime.tensor(w, dev)]
    vm = relax.VirtualMachine(exe, [dev, dev])
    expected = _conv3x3_same(np.maximum(_conv3x3_same(x, w), 0), w)
    for _ in range(2):
        tvm.testing.assert_allclose(vm["main"](*args).numpy(), expected, rtol=1e-4, atol=1e-4)
    runs = []
    for _ in range(2):
        _reset_counters()
        out = vm["main"](*args)
        runs.append(_counters())
        tvm.testing.assert_allclose(out.numpy(), expected, rtol=1e-4, atol=1e-4)
    for got in runs:
        created = {
            k: got[k]
            for k in (
                "buffers_created",
                "images_created",
                "programs_built",
                "programs_from_binary",
                "kernels_created",
            )
        }
        assert set(created.values()) == {0}, created
    assert runs[0]["kernel_launches"] > 0
    assert runs[1]["kernel_launches"] == runs[0]["kernel_launches"]
    assert runs[1]["buffer_image_copies"] == runs[0]["buffer_image_copies"], runs


@I.ir_module
class Storages:
    @R.function
    def flat(size: R.Shape(["n"])) -> R.Object:
        return R.vm.alloc_storage(size, R.prim_value(0), R.dtype("uint8"))

    @R.function
    def texture(shape: R.Shape(["a", "b", "c", "d", "e"])) -> R.Object:
        return R.vm.alloc_storage(shape, R.prim_value(0), R.dtype("float32"), "global.texture")


@pytest.fixture(name="storage_vm")
def fixture_storage_vm(dev):
    exe = tvm.compile(Storages, target=tvm.target.Target("opencl", host="llvm"))
    return relax.VirtualMachine(exe, dev)


def _view(storage, offset, shape, scope):
    """What the VM's alloc_tensor does: a tensor of `shape` at `offset` of `storage`."""
    alloc_tensor = tvm.get_global_func("vm.builtin.alloc_tensor")
    return alloc_tensor(storage, offset, tvm.runtime.ShapeTuple(shape), "float32", scope)


def test_view_round_trip_in_flat_storage(dev, storage_vm):
    shape = (1, 2, 3, 5, 4)
    storage = storage_vm["flat"](tvm.runtime.ShapeTuple([4096]))
    view = _view(storage, 0, shape, "global.texture")
    data = np.random.default_rng(11).random(shape, dtype="float32")
    view.copyfrom(data)
    np.testing.assert_array_equal(view.numpy(), data)


def test_view_over_device_image_limits_is_clear(dev, storage_vm):
    """A view whose image is wider than the device allows: one error naming the geometry and
    the limit."""
    width = 20000  # wider than PoCL's 8192 and Intel's 16384 pixels
    if width <= tvm.get_global_func("runtime.opencl.image_limit")(0, "width"):
        pytest.skip(f"this device takes images {width} pixels wide")
    storage = storage_vm["flat"](tvm.runtime.ShapeTuple([width * 16]))
    limit_error = rf"texture of {width}x1x1 pixels exceeds the image limits"
    with pytest.raises(ValueError, match=limit_error):
        _view(storage, 0, (1, width, 4), "global.texture-weight")


def test_view_larger_than_storage_is_clear(dev, storage_vm):
    storage = storage_vm["flat"](tvm.runtime.ShapeTuple([4096]))
    too_large = "attempted to allocate 48000 at offset 0 in region that is 4096"
    with pytest.raises(Exception, match=too_large):
        _view(storage, 0, (1, 20, 30, 5, 4), "global.texture")


def test_view_at_an_offset_is_refused(dev, storage_vm):
    """An image cannot start at an offset of its storage: using such a view is one clear error
    (not a silent alias of the storage's start)."""
    storage = storage_vm["flat"](tvm.runtime.ShapeTuple([8192]))
    view = _view(storage, 256, (1, 2, 3, 5, 4), "global.texture")
    offset_error = r"texture tensor \[1, 2, 3, 5, 4\] starts at byte offset 256"
    with pytest.raises(ValueError, match=offset_error):
        view.numpy()
    data = np.random.default_rng(12).random((1, 2, 3, 5, 4), dtype="float32")
    with pytest.raises(ValueError, match="an image has no offset"):
        view.copyfrom(data)


def test_texture_storage_takes_its_own_geometry_only(dev, storage_vm):
    shape = (1, 2, 3, 5, 4)
    storage = storage_vm["texture"](tvm.runtime.ShapeTuple(shape))
    same = _view(storage, 0, shape, "global.texture")
    data = np.random.default_rng(13).random(shape, dtype="float32")
    same.copyfrom(data)
    np.testing.assert_array_equal(same.numpy(), data)
    with pytest.raises(
        ValueError,
        match=r"view \[1, 2, 3, 4, 4\] float32 'global.texture' \(image 4x3x2\) does not match "
        r"its storage, an image of 5x3x2 pixels",
    ):
        _view(storage, 0, (1, 2, 3, 4, 4), "global.texture")


def _rss_kib():
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def test_texture_alloc_free_no_growth(dev):
    shape = (1, 2, 3, 5, 4)
    for _ in range(1000):  # warm up allocator caches
        tvm.runtime.empty(shape, "float32", dev, mem_scope="global.texture")
    before = _rss_kib()
    for i in range(10000):
        tvm.runtime.empty(shape, "float32", dev, mem_scope=TEXTURE_SCOPES[i % 3])
    growth_kib = _rss_kib() - before
    assert growth_kib < 8 * 1024, f"RSS grew by {growth_kib} KiB over 10000 alloc/free cycles"


def test_no_platform(tmp_path):
    """With no ICD registered, import works, exist is False and use fails with one clear line."""
    vendors = tmp_path / "vendors"
    vendors.mkdir()
    script = (
        "import tvm\n"
        "assert tvm.opencl(0).exist is False, 'exist'\n"
        "try:\n"
        "    tvm.runtime.empty((4,), 'float32', tvm.opencl(0))\n"
        "except Exception as err:\n"
        "    print('ERR:' + str(err).strip().splitlines()[-1])\n"
        "else:\n"
        "    raise SystemExit('no error')\n"
    )
    proc = run_python(["-c", script], {"OCL_ICD_VENDORS": str(vendors)})
    line = [l for l in proc.stdout.splitlines() if l.startswith("ERR:")][0]
    assert "OpenCL" in line and "platform" in line, line


if __name__ == "__main__":
    tvm.testing.main()
