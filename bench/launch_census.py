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
"""Launch census of a compiled network: every OpenCL launch one call of ``main`` makes, by kind.

The census reads the compiled module, not a device:

* the VM executable's code of ``main`` (``VMExecutable.as_text()``): the functions it calls, in
  order, once per call (``main`` has no branches or loops; a function that ``main`` calls in
  turn is followed);
* the OpenCL source of the library: how many kernels each PrimFunc launches (TVM names the
  kernels of PrimFunc ``f`` ``f_kernel``, ``f_kernel_1``, ...);
* the PrimFuncs as the Relax pipeline leaves them after legalization (``primfunc_kinds``,
  recorded during the build): each PrimFunc's kind from its blocks (``kind_of_primfunc``).
  A called function the build did not record is classified by its name (``kind_of_name``).

``runtime.TVMTensorCopyFromTo`` and ``vm.builtin.to_device`` calls are the VM's copies between
tensors (a buffer to an image, a scope to another): they enqueue a copy, not a kernel, so they
are counted apart (``runtime_copies``) and the kernel launches alone add up to what
``runtime.opencl.counters()`` calls ``kernel_launches``.

``python bench/launch_census.py collect [--work build/bench/work] --out CSV`` writes the census
that ``bench/run.py build`` recorded in each build's meta JSON (``census``) as one CSV row per
model and configuration; ``bench/report.py`` reads the newest ``bench/results/*-census.csv``.
"""

from __future__ import annotations

import argparse
import csv
import json
import pathlib
import re
import sys
from typing import Dict, Iterable, List, Optional, Tuple

#: The kinds of a launch, in the report's order.
KINDS = (
    "conv",
    "depthwise conv",
    "dense",
    "layout transform",
    "elementwise",
    "pad",
    "reduction/pooling",
    "copy",
    "other",
)
#: VM calls that copy between tensors instead of launching a kernel.
RUNTIME_COPIES = ("runtime.TVMTensorCopyFromTo", "vm.builtin.to_device")
#: The Adreno schedule rules' block annotation (``tvm.s_tir.dlight.adreno.base``) by kind; a
#: pooling block scheduled by MetaSchedule's rule carries ``meta_schedule.pool_*``.
RULE_KINDS = {
    "adreno.conv2d_NCHWc": "conv",
    "adreno.group_conv2d_NCHWc": "conv",
    "adreno.conv2d_transpose_NCHWc": "conv",
    "adreno.winograd_input_transform": "conv",
    "adreno.winograd_batched_product": "conv",
    "adreno.winograd_output_transform": "conv",
    "adreno.depthwise_conv2d_NCHWc": "depthwise conv",
    "adreno.layout_transform": "layout transform",
}
SCHEDULE_RULE = "schedule_rule"
_CALL_RE = re.compile(r"^\s*call\s+(\S+)\s+in:", re.M)
_KERNEL_RE = re.compile(r"__kernel\s+void\s+(\w+)\s*\(")
_KERNEL_SUFFIX_RE = re.compile(r"_kernel(_\d+)?$")


# ----------------------------------------------------------------------------------------
# The compiled library (runtime API only: this part also runs from a bundle)
# ----------------------------------------------------------------------------------------


def function_code(text: str) -> Dict[str, str]:
    """The code of each VM function in ``VMExecutable.as_text()``, by name."""
    code: Dict[str, str] = {}
    for chunk in re.split(r"^@", text, flags=re.M)[1:]:
        header, _, body = chunk.partition("\n")
        if header.rstrip().endswith(":"):
            code[header.rstrip()[:-1]] = body
    return code


def called_functions(text: str, entry: str = "main") -> List[str]:
    """The functions one call of ``entry`` calls, in order, following the VM functions it
    calls (``f[name]`` arguments, as ``cached_static_alloc`` takes its allocator, are run
    once and not followed)."""
    code = function_code(text)
    if entry not in code:
        raise ValueError(f"the executable has no function {entry!r} (has: {', '.join(code)})")
    calls: List[str] = []

    def walk(name: str, depth: int):
        for callee in _CALL_RE.findall(code[name]):
            if callee in code and depth < 16:
                walk(callee, depth + 1)
            else:
                calls.append(callee)

    walk(entry, 0)
    return calls


