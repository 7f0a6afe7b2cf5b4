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
"""Directives of the workspace docs.

``.. runblock:: bash``
    A shell snippet that tests/docs/test_snippets.py runs from the repository root (with the
    test interpreter's ``bin`` first on ``PATH``).  Rendered as a plain code block.

``.. code-not-run:: LANG``  with a required ``:reason:``
    A snippet the tests cannot run here (a phone, the NDK, minutes of CI).  Rendered as a code
    block under a note that says so and why.

``.. optional-include:: FILE``
    Include ``FILE`` (relative to the current document) when it exists; otherwise render the
    directive's content.  For data that another engineer commits (benchmark results).

``.. series-table::``
    The patch series as a table, read from ``patches/series`` and its mails at build time.

``.. pipeline-passes:: PHASE``
    The pass names of one phase of the Adreno Relax pipeline for ``qcom/adreno-opencl-texture``
    (``library_dispatch``, ``legalize``, ``dataflow_lower``, ``finalize``), computed at build
    time from ``tvm.relax.backend.adreno.pipeline``, so the list cannot go stale.

``.. module-reference:: mirror|tooling``
    One section with an ``automodule`` per Python module of the mirror (``python/tvm``, minus
    package ``__init__`` files and the files listed in ``MIRROR_SKIP``) or of the workspace
    tooling (``tools/adreno_ws``), found at build time: a new file is documented without
    editing the docs.

``.. cli-help::``
    The ``--help`` text of ``python -m adreno_ws`` and of each subcommand, from its argparse
    parser.

``.. example-output:: SCRIPT FUNCTION``
    A literal block with the string that ``FUNCTION()`` of ``docs/examples/SCRIPT`` returns,
    computed at build time (sample output that follows the code).

``:pyvalue:`module.NAME```
    The value of a module-level constant, imported at build time (thresholds quoted in prose).

Every code block of the docs is one of these, or a ``literalinclude`` of a script under
``docs/examples/`` (run by tests/docs/test_examples.py); tests/docs/test_snippets.py enforces it.
"""

import importlib
import importlib.util
import os
import sys
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.parsers.rst.directives.misc import Include
from sphinx.directives.code import CodeBlock
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles


class RunBlock(CodeBlock):
    """A code block that the docs tests execute. ``:requires: opencl`` makes the test skip it
    where no OpenCL device is visible (the page shows the command either way)."""

    option_spec = dict(CodeBlock.option_spec, requires=directives.unchanged)

    def run(self):
        self.options.pop("requires", None)
        return super().run()


class CodeNotRun(CodeBlock):
    """A code block the tests do not run, with the reason shown to the reader."""

    option_spec = dict(CodeBlock.option_spec, reason=directives.unchanged_required)

    def run(self):
        reason = self.options.pop("reason", "").strip()
        if not reason:
            raise self.error("code-not-run needs a :reason: (why the tests cannot run it)")
        result = super().run()
        note = nodes.paragraph(classes=["code-not-run"])
        note += nodes.emphasis(text=f"Not run by the docs tests: {reason}")
        return [note] + result


class OptionalInclude(SphinxDirective):
    """Include a reST file when it exists, else show the fallback content."""

    required_arguments = 1
    has_content = True

    def run(self):
        rel = self.arguments[0]
        doc_dir = os.path.dirname(self.env.doc2path(self.env.docname))
        path = os.path.normpath(os.path.join(doc_dir, rel))
        self.env.note_dependency(path)
        if os.path.isfile(path):
            include = Include(
                "include",
                [path],
                {},
                self.content,
                self.lineno,
                self.content_offset,
                self.block_text,
                self.state,
                self.state_machine,
            )
            return include.run()
        container = nodes.container()
        self.state.nested_parse(self.content, self.content_offset, container)
        return container.children


REPO = Path(__file__).resolve().parents[2]


def _paragraph(*parts):
    para = nodes.paragraph()
    for part in parts:
        para += part
    return para


def _mail_summary(path):
    """(subject, [(file, what)]) of a ``git format-patch`` mail."""
    text = path.read_text(encoding="utf-8")
    header, _, body = text.partition("\n\n")
    subject = ""
    lines = header.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("Subject: "):
            subject = line[len("Subject: ") :]
            for more in lines[i + 1 :]:
                if not more.startswith(" "):
                    break
                subject += more
    subject = subject.split("] ", 1)[1] if subject.startswith("[PATCH") else subject
    files = []
    for line in body.splitlines():
        if line.startswith("diff --git a/"):
            files.append([line.split(" b/", 1)[1], ""])
        elif files and line.startswith(("new file mode", "deleted file mode")):
            files[-1][1] = "(new)" if line.startswith("new") else "(deleted)"
    return subject, files


