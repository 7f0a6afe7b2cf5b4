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
# pylint: disable=invalid-name,missing-docstring,no-self-argument,not-callable
"""Tests of relax.backend.gpu_generic.BoundKernelNames and bounded_name.

A PrimFunc name longer than the bound becomes a readable prefix of it and a short hash of the
whole name; distinct long names stay distinct, short names and Relax functions keep theirs,
the callers and a ``global_symbol`` equal to the old name follow.  The GPU pipelines run the
pass, so the OpenCL kernels of a long fused elementwise chain have bounded names.
"""

import re

import numpy as np
import pytest

import tvm
import tvm.testing
from tvm.relax.backend.gpu_generic import BoundKernelNames
from tvm.relax.backend.gpu_generic.kernel_names import DEFAULT_MAX_NAME_LENGTH, bounded_name
from tvm.script import ir as I
from tvm.script import relax as R
from tvm.script import tirx as T

# Two names as FuseOps makes them, equal in their first 67 characters.
LONG_NAME = "fused_conv2d_add_multiply_add_sigmoid_multiply_add_clip_divide_relu"
LONG_NAME_6 = LONG_NAME + "6"

HASH_SUFFIX = re.compile(r"_[0-9a-f]{8}$")


def _renamed(mod, renames):
    """``mod`` parsed again from its TVMScript with whole identifiers replaced.

    Parameters
    ----------
    mod : tvm.IRModule
        The module to print.
    renames : Dict[str, str]
        Old name -> new name, replaced where the old name is a whole word of the script.

    Returns
    -------
    mod : tvm.IRModule
        The module the edited script describes.
    """
    script = mod.script()
    for old, new in renames.items():
        script = re.sub(rf"\b{re.escape(old)}\b", new, script)
    return tvm.script.from_source(script)


def _prim_func_names(mod):
    return {gv.name_hint for gv, f in mod.functions_items() if isinstance(f, tvm.tirx.PrimFunc)}


def _assert_bounded(new_name, old_name, max_length=DEFAULT_MAX_NAME_LENGTH):
    """``new_name`` fits, starts with as much of ``old_name`` as fits, and ends with a hash."""
    assert len(new_name) <= max_length, new_name
    assert HASH_SUFFIX.search(new_name), new_name
    prefix = new_name[: -len("_01234567")]
    assert old_name.startswith(prefix), new_name
    # only underscores may be dropped at the cut
    kept = old_name[: max_length - len("_01234567")]
    assert prefix == kept.rstrip("_"), new_name


def _two_long_functions():
    """``main`` calling the public PrimFunc ``LONG_NAME`` and the private ``LONG_NAME_6``."""

    @I.ir_module
    class Module:
        @T.prim_func
        def fused_conv2d_add_multiply_add_sigmoid_multiply_add_clip_divide_relu(
            a: T.Buffer((8,), "float32"), b: T.Buffer((8,), "float32")
        ):
            for i in range(8):
                b[i] = a[i] + T.float32(1)

        @T.prim_func(private=True)
        def fused_conv2d_add_multiply_add_sigmoid_multiply_add_clip_divide_relu6(
            a: T.Buffer((8,), "float32"), b: T.Buffer((8,), "float32")
        ):
            for i in range(8):
                b[i] = a[i] * T.float32(2)

        @R.function
        def main(x: R.Tensor((8,), "float32")) -> R.Tensor((8,), "float32"):
            cls = Module
            with R.dataflow():
                y = R.call_tir(
                    cls.fused_conv2d_add_multiply_add_sigmoid_multiply_add_clip_divide_relu,
                    (x,),
                    out_ty=R.Tensor((8,), "float32"),
                )
                z = R.call_tir(
                    cls.fused_conv2d_add_multiply_add_sigmoid_multiply_add_clip_divide_relu6,
                    (y,),
                    out_ty=R.Tensor((8,), "float32"),
                )
                R.output(z)
            return z

    return Module


