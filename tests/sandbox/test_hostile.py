"""Hostile env code against the rebuilt sandbox: one attack per category, each proven contained.

Every attack runs in a real pool (bubblewrap, seccomp, audit hook) through the fixture env
tests/fixtures/hostile_attacks (class `Attacks`), which reaches `os`/`sys` only the way hostile
code would (`random._os`, `sys.modules`, subclass walking). For each attack the test asserts:
it ends in the right event or a harmless error, no file appeared outside the scratch folder (on
the host), the pool keeps serving (the next job of the attacked env gets a fresh, right answer)
and another env's results (the reference `library`) are identical to the ones before any attack.
Every attack goes through `pool.run` directly, so an exception out of the supervisor fails it.
"""

import decimal
import json
import os
import sqlite3
import sys
import time
from pathlib import Path

import pytest

from catalog.store import Catalog
from sandbox.allowlist import STUBBED_IMPORTS
from sandbox.pool import Job, SandboxPool

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
ATTACKS = FIXTURES / "hostile_attacks"
HOSTILE = FIXTURES / "hostile"
ROOT = Path(__file__).resolve().parents[2]
SECRET = "s3cret"
IMMUTABLE = {"str", "int", "bool", "NoneType", "tuple", "frozenset", "type", "builtin_function_or_method",
             "method_descriptor"}


def attack(tool, **arguments):
    return Job(str(ATTACKS), "class", [{"name": tool, "arguments": arguments}], entry="Attacks", state={})


def library_job():
    library = Catalog("/nonexistent").get("library")
    return Job.for_env(library, [{"name": "borrow_book", "arguments": {"member_id": "M002", "book_id": "B010"}}],
                       state_name="default", snapshot=True)


def answers(result):
    return result.event, [(c.observation, c.delta, c.outcome, c.state, c.event) for c in result.calls]


def escape_paths(name):
    return [Path(f"/tmp/envforge-escape-{name}"), Path(f"/work/main/escape-{name}"), ROOT / f"escape-{name}"]


def observation(result):
    assert result.calls, result
    return result.calls[0].observation


@pytest.fixture(scope="module")
def pool():
    os.environ["ENVFORGE_TEST_SECRET"] = SECRET  # in the parent before any worker exists
    try:
        with SandboxPool(3, timeout=2.0, memory_mb=800, load_timeout=20.0) as sandbox:
            yield sandbox
    finally:
        os.environ.pop("ENVFORGE_TEST_SECRET", None)


@pytest.fixture(scope="module")
def baseline(pool):
    result = pool.run(library_job())
    assert result.event is None and result.calls[0].outcome == "success" and len(result.calls[0].delta) == 5, result
    return answers(result)


@pytest.fixture
def contained(pool, baseline):
    """Call it with the attack's name after the attack: nothing escaped, the pool serves, others unchanged."""

    def check(name):
        for path in escape_paths(name):
            assert not path.exists(), f"{path} escaped the sandbox"
        after = pool.run(attack("fine", n=2))
        assert after.event is None and observation(after) == {"counter": 2}, after
        assert answers(pool.run(library_job())) == baseline

    return check


# 1. catching the violation and disarming the guard ------------------------------------------------
def test_except_baseexception_cannot_swallow_a_violation(pool, contained):
    result = pool.run(attack("swallow_violation", name="swallow"))
    assert result.event == "forbidden: os.system" and result.calls == [], result
    contained("swallow")


def test_the_hook_frame_holds_nothing_to_change(pool, contained):
    # The ImportError the hook raises carries its frame in the traceback: env code can reach it,
    # so everything there must be immutable (no helper function with writable cells or code).
    seen = observation(pool.run(attack("hook_frame")))
    assert seen["function"] == "hook", seen
    assert set(seen["locals"].values()) <= IMMUTABLE, seen["locals"]
    contained("hook-frame")


def test_disarming_the_guard_from_frames_and_modules_fails(pool, contained):
    # Before the fix this disarmed the hook (closure cells of its `stop` helper set to a no-op):
    # os.system then ran into seccomp instead of ending the worker.
    result = pool.run(attack("disarm_guard", name="disarm"))
    assert result.event == "forbidden: os.system", result
    contained("disarm")


