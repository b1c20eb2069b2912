"""A plan holding a content the index held before takes the writers of every plan that held
it, whatever route brought the content (round 74, r74copies; docs/approvals.md, "Who changed
the content").

Round 73 followed a byte-exact copy of a plan the index holds NOW (by its file's blob). The
writers of every version ever held (its plan's changers, its folder's writers) and its
owned-block editors' hold are now kept by the version's CONTENT hash, so the copy of an OLDER
version, of a DELETED plan, or of the same content in other bytes (its ``frozen:`` block cut,
CRLF line ends) takes them as well: an approver's bytes lifted into it in a LATER commit are
his writing of it (``E_SELF_APPROVAL``). The same content copied when nobody else wrote it, or
copied unchanged (the version an owned-block edit sat beside), still runs on his approval.

Seen before the fix: tests/adversarial/test_round74_approve_copytrails.py and
``_pincopies.py`` (``note-older``, ``hold-deleted``, ``note-unfrozen``, ``hold-crlf``, ...):
Bob's approval of the lifted copy ran."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.gitkit import AGENT, BOB, commit_all, edit_status, git, run_once, subjects
from tests.support.gitkit import submitted as _submitted

SOURCE, COPY = "plans/greet", "plans/copy"
OWNED = 'approval:\n  status: approved\n  approver: bob\n  payload: "bob-was-here"\n'


def _refusal(repo: Path) -> str:
    return git(repo, "log", "-1", "--format=%b", "--grep=^plangate: refuse").strip()


def _copy_ran(repo: Path) -> bool:
    return f"plangate: start {COPY}" in subjects(repo)


def _bobs_note(repo: Path) -> None:
    (repo / SOURCE / "NOTES.md").write_text("bob: who: bob-was-here\n")
    commit_all(repo, "bob: note", BOB)


def _bobs_owned_edit(repo: Path) -> None:
    """Bob's bytes in the owned ``approval:`` block (a forged record), a pass, and the agent
    takes his block out again: the plan's file is the controller's version, byte for byte."""
    path = repo / SOURCE / "PLAN.yml"
    was = path.read_text()
    path.write_text(was + OWNED)
    commit_all(repo, "bob: record", BOB)
    run_once(repo)
    path.write_text(was)
    commit_all(repo, "agent: the record as it was", AGENT)


def _held(repo: Path) -> bytes:
    """The source's file as the index holds it now (frozen, the controller's)."""
    data = (repo / SOURCE / "PLAN.yml").read_bytes()
    assert b"\nfrozen:\n" in data and b"bob-was-here" not in data
    return data


def _write(repo: Path, path: str, data: bytes, message: str) -> None:
    (repo / path).parent.mkdir(parents=True, exist_ok=True)
    (repo / path).write_bytes(data)
    commit_all(repo, message, AGENT)


def _older(repo: Path, held: bytes) -> None:
    """The source edited to another version (frozen by a pass), then its OLDER file copied."""
    path = repo / SOURCE / "PLAN.yml"
    path.write_text(path.read_text().replace("Say hello to the world", "Say hello, v2", 1))
    commit_all(repo, "agent: v2", AGENT)
    run_once(repo)
    _write(repo, f"{COPY}/PLAN.yml", held, "agent: the older version copied")


def _deleted(repo: Path, held: bytes) -> None:
    """The source's folder removed (a pass), then its file written anew elsewhere."""
    git(repo, "rm", "-r", "-q", SOURCE)
    commit_all(repo, "agent: remove", AGENT)
    run_once(repo)
    _write(repo, f"{COPY}/PLAN.yml", held, "agent: the deleted plan written anew")


def _unfrozen(repo: Path, held: bytes) -> None:
    """The same content in other bytes: the ``frozen:`` block cut."""
    _write(repo, f"{COPY}/PLAN.yml", held[: held.index(b"frozen:\n")], "agent: copy, unfrozen")


def _crlf(repo: Path, held: bytes) -> None:
    """The same content in other bytes: CRLF line ends."""
    _write(repo, f"{COPY}/PLAN.yml", held.replace(b"\n", b"\r\n"), "agent: copy, CRLF")


ROUTES = {"older": _older, "deleted": _deleted, "unfrozen": _unfrozen, "crlf": _crlf}


def _lift(repo: Path) -> None:
    """A pass, then the agent's next commit puts Bob's payload into the copy's params."""
    run_once(repo)
    path = repo / COPY / "PLAN.yml"
    data = path.read_bytes()
    assert b"who: world" in data
    path.write_bytes(data.replace(b"who: world", b"who: bob-was-here", 1))
    commit_all(repo, "agent: extra in the copy", AGENT)


def _bob_approves_the_copy(repo: Path) -> None:
    run_once(repo)  # the copy frozen
    path = repo / COPY / "PLAN.yml"
    data = path.read_bytes()
    if b"\r\n" in data:  # a plain status change, the line ends kept
        path.write_bytes(data.replace(b"status: pending_approval", b"status: approved", 1))
    else:
        edit_status(repo, "copy", "approved")
    commit_all(repo, "approve copy", BOB)
    run_once(repo)


@pytest.mark.parametrize("route", list(ROUTES))
def test_a_copy_by_any_route_takes_the_source_folders_writers(repo: Path, route: str) -> None:
    _submitted(repo)
    _bobs_note(repo)
    run_once(repo)
    ROUTES[route](repo, _held(repo))
    _lift(repo)
    _bob_approves_the_copy(repo)
    assert not _copy_ran(repo)
    assert _refusal(repo).startswith("E_SELF_APPROVAL"), _refusal(repo)


@pytest.mark.parametrize("route", list(ROUTES))
def test_a_copy_by_any_route_takes_the_owned_block_hold(repo: Path, route: str) -> None:
    _submitted(repo)
    _bobs_owned_edit(repo)
    ROUTES[route](repo, _held(repo))
    _lift(repo)
    _bob_approves_the_copy(repo)
    assert not _copy_ran(repo)
    assert _refusal(repo).startswith("E_SELF_APPROVAL"), _refusal(repo)


@pytest.mark.parametrize("route", ["older", "deleted"])
def test_a_copy_nobody_else_wrote_runs_on_his_approval(repo: Path, route: str) -> None:
    """The agent's own plan by the same routes: Bob wrote nothing of it (a control)."""
    _submitted(repo)
    run_once(repo)
    ROUTES[route](repo, _held(repo))
    _lift(repo)
    _bob_approves_the_copy(repo)
    assert _copy_ran(repo), _refusal(repo)


def test_an_owned_block_editor_may_approve_the_older_version_copied_unchanged(
    repo: Path,
) -> None:
    """The hold writes LATER versions: the older version copied as it was is the one his
    edit sat beside, and his approval of it runs."""
    _submitted(repo)
    _bobs_owned_edit(repo)
    _older(repo, _held(repo))
    _bob_approves_the_copy(repo)
    assert _copy_ran(repo), _refusal(repo)
