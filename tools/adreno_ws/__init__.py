"""adreno_ws: tooling of the Adreno texture workspace (not part of TVM).

The workspace keeps complete files at their upstream paths (``python/tvm/...``), the
"mirror". This package turns the mirror into a patch series against the pinned TVM base,
checks that series, applies it to an installed TVM, and prepares the environment CI uses.

Entry point: ``python -m adreno_ws`` (with ``PYTHONPATH=tools``).
"""

__all__ = ["WsError"]


class WsError(Exception):
    """A problem the user can fix; the message says what is wrong and what to do.

    The CLI prints each line of the message as ``error: ...`` and exits with status 1.
    """

    def __init__(self, *problems: str):
        super().__init__("\n".join(problems))
        self.problems = list(problems)
