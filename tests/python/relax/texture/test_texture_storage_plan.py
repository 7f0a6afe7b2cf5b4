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
"""Texture tensors planned as image storage (PlanTextureStorage), and what an inference costs.

The IR tests check the plan: each texture temporary is allocated from ``R.vm.alloc_storage`` of
an image ``[layers, height, width, 4]`` in ``global.texture``, a later tensor with the same image
reuses it once the previous one is dead, and tensors that escape stay with
``StaticPlanBlockMemory``.  The device tests run a ResNet block and a MobileNet block with
constant weights and read ``runtime.opencl.counters()`` around a steady-state call (the third):
no buffer <-> image copy, no OpenCL object created, no host <-> device transfer (inputs are
already on the device, the weights are constants uploaded once), against a LLVM reference on
fresh random inputs.
"""

import numpy as np
import pytest

import tvm
from tvm import relax
from tvm.relax.backend.adreno.transform import LowerVDeviceCopy, PlanTextureStorage
from tvm.relax.backend.adreno.transform.lower_vdevice_copy import COPY_FUNC
from tvm.relax.op import vm as vm_op

import texture_testing as tt

_VM_ALLOC_STORAGE = tvm.ir.Op.get("relax.vm.alloc_storage")
_VM_ALLOC_TENSOR = tvm.ir.Op.get("relax.vm.alloc_tensor")
TEX = "global.texture"


# ----------------------------------------------------------------------------------------
# The plan, on hand-written IR (the form CallTIRRewrite leaves: alloc_tensor, then a kernel)
# ----------------------------------------------------------------------------------------


def _kernel(bb, *args):
    bb.emit(relax.Call(relax.ExternFunc("test.kernel"), list(args)))


def _alloc(shape, scope=TEX, device=1):
    return relax.op.builtin.alloc_tensor(relax.ShapeExpr(shape), "float32", device, scope)


def _tensor(storage, shape, device=1):
    return relax.op.memory.alloc_tensor(storage, 0, relax.ShapeExpr(shape), "float32", device)


def _image(layers, height, width, device=1):
    return vm_op.alloc_storage(relax.ShapeExpr([layers, height, width, 4]), device, "float32", TEX)


A = [1, 2, 4, 4, 4]  # global.texture: 4 x 4 pixels, 2 layers
B = [1, 1, 4, 8, 4]  # 8 x 4 pixels, 1 layer


def _before():
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType(A, "float32"))
    with bb.function("main", [x]):
        t0 = bb.emit(_alloc(A))
        _kernel(bb, x, t0)
        t1 = bb.emit(_alloc(A))
        _kernel(bb, t0, t1)  # last use of t0
        t2 = bb.emit(_alloc(A))  # takes t0's image
        _kernel(bb, t1, t2)  # last use of t1
        t3 = bb.emit(_alloc(B))  # another image
        _kernel(bb, t2, t3)  # last use of t2
        t4 = bb.emit(_alloc(A))  # the image freed last (t0's, via t2)
        _kernel(bb, t3, t4)
        t5 = bb.emit(_alloc(B))  # returned: left to StaticPlanBlockMemory
        _kernel(bb, t4, t5)
        out = bb.emit(_alloc([1, 8, 4, 4], scope="global", device=0))  # a buffer
        _kernel(bb, t5, out)
        bb.emit_func_output(relax.Tuple([out, t5]))
    return bb.get()


def _expected():
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType(A, "float32"))
    with bb.function("main", [x]):
        image_a = bb.emit(_image(2, 4, 4))
        t0 = bb.emit(_tensor(image_a, A))
        _kernel(bb, x, t0)
        image_b = bb.emit(_image(2, 4, 4))
        t1 = bb.emit(_tensor(image_b, A))
        _kernel(bb, t0, t1)
        t2 = bb.emit(_tensor(image_a, A))
        _kernel(bb, t1, t2)
        image_c = bb.emit(_image(1, 4, 8))
        t3 = bb.emit(_tensor(image_c, B))
        _kernel(bb, t2, t3)
        t4 = bb.emit(_tensor(image_a, A))
        _kernel(bb, t3, t4)
        t5 = bb.emit(_alloc(B))
        _kernel(bb, t4, t5)
        out = bb.emit(_alloc([1, 8, 4, 4], scope="global", device=0))
        _kernel(bb, t5, out)
        bb.emit_func_output(relax.Tuple([out, t5]))
    return bb.get()


def test_plan_reuses_images_of_dead_tensors():
    after = PlanTextureStorage()(_before())
    tvm.ir.assert_structural_equal(after, _expected())


