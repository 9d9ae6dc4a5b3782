"""Units for the executor tests: module-level, so worker processes and Ray actors can import them."""

import os
import time

STATE: dict[str, int] = {}


def init(factor: int) -> None:
    STATE["factor"] = factor


def scaled(value: int) -> tuple[int, int]:
    return value * STATE["factor"], os.getpid()


def slow(value: int, seconds: float = 1.0) -> int:
    time.sleep(seconds)
    return value


def fails(value: int) -> int:
    raise ValueError(f"unit {value} is bad input")


def dies(value: int) -> int:
    os._exit(3)
