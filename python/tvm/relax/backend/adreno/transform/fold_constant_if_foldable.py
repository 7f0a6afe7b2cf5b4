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
"""Run ``FoldConstant`` only on a module that has something it could fold.

``FoldConstant`` legalizes every operator call of a dataflow block before it looks at the
arguments, and throws the PrimFunc away when they are not all constants: on a model whose
weights are parameters, where nothing folds, that is a second legalization of the whole
module (a quarter of the texture build of MobileNetV2).  ``FoldConstantIfFoldable`` runs it
only on a module where some call could fold; see its docstring for the rule.
"""

import tvm
from tvm import relax
from tvm.ir import Op

from .utils import with_functions


def _may_be_runtime(arg) -> bool:
    """Whether a call argument can hold a value known only at run time (a variable, or a tuple
    holding one); constants, shapes, PrimValues, strings, dtypes and functions cannot."""
    if isinstance(arg, relax.Var):
        return True
    if isinstance(arg, relax.Tuple):
        return any(_may_be_runtime(field) for field in arg.fields)
    return False


@relax.expr_functor.visitor
class _FoldableFinder(relax.PyExprVisitor):  # pylint: disable=abstract-method
    """Finds whatever ``FoldConstant`` could rewrite in a function (see
    ``FoldConstantIfFoldable``)."""

    def __init__(self):
        super().__init__()
        self.found = False

    def visit_var_binding_(self, binding):  # pylint: disable=arguments-renamed
        if isinstance(binding.value, (tvm.ir.GenericConst, relax.ShapeExpr)):
            self.found = True
        super().visit_var_binding_(binding)

    def visit_call_(self, call):  # pylint: disable=arguments-renamed
        if isinstance(call.op, Op) and not any(_may_be_runtime(arg) for arg in call.args):
            self.found = True
        super().visit_call_(call)


def _has_foldable(func: relax.Function) -> bool:
    finder = _FoldableFinder()
    finder.visit_expr(func)
    return finder.found


@tvm.transform.module_pass(opt_level=0, name="FoldConstantIfFoldable")
class FoldConstantIfFoldable:  # pylint: disable=too-few-public-methods
    """``FoldConstant``, run only on a module that has something it could fold.

    ``FoldConstant`` (C++ ``src/relax/transform/fold_constant.cc``) rewrites a Relax function
    only in these ways: it evaluates an operator call none of whose arguments is a variable
    (the ``call_tir`` of constants, or an op legalized to one: but it legalizes every op of a
    dataflow block first, whatever its arguments, which is what costs); it replaces a variable
    bound to a constant by the constant, and one bound to a ``ShapeExpr`` by the shape in call
    arguments; and it removes the unused bindings (``RemoveAllUnused``).  So when no Relax
    function of the module binds a constant or a shape to a variable and no operator call
    takes only arguments that are not variables (or tuples of variables), ``FoldConstant``
    would only remove unused bindings: this pass does that and skips it.  Otherwise it runs
    ``FoldConstant`` on the module.  The output is the output of ``FoldConstant`` either way.

    Returns
    -------
    ret : tvm.transform.Pass
        The pass.
    """

    def transform_module(self, mod: tvm.IRModule, _ctx: tvm.transform.PassContext) -> tvm.IRModule:
        """``FoldConstant(mod)``, or ``mod`` without unused bindings if nothing folds."""
        functions = [
            (gvar, func) for gvar, func in mod.functions_items() if isinstance(func, relax.Function)
        ]
        if any(_has_foldable(func) for _, func in functions):
            return relax.transform.FoldConstant()(mod)
        updates = {}
        for gvar, func in functions:
            pruned = relax.analysis.remove_all_unused(func)
            if not pruned.same_as(func):
                updates[gvar] = pruned
        return with_functions(mod, updates)
