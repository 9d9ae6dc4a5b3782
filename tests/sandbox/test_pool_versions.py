"""A worker serves one env version, identified by content: the same files written again keep it."""

import shutil
from pathlib import Path

from catalog.store import read_env
from sandbox.pool import Job, SandboxPool

LIBRARY = Path(__file__).resolve().parents[2] / "catalog" / "reference" / "library"


def _rewrite(source: Path, target: Path) -> None:
    """Write the env folder anew (new files, new modification times), as the catalog does."""
    fresh = target.with_name(target.name + ".new")
    shutil.copytree(source, fresh)
    shutil.rmtree(target)
    fresh.rename(target)


def test_a_rewritten_env_keeps_its_worker_and_an_edited_one_gets_a_new_one(tmp_path):
    folder = tmp_path / "library"
    shutil.copytree(LIBRARY, folder)

    def count(handle):
        job = Job.for_env(handle, [{"name": "list_member_loans", "arguments": {"member_id": "M001"}}], state_name="default")
        result = pool.run(job)
        assert result.event is None and result.calls[0].outcome == "success", result

    with SandboxPool(1, timeout=4.0, memory_mb=800, load_timeout=20.0) as pool:
        count(read_env(folder))
        _rewrite(LIBRARY, folder)  # same content, new mtimes
        (folder / "tasks.jsonl").write_text("")  # the catalog's own files do not count
        count(read_env(folder))
        assert pool.starts == 1
        (folder / "env.py").write_text((folder / "env.py").read_text() + "\n# edited\n")
        count(read_env(folder))
        assert pool.starts == 2
        (folder / "states" / "default.json").write_text((LIBRARY / "states" / "default.json").read_text() + "\n")
        count(read_env(folder))
        assert pool.starts == 3
