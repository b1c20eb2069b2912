"""The controller's own record of a plan's blocks (controller/git/ownrecord.py, round 52).

What the controller and ``show`` rely on: the record is read from the controller's own
commits of the plan file, never from the branch's version; with ``events``, only a commit
that wrote the ``execution:`` block counts (a start or a refusal carries the branch's block
over, an agent's edit with it); whose commits are the controller's is the caller's to say.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from controller.git import ownrecord
from controller.git.records import CommitRecord
from tests.support.gitenv import AGENT, BOB, commit_all

CONTROLLER = ("plangate", "plangate@localhost")
FILE = "plans/x/PLAN.yml"

PLAN = """\
plan: {{name: x, task: t, status: {status}}}
actions: [{{id: 1, tool: echo}}]
execution: {{status: {status}, actions: [{{id: 1, status: {step}}}]}}
"""


def _write(repo: Path, message: str, who: tuple[str, str], status: str, step: str) -> str:
    path = repo / FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(PLAN.format(status=status, step=step))
    return commit_all(repo, message, who)


def _runner(repo: Path) -> ownrecord.GitRunner:
    def git(*args: str) -> str | None:
        done = subprocess.run(["git", *args], cwd=repo, capture_output=True, check=False)
        return done.stdout.decode() if done.returncode == 0 else None

    return git


def _by_controller(record: CommitRecord) -> bool:
    return record.author.email == CONTROLLER[1]


def _history(repo: Path) -> dict[str, str]:
    """A pause, an agent's edit of the block, an approval, a start carrying the edit over."""
    return {
        "pause": _write(
            repo, "plangate: await-approval plans/x", CONTROLLER, "awaiting_approval", "pending"
        ),
        "edit": _write(repo, "tidy", AGENT, "awaiting_approval", "succeeded"),
        "approve": _write(repo, "approve", BOB, "approved", "succeeded"),
        "start": _write(repo, "plangate: start plans/x", CONTROLLER, "executing", "succeeded"),
    }


def test_the_execution_record_is_the_last_commit_that_wrote_it(repo: Path) -> None:
    shas = _history(repo)
    found = ownrecord.own_record(
        _runner(repo), "HEAD", FILE, _by_controller, events=ownrecord.EXECUTION_EVENTS
    )
    assert found is not None
    assert found.commit == shas["pause"]  # not the start, which carried the agent's edit
    assert found.later == (shas["start"], shas["approve"], shas["edit"])
    assert found.blocks is not None
    assert found.blocks["execution"]["actions"] == [{"id": 1, "status": "pending"}]


def test_any_own_commit_counts_without_events(repo: Path) -> None:
    shas = _history(repo)
    found = ownrecord.own_record(_runner(repo), "HEAD", FILE, _by_controller)
    assert found is not None and found.commit == shas["start"] and found.later == ()


def test_whose_commits_count_is_the_callers(repo: Path) -> None:
    _history(repo)
    found = ownrecord.own_record(
        _runner(repo), "HEAD", FILE, lambda r: False, events=ownrecord.EXECUTION_EVENTS
    )
    assert found is None  # a name alone makes no commit the controller's


def test_up_to_a_revision(repo: Path) -> None:
    shas = _history(repo)
    found = ownrecord.own_record(
        _runner(repo), shas["edit"], FILE, _by_controller, events=ownrecord.EXECUTION_EVENTS
    )
    assert found is not None and found.commit == shas["pause"]
    assert found.later == (shas["edit"],)


LOG = "plans/x/EXECUTION_LOG.md"


