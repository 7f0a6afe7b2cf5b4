"""Progress of long work: done/total, rate and time left.

On a terminal the line is redrawn in place (a carriage return before it); in a log or CI,
where the stream is not a TTY, every step is one line of its own, so the log keeps the whole
history. The tuner's candidate build (``bench/tune.py``), the bench's builds
(``bench/run.py``) and the census of a model file (``python -m adreno_ws census MODEL``) use
it. Standard library only: ``bench/`` imports it the way it imports the other tools modules.
"""

from __future__ import annotations

import shutil
import sys
import threading
import time
from typing import Callable, Optional, TextIO


def clock_text(seconds: float) -> str:
    """``m:ss``, or ``h:mm:ss`` from an hour on, of a non-negative number of seconds.

    Parameters
    ----------
    seconds : float
        The duration; rounded to the second.

    Returns
    -------
    text : str
        The duration as a clock reads it.
    """
    whole = int(round(max(seconds, 0.0)))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class Progress:
    """A counter of steps that prints where it stands after each one.

    Parameters
    ----------
    label : str
        What runs, printed in brackets at the start of the line (``[tune build]``).
    total : int
        The number of steps expected (may be raised later with :meth:`grow`).
    unit : str
        What a step is, plural (``tasks``, ``builds``).
    stream : Optional[TextIO]
        Where the lines go (default ``sys.stdout``, read at construction).
    clock : Callable[[], float]
        Seconds from any origin (default ``time.monotonic``); the rate and time left are
        measured from the clock's value at construction.
    tty : Optional[bool]
        Whether to redraw one line in place (default: ``stream.isatty()``).
    width : Optional[int]
        On a terminal, the line is cut to this many characters less one, so it never wraps
        (default: the terminal's width).
    """

    def __init__(
        self,
        label: str,
        total: int,
        unit: str,
        stream: Optional[TextIO] = None,
        clock: Callable[[], float] = time.monotonic,
        tty: Optional[bool] = None,
        width: Optional[int] = None,
    ):  # pylint: disable=too-many-arguments,too-many-positional-arguments
        self.label, self.total, self.unit = label, total, unit
        self.stream = stream if stream is not None else sys.stdout
        self.clock = clock
        self.start = clock()
        self.done = 0
        if tty is None:
            isatty = getattr(self.stream, "isatty", None)
            tty = bool(isatty and isatty())
        self.tty = tty
        self.width = width or shutil.get_terminal_size(fallback=(100, 24)).columns
        self._drawn = 0  # characters of the line redrawn in place; 0: none open
        self._last = ""  # the last status line, drawn again under a line of the work's own
        self._lock = threading.Lock()

    def status(self, note: str = "") -> str:
        """The line for the steps done so far.

        Parameters
        ----------
        note : str
            What the last step was, appended after a colon.

        Returns
        -------
        line : str
            ``[label] done/total unit, rate, time left: note``; the rate and the time left
            only once a step is done and time has passed.
        """
        text = f"[{self.label}] {self.done}/{self.total} {self.unit}"
        elapsed = self.clock() - self.start
        if self.done > 0 and elapsed > 0:
            each = elapsed / self.done
            rate = f"{self.done / elapsed:.1f}/s" if each < 1 else f"{each:.1f} s each"
            left = clock_text(each * max(self.total - self.done, 0))
            text += f", {rate}, {left} left"
        return f"{text}: {note}" if note else text

    def grow(self, count: int) -> None:
        """Expect ``count`` more steps (work found on the way)."""
        with self._lock:
            self.total += count

    def step(self, note: str = "", count: int = 1) -> None:
        """Count ``count`` steps done and print the status line.

        Parameters
        ----------
        note : str
            What was done (a task's or model's name), shown after the counts.
        count : int
            Steps done at once (those of a model skipped whole, for one).
        """
        with self._lock:
            self.done += count
            self._show(self.status(note))

    def echo(self, line: str) -> None:
        """Print a line of the work's own (a warning, a compile error) above the status.

        On a terminal the status line in place is cleared first and drawn again, as it was,
        below it.
        """
        with self._lock:
            if not self.tty:
                self.stream.write(line + "\n")
                self.stream.flush()
                return
            self.stream.write("\r" + line.ljust(self._drawn) + "\n")
            redraw, self._drawn = self._drawn > 0, 0
            if redraw:
                self._show(self._last)
            else:
                self.stream.flush()

    def close(self) -> None:
        """End the line drawn in place (on a terminal), so what follows starts on its own."""
        with self._lock:
            if self.tty and self._drawn:
                self.stream.write("\n")
                self.stream.flush()
            self._drawn = 0

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _show(self, text: str) -> None:
        self._last = text
        if self.tty:
            text = text[: max(self.width - 1, 1)]
            self.stream.write("\r" + text.ljust(self._drawn))
            self._drawn = len(text)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()
