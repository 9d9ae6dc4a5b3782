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
