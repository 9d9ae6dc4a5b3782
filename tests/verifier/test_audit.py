"""Audits: scoring, resume, fatal endpoint errors, strata and the report, on items executed for real.

The simulators here are test doubles of the Simulator *interface* (answers computed from the
gold); the real simulators are tested with their own packages.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

import pytest
from sqlmodel import Field

from catalog.bench.items import BenchItem, SimResult
from catalog.bench.strata import rung_of_strata
from catalog.envkit import Env, fail, ok, table_base, tool
from catalog.models import Action
from catalog.runtime import SqlRuntime
from catalog.store import Catalog
from verifier.audit.run import (
    RECORD_KEYS,
    RESULTS_FILE,
    AuditAborted,
    AuditError,
    audit_order,
    compare_reports,
    load_results,
    rebuild_report,
    run_audit,
)

# name -> (state, tool, arguments); the comment is the EnvSimBench group the executed call lands in.
LIBRARY_CALLS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "fail": ("default", "get_member", {"member_id": "M999"}),  # failure
    "read": ("default", "get_member", {"member_id": "M001"}),  # no_change_args1
    "search": ("default", "search_books", {"query": "le guin", "available_only": True}),  # no_change_args2+
    "hold": ("default", "place_hold", {"member_id": "M001", "book_id": "B004"}),  # simple_1
    "renew": ("default", "renew_loan", {"loan_id": "loan-1"}),  # simple_2
    "pay": ("default", "pay_fine", {"fine_id": "fine-2", "amount": 12.0}),  # medium_3
    "return": ("default", "return_book", {"loan_id": "loan-1"}),  # medium_4
    "borrow": ("default", "borrow_book", {"member_id": "M002", "book_id": "B010"}),  # medium_5
    "overdue_return": ("overdue", "return_book", {"loan_id": "loan-1"}),  # difficult_7_12 (|Δ| 7)
    "lost": ("default", "declare_book_lost", {"loan_id": "loan-2"}),  # difficult_7_12 (|Δ| 10)
}


def _item(env_id: str, kind: str, code: str, runtime: Any, state: dict[str, Any], name: str,
          arguments: dict[str, Any]) -> BenchItem:
    """Execute one call in-process and wrap the verified sample as a BenchItem."""
    runtime.reset(state)
    before = runtime.snapshot()
    action = Action(name=name, arguments=arguments)
    return BenchItem.from_step(env_id, before, action, runtime.call(action, snapshot=True), env_kind=kind,
                               env_code=code)


@pytest.fixture(scope="module")
def items() -> dict[str, BenchItem]:
    handle = Catalog(root="/nonexistent-envforge-catalog").get("library")
    runtime = handle.runtime()
    code = (handle.path / "env.py").read_text(encoding="utf-8")
    return {key: _item("library", "sql", code, runtime, handle.state(state), name, args)
            for key, (state, name, args) in LIBRARY_CALLS.items()}


Table = table_base()


class Note(Table, table=True):
    __tablename__ = "notes"
    id: str = Field(primary_key=True)
    text: str = ""


class NotesEnv(Env):
    tables = (Note,)

    @tool(kind="write")
    def delete_note(self, note_id: str) -> dict:
        """Delete a note.

        Args:
            note_id: The note.
        """
        note = self.get(Note, note_id)
        if note is None:
            return fail(f"Note {note_id} not found")
        self.delete(note)
        return ok(message=f"Deleted {note_id}")


@pytest.fixture(scope="module")
def deletion() -> BenchItem:
    state = {"notes": {"n1": {"id": "n1", "text": "keep"}, "n2": {"id": "n2", "text": "drop"}}}
    return _item("notes", "sql", "class NotesEnv(Env): ...", SqlRuntime(NotesEnv), state, "delete_note",
                 {"note_id": "n2"})


def oracle(item: BenchItem) -> SimResult:
    return SimResult(observation=item.observation, delta=item.delta, tokens_in=100, tokens_out=20, cost_usd=0.001)


class FakeSim:
    """Test double of the Simulator protocol: answers with `answer(item)`, records every id asked."""

    def __init__(self, answer: Callable[[BenchItem], SimResult] = oracle, *, name: str = "fake", mode: str = "plain",
                 fail_at: int | None = None, fail_with: BaseException | None = None) -> None:
        self.name, self.mode = name, mode
        self.answer, self.fail_at, self.fail_with = answer, fail_at, fail_with
        self.asked: list[str] = []
        self.returned: list[str] = []
        self.lock = threading.Lock()

    def predict(self, item: BenchItem) -> SimResult:
        with self.lock:
            count = len(self.asked)
            self.asked.append(item.id)
        if self.fail_at is not None and count >= self.fail_at:
            assert self.fail_with is not None
            raise self.fail_with
        result = self.answer(item)
        with self.lock:
            self.returned.append(item.id)
        return result


def _lines(folder) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / RESULTS_FILE).read_text(encoding="utf-8").splitlines()]


UNRELATED = {"op": "modify", "path": ["members", "M002", "name"], "value": "Somebody Else"}


def test_the_executed_items_land_in_the_intended_groups(items, deletion):
    groups = {key: rung_of_strata(item.strata).name for key, item in items.items()}
    assert groups == {"fail": "failure", "read": "no_change_args1", "search": "no_change_args2+", "hold": "simple_1",
                      "renew": "simple_2", "pay": "medium_3", "return": "medium_4", "borrow": "medium_5",
                      "overdue_return": "difficult_7_12", "lost": "difficult_7_12"}
    assert [op["op"] for op in deletion.delta] == ["delete"]


def test_an_unrelated_edit_fails_strict_cm_and_passes_compat_cm(items, tmp_path):
    chosen = [items["hold"], items["fail"]]
    sim = FakeSim(lambda item: SimResult(observation=item.observation, delta=[*item.delta, UNRELATED]))
    report = run_audit(chosen, sim, tmp_path, plots=False)
    for record in _lines(tmp_path):
        assert (record["fm"], record["cm_strict"], record["cm_compat"]) == (True, False, True)
        assert set(RECORD_KEYS) <= record.keys()
    assert (report.cm_strict, report.cm_compat, report.verified_yield) == (0.0, 1.0, 0.0)
    hold = next(w for w in report.worst if w["id"] == items["hold"].id)
    assert hold["diff"] == ['+ modify ["members", "M002", "name"] = "Somebody Else"']


def test_a_correct_deletion_passes_strict_cm(deletion, tmp_path):
    report = run_audit([deletion], FakeSim(), tmp_path, plots=False)
    [record] = _lines(tmp_path)
    assert record["cm_strict"] is True and record["fm"] is True and record["op_f1"] == 1.0
    assert record["cm_compat"] is False  # EnvSimBench's rule wants the deleted key kept as None
    assert report.verified == 1 and report.by_delta["1"].cm_strict == 1.0


def test_abstentions_and_errors_are_misses_counted_apart(items, tmp_path):
    chosen = [items[k] for k in ("read", "hold", "pay", "renew", "borrow")]

    def answer(item: BenchItem) -> SimResult:
        if item.id in (items["hold"].id, items["pay"].id):
            return SimResult(abstained=True, reason="spec incomplete: loop")
        if item.id == items["renew"].id:
            return SimResult(error="reply is not JSON", raw="{oops")
        if item.id == items["borrow"].id:
            raise ValueError("HTTP 500 after 3 retries")
        return oracle(item)

    report = run_audit(chosen, FakeSim(answer), tmp_path, plots=False)
    assert (report.samples, report.answered, report.abstained, report.errors) == (5, 1, 2, 2)
    assert report.cm_strict == report.fm == report.op_f1 == 0.2
    assert report.cm_compat == 0.2  # an abstention is not an empty, compat-passing Δ
    assert report.answered_only == {"fm": 1.0, "cm_strict": 1.0, "cm_compat": 1.0, "op_f1": 1.0}
    assert report.abstain_reasons == {"spec incomplete: loop": 2}
    assert report.error_messages == {"reply is not JSON": 1, "ValueError: HTTP 500 after 3 retries": 1}
    assert report.worst == []  # misses are listed apart, not as wrong answers


@pytest.mark.parametrize("workers", [1, 2])
def test_resume_after_an_interruption_asks_no_sample_twice(items, tmp_path, workers):
    chosen = list(items.values())
    first = FakeSim(fail_at=4, fail_with=KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        run_audit(chosen, first, tmp_path, workers=workers, plots=False)
    recorded = [r["id"] for r in _lines(tmp_path)]
    assert sorted(recorded) == sorted(first.returned) and len(recorded) >= 4
    second = FakeSim()
    report = run_audit(chosen, second, tmp_path, workers=workers, plots=False)
    assert not set(second.asked) & set(first.returned)
    assert len(second.asked) == len(set(second.asked)) == len(chosen) - len(recorded)
    ids = [r["id"] for r in _lines(tmp_path)]
    assert sorted(ids) == sorted(i.id for i in chosen)
    assert report.samples == len(chosen) and report.cm_strict == 1.0 and report.sessions == 2
    third = FakeSim()
    run_audit(chosen, third, tmp_path, plots=False)
    assert third.asked == []


def test_ctrl_c_on_the_calling_thread_keeps_what_was_recorded(items, tmp_path):
    """A Ctrl-C arrives on the caller's thread (here: raised from the progress callback after 3 answers)."""
    chosen = list(items.values())

    def progress(done: int, total: int, record: dict[str, Any] | None) -> None:
        if done == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_audit(chosen, FakeSim(), tmp_path, workers=1, progress=progress, plots=False)
    recorded = {r["id"] for r in _lines(tmp_path)}
    assert len(recorded) == 3
    again = FakeSim()
    run_audit(chosen, again, tmp_path, plots=False)
    assert sorted(again.asked) == sorted({i.id for i in chosen} - recorded)
    meta = json.loads((tmp_path / "audit.json").read_text(encoding="utf-8"))
    assert [(s["end"], s["answered"]) for s in meta["sessions"]] == [("interrupted: KeyboardInterrupt", 3),
                                                                       ("done", len(chosen) - 3)]