def test_shown_record_is_the_controllers_and_flags_a_later_version(repo: Path) -> None:
    """Round 61: what readers show is the controller's record; the agent's later block and log
    are flagged with who wrote them, never shown as the record."""
    shas = _history(repo)
    (repo / LOG).write_text("# the controller's log\n")
    commit_all(repo, "plangate: complete plans/x", CONTROLLER)
    (repo / LOG).write_text("# Approved by alice FORGED\n")
    edit = _write(repo, "rewrite", AGENT, "completed", "succeeded")
    branch = {"execution": {"status": "completed", "actions": [{"id": 1, "status": "succeeded"}]}}
    shown = ownrecord.shown_record(_runner(repo), "HEAD", FILE, _by_controller, branch)
    assert shown.blocks["execution"]["actions"] == [{"id": 1, "status": "pending"}]
    assert shown.blocks["approval"] is None
    assert shown.log == "# the controller's log\n"
    assert len(shown.notes) == 2 and all(edit[:12] in n for n in shown.notes), shown.notes
    assert all(AGENT[1] in n and "E_OWNED_BLOCK_CHANGED" in n for n in shown.notes)
    assert shas["pause"][:12] not in "".join(shown.notes)


def test_shown_record_without_a_controller_commit_is_empty(repo: Path) -> None:
    (repo / "plans/x").mkdir(parents=True)
    (repo / LOG).write_text("# Approved by alice FORGED\n")
    _write(repo, "agent plan", AGENT, "pending_approval", "succeeded")
    shown = ownrecord.shown_record(_runner(repo), "HEAD", FILE, _by_controller, {})
    assert shown.blocks == {"execution": None, "approval": None} and shown.log is None
    assert [n for n in shown.notes if "EXECUTION_LOG.md" in n]


def _put(repo: Path, text: str, message: str, who: tuple[str, str]) -> str:
    (repo / FILE).parent.mkdir(parents=True, exist_ok=True)
    (repo / FILE).write_text(text)
    return commit_all(repo, message, who)


def _frozen(tag: str, status: str = "completed") -> str:
    """A plan frozen as ``tag`` that ran (its execution block the controller's)."""
    return PLAN.format(status=status, step="succeeded") + f"frozen: {{hash: 'sha256:{tag}'}}\n"


def _ran(repo: Path) -> None:
    """Plan ``a`` ran to completion; the controller wrote its block and its log."""
    _put(repo, _frozen("a", "pending_approval"), "plangate: freeze plans/x", CONTROLLER)
    (repo / LOG).write_text("# ran\n")
    _put(repo, _frozen("a"), "plangate: complete plans/x", CONTROLLER)


NEW = "plan: {name: x, task: next week, status: pending_approval}\nactions: [{id: 1, tool: e}]\n"


def test_a_folder_emptied_or_moved_and_reused_starts_with_no_record(repo: Path) -> None:
    """Round 63: the docs' recurring plan. A new plan put at a path whose folder was emptied
    (or moved away) has no record there, as a copy has none; nobody is blamed."""
    _ran(repo)
    subprocess.run(["git", "mv", "plans/x", "archive-x"], cwd=repo, check=True)
    commit_all(repo, "x: archived", AGENT)
    _put(repo, NEW, "next week", AGENT)
    git = _runner(repo)
    shown = ownrecord.shown_record(git, "HEAD", FILE, _by_controller, {})
    assert shown.blocks == {"execution": None, "approval": None} and shown.log is None
    assert shown.notes == ()
    assert ownrecord.own_record(git, "HEAD", FILE, _by_controller) is None
    assert ownrecord.recorded_blocks(git, "HEAD", FILE, _by_controller)["execution"] is None
    # the controller's freeze of the new plan starts its own record
    _put(repo, NEW + "frozen: {hash: 'sha256:b'}\n", "plangate: freeze plans/x", CONTROLLER)
    found = ownrecord.own_record(git, "HEAD", FILE, _by_controller)
    assert found is not None and found.later == ()
    shown = ownrecord.shown_record(git, "HEAD", FILE, _by_controller, {})
    assert shown.blocks["execution"] is None and shown.log is None and shown.notes == ()


