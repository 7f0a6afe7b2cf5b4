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
"""Look-ups in the tree of runtime modules an exported library imports.

Bench scripts that run on the device box import this file from their bundle, so it uses the
runtime API only.
"""


def opencl_modules(module):
    """The OpenCL modules imported by ``module``, at any depth, in import order."""
    found = []
    for imported in module.imports:
        if imported.kind == "opencl":
            found.append(imported)
        found.extend(opencl_modules(imported))
    return found


def function_holder(module, name):
    """The module of the tree rooted at ``module`` that defines the function ``name``, or None.

    ``time_evaluator`` looks a function up in the module it is called on, not in its imports.
    """
    if module.implements_function(name, False):
        return module
    for imported in module.imports:
        found = function_holder(imported, name)
        if found is not None:
            return found
    return None
