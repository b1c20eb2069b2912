"""Freezing: frozen.hash written round-trip, other bytes kept, idempotent, never on bad plans."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.plan import hashing, plans, yamlio
from tests.support.gitenv import run_cli
from tests.support.plan_factory import BASE_TEXT, write_plan


def _freeze(tmp_path: Path, text: str) -> plans.FreezeOutcome:
    return plans.freeze_text(plans.load_plan(write_plan(tmp_path, text)), at="2026-11-22T10:00:00Z")


def test_freeze_appends_frozen_block_and_keeps_every_other_byte(tmp_path: Path) -> None:
    outcome = _freeze(tmp_path, BASE_TEXT)
    assert outcome.changed
    assert outcome.text.startswith(BASE_TEXT)
    tail = outcome.text[len(BASE_TEXT) :]
    assert tail == f"frozen:\n  hash: {outcome.hash}\n  at: '2026-11-22T10:00:00Z'\n"
    assert hashing.plan_hash(yamlio.read_yaml(outcome.text).data) == outcome.hash


def test_refreeze_of_unchanged_plan_changes_nothing(tmp_path: Path) -> None:
    first = _freeze(tmp_path, BASE_TEXT)
    second = _freeze(tmp_path, first.text)
    assert not second.changed and second.text == first.text


def test_refreeze_after_edit_replaces_block_in_place(tmp_path: Path) -> None:
    first = _freeze(tmp_path, BASE_TEXT)
    edited = first.text.replace("limit: 10", "limit: 11") + "# trailing comment\n"
    second = plans.freeze_text(
        plans.validate_text(edited, tmp_path / "p"), at="2026-11-23T00:00:00Z"
    )
    assert second.changed and second.hash != first.hash
    assert second.text.count("frozen:") == 1 and second.text.endswith("# trailing comment\n")
    assert "2026-11-23T00:00:00Z" in second.text


def test_freeze_removes_stale_validation_block(tmp_path: Path) -> None:
    text = BASE_TEXT + "validation:\n  errors: [{code: E_X, message: m, path: ''}]\n"
    outcome = _freeze(tmp_path, text)
    assert outcome.changed and "validation:" not in outcome.text
    assert outcome.text.startswith(BASE_TEXT)


def test_invalid_plan_is_not_frozen(tmp_path: Path) -> None:
    outcome = _freeze(tmp_path, BASE_TEXT.replace("  - id: 2", "  - id: 7"))
    assert not outcome.changed and outcome.hash is None
    assert [p.code for p in outcome.plan.problems] == ["E_ACTION_IDS"]


def test_approved_plan_with_changed_content_is_not_refrozen(tmp_path: Path) -> None:
    frozen = _freeze(tmp_path, BASE_TEXT).text
    approved = frozen.replace("status: pending_approval", "status: approved").replace(
        "limit: 10", "limit: 99"
    )
    outcome = plans.freeze_text(plans.validate_text(approved, tmp_path / "p"))
    assert not outcome.changed
    assert [p.code for p in outcome.plan.problems] == ["E_PLAN_HASH_MISMATCH"]


# Formatting variants: comments, blank lines, quoting, flow vs block style.
variants = st.fixed_dictionaries(
    {
        "comment": st.sampled_from(["", "  # note", "   #x: y"]),
        "quote": st.sampled_from(['"{}"', "'{}'", "{}"]),
        "blank": st.sampled_from(["", "\n", "\n\n"]),
        "flow_outputs": st.booleans(),
    }
)


def _render(v: dict) -> str:
    q = v["quote"]
    outputs = (
        "    outputs: [{name: keys, path: '$.service'}]\n"
        if v["flow_outputs"]
        else '    outputs:\n      - name: keys\n        path: "$.service"\n'
    )
    return (
        f"plan:{v['comment']}\n  name: {q.format('Rotate keys')}\n  task: {q.format('T')}\n"
        f"  status: pending_approval{v['comment']}\n{v['blank']}"
        "available_tools:\n  - name: echo\n"
        f"actions:{v['comment']}\n  - id: 1\n    tool: {q.format('echo')}\n"
        f"    why: {q.format('W')}\n"
        f"    params: {{a: 1, b: [x, y]}}{v['comment']}\n{outputs}"
    )


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(a=variants, b=variants)
def test_hash_ignores_formatting_and_comments(tmp_path: Path, a: dict, b: dict) -> None:
    plan_a = plans.validate_text(_render(a), tmp_path / "a")
    plan_b = plans.validate_text(_render(b), tmp_path / "b")
    assert plan_a.valid and plan_b.valid
    assert plan_a.hash == plan_b.hash


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(v=variants, prefix=st.sampled_from(["", "# header\n", "---\n"]))
def test_freeze_round_trip_preserves_author_bytes(tmp_path: Path, v: dict, prefix: str) -> None:
    text = prefix + _render(v)
    outcome = plans.freeze_text(
        plans.validate_text(text, tmp_path / "p"), at="2026-01-01T00:00:00Z"
    )
    assert outcome.changed
    assert outcome.text.startswith(text if text.endswith("\n") else text + "\n")
    refrozen = plans.freeze_text(plans.validate_text(outcome.text, tmp_path / "p"))
    assert not refrozen.changed


def test_cli_freeze_and_check(tmp_path: Path) -> None:
    path = write_plan(tmp_path)
    assert run_cli("freeze", "--check", str(path)).returncode == 1
    assert path.read_text() == BASE_TEXT  # --check writes nothing
    result = run_cli("freeze", str(path))
    assert result.returncode == 0, result.stderr
    assert "frozen sha256:" in result.stdout
    assert run_cli("freeze", "--check", str(path.parent)).returncode == 0
    path.write_text(path.read_text().replace("limit: 10", "limit: 12"))
    stale = run_cli("freeze", "--check", str(path))
    assert stale.returncode == 1 and "stale" in stale.stdout


def test_cli_freeze_leaves_invalid_file_untouched(tmp_path: Path) -> None:
    bad = BASE_TEXT.replace("on_failure: retry", "on_faliure: retry")
    path = write_plan(tmp_path, bad)
    result = run_cli("freeze", str(path))
    assert result.returncode == 1
    assert "E_SCHEMA_INVALID" in result.stderr and "Traceback" not in result.stderr
    assert path.read_text() == bad


def test_cli_freeze_of_crlf_file_keeps_crlf_bytes_and_writes_crlf(tmp_path: Path) -> None:
    crlf = ("\ufeff" + BASE_TEXT.replace("${", "$<")).replace("\n", "\r\n").encode("utf-8")
    path = write_plan(tmp_path)
    path.write_bytes(crlf)
    result = run_cli("freeze", str(path))
    assert result.returncode == 0, result.stderr
    written = path.read_bytes()
    assert written.startswith(crlf)  # BOM and every author byte kept
    added = written[len(crlf) :]
    assert added.startswith(b"frozen:\r\n") and added.count(b"\n") == added.count(b"\r\n") == 3
    assert run_cli("freeze", "--check", str(path)).returncode == 0
    path.write_bytes(written.replace(b"limit: 10", b"limit: 11"))
    assert run_cli("freeze", str(path)).returncode == 0  # refreeze replaces the block in place
    again = path.read_bytes()
    assert again.count(b"\n") == again.count(b"\r\n") and again.count(b"frozen:") == 1


FORGED = (
    "approval: {status: approved, by: alice@example.com, at: '2026-11-29T10:00:00Z'}\n"
    "execution: {status: completed, actions: [{id: 1, status: succeeded}]}\n"
)


def test_freeze_replaces_owned_blocks_the_controller_did_not_record(tmp_path: Path) -> None:
    """Round 61: an author's ``approval:``/``execution:`` blocks are not frozen in as a
    record: with the controller's record (here: none) the freeze writes that instead."""
    loaded = plans.load_plan(write_plan(tmp_path, BASE_TEXT + FORGED))
    outcome = plans.freeze_text(loaded, owned={"execution": None, "approval": None})
    assert outcome.changed and "approval:" not in outcome.text and "execution:" not in outcome.text
    assert outcome.hash == hashing.plan_hash(loaded.data)
    refrozen = plans.freeze_text(plans.validate_text(outcome.text, tmp_path / "p"), owned={})
    assert not refrozen.changed  # the record now matches: nothing to rewrite


def test_freeze_keeps_owned_blocks_as_recorded(tmp_path: Path) -> None:
    recorded = {"status": "refused", "code": "E_SELF_APPROVAL", "by": "bob@example.com"}
    text = BASE_TEXT + "approval: {status: refused, code: E_SELF_APPROVAL, by: bob@example.com}\n"
    loaded = plans.load_plan(write_plan(tmp_path, text))
    outcome = plans.freeze_text(loaded, owned={"approval": recorded, "execution": None})
    assert yamlio.read_yaml(outcome.text).data["approval"] == recorded