def test_a_torn_last_line_is_cut_and_asked_again(items, tmp_path):
    chosen = list(items.values())[:4]
    run_audit(chosen, FakeSim(), tmp_path, workers=1, plots=False)
    path = tmp_path / RESULTS_FILE
    text = path.read_text(encoding="utf-8")
    last = text.splitlines()[-1]
    path.write_text(text[:len(text) - len(last) // 2 - 1], encoding="utf-8")  # crash mid-write: no newline
    again = FakeSim()
    report = run_audit(chosen, again, tmp_path, plots=False)
    assert again.asked == [json.loads(last)["id"]]
    assert sorted(r["id"] for r in _lines(tmp_path)) == sorted(i.id for i in chosen)
    assert report.samples == 4


def test_garbage_lines_anywhere_are_set_aside_and_their_items_asked_again(items, tmp_path, capsys):
    """Not only a torn tail: garbage in the middle goes to results.rejected.jsonl (nothing lost), the rest is kept."""
    chosen = list(items.values())[:4]
    run_audit(chosen, FakeSim(), tmp_path, workers=1, plots=False)
    path = tmp_path / RESULTS_FILE
    lines = path.read_text(encoding="utf-8").splitlines()
    broken = json.loads(lines[1])
    garbage = ["not json at all", "[1, 2]", json.dumps({"id": broken["id"], "fm": True})]  # text, non-object, partial
    path.write_text("\n".join([lines[0], garbage[0], garbage[1], garbage[2], *lines[2:]]) + "\n", encoding="utf-8")
    capsys.readouterr()
    again = FakeSim()
    report = run_audit(chosen, again, tmp_path, plots=False)
    assert again.asked == [broken["id"]]  # the partial line did not count as an answer; the others were not re-asked
    assert (tmp_path / "results.rejected.jsonl").read_text(encoding="utf-8").splitlines() == garbage
    assert sorted(r["id"] for r in _lines(tmp_path)) == sorted(i.id for i in chosen)
    assert report.samples == 4
    assert capsys.readouterr().err.count("set aside 3 unreadable line(s)") == 1


class EndpointUnreachable(ConnectionError):
    """Named like synth's exception: the audit recognizes it by class name, without importing synth."""


class NoServer(EndpointUnreachable):
    pass


class FatalBackend(RuntimeError):
    fatal = True


@pytest.mark.parametrize("exc", [
    EndpointUnreachable("No server at http://127.0.0.1:8013/v1. Start one: vllm serve MODEL --port 8013"),
    NoServer("No server at http://127.0.0.1:8013/v1. Start one: vllm serve MODEL --port 8013"),
    FatalBackend("No server at http://127.0.0.1:8013/v1. Start one: vllm serve MODEL --port 8013"),
])
def test_an_unreachable_endpoint_stops_the_audit_with_its_message(items, tmp_path, exc):
    chosen = list(items.values())
    sim = FakeSim(fail_at=2, fail_with=exc)
    with pytest.raises(AuditAborted, match="Start one: vllm serve MODEL --port 8013") as info:
        run_audit(chosen, sim, tmp_path, workers=1, plots=False)
    assert info.value.recorded == 2 and info.value.total == len(chosen)
    records = _lines(tmp_path)
    assert len(records) == 2 and all(r["error"] is None for r in records)
    assert len(sim.asked) == 3  # stopped at the first fatal answer, not asked for every sample


def test_an_unreachable_endpoint_with_two_workers_records_no_misses(items, tmp_path):
    sim = FakeSim(fail_at=0, fail_with=EndpointUnreachable("connection refused on port 8013"))
    with pytest.raises(AuditAborted, match="port 8013"):
        run_audit(list(items.values()), sim, tmp_path, workers=2, plots=False)
    assert load_results(tmp_path) == {}
    assert len(sim.asked) <= 2


def test_report_files_and_keys(items, tmp_path):
    report = run_audit(list(items.values()), FakeSim(), tmp_path, price_note="local model, $0")
    required = {"model", "mode", "samples", "fm", "cm_strict", "cm_compat", "op_f1", "by_delta", "by_outcome",
                "by_args", "by_band", "abstained", "errors", "violations", "repairs", "reasks", "tokens_in",
                "tokens_out", "cost_usd", "latency_s", "prompt_tokens_per_sample", "seconds_per_sample",
                "verified_yield", "cost_per_verified_step_usd", "worst"}
    document = report.model_dump(mode="json")
    assert required <= document.keys()
    written = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert written == json.loads(json.dumps(document)) and list(written) == list(document)
    assert set(report.latency_s) >= {"p50", "p90", "p99", "max"}
    assert json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))["samples"] == 10
    assert report.plots == ["cm_vs_delta.png"] and (tmp_path / "cm_vs_delta.png").stat().st_size > 1000
    markdown = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "EnvSimBench paper | GPT-5.4 | 100.0% | 22.7% | 42.0%" in markdown
    assert "| EnvSimBench paper | 4B Full-Balance2 | 99 | 80 | 36 | 44 | 40 | 2 | 8 | 12 |" in markdown
    assert "envforge (this run): fake / plain" in markdown and "local model, $0" in markdown
    assert rebuild_report(tmp_path, plots=False).samples == 10