def test_bounded_name_keeps_names_that_fit():
    assert bounded_name("fused_add_relu") == "fused_add_relu"
    at_the_bound = "f" * DEFAULT_MAX_NAME_LENGTH
    assert bounded_name(at_the_bound) == at_the_bound


@pytest.mark.parametrize("max_length", [16, 40, DEFAULT_MAX_NAME_LENGTH])
def test_bounded_name_is_a_prefix_and_a_hash(max_length):
    new_name = bounded_name(LONG_NAME, max_length)
    _assert_bounded(new_name, LONG_NAME, max_length)
    assert bounded_name(LONG_NAME, max_length) == new_name  # the same for the same name


def test_bounded_name_drops_underscores_at_the_cut():
    # the default bound keeps the first 64 - 9 characters: the last two are underscores here
    kept = DEFAULT_MAX_NAME_LENGTH - len("_01234567")
    name = "x" * (kept - 2) + "__" + "y" * 40
    new_name = bounded_name(name)
    _assert_bounded(new_name, name)
    assert "__" not in new_name


def test_bounded_names_of_names_equal_up_to_the_cut_differ():
    assert bounded_name(LONG_NAME) != bounded_name(LONG_NAME_6)
    assert bounded_name(LONG_NAME)[:-8] == bounded_name(LONG_NAME_6)[:-8]


def test_long_prim_funcs_are_renamed_with_their_callers():
    """The public function's global_symbol follows its name; the private one stays without."""
    before = _two_long_functions()
    after = BoundKernelNames()(before)
    new_names = _prim_func_names(after)
    assert len(new_names) == 2
    assert all(len(name) <= DEFAULT_MAX_NAME_LENGTH for name in new_names)
    renames = {LONG_NAME: bounded_name(LONG_NAME), LONG_NAME_6: bounded_name(LONG_NAME_6)}
    assert new_names == set(renames.values())
    for old, new in renames.items():
        _assert_bounded(new, old)
    assert after[renames[LONG_NAME]].attrs["global_symbol"] == renames[LONG_NAME]
    assert "global_symbol" not in after[renames[LONG_NAME_6]].attrs
    tvm.ir.assert_structural_equal(after, _renamed(before, renames))


def test_short_names_and_relax_functions_are_kept():
    @I.ir_module
    class Module:
        @T.prim_func
        def add_one(a: T.Buffer((8,), "float32"), b: T.Buffer((8,), "float32")):
            for i in range(8):
                b[i] = a[i] + T.float32(1)

        @R.function
        def main_of_a_model_whose_relax_function_name_is_longer_than_the_bound_of_prim_funcs(
            x: R.Tensor((8,), "float32"),
        ) -> R.Tensor((8,), "float32"):
            cls = Module
            y = R.call_tir(cls.add_one, (x,), out_ty=R.Tensor((8,), "float32"))
            return y

    tvm.ir.assert_structural_equal(BoundKernelNames()(Module), _renamed(Module, {}))


@T.prim_func
def add_one(a: T.Buffer((8,), "float32"), b: T.Buffer((8,), "float32")):
    for i in range(8):
        b[i] = a[i] + T.float32(1)


def test_user_global_symbol_is_kept():
    """A global_symbol other than the function's name was chosen by the user: it stays, and
    the module's invariant (a public function is named by its global_symbol) names it."""
    func = add_one.with_attr("global_symbol", "my_kernel")
    after = BoundKernelNames()(tvm.IRModule({tvm.ir.GlobalVar(LONG_NAME): func}))
    assert _prim_func_names(after) == {"my_kernel"}
    tvm.ir.assert_structural_equal(after["my_kernel"], func)


def test_long_user_global_symbol_is_bounded():
    """A long ``global_symbol`` other than the name is bounded too: the module's functions
    end up named by their symbols (BlockBuilder.finalize), and the kernels after them."""
    func = add_one.with_attr("global_symbol", LONG_NAME_6)
    after = BoundKernelNames()(tvm.IRModule({tvm.ir.GlobalVar(LONG_NAME): func}))
    (name,) = _prim_func_names(after)
    assert name == bounded_name(LONG_NAME_6), name
    tvm.ir.assert_structural_equal(
        after[name].without_attr("global_symbol"), func.without_attr("global_symbol")
    )


