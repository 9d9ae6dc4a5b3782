from ..conftest import REFERENCE_IDS, SQL_IDS  # noqa: F401 - re-exported for the test modules