def test_gc_introspection_is_refused_or_a_violation(pool, contained):
    result = pool.run(attack("gc_hunt"))
    if result.event is not None:
        assert result.event.startswith("forbidden: gc."), result
    else:
        assert observation(result)["gc"].startswith("ImportError"), result
    contained("gc")


# 2. native process creation -----------------------------------------------------------------------
@pytest.mark.parametrize("tool, event", [
    ("posix_spawn", "forbidden: os.posix_spawn"),
    ("execv", "forbidden: os.exec"),
])
def test_process_creation_through_os_is_a_violation(pool, contained, tool, event):
    result = pool.run(attack(tool, name=tool))
    assert result.event == event, result
    contained(tool)


def test_fork_exec_without_audit_event_fails_in_the_kernel(pool, contained):
    # _posixsubprocess.fork_exec (found through subprocess.Popen by subclass walking, though the
    # modules are pruned) raises no audit event: seccomp refuses the clone.
    result = pool.run(attack("fork_exec", name="fork-exec"))
    assert result.event is None and observation(result) == {"refused": "PermissionError", "errno": 1}, result
    contained("fork-exec")


def test_direct_syscall_through_ctypes_is_refused(pool, contained):
    result = pool.run(attack("ctypes_syscall"))
    # Either the hook stops the native call, or ctypes (emptied in the worker after envforge used it) breaks.
    emptied = bool(result.calls) and str(result.calls[0].observation).startswith(("{'error': 'NameError",
                                                                                  "{'error': \"NameError"))
    assert (result.event or "").startswith("forbidden: ctypes.") or emptied, result
    contained("ctypes")


# 3. importlib of disallowed modules --------------------------------------------------------------------
def test_import_module_of_disallowed_modules_is_refused(pool, contained):
    # Packages are refused when importlib reads their source (it raises no import event), extension
    # modules by their import event; the stubbed ones give their stand-in (no spec, no file), never the module.
    names = ["subprocess", "socket", "ctypes", "_posixsubprocess", "multiprocessing", "pty", "mmap", "pyseccomp",
             "select", "fcntl", "resource", "_ssl", "_multiprocessing", "asyncio", "urllib"]  # _socket, _ctypes: below
    seen = observation(pool.run(attack("import_modules", names=names)))
    expected = {name: "stand-in" if name in STUBBED_IMPORTS else ("ImportError", "PermissionError") for name in names}
    wrong = {name: seen[name] for name in names if seen[name] not in expected[name]}
    assert wrong == {}, seen
    assert seen["subprocess source"] == "PermissionError" and seen["in sys.modules"] == [], seen
    contained("importlib")


@pytest.mark.parametrize("tool, event", [
    ("raw_socket", "forbidden: socket.__new__"),
    ("raw_dlopen", "forbidden: ctypes.dlopen"),
])
def test_reimported_cached_extension_modules_are_useless(pool, contained, tool, event):
    # Known gap in the first layer: an extension module loaded before pruning (single-phase init)
    # is re-imported by importlib.import_module from CPython's extension cache without an import
    # event. What it gives is still stopped by the hook (and by seccomp under it).
    result = pool.run(attack(tool))
    assert result.event == event, result
    contained(tool)


# 4. sqlite3 outside the scratch -----------------------------------------------------------------------
@pytest.mark.parametrize("path, uri, name", [
    ("/tmp/envforge-escape-sqlite", False, "sqlite"),
    ("../../../work/main/escape-sqlite-up", False, "sqlite-up"),  # relative, climbing out of the scratch
    ("file:/tmp/envforge-escape-sqlite-uri?mode=rwc", True, "sqlite-uri"),
])
def test_sqlite_connect_outside_the_scratch_is_a_violation(pool, contained, path, uri, name):
    result = pool.run(attack("sqlite_connect", path=path, uri=uri))
    assert result.event is not None and result.event.startswith("forbidden: sqlite3.connect to "), result
    contained(name)