def test_plan_leaves_tensors_used_by_other_calls():
    """A texture tensor handed to something that may keep it (here a Relax function call)
    is not planned: its storage could be reused while still referenced."""
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType(A, "float32"))
    y = relax.Var("y", relax.TensorType(A, "float32"))
    with bb.function("keep", [y]):
        bb.emit_func_output(y)
    keep = bb.get().get_global_var("keep")
    with bb.function("main", [x]):
        t0 = bb.emit(_alloc(A))
        _kernel(bb, x, t0)
        kept = bb.emit(relax.Call(keep, [t0]))
        bb.emit_func_output(kept)
    before = bb.get()
    tvm.ir.assert_structural_equal(PlanTextureStorage()(before), before)


def _with_vdevices(build):
    """A module from ``build(bb, vdevices)`` with an OpenCL buffer and texture vdevice."""
    target = tvm.target.Target("opencl")
    vdevices = [relax.VDevice(target, 0, "global"), relax.VDevice(target, 0, TEX)]
    context = tvm.IRModule()
    context.update_global_info("vdevice", vdevices)
    bb = relax.BlockBuilder(context)
    build(bb, vdevices)
    return bb.get()


def test_scope_change_copies_into_an_allocation():
    """to_vdevice between two scopes of one device: a tensor of the destination scope that the
    planners see, and a copy that does not wait (vm.builtin.to_device would)."""

    def before(bb, vdevices):
        x = relax.Var("x", relax.TensorType(A, "float32", vdevices[0]))
        with bb.function("main", [x]):
            y = bb.emit(relax.op.to_vdevice(x, vdevices[1]))
            _kernel(bb, y, x)
            bb.emit_func_output(x)

    def expected(bb, vdevices):
        x = relax.Var("x", relax.TensorType(A, "float32", vdevices[0]))
        with bb.function("main", [x]):
            alloc = _alloc(A)
            texture_ty = relax.TensorType(A, "float32", vdevices[1])
            y = bb.emit(relax.Call(alloc.op, alloc.args, alloc.attrs, [texture_ty]))
            bb.emit(relax.Call(relax.ExternFunc(COPY_FUNC), [x, y]))
            _kernel(bb, y, x)
            bb.emit_func_output(x)

    after = LowerVDeviceCopy()(_with_vdevices(before))
    tvm.ir.assert_structural_equal(after, _with_vdevices(expected))


# ----------------------------------------------------------------------------------------
# The pipeline: every texture tensor viewed from image storage of its own geometry
# ----------------------------------------------------------------------------------------


def _const(rng, shape, scale):
    return relax.const((rng.uniform(-1.0, 1.0, size=shape) * scale).astype("float32"))


