"""The journal of a run folder: appended once per unit, garbage set aside on resume, nothing dropped."""

from __future__ import annotations

import json
from pathlib import Path

from catalog.runs.journal import Journal, rejected_path


def _is_record(line: dict) -> bool:
    return isinstance(line.get("id"), str)


def test_a_unit_is_appended_once_and_read_back(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "units.jsonl", _is_record)
    done = journal.resume()
    with journal.appending(done) as append:
        assert append({"id": "a", "n": 1}) and append({"id": "b", "n": 2})
        assert not append({"id": "a", "n": 3})  # on file already: never written twice
    assert journal.read() == {"a": {"id": "a", "n": 1}, "b": {"id": "b", "n": 2}} == done


def test_garbage_is_set_aside_not_dropped(tmp_path: Path) -> None:
    path = tmp_path / "units.jsonl"
    path.write_text('{"id": "a"}\n[1, 2]\n{"no": "id"}\n{"id": "b"', encoding="utf-8")  # a torn last line
    journal = Journal(path, _is_record)
    assert journal.resume() == {"a": {"id": "a"}}
    assert path.read_text(encoding="utf-8") == '{"id": "a"}\n'
    assert rejected_path(path).read_text(encoding="utf-8").splitlines() == ['[1, 2]', '{"no": "id"}', '{"id": "b"']


def test_which_line_of_an_id_wins_is_the_folders_choice(tmp_path: Path) -> None:
    path = tmp_path / "units.jsonl"
    path.write_text("".join(json.dumps({"id": "a", "n": n}) + "\n" for n in (1, 2)), encoding="utf-8")
    assert Journal(path, _is_record).read()["a"]["n"] == 2
    assert Journal(path, _is_record, first_wins=True).read()["a"]["n"] == 1
