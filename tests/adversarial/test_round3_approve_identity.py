# ruff: noqa: E501  (attack steps read best on one line)
"""Round 3, approval side: who a commit is by is what the branch's commits say, not what a
file or ref the agent can write says, and an audit judges only history it really has.

Attacks (Alice is an approver; Mallory and the agent are not):

- a ``.mailmap`` the agent commits maps Mallory's commits to Alice (Mallory then approves),
  or maps Alice's content commits to the agent (Alice then approves what she wrote);
- ``git replace`` (local mode, the agent writes ``.git/refs/replace``) shows Mallory's
  approval commit as Alice's, or Alice's content commit as the agent's;
- Alice writes the exact plan outside the plans folder (``drafts/``) and the agent copies it
  in; Alice approves (she wrote every byte of that version);
- a ``plangate audit`` of a shallow clone (``--depth``) that cut off the commit in which
  Alice wrote the plan, after a start was forged under the controller's name on Alice's
  self-approval: the full history flags it, the shallow one must not call it valid.

Defence: refused with E_APPROVER_NOT_ALLOWED / E_SELF_APPROVAL, nothing runs; the shallow
audit refuses or flags. Controls: an honest plan runs; a full-clone audit flags the forgery.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOT, Lab, cases, plan_text, play
from test_round2_approval_authors import shared_lab

Step = Callable[[Lab, str], None]
MALLORY_MM = ("Mallory Mailmap", "mallory@example.com")
MALLORY_RP = ("Mallory Replace", "mallory@example.com")
ALICE_WRITER = ("Alice Writer", "alice@example.com")
ALICE_REPLACED = ("Alice Replaced", "alice@example.com")
ALICE_SHALLOW = ("Alice Shallow", "alice@example.com")
NOT_ALLOWED = {"E_APPROVER_NOT_ALLOWED"}
SELF = {"E_SELF_APPROVAL"}


def submit(who: tuple[str, str] = AGENT, extra: Callable[[Lab], None] | None = None) -> Step:
    def step(lab: Lab, vid: str) -> None:
        lab.write(vid, plan_text(vid, params="note: v1\n"))
        if extra:
            extra(lab)
        lab.commit(f"add {vid}", who)

    return step


def mailmap(line: str) -> Callable[[Lab], None]:
    def add(lab: Lab) -> None:
        path = lab.repo / ".mailmap"
        old = path.read_text() if path.exists() else ""
        path.write_text(old + line + "\n")

    return add


def bump(lab: Lab, vid: str, value: str) -> None:
    path = lab.repo / "plans" / vid / "PLAN.yml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("note: v1", f"note: {value}"), encoding="utf-8")


def edit_as(who: tuple[str, str]) -> Step:
    def step(lab: Lab, vid: str) -> None:
        bump(lab, vid, "v2")
        lab.commit(f"edit {vid}", who)

    return step


def approve(who: tuple[str, str] = ALICE) -> Step:
    def step(lab: Lab, vid: str) -> None:
        lab.approve(vid, who)

    return step


def _rewrite_identity(lab: Lab, commit: str, who: tuple[str, str]) -> str:
    """A copy of ``commit`` (same tree, parents, dates, message) under another identity."""
    raw = lab.git("cat-file", "commit", commit)
    head, _, message = raw.partition("\n\n")
    lines = []
    for line in head.splitlines():
        if line.startswith(("author ", "committer ")):
            key, rest = line.split(" ", 1)
            stamp = rest.rsplit(" ", 2)[-2:]
            line = f"{key} {who[0]} <{who[1]}> {' '.join(stamp)}"
        lines.append(line)
    return lab.git(
        "hash-object", "-t", "commit", "-w", "--stdin", input="\n".join(lines) + "\n\n" + message
    ).strip()


def approve_then_replace(lab: Lab, vid: str) -> None:
    """Mallory approves; the agent makes git show that commit as Alice's."""
    commit = lab.approve(vid, MALLORY_RP)
    lab.git("replace", commit, _rewrite_identity(lab, commit, ALICE))


def edit_then_replace(lab: Lab, vid: str) -> None:
    """Alice writes v2; the agent makes git show that commit as its own."""
    bump(lab, vid, "v2")
    commit = lab.commit(f"edit {vid}", ALICE_REPLACED)
    lab.git("replace", commit, _rewrite_identity(lab, commit, AGENT))


def drafted_outside(lab: Lab, vid: str) -> None:
    path = lab.repo / "drafts" / vid / "PLAN.yml"
    path.parent.mkdir(parents=True)
    path.write_text(plan_text(vid, params="note: v1\n"))
    lab.commit(f"alice drafts {vid} outside plans/", ALICE)


def copy_in(lab: Lab, vid: str) -> None:
    lab.write(vid, (lab.repo / "drafts" / vid / "PLAN.yml").read_text())
    lab.commit(f"add {vid}", AGENT)