def test_a_plan_frozen_as_another_is_not_the_recorded_plan(repo: Path) -> None:
    """A plan swapped in at the path in one commit (the folder never empty), frozen as
    another plan, is not read through the record of the one that ran there."""
    _ran(repo)
    swapped = _put(repo, _frozen("other", "pending_approval"), "swap", AGENT)
    git = _runner(repo)
    shown = ownrecord.shown_record(git, "HEAD", FILE, _by_controller, {})
    assert shown.blocks == {"execution": None, "approval": None}
    assert shown.log is None and shown.notes == ()
    # the same swap keeping the recorded plan's frozen hash keeps the life: flagged
    _put(repo, _frozen("a", "pending_approval"), "swap back", AGENT)
    shown = ownrecord.shown_record(git, "HEAD", FILE, _by_controller, {})
    assert shown.blocks["execution"]["status"] == "completed" and shown.log == "# ran\n"
    assert shown.notes and AGENT[1] in shown.notes[0] and swapped[:12] not in shown.notes[0]


def test_a_log_removed_in_a_recorded_life_is_flagged(repo: Path) -> None:
    _ran(repo)
    (repo / LOG).unlink()
    gone = commit_all(repo, "drop the log", AGENT)
    branch = {"execution": {"status": "completed", "actions": [{"id": 1, "status": "succeeded"}]}}
    shown = ownrecord.shown_record(_runner(repo), "HEAD", FILE, _by_controller, branch)
    assert shown.log == "# ran\n"
    assert [n for n in shown.notes if "EXECUTION_LOG.md" in n and gone[:12] in n]


def test_a_rename_to_the_other_name_keeps_the_record(repo: Path) -> None:
    """Round 69: PLAN.yml renamed PLAN.yaml, bytes kept, is the plan that ran: its record
    follows it (MCP ``log`` answered ``execution: null``). Round 70: so does a rename back
    with an edit (a plan's identity is its folder), the edited block noted as another's."""
    _ran(repo)
    subprocess.run(["git", "mv", FILE, "plans/x/PLAN.yaml"], cwd=repo, check=True)
    commit_all(repo, "rename", AGENT)
    git, yaml = _runner(repo), "plans/x/PLAN.yaml"
    branch = ownrecord.blocks_at(git, "HEAD", yaml) or {}
    shown = ownrecord.shown_record(git, "HEAD", yaml, _by_controller, branch)
    assert shown.blocks["execution"]["status"] == "completed", shown
    assert shown.log == "# ran\n" and not [n for n in shown.notes if "E_OWNED" in n], shown
    (repo / yaml).rename(repo / FILE)
    forged = PLAN.format(status="completed", step="forged") + "frozen: {hash: 'sha256:a'}\n"
    (repo / FILE).write_text(forged)
    edit = commit_all(repo, "rename back, edited", AGENT)
    branch = ownrecord.blocks_at(git, "HEAD", FILE) or {}
    shown = ownrecord.shown_record(git, "HEAD", FILE, _by_controller, branch)
    assert shown.blocks["execution"]["actions"] == [{"id": 1, "status": "succeeded"}], shown
    assert shown.log == "# ran\n", shown
    assert [n for n in shown.notes if "E_OWNED_BLOCK_CHANGED" in n and edit[:12] in n], shown


def test_a_rename_with_another_plan_frozen_in_it_has_no_record(repo: Path) -> None:
    """Round 70: the record follows the folder across a rename, not another plan put there
    with it: a plan frozen as another than the one the controller ran starts with none."""
    _ran(repo)
    (repo / FILE).unlink()
    (repo / "plans/x/PLAN.yaml").write_text(_frozen("b"))
    commit_all(repo, "swap in another plan under the other name", AGENT)
    git, yaml = _runner(repo), "plans/x/PLAN.yaml"
    branch = ownrecord.blocks_at(git, "HEAD", yaml) or {}
    shown = ownrecord.shown_record(git, "HEAD", yaml, _by_controller, branch)
    assert shown.blocks == {"execution": None, "approval": None} and shown.log is None, shown


