"""Hostile env code against its siblings: workers serving other envs in the same sandbox, and the fork server.

A pool's workers are forks of one fork server in one bubblewrap sandbox: they share its pid,
ipc and user namespaces (and its uid), each with a private tmpfs scratch in a mount namespace of
its own. Here a victim (a copy of tests/fixtures/hostile_attacks: another env, so another
worker) runs a long call that answers from its own state, scratch file, env files, limits and
scheduling, while the attacker's job runs next to it in the same pool. Each attack asserts: the
victim's answer is exactly the one a fresh pool gives (from the same, never restarted, worker),
the fork server is the same and alive, the pool keeps serving, and nothing appeared on the host.
"""

import shutil
import signal
import threading
import time
from pathlib import Path

import pytest

from sandbox.pool import Job, SandboxPool

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
ATTACKS = FIXTURES / "hostile_attacks"
HOSTILE = FIXTURES / "hostile"
ROOT = Path(__file__).resolve().parents[2]
VICTIM_SECONDS = 1.0


def attack(tool, **arguments):
    return Job(str(ATTACKS), "class", [{"name": tool, "arguments": arguments}], entry="Attacks", state={})


def observation(result):
    assert result.event is None and result.calls and result.calls[0].event is None, result
    return result.calls[0].observation


def refused(seen):
    """The attempts that were not refused (`_outcome` says 'ok' only when the call went through)."""
    return {key: value for key, value in seen.items() if value == "ok"}


def escape_paths(name):
    return [Path(f"/tmp/envforge-sibling-escape-{name}"), Path(f"/work/main/sibling-escape-{name}"),
            ROOT / f"sibling-escape-{name}"]


def sandbox_processes(pool):
    """Host pids of the pool's sandbox: bwrap and everything under it (fork server, workers)."""
    children = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    found, stack = set(), [pool._servers[-1].process.pid]
    while stack:
        pid = stack.pop()
        found.add(pid)
        stack.extend(children.get(pid, []))
    return found


@pytest.fixture(scope="module")
def victim_env(tmp_path_factory):
    folder = tmp_path_factory.mktemp("siblings") / "victim"
    shutil.copytree(ATTACKS, folder)
    return folder


@pytest.fixture(scope="module")
def victim_job(victim_env):
    def make(seconds=VICTIM_SECONDS):
        return Job(str(victim_env), "class", [{"name": "sibling_victim", "arguments": {"seconds": seconds}}],
                   entry="Attacks", state={})
    return make


def victim_answer(result):
    """What the victim said, but its pid (which tells whether its worker was restarted)."""
    seen = dict(observation(result))
    pid = seen.pop("pid")
    return pid, (result.event, seen, [(c.delta, c.outcome, c.event) for c in result.calls])


@pytest.fixture(scope="module")
def fresh(victim_job):
    with SandboxPool(1, timeout=4.0, memory_mb=800, load_timeout=20.0) as alone:
        return victim_answer(alone.run(victim_job()))[1]


@pytest.fixture(scope="module")
def pool(victim_job, fresh):
    with SandboxPool(2, timeout=4.0, memory_mb=800, load_timeout=20.0) as sandbox:
        yield sandbox


@pytest.fixture
def alongside(pool, victim_job, fresh):
    """Run an attack while the victim's long call runs in its sibling; the checks that it changed nothing."""

    def run(job, name):
        # Both workers there first (the attacker's, then the victim's: the pool reuses its least
        # recently used slot), so the attack itself needs no start and every new process is suspect.
        pool.run(attack("fine"))
        victim_pid, answer = victim_answer(pool.run(victim_job(0.05)))
        assert answer == fresh, answer
        server, starts, processes = pool._servers[-1], pool.starts, sandbox_processes(pool)
        box = {}

        def victim():
            try:
                box["result"] = pool.run(victim_job())
            except BaseException as exc:  # the supervisor must never raise: fail the test with it
                box["error"] = exc

        thread = threading.Thread(target=victim)
        thread.start()
        time.sleep(0.25)
        try:
            attacked = pool.run(job)
        finally:
            thread.join()
        assert "error" not in box, box["error"]
        assert VICTIM_SECONDS <= box["result"].seconds < VICTIM_SECONDS + 2.5, box["result"]
        pid, answer = victim_answer(box["result"])
        assert answer == fresh, answer  # exactly what a fresh pool says
        assert pid == victim_pid, "the victim's worker was restarted"
        assert pool._servers[-1] is server and server.alive(), "the fork server died"
        assert pool.starts == starts, "a worker was started"
        assert sandbox_processes(pool) - processes == set(), "a process appeared in the sandbox"
        for path in escape_paths(name):
            assert not path.exists(), f"{path} escaped the sandbox"
        return attacked

    return run


