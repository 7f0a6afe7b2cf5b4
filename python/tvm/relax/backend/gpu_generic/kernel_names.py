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
"""Keep the names of PrimFuncs, and so of the GPU kernels made from them, short.

FuseOps names a fused function after every operator it holds, so a long elementwise chain
after a convolution gives a name of several hundred characters.  SplitHostDevice names each
kernel ``<PrimFunc name>_kernel[_N]``, and drivers put that name in places with their own
limits: PoCL builds a file name from it and aborts the process when it is over 255 characters.
"""

import hashlib

import tvm
from tvm import relax, tirx

# A kernel name is the PrimFunc name plus "_kernel" or "_kernel_<N>"; 64 keeps the whole well
# under the 255-byte file names of PoCL's cache and leaves a readable prefix.
DEFAULT_MAX_NAME_LENGTH = 64
_HASH_CHARS = 8  # 32 bits of SHA-1: distinct for the few hundred PrimFuncs of a module


def bounded_name(name: str, max_length: int = DEFAULT_MAX_NAME_LENGTH) -> str:
    """``name`` itself when it fits, else its first characters, ``_`` and a hash of all of it.

    Parameters
    ----------
    name : str
        The function name.
    max_length : int
        The longest name returned; at least ``_HASH_CHARS + 2``.

    Returns
    -------
    str
        A name of at most ``max_length`` characters, the same for the same ``name``.
    """
    if len(name) <= max_length:
        return name
    digest = hashlib.sha1(name.encode("utf-8")).hexdigest()[:_HASH_CHARS]
    prefix = name[: max_length - _HASH_CHARS - 1].rstrip("_")
    return f"{prefix}_{digest}"


@relax.expr_functor.mutator
class _GlobalVarRenamer(relax.PyExprMutator):  # pylint: disable=abstract-method
    """Replaces references to the renamed PrimFuncs in a Relax function."""

    def __init__(self, mod, renamed):
        super().__init__(mod)
        self.renamed = renamed

    def visit_global_var_(self, op):  # pylint: disable=arguments-renamed
        return self.renamed.get(op, op)


def _global_symbol(func: tirx.PrimFunc) -> str:
    """The function's ``global_symbol`` attribute, or an empty string (a private function)."""
    symbol = func.attrs.get("global_symbol") if func.attrs is not None else None
    return str(symbol) if symbol is not None else ""


@tvm.transform.module_pass(opt_level=0, name="BoundKernelNames")
class BoundKernelNames:
    """Rename every PrimFunc whose name is longer than ``max_length`` to
    :func:`bounded_name` of it, and its callers with it.

    A ``global_symbol`` attribute equal to the old name follows the new one; any other
    ``global_symbol`` (a name chosen by the user) is kept when it fits and bounded like a name
    when it does not, because the module's functions end up named by their symbols and the
    kernels after them.  Relax functions keep their names.

    Parameters
    ----------
    max_length : int
        The longest PrimFunc name left in the module.
    """

    def __init__(self, max_length: int = DEFAULT_MAX_NAME_LENGTH):
        self.max_length = max_length

    def transform_module(self, mod: tvm.IRModule, _ctx) -> tvm.IRModule:
        """Rename the long PrimFuncs of ``mod``."""
        taken = {gvar.name_hint for gvar in mod.get_global_vars()}
        long_names = [
            (gvar, func)
            for gvar, func in mod.functions_items()
            if isinstance(func, tirx.PrimFunc)
            and max(len(gvar.name_hint), len(_global_symbol(func))) > self.max_length
        ]
        if not long_names:
            return mod
        kept = dict(mod.functions_items())
        renamed = {}
        for gvar, func in long_names:
            del kept[gvar]
            name = self._bound(gvar.name_hint, taken)
            symbol = _global_symbol(func)
            if symbol == gvar.name_hint:
                func = func.with_attr("global_symbol", name)
            elif len(symbol) > self.max_length:
                func = func.with_attr("global_symbol", self._bound(symbol, taken))
            renamed[gvar] = (name, func)
        # The BlockBuilder gives each new GlobalVar the type of its PrimFunc.
        builder = relax.BlockBuilder(
            tvm.IRModule(kept, attrs=mod.attrs, global_infos=mod.global_infos)
        )
        new_gvars = {old: builder.add_func(func, name) for old, (name, func) in renamed.items()}
        for gvar, func in kept.items():
            if isinstance(func, relax.Function):
                builder.update_func(gvar, _GlobalVarRenamer(mod, new_gvars).visit_expr(func))
        return builder.finalize()

    def _bound(self, name: str, taken: set) -> str:
        """``name`` when it fits, else its unique :func:`bounded_name`."""
        if len(name) <= self.max_length:
            return name
        return self._unique(bounded_name(name, self.max_length), taken)

    def _unique(self, name: str, taken: set) -> str:
        """``name``, or with a counter in place of its last characters when it is taken."""
        candidate, counter = name, 0
        while candidate in taken:
            counter += 1
            suffix = f"_{counter}"
            candidate = name[: self.max_length - len(suffix)] + suffix
        taken.add(candidate)
        return candidate