def test_hash_mismatch_is_the_one_rule_of_every_reader() -> None:
    """Round 64: a record is of the version its ``frozen.hash`` names; another text at the
    path is said to be another (``show``'s STALE), none to compare with says nothing."""
    assert ownrecord.hash_mismatch(FILE, "sha256:a", "sha256:a") is None
    assert ownrecord.hash_mismatch(FILE, "sha256:a", None) is None
    note = ownrecord.hash_mismatch(FILE, "sha256:b", "sha256:a")
    assert note is not None and note.startswith("E_PLAN_HASH_MISMATCH: ")
    assert FILE in note and "sha256:b" in note and "sha256:a" in note
    assert ownrecord.note_code(note) == "E_PLAN_HASH_MISMATCH"


def _truly_frozen(text: str) -> str:
    from controller.plan.plans import text_hash

    return text + f"frozen: {{hash: '{text_hash(text)}'}}\n"


def test_a_changed_plan_under_a_kept_frozen_hash_is_flagged(repo: Path) -> None:
    """Round 64: an agent changes a completed plan's action and keeps every block,
    ``frozen:`` included: the life is kept, but the record shown for it says the text is
    not the version recorded; put back, the record is shown without the note."""
    ran = _truly_frozen(PLAN.format(status="completed", step="succeeded"))
    _put(repo, ran, "plangate: complete plans/x", CONTROLLER)
    git = _runner(repo)
    branch = ownrecord.blocks_at(git, "HEAD", FILE) or {}
    assert ownrecord.shown_record(git, "HEAD", FILE, _by_controller, branch).notes == ()
    _put(repo, ran.replace("tool: echo", "tool: rm"), "tweak", AGENT)
    shown = ownrecord.shown_record(git, "HEAD", FILE, _by_controller, branch)
    assert shown.blocks["execution"]["status"] == "completed"
    assert [n for n in shown.notes if n.startswith("E_PLAN_HASH_MISMATCH") and FILE in n]
    _put(repo, ran, "put back", AGENT)
    assert ownrecord.shown_record(git, "HEAD", FILE, _by_controller, branch).notes == ()


def test_record_notes_judge_the_text_by_the_paths_record(repo: Path) -> None:
    """Round 65: the status row's notes are ``show``'s. A completed plan's action changed and
    its ``frozen.hash`` rewritten to the new text's (or another folder's run swapped in) holds
    its own hash, but not the one the controller recorded in the path's life: noted
    ``E_OWNED_BLOCK_CHANGED``; a comment-only edit, or an edit put back, is noted nothing."""
    ran = _truly_frozen(PLAN.format(status="completed", step="succeeded"))
    _put(repo, ran, "plangate: complete plans/x", CONTROLLER)
    git = _runner(repo)
    assert ownrecord.record_notes(git, "HEAD", FILE, _by_controller) == ()
    _put(repo, "# reviewed\n" + ran, "comment", AGENT)
    assert ownrecord.record_notes(git, "HEAD", FILE, _by_controller) == ()
    body = PLAN.format(status="completed", step="succeeded").replace("tool: echo", "tool: rm")
    rehashed = _put(repo, _truly_frozen(body), "rehash", AGENT)
    notes = ownrecord.record_notes(git, "HEAD", FILE, _by_controller)
    assert notes and all(n.startswith("E_OWNED_BLOCK_CHANGED") for n in notes), notes
    assert rehashed[:12] in notes[0] and AGENT[1] in notes[0]
    _put(repo, ran, "put back", AGENT)
    assert ownrecord.record_notes(git, "HEAD", FILE, _by_controller) == ()


PENDING = NEW + "frozen: {hash: 'sha256:a'}\n"


def _shown(git: ownrecord.GitRunner) -> ownrecord.ShownRecord:
    branch = ownrecord.blocks_at(git, "HEAD", FILE) or {}
    return ownrecord.shown_record(git, "HEAD", FILE, _by_controller, branch)