class SeriesTable(SphinxDirective):
    """The patch series (patches/series and its mails) as a table: number, subject, files."""

    def run(self):
        series = REPO / "patches" / "series"
        self.env.note_dependency(str(series))
        names = [n for n in series.read_text().split() if n]
        table = nodes.table()
        group = nodes.tgroup(cols=3)
        table += group
        for width in (6, 44, 50):
            group += nodes.colspec(colwidth=width)
        head = nodes.thead()
        group += head
        body = nodes.tbody()
        group += body

        def row(cells, parent):
            tr = nodes.row()
            for cell in cells:
                entry = nodes.entry()
                entry += cell
                tr += entry
            parent += tr

        row([_paragraph(nodes.Text(t)) for t in ("#", "subject", "files")], head)
        for index, name in enumerate(names, start=1):
            mail = REPO / "patches" / name
            self.env.note_dependency(str(mail))
            subject, changed = _mail_summary(mail)
            files = nodes.bullet_list()
            for path, what in changed:
                item = nodes.list_item()
                item += _paragraph(nodes.literal(text=path), nodes.Text(f" {what}" if what else ""))
                files += item
            row(
                [
                    _paragraph(nodes.Text(f"{index:04d}")),
                    _paragraph(nodes.Text(subject)),
                    files,
                ],
                body,
            )
        return [table]


PHASES = ("library_dispatch", "legalize", "dataflow_lower", "finalize")


def _pass_name(item) -> str:
    info = getattr(item, "info", None)
    return str(info.name) if info is not None else type(item).__name__


class PipelinePasses(SphinxDirective):
    """The passes of one phase of the Adreno Relax pipeline, for the texture target."""

    required_arguments = 1

    def run(self):
        phase = self.arguments[0]
        if phase not in PHASES:
            raise self.error(f"pipeline-passes: phase must be one of {PHASES}")
        import tvm  # pylint: disable=import-outside-toplevel
        from tvm.relax.backend.adreno import pipeline  # pylint: disable=import-outside-toplevel

        target = tvm.target.Target("qcom/adreno-opencl-texture", host="llvm")
        with target:
            passes = getattr(pipeline, f"{phase}_passes")(target)
        items = nodes.enumerated_list()
        for item in passes:
            entry = nodes.list_item()
            para = _paragraph(nodes.literal(text=_pass_name(item)))
            rules = getattr(item, "rules", None)  # dlight ApplyDefaultSchedule: its rules
            if rules:
                names = [f"{type(r).__module__.split('.')[-2]}.{type(r).__name__}" for r in rules]
                para += nodes.Text(" (rules, first match wins: " + ", ".join(names) + ")")
            entry += para
            items += entry
        if not passes:
            return [_paragraph(nodes.emphasis(text="(no passes for this target)"))]
        return [items]


# Mirror files not rendered in the API reference, with the reason.
MIRROR_SKIP = {
    # TVM's whole TFLite frontend (9000 lines); the series changes two converters in it.
    "python/tvm/relax/frontend/tflite/tflite_frontend.py",
    # TVM's whole ONNX frontend (6800 lines, its ops' docstrings re-exported from numpy and
    # relax); the series adds Identity to the ops that pass a shape on.
    "python/tvm/relax/frontend/onnx/onnx_frontend.py",
    # TVM's generic TIR build driver; the series changes how it picks the pipeline, and its
    # upstream docstrings are not written for Sphinx.
    "python/tvm/tirx/build.py",
}


def mirror_modules():
    """(module name, path) of every Python module the series adds to or changes in TVM: the
    ``python/tvm`` files its mails touch (the new ones are also in the mirror)."""
    touched = set()
    series = REPO / "patches" / "series"
    for name in series.read_text().split():
        for line in (REPO / "patches" / name).read_text(encoding="utf-8").splitlines():
            if line.startswith("diff --git a/python/tvm/"):
                touched.add(line.split(" b/", 1)[1])
    out = []
    for rel in sorted(touched):
        path = REPO / rel
        if not rel.endswith(".py") or path.name == "__init__.py" or rel in MIRROR_SKIP:
            continue
        out.append((".".join(Path(rel).relative_to("python").with_suffix("").parts), rel))
    return out