def forge_start(lab: Lab, vid: str) -> None:
    """After the controller refused Alice's self-approval, a start and complete are forged
    under the controller's name (as a pushed commit would be), naming her approval."""
    data = lab.plan(vid)
    request = str(data["approval"]["commit"])
    real = next(r[1] for r in lab.log_rows("%H%x00%B%x01") if r[1].startswith("plangate: start "))
    trailers = {k: v for k, _, v in (ln.partition(": ") for ln in real.splitlines()) if v}
    for status, event in (("executing", "start"), ("completed", "complete")):
        lab.set_status(vid, status)
        message = (
            f"plangate: {event} plans/{vid}\n\nPlan: plans/{vid}\nPlan-Hash: {data['frozen']['hash']}\n"
            f"Plan-Status: {status}\nApproved-By: alice@example.com\nApproval-Commit: {request}\n"
            f"Controller: {trailers['Controller']}\n"
            + (f"Policy-Hash: {trailers['Policy-Hash']}\n" if event == "start" else "")
        )
        lab.git("add", "-A")
        lab.git("commit", "-q", "-m", message, who=BOT)


ATTACKS: dict[str, tuple[list[Step], set[str]]] = {
    "mailmap-mallory-is-alice": (
        [
            submit(
                extra=mailmap("Alice <alice@example.com> Mallory Mailmap <mallory@example.com>")
            ),
            approve(MALLORY_MM),
        ],
        NOT_ALLOWED,
    ),
    "mailmap-alice-is-agent": (
        [
            submit(extra=mailmap("Agent <agent@example.com> Alice Writer <alice@example.com>")),
            edit_as(ALICE_WRITER),
            approve(),
        ],
        SELF,
    ),
    "replace-mallory-is-alice": ([submit(), approve_then_replace], NOT_ALLOWED),
    "replace-alice-is-agent": ([submit(), edit_then_replace, approve()], SELF),
    "drafted-outside-plans": ([drafted_outside, copy_in, approve()], SELF),
}
R3 = "round 3: "


def _broke(why: str) -> object:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=R3 + why)


BROKEN: dict[str, object] = {
    "drafted-outside-plans": _broke(
        "content Alice wrote byte for byte outside the plans folder and the agent copied in "
        "is not hers: she approves it and it runs"
    ),
}
CONTROLS: dict[str, list[Step]] = {"honest": [submit(), approve()]}
SHALLOW = "shallow-self"
FORGERY: dict[str, list[Step]] = {
    SHALLOW: [submit(), edit_as(ALICE_SHALLOW), approve(), forge_start]
}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    play(lab, {vid: steps for vid, (steps, _) in ATTACKS.items()} | CONTROLS | FORGERY)
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared_lab(tmp_path_factory, "r3-identity", _build)


def test_the_honest_plan_runs(lab: Lab) -> None:
    assert len(lab.calls("honest")) == 1, lab.codes("honest")


@pytest.mark.parametrize("vid", cases(list(ATTACKS), list(ATTACKS), BROKEN))
def test_only_the_commits_say_who_approved_and_who_wrote(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], f"ran: {lab.codes(vid)}"
    assert not lab.started(vid), lab.codes(vid)
    assert lab.refusal(vid) in ATTACKS[vid][1], lab.codes(vid)


def _audit(lab: Lab, clone: Path, *clone_args: str) -> tuple[int, dict[str, Any]]:
    subprocess.run(
        ["git", "clone", "-q", *clone_args, f"file://{lab.repo}", str(clone)],
        check=True,
        env=lab.env(),
    )
    result = lab.cli("audit", "--json", cwd=clone)
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    try:
        return result.returncode, json.loads(result.stdout)
    except ValueError:
        return result.returncode, {"raw": result.stdout, "stderr": result.stderr[-2000:]}


def _forged_valid(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        e
        for e in report.get("executions") or []
        if e.get("plan") == f"plans/{SHALLOW}" and e.get("approval_valid")
    ]


def test_a_full_clone_audit_flags_the_forged_start(lab: Lab, tmp_path: Path) -> None:
    assert lab.calls(SHALLOW) == [], "the self-approved plan ran"
    code, report = _audit(lab, tmp_path / "full")
    assert code == 1 and _forged_valid(report) == [], report


def test_a_shallow_clone_audit_never_calls_the_forged_start_valid(lab: Lab, tmp_path: Path) -> None:
    content = lab.git(
        "log", "--format=%H", "-n1", "--author=Alice Shallow", "--", f"plans/{SHALLOW}"
    ).strip()
    depth = int(lab.git("rev-list", "--count", f"{content}..HEAD").strip())
    code, report = _audit(lab, tmp_path / "shallow", f"--depth={depth}")
    assert code != 0 and _forged_valid(report) == [], report
    # round 3 found it judged the forged start valid; a shallow clone is now refused
    assert code == 2 and "shallow" in json.dumps(report) and "E_GIT" in json.dumps(report)