def kernels_per_function(opencl_source: str) -> Dict[str, int]:
    """How many OpenCL kernels each PrimFunc has: ``f_kernel``, ``f_kernel_1``, ... are ``f``'s
    (a kernel repeated in several modules of the library counts once)."""
    counts: Dict[str, int] = {}
    for kernel in set(_KERNEL_RE.findall(opencl_source)):
        func = _KERNEL_SUFFIX_RE.sub("", kernel)
        counts[func] = counts.get(func, 0) + 1
    return counts


def kind_of_name(name: str) -> str:
    """A kernel's kind from its (fused) name alone: the fallback where no PrimFunc was
    recorded (the first op of a fused name is the one that names the kernel's work)."""
    if "layout_transform" in name:
        return "layout transform"
    if "depthwise" in name or "group_conv" in name:
        return "depthwise conv"
    if "conv2d" in name or "winograd" in name:
        return "conv"
    if "matmul" in name or "dense" in name:
        return "dense"
    if "pool" in name or any(op in name for op in ("mean", "sum", "softmax", "max_")):
        return "reduction/pooling"
    if re.search(r"(^|_)pad\d*(_|$)", name):
        return "pad"
    if any(op in name for op in ("reshape", "concatenate", "strided_slice", "copy", "squeeze")):
        return "copy"
    if any(op in name for op in ("add", "multiply", "maximum", "minimum", "relu", "clip")):
        return "elementwise"
    return "other"


_LINE_RE = re.compile(r"^\s*call\s+(\S+)\s+in:(.*?)dst:\s*(%\w+)\s*$")
_RET_RE = re.compile(r"^\s*ret\s+(%\w+)")
#: Kinds that only move, pad or reshape data: a layout transform that reads ``main``'s
#: arguments through these alone is at the input, one whose result reaches ``main``'s result
#: through them alone at the output.
_DATA_MOVES = ("layout transform", "copy", "pad")
#: The positions of ``transform_positions`` and the CSV column of each.
POSITIONS = ("input", "output", "inside")
POSITION_FIELDS = {position: f"transforms_{position}" for position in POSITIONS}


def transform_positions(text: str, kind_of: Dict[str, str], entry: str = "main") -> Dict[str, int]:
    """Where each layout transform that ``entry`` calls sits: ``input`` (it reads only what
    ``entry`` was given, through data moves and VM builtins), ``output`` (its result reaches
    ``entry``'s result through data moves and VM builtins alone, never a computing kernel) or
    ``inside``.

    Parameters
    ----------
    text : str
        ``VMExecutable.as_text()`` of the compiled module.
    kind_of : Dict[str, str]
        The kind of every kernel-launching function ``entry`` calls (other callees are VM
        builtins: their result is read as made of their arguments).

    Returns
    -------
    positions : Dict[str, int]
        Calls of layout transforms per position.
    """
    lines = function_code(text).get(entry, "").splitlines()
    calls = []  # (callee, inputs, outputs) in program order
    for line in lines:
        ret = _RET_RE.match(line)
        if ret:
            calls.append(("<ret>", [ret.group(1)], []))
            continue
        match = _LINE_RE.match(line)
        if not match:
            continue
        callee, args, dst = match.group(1), re.findall(r"%\w+", match.group(2)), match.group(3)
        if callee in kind_of:  # destination passing: the last argument is written
            calls.append((callee, args[:-1], args[-1:]))
        else:
            calls.append((callee, args, [] if dst == "%void" else [dst]))
    writer: Dict[str, int] = {}  # register -> index of the call that last wrote it
    sources = []  # per call, the calls that wrote its inputs
    for index, (_, inputs, outputs) in enumerate(calls):
        sources.append({writer[r] for r in inputs if r in writer})
        for reg in outputs:
            writer[reg] = index
    readers: Dict[int, set] = {}
    for index, found in enumerate(sources):
        for source in found:
            readers.setdefault(source, set()).add(index)

    def moves_data(callee: str) -> bool:
        return callee not in kind_of or kind_of[callee] in _DATA_MOVES

    def from_arguments(index: int) -> bool:
        """Whether the inputs of call ``index`` come from ``entry``'s arguments by data moves."""
        return all(moves_data(calls[s][0]) and from_arguments(s) for s in sources[index])

    def forward(index: int) -> Tuple[bool, bool]:
        """(reaches the result, meets a computing kernel) on the paths from call ``index``."""
        reaches = computes = False
        for reader in readers.get(index, ()):
            if calls[reader][0] == "<ret>":
                reaches = True
            elif not moves_data(calls[reader][0]):
                computes = True
            else:
                more = forward(reader)
                reaches, computes = reaches or more[0], computes or more[1]
        return reaches, computes

    positions = dict.fromkeys(POSITIONS, 0)
    for index, (callee, _, _) in enumerate(calls):
        if kind_of.get(callee) != "layout transform":
            continue
        if from_arguments(index):
            positions["input"] += 1
            continue
        reaches, computes = forward(index)
        positions["output" if reaches and not computes else "inside"] += 1
    return positions


