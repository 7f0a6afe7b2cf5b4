"""Progress lines of long work (adreno_ws.progress): a line per step in logs, one line redrawn
in place on a terminal; timed with a fake clock."""

import io

from adreno_ws.progress import Progress, clock_text


class FakeClock:
    """A clock that moves only when told."""

    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def _progress(tty, total=4, width=200):
    clock, out = FakeClock(), io.StringIO()
    return Progress("tune build", total, "tasks", out, clock, tty=tty, width=width), clock, out


def test_clock_text():
    assert [clock_text(s) for s in (0, 59.4, 61, 3599.6, 3661, -5)] == [
        "0:00",
        "0:59",
        "1:01",
        "1:00:00",
        "1:01:01",
        "0:00",
    ]


def test_log_gets_one_line_per_step():
    """Not a TTY: every step is a whole line with done/total, rate and time left."""
    prog, clock, out = _progress(tty=False)
    assert prog.status() == "[tune build] 0/4 tasks"
    clock.now += 30
    prog.step("resnet50/conv1")
    clock.now += 0.5
    prog.step("resnet50/conv2", count=2)
    prog.echo("compile error in candidate 3")
    prog.step()
    prog.close()
    assert out.getvalue() == (
        "[tune build] 1/4 tasks, 30.0 s each, 1:30 left: resnet50/conv1\n"
        "[tune build] 3/4 tasks, 10.2 s each, 0:10 left: resnet50/conv2\n"
        "compile error in candidate 3\n"
        "[tune build] 4/4 tasks, 7.6 s each, 0:00 left\n"
    )


def test_fast_steps_give_a_rate_per_second():
    prog, clock, out = _progress(tty=False, total=100)
    clock.now += 2
    prog.step("x", count=5)
    prog.grow(20)
    assert out.getvalue() == "[tune build] 5/100 tasks, 2.5/s, 0:38 left: x\n"
    assert prog.status() == "[tune build] 5/120 tasks, 2.5/s, 0:46 left"


def test_no_rate_before_time_passes():
    prog, _, out = _progress(tty=False)
    prog.step("at once")
    assert out.getvalue() == "[tune build] 1/4 tasks: at once\n"


def test_terminal_redraws_one_line():
    """A TTY: each status overwrites the last after a carriage return, padded over a longer
    one; a line of the work's own clears it and the status comes back under it; close ends
    the line."""
    prog, clock, out = _progress(tty=True)
    clock.now += 10
    prog.step("a long task name")
    clock.now += 10
    prog.step("b")
    first = "[tune build] 1/4 tasks, 10.0 s each, 0:30 left: a long task name"
    second = "[tune build] 2/4 tasks, 10.0 s each, 0:20 left: b"
    assert out.getvalue() == "\r" + first + "\r" + second.ljust(len(first))
    prog.echo("warn")
    assert out.getvalue().endswith("\r" + "warn".ljust(len(second)) + "\n\r" + second)
    prog.close()
    prog.close()
    assert out.getvalue().endswith(second + "\n")


def test_terminal_line_never_wraps():
    prog, clock, out = _progress(tty=True, width=20)
    clock.now += 1
    with prog:
        prog.step("something long")
    assert out.getvalue() == "\r[tune build] 1/4 ta\n"


def test_stream_decides_tty_by_default():
    class Tty(io.StringIO):
        """A stream that says it is a terminal."""

        def isatty(self):
            return True

    assert Progress("x", 1, "steps", Tty(), width=80).tty
    assert not Progress("x", 1, "steps", io.StringIO(), width=80).tty