def test_sqlite_on_the_catalog_index_changes_nothing(pool, contained, tmp_path):
    index = tmp_path / "catalog" / "index.sqlite"
    index.parent.mkdir()
    with sqlite3.connect(index) as connection:
        connection.execute("CREATE TABLE envs (id TEXT)")
    before = index.read_bytes()
    result = pool.run(attack("sqlite_connect", path=str(index)))
    assert result.event == f"forbidden: sqlite3.connect to {index}", result
    attached = pool.run(attack("sqlite_attach", path=str(index)))
    assert attached.event is None and "refused" in observation(attached), attached
    assert index.read_bytes() == before
    contained("catalog-index")


def test_sqlite_attach_outside_the_scratch_is_refused_by_the_filesystem(pool, contained):
    # ATTACH raises no audit event: the read-only filesystem is what refuses it.
    result = pool.run(attack("sqlite_attach", path="/work/main/escape-attach"))
    assert result.event is None and "refused" in observation(result), result
    contained("attach")


# 5. signal handlers, timers and threads that act after the call ---------------------------------
@pytest.mark.parametrize("tool, arguments, reason", [
    ("alarm", {}, "a timer left pending"),
    ("handler_only", {}, "signal"),
    ("timer", {}, "thread(s) left running"),
    ("late_thread", {"name": "late-thread"}, "thread(s) left running"),
])
def test_leftovers_recycle_the_worker(pool, contained, tool, arguments, reason):
    result = pool.run(attack(tool, **arguments))
    assert result.event is None and result.recycled is not None and reason in result.recycled, result
    time.sleep(1.1 if tool == "alarm" else 0.4)  # past the alarm and the threads' writes, had they survived
    contained(arguments.get("name", tool))


# 6. forged protocol frames ---------------------------------------------------------------------------
@pytest.mark.parametrize("mode, event", [
    ("garbage", "protocol: malformed frame"),
    ("header-2gb", "output_too_large"),
    ("call", "protocol: an unexpected call frame"),
    ("next", "protocol: a frame for another job"),
    ("done-event-not-text", "protocol: malformed done frame (event:"),
    ("call-event-not-text", "protocol: malformed call frame (event:"),
    ("bad-fields", "protocol: malformed call frame (delta:"),
    ("deep", "protocol: malformed frame (nested too deep)"),
    ("not-object", "protocol: malformed frame (not a JSON object)"),
    ("violation-alive", "crash: worker stopped answering"),
    ("outcome-not-outcome", "protocol: malformed call frame (outcome:"),
    ("outcome-unknown", "protocol: malformed call frame (outcome:"),
    ("delta-not-list", "protocol: malformed call frame (delta:"),
    ("delta-bad-op", "protocol: malformed call frame (delta.0.op:"),
    ("delta-bad-path", "protocol: malformed call frame (delta.0.path.0"),
    ("delta-path-text", "protocol: malformed call frame (delta.0.path:"),
    ("state-not-object", "protocol: malformed call frame (state:"),
    ("tools-not-list", "protocol: malformed ready frame (tools:"),
    ("huge-nested", "protocol: malformed call frame (nested deeper than 200)"),
])
def test_forged_frames_end_the_job_and_never_shift_the_next(pool, contained, mode, event):
    starts = pool.starts
    result = pool.run(attack("forge", mode=mode))
    assert result.event is not None and result.event.startswith(event), result
    assert result.calls == [] or mode in ("call",), result  # no unvalidated value reached the result
    contained(f"forge-{mode}")
    assert pool.starts > starts  # the worker that sent it was retired: the next job got a new one


FORGED_READY = """
_os = random._os
def _job():
    frame = _os.sys._getframe()
    while frame is not None:
        channel = frame.f_locals.get("channel")
        if channel is not None and hasattr(channel, "job"):
            return channel.job
        frame = frame.f_back
_body = json.dumps({**%s, "job": _job()}).encode()
for _fd in range(1, 11):
    try:
        _os.write(_fd, len(_body).to_bytes(4, "big") + _body)
    except BaseException:
        pass
"""


