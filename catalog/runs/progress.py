"""Progress of long work on stderr, with the time it has taken and an estimate of the time left.

One definition for every long command (`bench export`, `constraints --completeness`, `verify gate
--all`, `audit-sim`, `rollout`, `synthesize`). On a terminal the status line is rewritten in place
(at most ten times a second); anywhere else (a log file, CI, a pipe) it is printed as a line of
its own once the work has run `every` seconds since the last one (the gap grows to a twentieth of
the elapsed time, so an hour's run does not fill a log), so short work prints nothing and long
work is never silent. `say` prints a line that stays (a per-unit verdict), with the status after
it. The estimate is the stage's elapsed time per unit done times the units left: rough, but it
says minutes or hours. Stdout is never written, so `--json` output stays clean.

>>> import io
>>> clock = iter([0.0, 12.0, 24.0, 30.0, 30.0]).__next__
>>> out = io.StringIO()
>>> with Progress("verify gate", 4, unit="envs", stream=out, interactive=False, clock=clock) as progress:
...     progress.update(1, note="bank")
...     progress.say("verified clinic: passed", done=2)
...     progress.update(4)
>>> print(out.getvalue(), end="")
verify gate: 1/4 envs (25%), 12s elapsed, ~36s left; bank
verified clinic: passed [2/4 envs, 24s elapsed, ~24s left]
verify gate: 4/4 envs (100%) in 30s
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

__all__ = ["Progress", "cost_note", "format_seconds"]


def format_seconds(seconds: float) -> str:
    """A duration as a person reads it: 45s, 3m 20s, 1h 05m.

    >>> [format_seconds(s) for s in (0.4, 45, 200, 3900, 90000)]
    ['0s', '45s', '3m 20s', '1h 05m', '25h 00m']
    """
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m {seconds % 60:02d}s"
    return f"{seconds // 3600}h {seconds % 3600 // 60:02d}m"


def cost_note(cost_usd: float, tokens: int, done: int, left: int) -> str:
    """What model calls have cost so far and, at that rate per unit done, what the `left` units will add.

    Empty when nothing was spent (a free or local model). The projection assumes the units left cost what
    the units done did on average: an estimate, like the time left.

    >>> cost_note(0.12, 45000, 30, 90)
    '$0.1200 and 45,000 tokens so far, ~$0.3600 more for the 90 left'
    >>> cost_note(0.0, 1200, 3, 1), cost_note(0.0, 0, 5, 5)
    ('1,200 tokens so far, ~400 more for the 1 left', '')
    """
    if cost_usd <= 0 and tokens <= 0:
        return ""
    if cost_usd > 0:
        spent, more = f"${cost_usd:.4f} and {tokens:,} tokens so far", f"${cost_usd / max(done, 1) * left:.4f}"
    else:
        spent, more = f"{tokens:,} tokens so far", f"{round(tokens / max(done, 1) * left):,}"
    return f"{spent}, ~{more} more for the {left} left" if done > 0 and left > 0 else spent


class Progress:
    """`done` of `total` units of `what`, shown on `stream` (stderr) as the work goes; see the module doc.

    `enabled=False` shows nothing. `interactive` defaults to whether the stream is a terminal. A new
    `stage` (a search round, a verification pass) restarts the clock of the estimate.
    """

    def __init__(self, what: str, total: int | None = None, *, unit: str = "", enabled: bool = True,
                 stream: TextIO | None = None, interactive: bool | None = None, every: float = 10.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.what, self.total, self.unit, self.enabled = what, total, unit, enabled
        self.stream = stream if stream is not None else sys.stderr
        self.interactive = self.stream.isatty() if interactive is None else interactive
        self.every, self._clock = every, clock
        self.started = self._stage_started = clock()
        self.stage: str | None = None
        self.done = 0
        self.note = ""
        self._printed_at = self.started
        self._printed_any = False
        self._width = 0  # of the line now on a terminal (0: none)

    # --- what the work calls -------------------------------------------------------------------
    def update(self, done: int, *, total: int | None = None, stage: str | None = None, unit: str | None = None,
               note: str = "") -> None:
        """`done` units are finished (of `total` and counted in `unit`s, if they changed; in `stage`, if one began)."""
        now = self._clock()
        if unit is not None:
            self.unit = unit
        if stage is not None and stage != self.stage:
            self.stage, self._stage_started = stage, now
        if total is not None:
            self.total = total
        self.done, self.note = done, note
        if not self.enabled:
            return
        if self.interactive:
            if now - self._printed_at >= 0.1 or done == self.total:
                self._rewrite(self.status(now))
                self._printed_at = now
        elif now - self._printed_at >= max(self.every, (now - self.started) / 20):
            self._line(self.status(now))
            self._printed_at, self._printed_any = now, True

    def say(self, text: str, *, done: int | None = None) -> None:
        """Print `text` as a line that stays, the status (`done` units, if given) in brackets after it."""
        now = self._clock()
        if done is not None:
            self.done = done
        if not self.enabled:
            return
        self._line(f"{text} [{self.status(now, short=True)}]")
        if self.interactive:
            self._rewrite(self.status(now))
        self._printed_at, self._printed_any = now, True

    def close(self) -> None:
        """End the line on a terminal; elsewhere say how long it all took, if anything was shown."""
        if not self.enabled:
            return
        now = self._clock()
        if self.interactive:
            if self._width:
                self._rewrite(self.final(now))
                self.stream.write("\n")
                self.stream.flush()
                self._width = 0
        elif self._printed_any or now - self.started >= self.every:
            self._line(self.final(now))

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- what is shown --------------------------------------------------------------------------
    def _count(self) -> str:
        unit = f" {self.unit}" if self.unit else ""
        return f"{self.done}/{self.total}{unit}" if self.total is not None else f"{self.done}{unit}"

    def estimate(self, now: float) -> float | None:
        """Seconds left in this stage at its rate so far (None before the first unit, after the last, without a total)."""
        taken = now - self._stage_started
        if self.total is None or not 0 < self.done < self.total or taken <= 0:
            return None
        return taken / self.done * (self.total - self.done)

    def status(self, now: float, *, short: bool = False) -> str:
        count = self._count()
        if not short:
            percent = f" ({100 * self.done // self.total}%)" if self.total else ""
            head = f"{self.what}{' ' + self.stage if self.stage else ''}: {count}{percent}"
        else:
            head = count
        parts = [head, f"{format_seconds(now - self.started)} elapsed"]
        left = self.estimate(now)
        if left is not None:
            parts.append(f"~{format_seconds(left)} left")
        text = ", ".join(parts)
        return f"{text}; {self.note}" if self.note and not short else text

    def final(self, now: float) -> str:
        percent = f" ({100 * self.done // self.total}%)" if self.total else ""
        return f"{self.what}: {self._count()}{percent} in {format_seconds(now - self.started)}"

    def _rewrite(self, text: str) -> None:
        self.stream.write("\r" + text.ljust(self._width))
        self.stream.flush()
        self._width = len(text)

    def _line(self, text: str) -> None:
        if self.interactive and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self._width = 0
        self.stream.write(text + "\n")
        self.stream.flush()
