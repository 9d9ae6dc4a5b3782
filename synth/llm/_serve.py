"""Child process that hosts the embedded llama.cpp server (run by file path, stdlib + xllamacpp).

Running the server in its own process keeps llama.cpp's threads and log output out of envforge
(whose sandbox forks workers), and makes stopping it certain: we exit on SIGTERM, when our stdin
reaches EOF (the parent closed it or died) or when our parent process changes (the parent was
killed while a forked worker still holds the pipe open), so no server outlives envforge.
Protocol: one JSON line on stdout, ``{"base_url": ...}`` or ``{"error": ...}``.
"""

import argparse
import json
import os
import select
import signal
import sys


def _wait_for_parent(parent: int) -> None:
    """Return when stdin reaches EOF or the parent process is gone."""
    while os.getppid() == parent:
        ready, _, _ = select.select([sys.stdin], [], [], 1.0)
        if ready and not os.read(sys.stdin.fileno(), 4096):
            return


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gguf", required=True)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--ctx", type=int, default=2048)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--parallel", type=int, default=1)
    ap.add_argument("--n-predict", type=int, default=512)
    args = ap.parse_args()
    parent = os.getppid()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        import xllamacpp as xlc

        params = xlc.CommonParams()
        params.model.path = args.gguf
        params.model_alias = {"smollm2-135m"}
        params.n_ctx = args.ctx * args.parallel
        params.n_parallel = args.parallel
        params.n_predict = args.n_predict  # a backstop for requests without max_tokens (it loops unbounded)
        params.cpuparams.n_threads = args.threads
        params.cpuparams_batch.n_threads = args.threads
        # No busy-wait between work items: on a shared 2-core machine spinning threads starve
        # everything else (and themselves, once the load exceeds the cores).
        params.cpuparams.poll = 0
        params.cpuparams_batch.poll = 0
        params.hostnames = ["127.0.0.1"]
        params.port = 0  # the OS picks a free port; listening_address reports it
        params.sampling.temp = 0.0
        params.sampling.seed = args.seed
        params.warmup = False
        server = xlc.Server(params)
    except Exception as exc:  # reported to the parent, which raises
        print(json.dumps({"error": f"{type(exc).__name__}: {exc}"}), flush=True)  # noqa: T201 - the protocol line
        return 1
    print(json.dumps({"base_url": server.listening_address + "/v1"}), flush=True)  # noqa: T201
    try:
        _wait_for_parent(parent)
    finally:
        del server
    return 0


if __name__ == "__main__":
    sys.exit(main())