def census(text: str, opencl_source: str, kinds: Optional[Dict[str, str]] = None) -> dict:
    """The launches of one call of ``main``.

    Parameters
    ----------
    text : str
        ``VMExecutable.as_text()`` of the compiled module.
    opencl_source : str
        The OpenCL source of the library (its OpenCL modules' ``inspect_source()``).
    kinds : Optional[Dict[str, str]]
        A kind of KINDS per PrimFunc name (``primfunc_kinds`` of the module the build lowered);
        a called PrimFunc missing from it is classified by ``kind_of_name``.

    Returns
    -------
    census : dict
        ``launches`` (kernel launches in all), ``by_kind`` (launches per kind of KINDS),
        ``runtime_copies`` (VM copy calls), ``by_name`` (launches classified by name alone,
        not by structure), ``functions`` (launches per called PrimFunc) and
        ``layout_transforms`` (the calls of layout transforms in ``main`` by position, see
        ``transform_positions``).
    """
    kinds = kinds or {}
    per_function = kernels_per_function(opencl_source)
    by_kind = dict.fromkeys(KINDS, 0)
    functions: Dict[str, int] = {}
    kind_of: Dict[str, str] = {}
    copies = by_name = 0
    for callee in called_functions(text):
        if callee in RUNTIME_COPIES:
            copies += 1
            continue
        launches = per_function.get(callee, 0)
        if not launches:
            continue  # a VM builtin or a host function: no kernel
        kind = kinds.get(callee)
        if kind is None:
            kind, by_name = kind_of_name(callee), by_name + launches
        kind_of[callee] = kind
        by_kind[kind] += launches
        functions[callee] = functions.get(callee, 0) + launches
    return {
        "launches": sum(by_kind.values()),
        "by_kind": by_kind,
        "runtime_copies": copies,
        "by_name": by_name,
        "functions": functions,
        "layout_transforms": transform_positions(text, kind_of),
    }


def census_of_library(executable, kinds: Optional[Dict[str, str]] = None) -> dict:
    """``census`` of a ``tvm.relax.VMExecutable`` (built, or loaded from an exported library)."""
    import module_tree  # pylint: disable=import-outside-toplevel

    source = "".join(m.inspect_source() for m in module_tree.opencl_modules(executable.mod))
    return census(executable.as_text(), source, kinds)


# ----------------------------------------------------------------------------------------
# The PrimFuncs (needs the compiler)
# ----------------------------------------------------------------------------------------


def _blocks(func) -> list:
    """Every block of ``func`` below its root, outer first."""
    from tvm import s_tir  # pylint: disable=import-outside-toplevel

    sch = s_tir.Schedule(func)
    found = []

    def walk(parent):
        for block in sch.get_child_blocks(parent):
            found.append(sch.get(block))
            walk(block)

    walk(sch.get_sblock("root", func_name="main"))
    return found


