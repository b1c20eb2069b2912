"""Round 40, a NUL byte in a commit message: git's pretty formats (``%B``, ``%(trailers)``)
stop at it, ``git cat-file`` shows what follows. Does a reader of one kind see a co-author
(a writer) or an approval trailer that a reader of the other kind does not, so that the
controller, ``plangate check`` and the fresh-clone audit disagree?

Built with ``git hash-object -t commit -w`` (git 2.39 stores the object as given).

- ``coauthor``: the agent's commit adding the plan has the message
  ``add\\0\\n\\nCo-authored-by: Alice <alice@example.com>``; the controller freezes it;
  Alice approves.
- ``coauthor-trail``: the same, with the NUL at the end of a trailer block whose first
  line is ``Signed-off-by: Agent`` (``...Agent <agent@example.com>\\0\\nCo-authored-by: Alice``).
- ``control``: the trailer without the NUL (Alice is refused ``E_SELF_APPROVAL``).

Asserted (the defence): the controller and the fresh-clone audit reach one verdict: the
plan either never runs, or runs once and the audit calls that start valid; and
``plangate check --as alice`` for an approval PR predicts the controller's outcome.

Seen: all three read the message as git's pretty formats do (up to the NUL): the hidden
``Co-authored-by`` names nobody, Alice's approval of ``coauthor``/``coauthor-trail`` runs
them once, the audit calls those starts valid and ``check`` predicted ``start``. Not a
break: a trailer git itself does not show is no claim, and leaving a co-author out is the
forged-authorship case (identities are claims without signatures); the verdicts agree.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, plan_text
from checkkit import predicts_start
from test_round2_execution_kit import shared

MESSAGES = {
    "control": b"add control\n\nCo-authored-by: Alice <alice@example.com>\n",
    "coauthor": b"add coauthor\x00\n\nCo-authored-by: Alice <alice@example.com>\n",
    "coauthor-trail": (
        b"add coauthor-trail\n\nSigned-off-by: Agent <agent@example.com>\x00\n"
        b"Co-authored-by: Alice <alice@example.com>\n"
    ),
}
VARIANTS = list(MESSAGES)
FOUND: dict[str, pytest.MarkDecorator] = {}


def _nul_commit(lab: Lab, message: bytes) -> None:
    import subprocess

    tree = lab.git("write-tree").strip()
    parent = lab.head()
    stamp = lab.git("log", "-1", "--format=%ct", "HEAD").strip()
    raw = (
        f"tree {tree}\nparent {parent}\n"
        f"author Agent <agent@example.com> {stamp} +0000\n"
        f"committer Agent <agent@example.com> {stamp} +0000\n\n"
    ).encode() + message
    sha = subprocess.run(
        ["git", "hash-object", "-t", "commit", "-w", "--stdin"],
        cwd=lab.repo, env=lab.env(), input=raw, capture_output=True, check=True,
    ).stdout.decode().strip()  # fmt: skip
    lab.git("update-ref", "refs/heads/main", sha)
    lab.git("reset", "-q", "--hard", sha)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    lab.write("seed", plan_text("seed"))
    lab.commit("seed", AGENT)
    for vid, msg in MESSAGES.items():
        lab.write(vid, plan_text(vid))
        lab.git("add", "-A")
        _nul_commit(lab, msg)
    lab.run()
    base = lab.head()
    lab.check = {}  # type: ignore[attr-defined]
    for vid in VARIANTS:
        lab.git("checkout", "-q", "-b", f"pr-{vid}", base)
        lab.approve(vid, ALICE)
        res = lab.cli(
            "check", "--base", "main", "--head", f"pr-{vid}", "--as", "alice@example.com",
            "--format", "json", "--config", str(lab.config), cwd=lab.repo,
        )  # fmt: skip
        lab.check[vid] = res.stdout or res.stderr  # type: ignore[attr-defined]
        lab.git("checkout", "-q", "main")
    for vid in VARIANTS:
        lab.approve(vid, ALICE)
    lab.run()
    clone = root / "clone"
    lab.git("clone", "-q", str(lab.repo), str(clone))
    res = lab.cli("audit", "--json", cwd=clone)
    lab.audit_report = (  # type: ignore[attr-defined]
        json.loads(res.stdout) if res.stdout.strip() else {"raw": res.stderr}
    )
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r40-nulmsg", _build)


def _p(vids: list[str]) -> list[Any]:
    return [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in vids]


def test_the_control_is_a_self_approval(lab: Lab) -> None:
    assert lab.calls("control") == [], lab.codes("control")
    assert "E_SELF_APPROVAL" in lab.codes("control"), lab.codes("control")


@pytest.mark.parametrize("vid", _p(VARIANTS))
def test_the_fresh_clone_audit_agrees(lab: Lab, vid: str) -> None:
    report = lab.audit_report  # type: ignore[attr-defined]
    runs = [e for e in report.get("executions", []) if e.get("plan") == f"plans/{vid}"]
    assert len(runs) == len(lab.calls(vid)), (report, lab.codes(vid))
    assert all(e.get("approval_valid") for e in runs), runs


@pytest.mark.parametrize("vid", _p(VARIANTS))
def test_check_predicts_the_controller(lab: Lab, vid: str) -> None:
    text = lab.check[vid]  # type: ignore[attr-defined]
    ran = bool(lab.calls(vid))
    assert predicts_start(text) == ran, (text[-1500:], lab.codes(vid))
