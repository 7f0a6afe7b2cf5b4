"""How much tolerance each output of a real model of the texture suite needs, over many draws.

The suite compares each model's outputs with the framework's CPU runtime on one fresh random
input per run (``test_texture_models.py``). A bound that holds for most draws but not all fails
a fraction of CI runs. This measures, per output and draw, the atol a comparison at the model's
rtol needs, as a share of the output's scale (the suite's own measure), for the texture build on
the OpenCL device, the LLVM build and, for TFLite models, LiteRT's builtin kernels (the reference
is LiteRT's XNNPACK path): how far the framework moves from itself tells float32 noise from a
wrong kernel. It prints q90, q99 and the largest need per output beside the suite's bound.

Run by ``python -m adreno_ws model-margins MODEL --draws N`` (in the workspace's venv, on the
device ``TVM_OPENCL_DEVICE`` selects).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

SUITE = Path(__file__).resolve().parents[2] / "tests" / "python" / "relax" / "texture"


def atol_needed(actual, desired, rtol: float, output_range: float = 0.0) -> float:
    """The smallest atol, as a share of the output's scale (its largest absolute ``desired``
    value, or ``output_range`` where larger), for which ``abs(actual - desired) <= atol * scale +
    rtol * abs(desired)`` holds everywhere (inf where ``actual`` has a NaN)."""
    desired = np.asarray(desired, "float64")
    err = np.abs(np.asarray(actual, "float64") - desired)
    if np.isnan(err).any():
        return float("inf")
    scale = max(float(np.max(np.abs(desired))), output_range) or 1.0
    return float(np.max(err - rtol * np.abs(desired))) / scale


def summarize(needs: Sequence[Sequence[float]]) -> Dict[str, np.ndarray]:
    """q90, q99 and max over the draws (rows) of each output's need (columns)."""
    table = np.asarray(needs, "float64")
    return {
        "q90": np.quantile(table, 0.9, axis=0),
        "q99": np.quantile(table, 0.99, axis=0),
        "max": table.max(axis=0),
    }


def _builtin_runner(suite, model) -> Optional[Callable]:
    """LiteRT's builtin kernels for a TFLite model of the suite (None: not a TFLite model, or
    one with a custom operator only the default resolver has)."""
    tflite_file = getattr(model.load, "tflite_file", None)
    if tflite_file is None:
        return None
    interpreter = suite._need("ai_edge_litert.interpreter")  # pylint: disable=protected-access
    path = suite._package_file(*tflite_file)  # pylint: disable=protected-access
    resolver = interpreter.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES
    try:
        builtin = interpreter.Interpreter(
            model_path=str(path), experimental_op_resolver_type=resolver
        )
        builtin.allocate_tensors()
    except (RuntimeError, ValueError):
        return None

    def _run(arrays):
        for detail, array in zip(builtin.get_input_details(), arrays):
            builtin.set_tensor(detail["index"], array)
        builtin.invoke()
        return [np.array(builtin.get_tensor(d["index"])) for d in builtin.get_output_details()]

    return _run


def measure(name: str, draws: int, base: int) -> int:
    """Print the needs of ``draws`` draws (seeds ``base``, ``base + 1``, ...) of model ``name``."""
    sys.path[:0] = [str(SUITE), str(SUITE.parents[3] / "tools")]
    # pylint: disable=import-outside-toplevel,import-error,protected-access
    import test_texture_models as suite
    import texture_testing
    import tvm

    model = next((m for m in suite.MODELS if m.name == name), None)
    if model is None:
        names = ", ".join(m.name for m in suite.MODELS)
        print(f"model-margins: no model {name!r} in the suite (one of: {names})")
        return 2
    imported = suite._imported(name)
    runners = {
        "texture": lambda x: suite._run(
            suite._texture_build(name).executable, texture_testing.tvm_device(), x
        ),
        "llvm": lambda x, ex=tvm.compile(imported.mod, target="llvm"): suite._run(ex, tvm.cpu(), x),
    }
    builtin = _builtin_runner(suite, model)
    if builtin is not None:
        runners["litert builtin"] = builtin
    needs: Dict[str, List[List[float]]] = {key: [] for key in runners}
    tolerances: List[Tuple[float, float]] = []
    for seed in range(base, base + draws):
        inputs = suite._random_inputs(model, np.random.default_rng(seed))
        desired = suite._compared(imported.reference(inputs), model)
        tolerances = [model.output_tolerance.get(i, model.tolerance) for i in range(len(desired))]
        for key, run in runners.items():
            actual = suite._compared(run(inputs), model)
            needs[key].append(
                [
                    atol_needed(a, d, rtol, model.output_range)
                    for a, d, (rtol, _) in zip(actual, desired, tolerances)
                ]
            )
    bounds = [atol_rel for _, atol_rel in tolerances]
    print(f"{name}: atol needed as a share of each output's scale, {draws} draws from seed {base}")
    print("output  bound     " + "  ".join(f"{k + ' q90/q99/max':<32}" for k in runners))
    stats = {key: summarize(rows) for key, rows in needs.items()}
    for i, bound in enumerate(bounds):
        cells = [
            "/".join(f"{stats[key][q][i]:.1e}" for q in ("q90", "q99", "max")) for key in runners
        ]
        print(f"{i:<7} {bound:<9.1e} " + "  ".join(f"{c:<32}" for c in cells))
    over = {
        key: int((np.asarray(rows) > np.asarray(bounds)).any(axis=1).sum())
        for key, rows in needs.items()
    }
    print("draws over a bound: " + ", ".join(f"{k} {n}" for k, n in over.items()))
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    """Parse the command line and measure."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="a model name of test_texture_models.MODELS")
    parser.add_argument("--draws", type=int, default=100, help="random inputs (default 100)")
    parser.add_argument("--base", type=int, default=0, help="the first draw's seed (default 0)")
    args = parser.parse_args(argv)
    if args.draws < 1:
        print(f"model-margins: --draws {args.draws}: give at least 1")
        return 2
    return measure(args.model, args.draws, args.base)


if __name__ == "__main__":
    sys.exit(main())
