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
"""Helpers of the TFLite frontend tests: small models written with LiteRT's flatbuffer object
API, imported with the Relax frontend, and run on the CPU and by LiteRT's interpreter.

Importing this module skips the test module that imports it where the ``tflite`` or
``ai-edge-litert`` packages are missing."""

import numpy as np
import pytest

import tvm
from tvm import relax

tflite = pytest.importorskip("tflite", reason="the TFLite frontend needs the tflite package")
schema = pytest.importorskip(
    "ai_edge_litert.schema_py_generated", reason="the models are written with ai-edge-litert"
)
interpreter_mod = pytest.importorskip(
    "ai_edge_litert.interpreter", reason="the reference answers come from LiteRT's interpreter"
)
flatbuffers = pytest.importorskip("flatbuffers")


def buffer(values: np.ndarray):
    """A ``schema.BufferT`` holding ``values`` (dtype kept) as little-endian bytes."""
    buf = schema.BufferT()
    raw = values.astype(values.dtype.newbyteorder("<")).tobytes()
    buf.data = np.frombuffer(raw, dtype=np.uint8)
    return buf


def tensor(name, shape, buffer_index, tensor_type=None):
    """A ``schema.TensorT`` of a static shape.

    Parameters
    ----------
    name : str
        The tensor's name.
    shape : Sequence[int]
        Its shape.
    buffer_index : int
        Its buffer in the model; 0 (the empty buffer, by convention) for activations.
    tensor_type : Optional[int]
        A ``schema.TensorType``; FLOAT32 when None.
    """
    result = schema.TensorT()
    result.name = name
    result.shape = list(shape)
    result.type = schema.TensorType.FLOAT32 if tensor_type is None else tensor_type
    result.buffer = buffer_index
    return result


def serialize(model) -> bytes:
    """The flatbuffer bytes of a ``schema.ModelT``."""
    builder = flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def litert_output(model: bytes, data: np.ndarray, reference_kernels: bool = True) -> np.ndarray:
    """The output of a one-input, one-output model on ``data``, by LiteRT's interpreter with its
    reference kernels (or, with ``reference_kernels=False``, its builtin optimized ones: some
    operators, DENSIFY among them, have no reference kernel)."""
    resolver = interpreter_mod.OpResolverType
    interpreter = interpreter_mod.Interpreter(
        model_content=model,
        experimental_op_resolver_type=(
            resolver.BUILTIN_REF
            if reference_kernels
            else resolver.BUILTIN_WITHOUT_DEFAULT_DELEGATES
        ),
    )
    interpreter.allocate_tensors()
    interpreter.set_tensor(interpreter.get_input_details()[0]["index"], data)
    interpreter.invoke()
    return interpreter.get_tensor(interpreter.get_output_details()[0]["index"])


def import_model(model: bytes) -> tvm.IRModule:
    """Import a serialized TFLite model with the Relax frontend."""
    from tvm.relax.frontend.tflite import from_tflite  # pylint: disable=import-outside-toplevel

    return from_tflite(tflite.Model.GetRootAsModel(model, 0))


def calls(mod: tvm.IRModule, op_name=None):
    """The operator calls in ``mod["main"]`` (of ``op_name`` only, when given), in post order."""
    found = []

    def _visit(expr):
        if isinstance(expr, relax.Call) and isinstance(expr.op, tvm.ir.Op):
            if op_name is None or expr.op.name == op_name:
                found.append(expr)

    relax.analysis.post_order_visit(mod["main"], _visit)
    return found


def run_on_cpu(mod: tvm.IRModule, data: np.ndarray) -> np.ndarray:
    """Build ``mod`` for LLVM and run its main function on ``data``: its (first) output."""
    machine = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())
    out = machine["main"](tvm.runtime.tensor(data))
    return out.numpy() if hasattr(out, "numpy") else out[0].numpy()