def _conv(nb, rng, x, out_channels, kernel, groups=1, relu=True):
    in_channels = int(x.ty.shape[1])
    fan_in = in_channels // groups * kernel * kernel
    w = _const(rng, (out_channels, in_channels // groups, kernel, kernel), 1.0 / np.sqrt(fan_in))
    y = nb.emit(relax.op.nn.conv2d(x, w, padding=kernel // 2, groups=groups))
    y = nb.emit(relax.op.add(y, _const(rng, (1, out_channels, 1, 1), 0.5)))
    return nb.emit(relax.op.nn.relu(y)) if relu else y


def resnet_block(nb, rng):
    """A stem conv, then a basic block: conv-relu-conv, identity shortcut, relu."""
    x = _conv(nb, rng, nb.input((1, 16, 16, 16)), 16, 3)
    y = _conv(nb, rng, x, 16, 3)
    y = _conv(nb, rng, y, 16, 3, relu=False)
    return nb.emit(relax.op.nn.relu(nb.emit(relax.op.add(y, x))))


def mobilenet_block(nb, rng):
    """An inverted residual: 1x1 expand, depthwise 3x3, 1x1 project, each ReLU6 but the last,
    identity shortcut."""
    x = nb.input((1, 16, 16, 16))
    y = nb.emit(relax.op.clip(_conv(nb, rng, x, 64, 1, relu=False), 0, 6))
    y = nb.emit(relax.op.clip(_conv(nb, rng, y, 64, 3, groups=64, relu=False), 0, 6))
    y = _conv(nb, rng, y, 16, 1, relu=False)
    return nb.emit(relax.op.add(y, x))


def branch_block(nb, rng):
    """A conv result read by a depthwise conv (texture) and by a permute_dims (buffers): the
    producer writes a buffer and a to_vdevice copies it into a texture."""
    y = _conv(nb, rng, nb.input((1, 16, 16, 16)), 16, 3)
    a = _conv(nb, rng, y, 16, 3, groups=16)
    return nb.emit(relax.op.permute_dims(y, [0, 2, 3, 1])), a


BLOCKS = {
    "resnet_block": resnet_block,
    "mobilenet_block": mobilenet_block,
    "branch_block": branch_block,
}


def _build_block(name, seed):
    return tt.build_network(lambda nb: BLOCKS[name](nb, np.random.default_rng(seed)), "float32")


@tvm.instrument.pass_instrument
class _KeepFinalModule:
    """The Relax module after the Adreno pipeline's last pass (VM-lowered)."""

    def __init__(self):
        self.mod = None

    def run_after_pass(self, mod, info):
        if info.name == "AllocStorageOnPhysicalDevice":
            self.mod = mod


def _vm_allocations(mod):
    """(storages, texture tensors) of ``main``: storage var -> (shape, dtype, scope), and for
    each tensor allocated with a texture scope the storage var it comes from."""
    vdevices = list(mod.global_infos["vdevice"])
    storages, textures = {}, []
    for block in mod["main"].body.blocks:
        for binding in block.bindings:
            value = binding.value
            if not isinstance(value, relax.Call):
                continue
            if value.op.same_as(_VM_ALLOC_STORAGE):
                shape = [int(d) for d in value.args[0].values]
                storages[binding.var] = (shape, str(value.args[2].value), str(value.args[3].value))
            elif value.op.same_as(_VM_ALLOC_TENSOR):
                scope = str(vdevices[int(value.args[4].value)].memory_scope)
                if scope.startswith(TEX):
                    textures.append((binding.var.name, value.args[0]))
    return storages, textures


def _packed_calls(mod):
    """The names of the packed functions ``main`` calls, in order."""
    names = []
    for block in mod["main"].body.blocks:
        for binding in block.bindings:
            value = binding.value
            if isinstance(value, relax.Call) and isinstance(value.op, relax.ExternFunc):
                names.append(str(value.op.global_symbol))
    return names


@pytest.mark.parametrize("name", list(BLOCKS))
def test_pipeline_allocates_textures_from_images(name):
    keep = _KeepFinalModule()
    with tvm.transform.PassContext(opt_level=3, instruments=[keep]):
        tt.build_texture(_build_block(name, seed=0))
    storages, textures = _vm_allocations(keep.mod)
    assert textures, "no texture tensor in the lowered module"
    packed = _packed_calls(keep.mod)
    assert "vm.builtin.to_device" not in packed, "a scope change still allocates and waits"
    if name == "branch_block":
        assert packed.count(COPY_FUNC) == 1, packed
    images = set()
    for tensor, storage in textures:
        shape, dtype, scope = storages[storage]
        assert scope == TEX and dtype == "float32" and len(shape) == 4 and shape[-1] == 4, (
            f"{tensor} is a view of storage {shape} {dtype} {scope!r}, not of an image"
        )
        images.add(storage)
    if name == "resnet_block":
        # The block's first conv writes into the image of the packed input, dead once the stem
        # conv has read it (the shortcut keeps the stem's result, not the input).
        assert len(images) < len(textures), f"{len(textures)} texture tensors, {len(images)} images"


# ----------------------------------------------------------------------------------------
# On the device: a steady-state inference copies nothing and creates nothing
# ----------------------------------------------------------------------------------------


def _counters():
    counters = tvm.get_global_func("runtime.opencl.counters", allow_missing=True)
    assert counters is not None, "the OpenCL runtime has no runtime.opencl.counters()"
    return {str(k): int(v) for k, v in counters().items()}


def _reset_counters():
    tvm.get_global_func("runtime.opencl.reset_counters")()


@pytest.mark.requires_opencl
@pytest.mark.parametrize("name", list(BLOCKS))
def test_steady_state_inference_copies_nothing(name, rng):
    tt.require_device("float32")
    seed = int(rng.integers(1 << 30))
    mod = _build_block(name, seed)
    ex = tt.build_texture(mod)
    dev = tt.tvm_device()
    vm = relax.VirtualMachine(ex, dev)
    reference = relax.VirtualMachine(tt.build_llvm(mod), tvm.cpu())
    for call in range(3):
        data = tt.random_inputs(mod, rng)[0]
        x = tvm.runtime.tensor(data, dev)
        dev.sync()
        _reset_counters()
        out = vm["main"](x)
        counts = _counters()  # what the call enqueued and waited for, before our own sync
        dev.sync()
        tt.assert_close(
            tt._to_numpy(out),  # pylint: disable=protected-access
            tt._to_numpy(reference["main"](tvm.runtime.tensor(data))),  # pylint: disable=protected-access
            "float32",
            context=f"{name} call {call} on {tt.opencl_device().label}",
        )
        if call < 2:
            continue
        waste = {
            key: counts[key]
            for key in (
                "host_device_copies",
                "queue_finishes",
                "buffers_created",
                "images_created",
                "programs_built",
                "kernels_created",
            )
            if counts.get(key, 0)
        }
        assert not waste, f"{name}: a steady-state inference on {tt.opencl_device().label} {waste}"
        # Only the branch changes scope (one buffer -> image copy); kernels pass textures on.
        copies = 1 if name == "branch_block" else 0
        assert counts["buffer_image_copies"] == copies, counts
        assert counts["kernel_launches"] > 0, counts
