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