def _moves_data(expr, constants: List[bool]) -> bool:
    """Whether ``expr`` only moves data: loads, casts, constants and the branches of a
    condition on indices (a pad or a concatenation). Appends True to ``constants`` for each
    constant it may store (a pad's border)."""
    from tvm.ir import Call, TensorLoad  # pylint: disable=import-outside-toplevel
    from tvm.tirx import expr as tir  # pylint: disable=import-outside-toplevel

    if isinstance(expr, TensorLoad):
        return True
    if isinstance(expr, (tir.IntImm, tir.FloatImm)):
        constants.append(True)
        return True
    if isinstance(expr, tir.Cast):
        return _moves_data(expr.value, constants)
    if isinstance(expr, tir.Select):
        return all(_moves_data(v, constants) for v in (expr.true_value, expr.false_value))
    if isinstance(expr, Call) and getattr(expr.op, "name", "").endswith(".if_then_else"):
        return all(_moves_data(v, constants) for v in expr.args[1:])
    return False


def _loads(expr, found: list) -> list:
    """The buffer loads of ``expr`` outside index expressions and conditions."""
    from tvm.ir import Call, TensorLoad  # pylint: disable=import-outside-toplevel

    if isinstance(expr, TensorLoad):
        found.append(expr)
    elif isinstance(expr, Call):
        args = (
            expr.args[1:] if getattr(expr.op, "name", "").endswith(".if_then_else") else expr.args
        )
        for arg in args:
            _loads(arg, found)
    else:
        for field in ("a", "b", "value", "true_value", "false_value"):
            if hasattr(expr, field):
                _loads(getattr(expr, field), found)
    return found


def _region_tensor(region) -> str:
    """The name of the tensor a block's read or write region is of."""
    tensor = region.source if hasattr(region, "source") else region.buffer
    return str(tensor.name)


def _blocked_params(func) -> set:
    """For each tensor parameter of ``func``, whether it is in blocked channels (``NCHW4c``,
    ``OIHW4o``: 5-D or more, innermost 4). A parameter's type carries its shape."""
    blocked = set()
    for param in func.params:
        shape = getattr(param.ty, "shape", None)
        if shape is not None:
            dims = [int(d) if hasattr(d, "value") else -1 for d in shape]
            blocked.add(len(dims) >= 5 and dims[-1] == 4)
    return blocked


def kind_of_primfunc(func) -> str:
    """The kind (of KINDS) of the work a PrimFunc does, from its blocks.

    1. A block's ``schedule_rule`` annotation (the Adreno rules' and MetaSchedule's pooling
       rule): conv, depthwise conv, layout transform, pooling.
    2. A block that reduces: over two inputs a multiply-accumulate, a conv if it reduces
       over three axes or more (channels and a window), a depthwise conv over two (the
       window), a dense over one; over one input a reduction or pooling.
    3. Blocks that only move data: a layout transform where some tensor is in blocked
       channels and another is not, a pad where a constant is stored, else a copy (reshape,
       slice, concatenation).
    4. Arithmetic on loads at the stored element's indices: elementwise; else other (a
       resize or a gather reads at computed indices).
    """
    from tvm.tirx import expr as tir  # pylint: disable=import-outside-toplevel
    from tvm.tirx.stmt import BufferStore  # pylint: disable=import-outside-toplevel

    blocks = _blocks(func)
    for block in blocks:
        rule = str(block.annotations.get(SCHEDULE_RULE, ""))
        if rule in RULE_KINDS:
            return RULE_KINDS[rule]
        if "pool" in rule:
            return "reduction/pooling"
    for block in blocks:
        reduced = sum(1 for iv in block.iter_vars if int(iv.iter_type) == 2)
        if reduced:
            written = {_region_tensor(w) for w in block.writes}
            inputs = {_region_tensor(r) for r in block.reads} - written
            if len(inputs) < 2:
                return "reduction/pooling"
            return "conv" if reduced >= 3 else ("depthwise conv" if reduced == 2 else "dense")
    stores = [b.body for b in blocks if isinstance(b.body, BufferStore)]
    constants: List[bool] = []
    if stores and all(_moves_data(s.value, constants) for s in stores):
        if len(_blocked_params(func)) > 1:
            return "layout transform"
        return "pad" if constants else "copy"
    for store in stores:
        for load in _loads(store.value, []):
            if not all(isinstance(i, (tir.Var, tir.IntImm)) for i in load.indices):
                return "other"
    return "elementwise" if stores else "other"