def test_per_stratum_numbers_on_a_hand_made_set(items, tmp_path):
    by_id = {item.id: key for key, item in items.items()}

    def answer(item: BenchItem) -> SimResult:
        key = by_id[item.id]
        if key == "renew":  # one of the two gold ops missing
            return SimResult(observation=item.observation, delta=item.delta[:1])
        if key == "return":  # state right, observation wrong
            return SimResult(observation={"success": True}, delta=item.delta)
        if key == "borrow":
            return SimResult(abstained=True, reason="unsure")
        if key == "search":
            return SimResult(error="timeout")
        if key == "overdue_return":
            return SimResult(observation=item.observation, delta=[*item.delta, UNRELATED])
        return SimResult(observation=item.observation, delta=item.delta, tokens_in=50, cost_usd=0.01)

    report = run_audit(list(items.values()), FakeSim(answer), tmp_path, plots=False)
    assert (report.fm, report.cm_strict, report.cm_compat) == (0.7, 0.6, 0.7)
    assert (report.verified, report.verified_yield) == (5, 0.5)
    assert report.cost_per_verified_step_usd == pytest.approx(0.05 / 5)
    assert report.prompt_tokens_per_sample == 25.0
    band = {name: (g.samples, g.fm, g.cm_strict, g.cm_compat) for name, g in report.by_band.items()}
    assert band == {"failure": (1, 1.0, 1.0, 1.0), "no_change_args1": (1, 1.0, 1.0, 1.0),
                    "simple_1": (1, 1.0, 1.0, 1.0), "simple_2": (1, 1.0, 0.0, 0.0), "medium_3": (1, 1.0, 1.0, 1.0),
                    "medium_4": (1, 0.0, 1.0, 1.0), "medium_5": (1, 0.0, 0.0, 0.0),
                    "difficult_7_12": (2, 1.0, 0.5, 1.0), "no_change_args2+": (1, 0.0, 0.0, 0.0)}
    assert list(report.by_band) == ["failure", "no_change_args1", "no_change_args2+", "simple_1", "simple_2",
                                       "medium_3", "medium_4", "medium_5", "difficult_7_12"]
    assert report.by_band["simple_2"].op_f1 == pytest.approx(2 / 3, abs=1e-4)
    assert report.by_band["medium_5"].abstained == 1 and report.by_band["no_change_args2+"].errors == 1
    assert {k: g.samples for k, g in report.by_delta.items()} == {"0": 3, "1": 1, "2": 1, "3": 1, "4": 1, "5": 1,
                                                                        "7": 1, "10": 1}
    assert (report.by_delta["7"].cm_strict, report.by_delta["7"].cm_compat) == (0.0, 1.0)
    assert {k: g.samples for k, g in report.by_outcome.items()} == {"success": 9, "failure": 1}
    assert {k: g.samples for k, g in report.by_args.items()} == {"1": 6, "2": 4}
    assert report.by_split["fail_no_change"].cm_strict == pytest.approx(2 / 3, abs=1e-4)
    assert report.by_split["state_change"].cm_strict == pytest.approx(4 / 7, abs=1e-4)
    assert {k: g.samples for k, g in report.by_group.items()} == {
        "failure": 1, "no_change": 2, "simple": 2, "medium": 3, "difficult": 2}
    assert report.paper_view["samples"] == [3, 1, 1, 1, 1, 1, 0, 2]
    assert report.paper_view["cm_compat"][7] == 1.0 and report.paper_view["cm_strict"][7] == 0.5
    assert [w["id"] for w in report.worst] == [items[k].id for k in ("overdue_return", "renew", "return")]
    assert report.worst[1]["diff"][0].startswith("- modify")
    assert report.worst[2]["observation_predicted"] == '{"success":true}'


