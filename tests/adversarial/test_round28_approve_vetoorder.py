"""Round 28, who may reject or abort: a removed approver's withdrawal from a branch based before
her removal, after the history index is rebuilt, and with her commits dated before it.

Round 27 judges a withdrawal by the policy the controller recorded, "in scan order"; deleting
``index.sqlite`` is "always safe" (a pure cache). Config v1: the bench's approvers plus
``mallory@example.com``. The agent writes ``old-*`` plans; the controller freezes them and
records v1; ``pre`` = main's tip. The operator removes Mallory (v2); the controller passes
(records v2). The agent writes ``new-*`` plans; the controller freezes them. Then Mallory (no
longer an approver, never an author) branches from ``pre`` (for ``new-*`` she first merges
main into that branch, so the plan arrives through its second parent), sets the plan
``rejected`` and merges the branch into main herself:

- ``rb-seen``: (a ``new`` plan) the controller passes (it ignores her rejection); the operator
  deletes ``index.sqlite``; the controller passes;
- ``rb-unseen``: (``new``) merged, then ``index.sqlite`` is deleted before the next pass;
- ``dated-old`` / ``dated-new``: Mallory's branch commits carry author and committer dates one
  second after ``pre`` (before the v2 record); no index deletion;
- ``dated-rb``: (``new``) dated as above, and ``index.sqlite`` deleted before the next pass;
- ``joined``: (``old``) Dave, not an approver under v1, rejects it on main before the operator
  adds him to ``approvers`` (v2 also adds Dave); the controller's next pass records v2;
- ``eve``: (``old``) Eve, never an approver nor an author, rejects it on main after v2;
- ``eve-ours``: Eve rejects it on a side branch the agent merges ``-s ours`` (main's file
  stays ``pending_approval``);
- ``eve-abort``: Eve sets the pending plan ``aborted``; ``author-abort``: the agent (its
  author) sets the pending plan ``aborted`` (docs: "ignored (``E_ILLEGAL_TRANSITION``):
  nothing to abort"); ``author-done``: the agent sets it ``completed`` (ignored, illegal).

Then Alice approves every plan; the controller passes. Asserted: each plan runs once (a
rejection by someone not entitled when she made it withdraws nothing; the verdict does not
depend on a cache or on dates she chose). ``ctl``: Alice's approval alone (runs once).
``check-*``: before Alice's approvals, ``plangate check --as alice`` (fresh clone, the config)
on a pull request in which the agent sets ``approved`` predicts ``start``, the controller's
verdict. ``audit-agrees``: a fresh clone's audit flags no ``start-without-approval`` for them.

Results: every controller-side variant held (each plan ran once; ``ctl`` too) and the audit
agreed. ``check-ctl`` and ``check-eve-abort``/``-author-abort``/``-author-done`` held
(``start``). BROKE (strict xfails): ``check-eve``, ``check-eve-ours``, ``check-joined``,
``check-dated-old``, ``check-rb-seen``: ``plangate check`` predicts ``none`` ("merging changes
it; no approval is decided", status ``rejected``) for plans whose rejection the controller
ignores, and which it then starts on Alice's approval.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, MALLORY, Lab, plan_text
from test_round2_execution_kit import shared

V1 = '["alice@example.com", "*@ops.example.com", "mallory@example.com"]'
V2 = '["alice@example.com", "*@ops.example.com", "dave@example.com"]'
DAVE = ("Dave", "dave@example.com")
EVE = ("Eve", "eve@example.com")
ODD = {"eve-abort": ("aborted", EVE), "author-abort": ("aborted", AGENT),
       "author-done": ("completed", AGENT)}  # fmt: skip
OLD = ["dated-old", "joined", "eve", "eve-ours", *ODD]
NEW = ["rb-seen", "rb-unseen", "dated-new", "dated-rb"]
ALL = [*OLD, *NEW, "ctl"]
CHECKS = ["joined", "rb-seen", "dated-old", "eve", "eve-ours", *ODD, "ctl"]


def _policy(lab: Lab, approvers: str) -> None:
    text = lab.config.read_text()
    for old in (V1, V2):
        text = text.replace(old, approvers)
    lab.config.write_text(text)


def _mallory(lab: Lab, vid: str, pre: str, bring_main: bool, date: str | None) -> None:
    name = f"m-{vid}"
    lab.git("checkout", "-q", "-b", name, pre)
    if date:
        lab.extra_env = {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    if bring_main:
        lab.git("merge", "--no-ff", "-q", "-m", "merge main", "main", who=MALLORY)
    lab.set_status(vid, "rejected")
    lab.commit(f"mallory rejects {vid}", MALLORY)
    lab.extra_env = {}
    lab.git("checkout", "-q", "main")
    lab.git("merge", "--no-ff", "-q", "-m", f"merge {name}", name, who=MALLORY)


def _unindex(lab: Lab) -> None:
    (lab.state / "index.sqlite").unlink()


def _build(root: Path) -> Lab:
    lab = Lab(root)
    lab.extra_env = {}
    _policy(lab, V1)
    for vid in [*OLD, "ctl"]:
        lab.write(vid, plan_text(vid))
    lab.commit("agent writes the old plans", AGENT)
    lab.run()  # freeze, record v1
    pre = lab.head()
    time.sleep(1.05)
    lab.set_status("joined", "rejected")
    lab.commit("dave rejects joined", DAVE)
    pre_time = int(lab.git("log", "-1", "--format=%ct", pre).strip())
    dated = f"@{pre_time + 1} +0000"
    time.sleep(2.05)
    _policy(lab, V2)  # the operator removes Mallory, adds Dave
    lab.run()  # records v2 (Dave's rejection: made under v1, withdraws nothing)
    for vid in NEW:
        lab.write(vid, plan_text(vid))
    lab.commit("agent writes the new plans", AGENT)
    lab.run()  # freeze
    time.sleep(1.05)
    lab.set_status("eve", "rejected")
    lab.commit("eve rejects eve", EVE)
    lab.git("checkout", "-q", "-b", "eve-side")
    lab.set_status("eve-ours", "rejected")
    lab.commit("eve rejects eve-ours on a branch", EVE)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-s", "ours", "-q", "-m", "merge eve-side", "eve-side", who=AGENT)
    for vid, (status, who) in ODD.items():
        lab.set_status(vid, status)
        lab.commit(f"{status} {vid}", who)
    _mallory(lab, "rb-seen", pre, True, None)
    _mallory(lab, "dated-old", pre, False, dated)
    _mallory(lab, "dated-new", pre, True, dated)
    lab.run()
    _unindex(lab)
    lab.run()
    _mallory(lab, "rb-unseen", pre, True, None)
    _mallory(lab, "dated-rb", pre, True, dated)
    _unindex(lab)
    lab.run()
    lab.git("checkout", "-q", "-b", "pr")
    for vid in CHECKS:
        lab.set_status(vid, "approved")
    lab.commit("agent asks", AGENT)
    lab.git("checkout", "-q", "main")
    chk = root / "chk"
    lab.git("clone", "-q", str(lab.repo), str(chk))
    out = lab.cli(
        "check", "--config", str(lab.config), "--base", "origin/main", "--head", "origin/pr",
        "--as", "alice@example.com", "--format", "json", cwd=chk,
    )  # fmt: skip
    (root / "check.json").write_text(out.stdout)
    (root / "check.err").write_text(out.stderr)
    time.sleep(1.05)
    for vid in ALL:
        lab.set_status(vid, "approved")
        lab.commit(f"alice approves {vid}", ALICE)
    lab.run()
    clone = root / "clone"
    shutil.rmtree(clone, ignore_errors=True)
    lab.git("clone", "-q", str(lab.repo), str(clone))
    out = lab.cli("audit", "--json", cwd=clone)
    (root / "audit.json").write_text(out.stdout)
    (root / "audit.err").write_text(out.stderr)
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r28-vetoorder", _build)


def _broke(why: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason="round 28: " + why)


#: What round 28 broke (strict xfails).
_CHECK = (
    "plangate check (fresh clone, the controller's config, --as alice) predicts 'merging "
    "changes it; no approval is decided' (status 'rejected', outcome 'none') for a plan whose "
    "rejection the controller ignores (E_APPROVER_NOT_ALLOWED); the controller starts it on "
    "Alice's approval and it runs once (asserted above; the fresh-clone audit agrees): "
)
#: What round 28 broke (fixed the same hour; kept as the record, applied to nothing).
FOUND: dict[str, pytest.MarkDecorator] = {
    "check-eve": _broke(_CHECK + "Eve, never an approver nor an author, rejected it on main"),
    "check-eve-ours": _broke(
        _CHECK + "Eve rejected it on a side branch merged -s ours (main's file stays "
        "pending_approval; check still shows it rejected)"
    ),
    "check-joined": _broke(
        _CHECK + "Dave rejected it on main before the operator made him an approver"
    ),
    "check-dated-old": _broke(
        _CHECK + "Mallory, removed from approvers, rejected it on a branch based before her "
        "removal (commits dated before it) and merged it"
    ),
    "check-rb-seen": _broke(
        _CHECK + "Mallory, removed, rejected a plan written after her removal on a branch "
        "based before it (main merged into it) and merged it"
    ),
}


def _p(vids: list[str]) -> list[Any]:
    return [pytest.param(v, id=v, marks=[]) for v in vids]


@pytest.mark.parametrize("vid", _p(ALL))
def test_a_removed_approvers_rejection_withdraws_nothing(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)


@pytest.mark.parametrize("vid", _p([f"check-{v}" for v in CHECKS]))
def test_check_predicts_the_start(lab: Lab, vid: str) -> None:
    text = (lab.root / "check.json").read_text()
    assert text.strip(), (lab.root / "check.err").read_text()[-2000:]
    report = json.loads(text)
    plan = f"plans/{vid.removeprefix('check-')}"
    rows = report if isinstance(report, list) else report.get("plans", [])
    row = [r for r in rows if r.get("plan") == plan]
    assert row and row[0].get("outcome") == "start", json.dumps(row)[:2000]


@pytest.mark.parametrize("vid", _p(["audit-agrees"]))
def test_fresh_clone_audit_agrees(lab: Lab, vid: str) -> None:
    text = (lab.root / "audit.json").read_text()
    assert text.strip(), (lab.root / "audit.err").read_text()[-2000:]
    report = json.loads(text)
    ours = {f"plans/{v}" for v in ALL}
    found = [
        f
        for f in report.get("findings", [])
        if f.get("plan") in ours and f.get("kind") == "start-without-approval"
    ]
    assert found == [], json.dumps(found)[:2000]