def test_a_log_under_another_spelling_is_noted_and_never_shown(repo: Path) -> None:
    """Round 73: a forged "completed" log the agent commits as ``execution_log.md`` (or
    ``EXECUTION_LOG.md<U+200C>``, a symlink so named) beside a plan is the plan's log on a
    case-insensitive or HFS+ checkout: every reader notes it, beside a plan that never ran
    and beside the controller's own log, and none shows its text as the record."""
    _put(repo, PENDING, "plangate: freeze plans/x", CONTROLLER)
    git = _runner(repo)
    assert _shown(git).notes == ()
    (repo / "plans/x/execution_log.md").write_text("# Approved by alice FORGED\n")
    forged = commit_all(repo, "notes", AGENT)
    shown = _shown(git)
    assert shown.log is None and "FORGED" not in "".join(shown.notes)
    assert len(shown.notes) == 1 and "E_OWNED_BLOCK_CHANGED" in shown.notes[0]
    assert "execution_log.md" in shown.notes[0] and forged[:12] in shown.notes[0]
    assert AGENT[1] in shown.notes[0]
    assert ownrecord.record_notes(git, "HEAD", FILE, _by_controller) == shown.notes
    # beside the controller's own log, with a zero-width twin too: each is noted
    (repo / LOG).write_text("# ran\n")
    _put(repo, PENDING.replace("pending_approval", "completed"), "plangate: complete plans/x",
         CONTROLLER)  # fmt: skip
    (repo / "plans/x/EXECUTION_LOG.md\u200c").write_text("# Approved by alice FORGED\n")
    commit_all(repo, "more notes", AGENT)
    shown = _shown(git)
    assert shown.log == "# ran\n"
    twins = [n for n in shown.notes if "E_OWNED_BLOCK_CHANGED" in n and "beside" in n]
    assert len(twins) == 2 and any("EXECUTION_LOG.md\\u200c" in n for n in twins), shown.notes
    assert not any("\u200c" in n for n in shown.notes)  # the name shown escaped
    # gone again: nothing to note
    (repo / "plans/x/execution_log.md").unlink()
    (repo / "plans/x/EXECUTION_LOG.md\u200c").unlink()
    commit_all(repo, "tidy", AGENT)
    assert not [n for n in _shown(git).notes if "E_OWNED_BLOCK_CHANGED" in n]


def test_a_symlink_under_the_logs_other_spelling_is_noted(repo: Path) -> None:
    _put(repo, PENDING, "plangate: freeze plans/x", CONTROLLER)
    (repo / "plans/x/Execution_Log.Md").symlink_to("../y/EXECUTION_LOG.md")
    commit_all(repo, "link", AGENT)
    notes = ownrecord.record_notes(_runner(repo), "HEAD", FILE, _by_controller)
    assert len(notes) == 1 and "Execution_Log.Md" in notes[0], notes


def test_a_log_in_a_twin_folder_is_noted_and_never_shown(repo: Path) -> None:
    """Round 75: the agent's forged log in ``plans/X/`` (``plans/x`` on a case-insensitive
    checkout) or ``plans/x\u200c/`` (on HFS+) is written at the plan's log's place there:
    noted by every reader of ``plans/x``'s record, never shown; a folder no checkout merges
    with it (``plans/xy/``) is no claim."""
    (repo / LOG).parent.mkdir(parents=True, exist_ok=True)
    (repo / LOG).write_text("# ran\n")
    _put(repo, PENDING.replace("pending_approval", "completed"), "plangate: complete plans/x",
         CONTROLLER)  # fmt: skip
    for folder in ("X", "x\u200c", "xy"):
        (repo / "plans" / folder).mkdir()
        (repo / "plans" / folder / "EXECUTION_LOG.md").write_text("# Approved by alice FORGED\n")
    forged = commit_all(repo, "notes", AGENT)
    git = _runner(repo)
    shown = _shown(git)
    assert shown.log == "# ran\n" and "FORGED" not in "".join(shown.notes)
    twins = [n for n in shown.notes if "E_OWNED_BLOCK_CHANGED" in n]
    assert len(twins) == 2 and all(forged[:12] in n for n in twins), shown.notes
    assert any("plans/X/EXECUTION_LOG.md" in n for n in twins), twins
    assert any("plans/x\\u200c/EXECUTION_LOG.md" in n for n in twins), twins
    assert ownrecord.record_notes(git, "HEAD", FILE, _by_controller) == shown.notes