def test_order_is_deterministic_and_a_limit_is_a_stratum_spread_prefix(items, tmp_path):
    chosen = list(items.values())
    order = audit_order(chosen)
    assert [i.id for i in order] == [i.id for i in audit_order(reversed(chosen + chosen))]
    assert len({rung_of_strata(i.strata).name for i in order[:9]}) == 9  # the nine groups present come first
    small = FakeSim()
    assert run_audit(chosen, small, tmp_path, limit=3, plots=False).samples == 3
    assert small.asked == [i.id for i in order[:3]]
    larger = FakeSim()
    report = run_audit(chosen, larger, tmp_path, limit=5, plots=False)
    assert larger.asked == [i.id for i in order[3:5]] and report.samples == 5


def test_a_folder_of_another_simulator_is_refused(items, tmp_path):
    run_audit([items["read"]], FakeSim(name="a"), tmp_path, plots=False)
    with pytest.raises(AuditError, match="holds results of a"):
        run_audit([items["read"]], FakeSim(name="b"), tmp_path, plots=False)


def test_compare_reports_side_by_side(items, tmp_path):
    chosen = list(items.values())
    plain = run_audit(chosen, FakeSim(mode="plain"), tmp_path / "plain", plots=False)
    constrained = run_audit(chosen, FakeSim(lambda i: SimResult(observation=i.observation, delta=[*i.delta, UNRELATED],
                                                                 tokens_in=40, violations=["write outside set"],
                                                                 repairs=1), mode="constrained"),
                            tmp_path / "constrained", plots=False)
    markdown = compare_reports([plain, constrained])
    assert "| metric | fake / plain | fake / constrained |" in markdown
    assert "Same 10 samples" in markdown
    assert "| prompt tokens per sample | 100 | 40 |" in markdown
    assert "| CM strict | 100.0% | 0.0% |" in markdown
    assert "| violations | 0 | 10 |" in markdown and "wall seconds per sample" in markdown
