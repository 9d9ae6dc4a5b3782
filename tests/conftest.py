import fcntl
import shutil
from pathlib import Path

import pytest

from catalog.store import Catalog

REFERENCE_IDS = ["library", "bank", "clinic", "store"]
SQL_IDS = ["library", "bank", "clinic"]


@pytest.fixture(scope="session")
def reference():
    """The catalog with only the shipped reference envs (the user catalog folder does not exist)."""
    return Catalog(root="/nonexistent-envforge-catalog")


@pytest.fixture(scope="session")
def runtimes(reference):
    """One runtime per reference env, shared by the session (imports are the slow part)."""
    return {env_id: reference.get(env_id).runtime() for env_id in REFERENCE_IDS}


@pytest.fixture(scope="session")
def ray_cluster():
    """A local Ray cluster of 2 CPUs for this test process (one per pytest-xdist worker), shut down at the end.

    The executors join a running instance as it is, so every `--executor ray` path under test runs
    on this cluster's actors: real worker processes, real object store, real scheduling.
    """
    from executors.ray_pool import connect

    ray = connect(None, num_cpus=2)
    yield ray
    ray.shutdown()


SYNTHESIZED_N, SYNTHESIZED_SEED = 8, 4


@pytest.fixture(scope="session")
def synthesized_catalog(tmp_path_factory, worker_id) -> Path:
    """Eight envs synthesized once per test run (seed 4, the default size) and shared by every xdist worker.

    A run costs tens of seconds, and several files only need some synthesized envs beside the reference
    ones: the first worker to ask builds the catalog under a lock in the run's shared temp folder, the
    others wait for it. Read-only: a test that writes takes `synthesized_copy`.
    """
    from synth.run import RunConfig, synthesize

    base = tmp_path_factory.getbasetemp()
    shared = base if worker_id == "master" else base.parent  # xdist: .../pytest-N/popen-gwK, shared .../pytest-N
    root = shared / "synthesized-catalog"
    with (shared / "synthesized-catalog.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (shared / "synthesized-catalog.done").is_file():
            shutil.rmtree(root, ignore_errors=True)  # a builder that died half-way
            report = synthesize(RunConfig(n=SYNTHESIZED_N, seed=SYNTHESIZED_SEED, catalog=str(root)), progress=False)
            assert report.registered == SYNTHESIZED_N, report.rejections
            (shared / "synthesized-catalog.done").write_text(report.run_id)
    return root


@pytest.fixture
def synthesized_copy(synthesized_catalog, tmp_path) -> Path:
    """A private copy of the shared synthesized catalog, for a test that writes into it."""
    return Path(shutil.copytree(synthesized_catalog, tmp_path / "synthesized", symlinks=True))


# The files that take longest (each runs whole synthesis runs or a Ray cluster): run first. Under
# `-n 2 --dist loadfile` the files go to the workers in collection order, and these come late in it
# (synth/, verifier/, test_cli*), so one worker finished its last long file minutes after the other.
LONG_FILES = ("tests/synth/test_pipeline.py", "tests/synth/test_scaleout.py", "tests/verifier/test_verify_all.py",
              "tests/test_cli_badinput.py", "tests/test_cli_bench.py", "tests/test_cli.py",
              "tests/synth/llm/test_llm_pipeline.py", "tests/verifier/test_samples.py")


def pytest_collection_modifyitems(config, items):
    """Long files first, the rest in collection order (a stable sort: tests within a file keep their order)."""
    rank = {path: index for index, path in enumerate(LONG_FILES)}
    root = Path(str(config.rootpath))
    items.sort(key=lambda item: rank.get(Path(str(item.path)).relative_to(root).as_posix(), len(LONG_FILES)))