@pytest.mark.parametrize("body, event", [
    ({"ready": True, "state": [1, 2]}, "protocol: malformed ready frame (state:"),
    ({"ready": True, "tools": [{"name": 5}]}, "protocol: malformed ready frame (tools.0.name:"),
    ({"ready": True, "tools": {"a": 1}}, "protocol: malformed ready frame (tools:"),
])
def test_a_forged_first_ready_frame_is_validated(pool, contained, tmp_path, body, event):
    # Sent while the env module loads, so it arrives before the worker's own ready frame.
    (tmp_path / "env.py").write_text("import json\nimport random\n" + FORGED_READY % body +
                                     "\nclass Loud:\n    def fine(self):\n        return {'loaded': True}\n")
    job = Job(str(tmp_path), "class", [{"name": "fine", "arguments": {}}], entry="Loud", state={}, describe=True)
    result = pool.run(job)
    assert result.event is not None and result.event.startswith(event), result
    assert result.initial_state is None and result.tools is None, result
    contained("forged-ready")


# 6b. limits that hold -----------------------------------------------------------------------------
def test_memfd_create_is_refused_by_the_kernel(pool, contained):
    # Before: a worker capped at 800 MB held 1.4 GB in a memfd across jobs and stayed warm.
    result = pool.run(attack("memfd", megabytes=1400))
    assert result.event is None and observation(result) == {"refused": "PermissionError", "errno": 1}, result
    contained("memfd")


def test_no_anonymous_file_holds_more_than_the_scratch(pool, contained):
    seen = observation(pool.run(attack("anonymous_files", megabytes=100)))
    assert seen["shm"].startswith(("OSError:30", "PermissionError", "FileNotFoundError")), seen  # /dev/shm is read-only
    for route in ("tmpfile", "scratch"):  # the tmpfs is capped at 64 MB
        assert seen[route].startswith("OSError:28 after ") and int(seen[route].split()[-2]) <= 64, seen
    contained("anonymous-files")


def test_hidden_threads_and_handlers_still_retire_the_worker(pool, contained):
    # The worker's own check (os.listdir, its _leftovers, signal.getsignal) is patched to see nothing;
    # the fork server reads the worker's /proc/<pid>/task and signal masks from outside.
    result = pool.run(attack("hide_threads", name="hidden-thread"))
    assert result.event is None and result.recycled == "1 thread(s) left running", result
    time.sleep(0.4)  # past the thread's write, had it survived
    contained("hidden-thread")


def test_a_forged_whole_result_is_only_the_env_lying_about_itself(pool, contained):
    # Env code owns its worker: it can answer its own call (as it could by returning anything).
    # What matters is that the real frames that follow never become the next job's answers.
    result = pool.run(attack("forge", mode="result"))
    assert result.event is None or result.event.startswith("protocol:"), result
    time.sleep(0.3)
    fresh = pool.run(attack("fine", n=5))
    assert fresh.event is None and observation(fresh) == {"counter": 5}, fresh
    contained("forge-result")


def test_frames_sent_to_keep_a_call_alive_do_not_beat_the_timeout(pool, contained):
    # Before the fix, each forged `ready`/call frame reset the deadline: a call could run forever.
    result = pool.run(attack("keep_alive", seconds=6.0))
    assert result.event is not None and result.event.startswith("protocol:"), result
    assert result.seconds < 4.0, result
    contained("keep-alive")


# 7. monkeypatching shared modules ----------------------------------------------------------------------
def test_monkeypatching_shared_modules_affects_only_that_worker(pool, contained):
    result = pool.run(attack("monkeypatch"))  # json.dumps now returns garbage frames in that worker
    assert result.event is None or result.event.startswith(("protocol:", "crash:")), result
    third = pool.run(Job(str(HOSTILE), "class", [{"name": "third", "arguments": {}}], entry="Hostile", state={}))
    assert observation(third) == {"third": str(decimal.Decimal(1) / decimal.Decimal(3))}
    contained("monkeypatch")


# 8. sys.path poisoning ----------------------------------------------------------------------------
def test_sys_path_poisoning_stays_in_its_worker(pool, baseline, contained):
    poisoned = pool.run(attack("poison_path", name="syspath"))
    assert poisoned.event is None and observation(poisoned)["sys.path"][0] == "/scratch", poisoned
    assert answers(pool.run(library_job())) == baseline
    # The same env's next job imports json again: either its worker was recycled for the changed
    # sys.path (a fresh worker finds the real json), or it runs the planted json.py, whose write
    # outside the scratch is a violation.
    again = pool.run(attack("import_json_again"))
    if poisoned.recycled:
        assert again.event is None and not observation(again)["json"].startswith("/scratch"), again
    else:
        assert again.event == "forbidden: write to /tmp/envforge-escape-syspath", again
    contained("syspath")


