"""Progress on stderr: in place on a terminal, a line now and then elsewhere, an estimate of the time left."""

import io

from catalog.runs.progress import Progress


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_without_a_terminal_short_work_prints_nothing_and_long_work_a_line_now_and_then():
    clock, out = Clock(), io.StringIO()
    with Progress("work", 3, unit="envs", stream=out, clock=clock) as quick:
        for done in range(1, 4):
            clock.now += 1
            quick.update(done)
    assert out.getvalue() == "" and quick.interactive is False  # a StringIO is no terminal

    with Progress("export", stream=out, clock=clock, every=10) as progress:
        clock.now += 5
        progress.update(1, total=100, stage="search 1", unit="jobs")  # 5 s in: too soon
        clock.now += 6
        progress.update(11, note="hotel")  # 11 s in: a line, its stage's rate (11 in 6 s) gives the estimate
        clock.now += 1
        progress.update(20)  # 1 s after the last line: too soon
        clock.now += 10
        progress.update(1, total=10, stage="verify 1")  # a new stage restarts the estimate's clock
        clock.now += 10
        progress.update(5)
    assert out.getvalue().splitlines() == [
        "export search 1: 11/100 jobs (11%), 11s elapsed, ~49s left; hotel",
        "export verify 1: 1/10 jobs (10%), 22s elapsed",  # no estimate: no unit done yet in this stage's time
        "export verify 1: 5/10 jobs (50%), 32s elapsed, ~10s left",
        "export: 5/10 jobs (50%) in 32s",
    ]


def test_the_gap_between_lines_grows_with_the_run():
    clock, out = Clock(), io.StringIO()
    progress = Progress("audit", 10_000, stream=out, clock=clock, every=10)
    for done in range(1, 3601):
        clock.now += 1  # an hour, a unit a second
        progress.update(done)
    assert 40 <= len(out.getvalue().splitlines()) <= 80  # not 360, one every 10 s


def test_on_a_terminal_the_line_is_rewritten_in_place_and_ended():
    clock, out = Clock(), Terminal()
    with Progress("rollout", 4, unit="episodes", stream=out, clock=clock) as progress:
        clock.now += 2
        progress.update(1)
        clock.now += 0.01
        progress.update(2)  # within a tenth of a second: not redrawn
        clock.now += 2
        progress.say("note: hotel has no task", done=3)
        clock.now += 1
        progress.update(4)
    text = out.getvalue()
    assert text.startswith("\rrollout: 1/4 episodes (25%), 2s elapsed, ~6s left")
    assert "2/4" not in text and "note: hotel has no task [3/4 episodes, 4s elapsed, ~1s left]\n" in text
    last = text.split("\r")[-1]  # the line rewritten last, padded over the longer one before it, then ended
    assert last.rstrip(" \n") == "rollout: 4/4 episodes (100%) in 5s" and last.endswith("\n") and last.count("\n") == 1


def test_disabled_progress_prints_nothing():
    clock, out = Clock(), Terminal()
    with Progress("synthesize", 2, stream=out, clock=clock, enabled=False) as progress:
        clock.now += 60
        progress.update(1)
        progress.say("said")
    assert out.getvalue() == ""