def tooling_modules():
    """(module name, path) of every module of the workspace tooling package."""
    out = []
    for path in sorted((REPO / "tools" / "adreno_ws").glob("*.py")):
        if path.name in ("__main__.py",):
            continue
        name = "adreno_ws" if path.name == "__init__.py" else f"adreno_ws.{path.stem}"
        out.append((name, path.relative_to(REPO).as_posix()))
    return out


class ModuleReference(SphinxDirective):
    """A section with ``automodule`` for each module of the mirror or of the tooling."""

    required_arguments = 1
    option_spec = {"underline": directives.unchanged}

    def run(self):
        which = self.arguments[0]
        underline = self.options.get("underline", "-")
        if which not in ("mirror", "tooling"):
            raise self.error("module-reference: argument must be 'mirror' or 'tooling'")
        modules = mirror_modules() if which == "mirror" else tooling_modules()
        lines = []
        for name, rel in modules:
            self.env.note_dependency(str(REPO / rel))
            title = f"``{name}``"
            lines += [title, underline * len(title), "", f"Source: ``{rel}``", ""]
            lines += [f".. automodule:: {name}"]
            if which == "tooling":
                lines += ["   :undoc-members:"]
            lines += [""]
        container = nodes.section()
        container.document = self.state.document
        nested_parse_with_titles(
            self.state, StringList(lines, source=f"<{which} modules>"), container
        )
        return container.children


class CliHelp(SphinxDirective):
    """The argparse help of ``python -m adreno_ws`` and its subcommands."""

    def run(self):
        import argparse  # pylint: disable=import-outside-toplevel

        from adreno_ws.cli import build_parser  # pylint: disable=import-outside-toplevel

        self.env.note_dependency(str(REPO / "tools" / "adreno_ws" / "cli.py"))
        os.environ["COLUMNS"] = "100"
        parser = build_parser()
        texts = [parser.format_help()]

        def walk(p, prefix):
            for action in p._actions:  # pylint: disable=protected-access
                if isinstance(
                    action, argparse._SubParsersAction
                ):  # pylint: disable=protected-access
                    for name, sub in action.choices.items():
                        sub.prog = f"{prefix} {name}"
                        texts.append(sub.format_help())
                        walk(sub, sub.prog)

        walk(parser, "python -m adreno_ws")
        out = []
        for text in texts:
            text = text.replace(str(REPO), "<repo>")
            out.append(nodes.literal_block(text, text))
        return out


class ExampleOutput(SphinxDirective):
    """Call a function of an example script at build time and show what it returns."""

    required_arguments = 2

    def run(self):
        script, func = self.arguments
        path = REPO / "docs" / "examples" / script
        self.env.note_dependency(str(path))
        spec = importlib.util.spec_from_file_location(f"_docs_example_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # TVMScript reads the source through sys.modules
        spec.loader.exec_module(module)
        text = str(getattr(module, func)())
        return [nodes.literal_block(text, text)]


def pyvalue_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    """``:pyvalue:`pkg.module.NAME``` renders repr(NAME) as a literal."""
    parts = text.split(".")
    value, error = None, f"no module in {text}"
    # The longest importable prefix is the module; the rest are attributes (a class constant).
    for cut in range(len(parts) - 1, 0, -1):
        try:
            value = importlib.import_module(".".join(parts[:cut]))
        except ImportError as err:
            error = str(err)
            continue
        try:
            for attr in parts[cut:]:
                value = getattr(value, attr)
        except AttributeError as err:
            error, value = str(err), None
        break
    if value is None:
        msg = inliner.reporter.error(f"pyvalue: cannot read {text}: {error}", line=lineno)
        return [inliner.problematic(rawtext, rawtext, msg)], [msg]
    return [nodes.literal(rawtext, repr(value))], []


def setup(app):
    app.add_directive("runblock", RunBlock)
    app.add_directive("code-not-run", CodeNotRun)
    app.add_directive("optional-include", OptionalInclude)
    app.add_directive("series-table", SeriesTable)
    app.add_directive("pipeline-passes", PipelinePasses)
    app.add_directive("module-reference", ModuleReference)
    app.add_directive("cli-help", CliHelp)
    app.add_directive("example-output", ExampleOutput)
    app.add_role("pyvalue", pyvalue_role)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