# 9. the parent's environment and files --------------------------------------------------------------
def test_env_code_sees_no_secret_and_no_host_files(pool, contained, tmp_path):
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    (catalog / "index.sqlite").write_text("index")
    seen = observation(pool.run(attack("snoop", folders=[str(catalog), str(ROOT / "tests"), str(Path.home()),
                                                         str(ROOT)])))
    text = json.dumps(seen)
    assert SECRET not in text and "ENVFORGE_TEST_SECRET" not in text
    assert set(seen["environ"]) <= {"PATH", "HOME", "TMPDIR", "TZ", "LANG", "PYTHONDONTWRITEBYTECODE",
                                    "PYTHONHASHSEED", "PWD"}, seen["environ"]
    assert seen["/etc/passwd"].startswith("error:") and seen["/etc/shadow"].startswith("error:")
    # A folder exists in the sandbox only as a path to what it binds (the project's packages, Python).
    bound = [str(ROOT / p) for p in ("catalog", "constraints", "verifier")] + [sys.prefix, sys.base_prefix]
    for folder in ("/home", "/tmp"):
        listing = seen[f"ls {folder}"]
        assert isinstance(listing, str) and listing.startswith("error:") or \
            all(any(b.startswith(f"{folder}/{entry}/") for b in bound) for entry in listing), (folder, listing)
    assert set(seen[f"ls {ROOT}"]) <= {"catalog", "constraints", "sandbox", ".venv"}, seen[f"ls {ROOT}"]
    assert seen[f"ls {catalog}"].startswith("error:") and seen[f"ls {ROOT / 'tests'}"].startswith("error:")
    # Only the sandbox's own processes are there (bwrap, the fork server, workers), never the host's.
    pids = [p for p in seen["ls /proc"] if p.isdigit()]
    assert 2 <= len(pids) <= 8, seen["ls /proc"]
    assert not [p for p in pids if "pytest" in seen.get(f"/proc/{p}/cmdline", "")], seen
    contained("snoop")


# 10. module-level code at import ---------------------------------------------------------------------
IMPORT_ATTACKS = {
    "write": "open('/tmp/envforge-escape-import-write', 'w').write('x')\n",
    "fork": "random._os.fork()\n",
    "system": "random._os.system('touch /tmp/envforge-escape-import-system')\n",
    "spin": "while True:\n    pass\n",
}


@pytest.fixture(scope="module")
def import_envs(tmp_path_factory):
    envs = {}
    for name, code in IMPORT_ATTACKS.items():
        folder = tmp_path_factory.mktemp(f"import-{name}")
        (folder / "env.py").write_text(f"import random\n\n{code}\n\nclass Loud:\n    def fine(self):\n"
                                       "        return {'loaded': True}\n")
        envs[name] = folder
    return envs


@pytest.mark.parametrize("name, event", [
    ("write", "forbidden: write to /tmp/envforge-escape-import-write"),
    ("fork", "forbidden: os.fork"),
    ("system", "forbidden: os.system"),
])
def test_module_level_attacks_are_contained_at_load(pool, contained, import_envs, name, event):
    result = pool.run(Job(str(import_envs[name]), "class", [{"name": "fine", "arguments": {}}], entry="Loud",
                          state={}))
    assert result.event == event and result.calls == [], result
    contained(f"import-{name}")


def test_module_level_spin_times_out_at_load(import_envs, contained):
    # A pool of its own with a short load allowance (the shared pool's allows slow worker starts).
    with SandboxPool(1, timeout=1.0, load_timeout=1.0, memory_mb=800) as small:
        result = small.run(Job(str(import_envs["spin"]), "class", [{"name": "fine", "arguments": {}}],
                               entry="Loud", state={}))
    assert result.event == "timeout" and result.calls == [], result
    contained("import-spin")


# 11. fork bomb and thread bomb -----------------------------------------------------------------------
def test_fork_bomb_is_a_violation(pool, contained):
    assert pool.run(attack("fork_bomb")).event == "forbidden: os.fork"
    contained("fork-bomb")