def serving(pool, fork=False):
    """The pool still serves the attacker's env (and, if `fork`, forks a worker for an env it has not seen)."""
    after = pool.run(attack("fine", n=2))
    assert after.event is None and observation(after) == {"counter": 2}, after
    if not fork:
        return
    third = pool.run(Job(str(HOSTILE), "class", [{"name": "fine", "arguments": {"n": 4}}], entry="Hostile", state={}))
    assert third.event is None and observation(third) == {"counter": 4}, third


# 1. signals ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("how, sig, event", [
    ("kill", signal.SIGKILL, "forbidden: os.kill"),
    ("kill", signal.SIGSTOP, "forbidden: os.kill"),
    ("killpg", signal.SIGKILL, "forbidden: os.killpg"),
])
def test_killing_siblings_and_the_fork_server_is_a_violation(pool, alongside, how, sig, event):
    result = alongside(attack("sibling_kill", how=how, sig=int(sig)), f"kill-{how}")
    assert result.event == event, result
    serving(pool)


def test_pthread_kill_cannot_name_another_process(pool, alongside):
    # signal.pthread_kill takes a pthread_t, an address in the caller: a pid there is a bad pointer,
    # and the worker that tries it crashes itself (tgkill only ever names its own process).
    result = alongside(attack("sibling_kill", how="pthread_kill", sig=int(signal.SIGKILL)), "pthread-kill")
    assert result.event is not None and result.event.startswith("crash: worker killed by SIG"), result
    serving(pool)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGSTOP])
def test_signals_through_pidfds_and_file_owners_are_refused(pool, alongside, sig):
    # Before the fix, F_SETOWN + F_SETSIG on a pipe made the kernel send any signal (SIGKILL, SIGSTOP)
    # to a sibling or the fork server: same uid, and no kill() for seccomp to see.
    name = f"signals-{int(sig)}"
    seen = observation(alongside(attack("sibling_signals", sig=int(sig), name=name), name))
    assert seen.pop("fcntl reached") is True  # pruned from sys.modules, still reachable: the kernel refuses
    escape = seen.pop("escape")
    own = {key: seen.pop(key) for key in list(seen) if key.startswith("O_ASYNC")}  # its own pipe: allowed
    assert set(own.values()) == {"ok"}, own
    assert refused(seen) == {} and refused(escape) == {}, (seen, escape)
    assert set(seen.values()) == {"PermissionError:1"}, seen
    serving(pool, fork=True)


def test_limits_and_scheduling_of_other_processes_are_refused(pool, alongside):
    # Before the fix, prlimit (resource, reachable through sandbox._worker's globals) lowered a
    # sibling's or the fork server's limits (RLIMIT_AS, NOFILE, CPU, NPROC...) and setpriority /
    # sched_setaffinity / SCHED_IDLE reached siblings: same uid needs no capability.
    seen = observation(alongside(attack("sibling_meddle", name="meddle"), "meddle"))
    assert seen.pop("resource reached") is True
    escape = seen.pop("escape")
    assert refused(seen) == {} and refused(escape) == {}, (seen, escape)
    assert set(seen.values()) == {"PermissionError:1"}, seen
    serving(pool, fork=True)  # the fork server still forks (its limits are untouched)


