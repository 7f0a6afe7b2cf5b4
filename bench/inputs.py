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
"""Deterministic benchmark inputs and weights from a seed (numpy only: runs on both sides).

Weights are not carried to the device: ResNet-50 in float32 is 102 MB, over the 64 MiB a
device call may carry.  Both the host (for the LLVM reference) and the device regenerate
them from the same seed with numpy's PCG64 ``Generator.random`` (a stream numpy keeps
stable); a checksum computed on both sides proves they match.

Scales keep every layer O(1) without batch norm: conv/dense weights are He-uniform
(bound sqrt(6 / fan_in)) with alternating sign folded in, biases 0.05 * U(-1, 1), the image
U(-1, 1).
"""

from __future__ import annotations

import math
from typing import Dict, List, Sequence, Tuple

import numpy as np


def make_inputs(
    params: Sequence[Tuple[str, Sequence[int], str]], seed: int, fixed: Dict[str, np.ndarray] = None
) -> List[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for name, shape, dtype in params:
        shape = tuple(int(s) for s in shape)
        if fixed and name in fixed:
            out.append(np.asarray(fixed[name]))
            continue
        u = rng.random(shape, dtype=np.float32) * np.float32(2.0) - np.float32(1.0)
        if name.startswith("w"):
            fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else int(shape[0])
            u = u * np.float32(math.sqrt(6.0 / max(1, fan_in)))
        elif name.startswith("b"):
            u = u * np.float32(0.05)
        out.append(u.astype(dtype))
    return out


def checksum(arrays: Sequence[np.ndarray]) -> float:
    """An order-sensitive float64 checksum of the generated data."""
    total = 0.0
    for i, a in enumerate(arrays):
        flat = np.asarray(a, dtype=np.float64).ravel()
        if flat.size:
            total += (i + 1) * float(flat[:: max(1, flat.size // 4096)].sum())
    return total


def sample(a: np.ndarray, n: int = 65536) -> np.ndarray:
    """A fixed strided subsample of an output (the reference carried to the device)."""
    flat = np.asarray(a).ravel()
    step = max(1, flat.size // n)
    return flat[::step][:n]