def test_fork_exec_bomb_creates_no_process(pool, contained):
    result = pool.run(attack("fork_exec_bomb"))
    assert result.event is None and observation(result) == {"pids": 0, "errnos": [1]}, result
    contained("fork-exec-bomb")


def test_thread_bomb_is_bounded_and_recycled(pool, contained):
    result = pool.run(attack("thread_bomb"))
    events = [result.event] + [c.event for c in result.calls]
    if result.event is None and result.calls[0].event is None:
        seen = observation(result)
        assert seen["error"] is not None and seen["started"] < 5000, seen  # the memory limit stopped it
        assert result.recycled is not None and "thread(s) left running" in result.recycled, result
    else:
        assert set(events) - {None} <= {"memory", "crash"}, result
    contained("thread-bomb")


# 12. huge outputs ------------------------------------------------------------------------------------
def test_a_huge_result_is_output_too_large_not_a_timeout(pool, contained):
    result = pool.run(attack("huge", megabytes=100))
    assert result.event == "output_too_large", result
    contained("huge")


# 13. decimal context -------------------------------------------------------------------------------
def test_a_changed_decimal_context_affects_only_its_env(pool, contained):
    changed = pool.run(attack("decimal_prec", prec=3))
    assert observation(changed) == {"third": "0.333"}, changed
    third = pool.run(Job(str(HOSTILE), "class", [{"name": "third", "arguments": {}}], entry="Hostile", state={}))
    assert observation(third) == {"third": str(decimal.Decimal(1) / decimal.Decimal(3))}, third
    contained("decimal")


# 14. stubbed modules: imported unused, refused at the use ----------------------------------------------
IMPORTS = FIXTURES / "hostile_imports"


def stubbed(tool, **arguments):
    """The tool, then a plain call in the same job: the worker that refused the first serves the second."""
    return Job(str(IMPORTS), "class", [{"name": tool, "arguments": arguments}, {"name": "fine", "arguments": {}}],
               entry="Imports", state={})


@pytest.mark.parametrize("tool, refused", [
    ("run_process", "subprocess.run"),
    ("popen", "subprocess.Popen"),
    ("subclass", "subprocess.Popen"),
    ("connect", "socket.create_connection"),
    ("native", "ctypes.CDLL"),
    ("spawn", "multiprocessing.Process"),
])
def test_a_stubbed_module_imports_and_its_use_is_refused_at_the_call(pool, contained, tool, refused):
    result = pool.run(stubbed(tool))
    assert result.event is None and result.recycled is None, result
    call, after = result.calls
    module = refused.split(".")[0]
    assert call.outcome == "crash" and call.observation == {
        "error": f"SandboxRefusal: {refused} is refused in the sandbox: env code may import {module}, not use it "
                 f"to {STUBBED_IMPORTS[module]}"}, call
    assert after.outcome == "success" and after.observation == {"counter": 1}, after
    contained("stub")


def test_a_refusal_is_a_permission_error_env_code_may_handle(pool, contained):
    call = pool.run(stubbed("guarded")).calls[0]
    assert call.outcome == "failure" and call.observation["error"].startswith("SandboxRefusal: subprocess.check_output")
    contained("stub")


@pytest.mark.parametrize("name", ["subprocess", "socket", "ctypes"])
def test_dropping_a_stand_in_does_not_give_the_real_module(pool, contained, name):
    call = pool.run(stubbed("reimport", name=name)).calls[0]
    assert call.observation["error"] in ("ImportError", "PermissionError"), call
    contained("stub")


def test_nothing_real_is_reachable_from_the_stand_ins(pool, contained):
    seen = observation(pool.run(stubbed("reach")))
    assert seen["found"] == [] and seen["walked"] > 20, seen
    contained("stub")


def test_a_stand_in_used_at_module_level_refuses_the_load(pool, contained, tmp_path):
    (tmp_path / "env.py").write_text("import subprocess\n\nVERSION = subprocess.check_output(['uname'])\n\n\n"
                                     "class Loud:\n    def fine(self):\n        return {'loaded': True}\n")
    result = pool.run(Job(str(tmp_path), "class", [{"name": "fine", "arguments": {}}], entry="Loud", state={}))
    assert result.calls == [] and "SandboxRefusal: subprocess.check_output is refused" in (result.event or ""), result
    contained("stub")