# 2. memory and descriptors -------------------------------------------------------------------------
def test_other_processes_memory_environment_descriptors_root_and_cwd_are_closed(pool, alongside):
    seen = observation(alongside(attack("sibling_peek", name="peek"), "peek"))
    escape = seen.pop("escape")
    assert refused(seen) == {} and refused(escape) == {}, (seen, escape)
    assert seen and all(v.startswith(("PermissionError", "OSError", "FileNotFoundError")) for v in seen.values()), seen
    serving(pool)


# 3. filesystem -----------------------------------------------------------------------------------
def test_sibling_scratch_is_invisible_and_own_env_files_are_read_only(pool, alongside):
    seen = observation(alongside(attack("sibling_scratch", name="scratch"), "scratch"))
    escape = seen.pop("escape")
    assert seen.pop("ls /scratch") == ["env", "work"] and "victim.txt" not in seen.pop("ls work"), seen
    assert refused(seen) == {} and refused(escape) == {}, (seen, escape)
    own = {key: value for key, value in seen.items() if key.startswith("own env")}
    assert set(own.values()) == {"OSError:30"}, own  # EROFS: the kernel, not the hook
    serving(pool)


def test_remounting_env_files_or_a_new_namespace_fails_in_the_kernel(pool, alongside):
    # libc's mount/unshare/capset, resolved by envforge in the fork server, are emptied from the worker
    # after use; were they reachable, seccomp (and no capabilities) would refuse them. Env files stay read-only.
    seen = observation(alongside(attack("sibling_remount", name="remount"), "remount"))
    escape = seen.pop("escape")
    assert refused(escape) == {}, escape
    assert seen.pop("env write") == "OSError:30", seen
    assert "env.py" in seen.pop("ls /scratch/env"), seen
    assert seen == {"libc": "unreachable"} or set(seen.values()) == {-1}, seen
    serving(pool)


# 4. the fork server's control socket ------------------------------------------------------------
def test_no_descriptor_reaches_the_fork_server(pool, alongside):
    seen = observation(alongside(attack("sibling_fds", mode="others", name="fds"), "fds"))
    escape = seen.pop("escape")
    assert refused(escape) == {}, escape
    links = {key: value for key, value in seen.items() if key.startswith("link")}
    assert {k: v for k, v in links.items() if not v.endswith((":2", ":9"))} == \
        {"link 0": "/dev/null", "link 1": "/dev/null", "link 2": "/dev/null", "link 3": seen["link 3"]}, links
    assert seen["link 3"].startswith("socket:"), seen  # its own channel, the only socket it holds
    assert refused({k: v for k, v in seen.items() if k.startswith(("write", "read")) and
                    int(k.split()[1]) > 2}) == {}, seen
    assert seen["pids after"] == seen["pids before"], seen
    serving(pool)


@pytest.mark.parametrize("mode, event", [
    ("channel", ("protocol:", "output_too_large")),  # a spawn request down its own channel: to the supervisor
    ("sendmsg", ("forbidden: socket.",)),
])
def test_spawn_requests_never_reach_the_fork_server(pool, alongside, mode, event):
    result = alongside(attack("sibling_fds", mode=mode, name=f"fds-{mode}"), f"fds-{mode}")
    assert result.event is not None and result.event.startswith(event), result
    serving(pool, fork=True)


# 5. shared memory and SysV IPC ------------------------------------------------------------------
def test_shared_memory_and_ipc_are_refused(pool, alongside):
    seen = observation(alongside(attack("sibling_ipc", name="ipc"), "ipc"))
    escape = seen.pop("escape")
    assert refused(seen) == {} and refused(escape) == {}, (seen, escape)
    for module in ("multiprocessing.shared_memory", "_posixshmem", "mmap", "_multiprocessing"):
        assert seen[module].startswith(("ImportError", "ModuleNotFoundError", "PermissionError", "SandboxRefusal")), seen
    assert seen["mmap reached"] is False and seen["_posixshmem reached"] is False, seen
    assert seen["/dev/shm"] == "OSError:30", seen  # read-only
    assert seen["sysvipc shm"] == seen["sysvipc msg"] == seen["sysvipc sem"] == [], seen
    serving(pool)