def primfunc_kinds(mod) -> Dict[str, str]:
    """``kind_of_primfunc`` of every PrimFunc of ``mod``, by name. A PrimFunc whose blocks
    cannot be read is left out (the census then classifies it by its name): the census never
    fails a build."""
    from tvm import tirx  # pylint: disable=import-outside-toplevel

    kinds = {}
    for gvar, func in mod.functions_items():
        if isinstance(func, tirx.PrimFunc):
            try:
                kinds[gvar.name_hint] = kind_of_primfunc(func)
            except Exception:  # pylint: disable=broad-except
                continue
    return kinds


def recorder(kinds: Dict[str, str]):
    """A module pass that changes nothing and fills ``kinds`` with ``primfunc_kinds`` of the
    module it sees (put it in a pipeline after legalization)."""
    import tvm  # pylint: disable=import-outside-toplevel

    @tvm.transform.module_pass(opt_level=0, name="RecordLaunchKinds")
    def _record(mod, _ctx):
        kinds.update(primfunc_kinds(mod))
        return mod

    return _record


# ----------------------------------------------------------------------------------------
# Collect: the census of every build as CSV rows
# ----------------------------------------------------------------------------------------

CSV_FIELDS = ["model", "config", "launches", "runtime_copies", "by_name"]


def csv_field(kind: str) -> str:
    """The CSV column of a kind: ``depthwise conv`` -> ``depthwise_conv``."""
    return re.sub(r"[^a-z]+", "_", kind).strip("_")


#: Configurations on TVM's generic GPU target: their PrimFuncs are recorded after dlight's
#: generic schedules, which fuse a conv's reduced axes, so their kinds would not be right
#: (a 1x1 or 3x3 conv reads as a dense); their launch totals are in results.csv.
GENERIC_CONFIGS = ("b", "c")


def rows_of(metas: Iterable[dict]) -> List[Dict[str, object]]:
    """One CSV row per texture build meta that has a census, sorted by model and
    configuration."""
    rows = []
    for meta in metas:
        got = meta.get("census")
        if not got or meta.get("config") in GENERIC_CONFIGS:
            continue
        row = {k: got.get(k, meta.get(k, "")) for k in CSV_FIELDS}
        row.update((csv_field(k), got["by_kind"].get(k, 0)) for k in KINDS)
        positions = got.get("layout_transforms", {})
        row.update((field, positions.get(p, "")) for p, field in POSITION_FIELDS.items())
        rows.append(row)
    return sorted(rows, key=lambda r: (str(r["model"]), str(r["config"])))


def main(argv=None) -> int:
    """``collect``: write the builds' censuses as a CSV."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=["collect"])
    root = pathlib.Path(__file__).resolve().parents[1]
    parser.add_argument("--work", type=pathlib.Path, default=root / "build" / "bench" / "work")
    parser.add_argument("--out", type=pathlib.Path, required=True)
    args = parser.parse_args(argv)
    metas = [json.loads(p.read_text()) for p in sorted((args.work / "meta").glob("*.json"))]
    rows = rows_of(metas)
    if not rows:
        print(f"no build in {args.work / 'meta'} recorded a census: run bench/run.py build first")
        return 1
    with open(args.out, "w", newline="", encoding="utf-8") as out:
        fields = CSV_FIELDS + [csv_field(k) for k in KINDS] + list(POSITION_FIELDS.values())
        writer = csv.DictWriter(out, fields)
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {args.out}: {len(rows)} builds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