def test_bounded_name_taken_by_another_function_is_made_unique():
    """A function already named like the bounded name keeps it; the long one gets another."""
    taken = bounded_name(LONG_NAME)
    before = _renamed(_two_long_functions(), {LONG_NAME_6: taken})
    after = BoundKernelNames()(before)
    names = _prim_func_names(after)
    assert taken in names
    (new_name,) = names - {taken}
    assert len(new_name) <= DEFAULT_MAX_NAME_LENGTH
    # the function that held the name is the one that multiplies by 2
    tvm.ir.assert_structural_equal(after[taken], before[taken])
    tvm.ir.assert_structural_equal(
        after[new_name].without_attr("global_symbol"),
        before[LONG_NAME].without_attr("global_symbol"),
    )


def test_max_length_of_the_pass():
    after = BoundKernelNames(max_length=20)(_two_long_functions())
    names = _prim_func_names(after)
    assert len(names) == 2
    for name in names:
        assert len(name) <= 20
    assert {name[: -len("_01234567")] for name in names} == {LONG_NAME[:11]}


@I.ir_module
class ElementwiseChain:
    """Twelve elementwise ops that FuseOps fuses into one function of a 110-character name."""

    @R.function
    def main(x: R.Tensor((1, 8, 4, 4), "float32"), y: R.Tensor((1, 8, 4, 4), "float32")):
        with R.dataflow():
            a = R.add(x, y)
            b = R.multiply(a, y)
            c = R.subtract(b, x)
            d = R.tanh(c)
            e = R.sigmoid(d)
            f = R.maximum(e, y)
            g = R.minimum(f, x)
            h = R.add(g, x)
            i = R.multiply(h, y)
            j = R.subtract(i, y)
            k = R.negative(j)
            out = R.abs(k)
            R.output(out)
        return out


def _chain_reference(x, y):
    """numpy's value of ElementwiseChain."""
    value = (x + y) * y - x
    value = 1 / (1 + np.exp(-np.tanh(value)))
    value = np.minimum(np.maximum(value, y), x)
    return np.abs(-((value + x) * y - y))


def _opencl_kernel_names(executable):
    """The names of the ``__kernel`` functions in the OpenCL modules of ``executable``."""
    names = set()

    def visit(module):
        if module.kind == "opencl":
            names.update(re.findall(r"__kernel\s+void\s+(\w+)\s*\(", module.inspect_source()))
        for imported in module.imports:
            visit(imported)

    visit(executable.mod)
    return names


TARGETS = ["opencl", "qcom/adreno-opencl-texture"]


@pytest.mark.parametrize("target", TARGETS)
def test_opencl_kernel_names_are_bounded(target):
    """SplitHostDevice appends ``_kernel``: a PrimFunc name within the bound keeps the kernel
    name within the bound plus that suffix."""
    names = _opencl_kernel_names(tvm.compile(ElementwiseChain, target=tvm.target.Target(target)))
    assert names
    assert all(len(name) <= DEFAULT_MAX_NAME_LENGTH + len("_kernel") for name in names), names
    assert any(name.startswith("fused_add_multiply_subtract_") for name in names), names


@pytest.mark.skipif(not tvm.opencl(0).exist, reason="needs an OpenCL device")
@pytest.mark.parametrize("target", TARGETS)
def test_chain_with_bounded_kernel_name_runs(target):
    executable = tvm.compile(ElementwiseChain, target=tvm.target.Target(target))
    device = tvm.opencl(0)
    rng = np.random.default_rng()
    x, y = (rng.standard_normal((1, 8, 4, 4)).astype("float32") for _ in range(2))
    vm = tvm.relax.VirtualMachine(executable, device)
    out = vm["main"](tvm.runtime.tensor(x, device), tvm.runtime.tensor(y, device))
    tvm.testing.assert_allclose(out.numpy(), _chain_reference(x, y), rtol=1e-5, atol=1e-5)


if __name__ == "__main__":
    tvm.testing.main()
