"""Round 29, who may reject or abort: the policy a withdrawal is judged by when a commit
reaches main by a "foxtrot" merge (``git pull`` on a stale local main, then a fast-forward
push: the puller's own commit becomes main's first parent and the controller's later commits,
its ``record policy`` among them, move to the second parent), and approvers *added* by the
operator whose withdrawal sits on a branch based before their addition.

Each lab: config v1 is the bench's approvers plus ``mallory@example.com``. The agent writes the
``old`` plans; the controller freezes them and records v1; ``pre`` = main's tip. The operator
removes Mallory and adds ``dave@example.com`` (v2); the controller passes (records v2). The
agent writes the ``new`` plans; the controller freezes them. Then (every commit dated after
the v2 record):

Lab ``plain`` (no foxtrot):

- ``br-dave``: Dave branches from ``pre``, rejects the (old) plan, merges the branch into main
  ``--no-ff``;
- ``new-br``: Dave branches from ``pre``, merges main into it (the new plan arrives through
  the second parent), rejects, merges the branch into main ``--no-ff``;
- ``eve-new``: the same by Eve (never an approver, never an author);
- ``main-dave``: Dave rejects the plan on main; ``ctl``: nobody withdraws.

Lab ``fxmal`` / ``fxdave``: Mallory (removed) / Dave (added) on a local main at ``pre`` sets
``fx`` (old) ``rejected``, pulls (``git merge main``: her commit is the merge's first parent)
and main fast-forwards to that merge. Afterwards on main: Dave rejects ``after`` (old),
Eve rejects ``eve`` (old); ``ctl``: nobody withdraws.

Then in each lab: ``plangate check --as alice`` (fresh clone, the config) on a pull request
in which the agent sets every plan ``approved``; Alice approves every plan on main; the
controller passes twice; a fresh clone's audit.

Asserted: a withdrawal counts exactly when its author may withdraw under the policy in force
when they made it (v2: Dave may, Mallory and Eve may not), whatever the shape of the merges
that carried it or came before it: Dave's plans never run, Mallory's, Eve's and ``ctl`` run
once. ``check-*``: check predicts the controller's verdict (``start`` exactly for the plans
that ran). ``audit-*``: the fresh-clone audit flags no ``start-without-approval`` for them.
``reject-*``/``approve-*``: ``plangate reject --config`` by Dave (``main-dave``, and ``after``
after a foxtrot) and, in ``fxmal``, ``plangate approve plans/fx --config`` by Alice (before
her manual approvals) exit 0 and commit (when one refuses, the status is committed by hand).

Results: the controller held on every variant (Dave's rejections stand, Mallory's and Eve's
are ignored; ``ctl`` runs once), and everything in lab ``plain`` held (check, audit, reject).
``reject-fxmal-after``/``reject-fxdave-after`` held. BROKE (strict xfails), all after a
foxtrot: ``check-fxmal-fx``, ``check-fxdave-fx``, ``check-fxmal-after``,
``check-fxdave-after`` (check judges the withdrawal by v1, the policy in its first-parent
history, and predicts the opposite of the controller), ``audit-fxmal-fx`` (the audit honours
Mallory's veto and flags the controller's start as ``start-without-approval``),
``approve-fxmal-fx`` (``approve --config`` calls the plan finally ``rejected``).
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, MALLORY, Lab, identity, plan_text
from test_round2_execution_kit import shared

DAVE = ("Dave", "dave@example.com")
EVE = ("Eve", "eve@example.com")
V0 = '["alice@example.com", "*@ops.example.com"]'
V1 = '["alice@example.com", "*@ops.example.com", "mallory@example.com"]'
V2 = '["alice@example.com", "*@ops.example.com", "dave@example.com"]'
LABS: dict[str, dict[str, list[str]]] = {
    "plain": {"old": ["br-dave", "main-dave", "ctl"], "new": ["new-br", "eve-new"]},
    "fxmal": {"old": ["fx", "after", "eve", "ctl"], "new": []},
    "fxdave": {"old": ["fx", "after", "eve", "ctl"], "new": []},
}
#: the plans whose withdrawal must count (the rest run once)
WITHDRAWN = {("plain", "br-dave"), ("plain", "new-br"), ("plain", "main-dave"),
             ("fxmal", "after"), ("fxdave", "fx"), ("fxdave", "after")}  # fmt: skip


def _policy(lab: Lab, approvers: str) -> None:
    text = lab.config.read_text()
    for old in (V0, V1, V2):
        text = text.replace(old, approvers)
    lab.config.write_text(text)


def _side(lab: Lab, base: str, vid: str, who: tuple[str, str], bring_main: bool) -> None:
    lab.git("checkout", "-q", "-b", f"b-{vid}", base)
    if bring_main:
        lab.git("merge", "--no-ff", "-q", "-m", "merge main", "main", who=who)
    lab.set_status(vid, "rejected")
    lab.commit(f"reject {vid}", who)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "--no-ff", "-q", "-m", f"merge b-{vid}", f"b-{vid}", who=who)


def _foxtrot(lab: Lab, base: str, vid: str, who: tuple[str, str]) -> None:
    lab.git("checkout", "-q", "-b", f"fx-{vid}", base)
    lab.set_status(vid, "rejected")
    lab.commit(f"reject {vid}", who)
    lab.git("merge", "--no-ff", "-q", "-m", "Merge branch 'main'", "main", who=who)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "--ff-only", "-q", f"fx-{vid}")


def _human(lab: Lab, who: tuple[str, str], verb: str, vid: str, status: str) -> None:
    """``plangate <verb> --config`` in the repo as ``who``; its exit code is kept in
    ``<verb>-<vid>.rc``; when it refuses, the same status is committed by hand."""
    lab.extra_env = identity(who)
    args = [verb, f"plans/{vid}", "--config", str(lab.config)]
    out = lab.cli(*args, *(["-m", "no"] if verb == "reject" else []), cwd=lab.repo)
    lab.extra_env = {}
    (lab.root / f"{verb}-{vid}.rc").write_text(f"{out.returncode}\n{out.stdout}\n{out.stderr}")
    if out.returncode != 0:
        lab.set_status(vid, status)
        lab.commit(f"{verb} {vid}", who)


def _build(root: Path, mode: str) -> Lab:
    lab = Lab(root)
    _policy(lab, V1)
    plans = LABS[mode]
    for vid in plans["old"]:
        lab.write(vid, plan_text(f"{mode}-{vid}"))
    lab.commit("agent writes the plans", AGENT)
    lab.run()  # freeze, record v1
    pre = lab.head()
    _policy(lab, V2)
    lab.run()  # records v2
    if plans["new"]:
        for vid in plans["new"]:
            lab.write(vid, plan_text(f"{mode}-{vid}"))
        lab.commit("agent writes the new plans", AGENT)
        lab.run()  # freeze
    time.sleep(1.05)
    if mode == "plain":
        _side(lab, pre, "br-dave", DAVE, False)
        _side(lab, pre, "new-br", DAVE, True)
        _side(lab, pre, "eve-new", EVE, True)
        _human(lab, DAVE, "reject", "main-dave", "rejected")
    else:
        _foxtrot(lab, pre, "fx", MALLORY if mode == "fxmal" else DAVE)
        _human(lab, DAVE, "reject", "after", "rejected")
        lab.set_status("eve", "rejected")
        lab.commit("reject eve", EVE)
    lab.run()
    every = plans["old"] + plans["new"]
    lab.git("checkout", "-q", "-b", "pr")
    for vid in every:
        lab.set_status(vid, "approved")
    lab.commit("agent asks", AGENT)
    lab.git("checkout", "-q", "main")
    clone = root / "chk"
    lab.git("clone", "-q", str(lab.repo), str(clone))
    out = lab.cli(
        "check", "--config", str(lab.config), "--base", "origin/main", "--head", "origin/pr",
        "--as", "alice@example.com", "--format", "json", cwd=clone,
    )  # fmt: skip
    (root / "check.json").write_text(out.stdout)
    (root / "check.err").write_text(out.stderr)
    time.sleep(1.05)
    if mode == "fxmal":
        _human(lab, ALICE, "approve", "fx", "approved")
    for vid in every:
        lab.set_status(vid, "approved")
        lab.commit(f"alice approves {vid}", ALICE)
    lab.run()
    lab.run()
    clone = root / "clone"
    shutil.rmtree(clone, ignore_errors=True)
    lab.git("clone", "-q", str(lab.repo), str(clone))
    out = lab.cli("audit", "--json", cwd=clone)
    (root / "audit.json").write_text(out.stdout)
    (root / "audit.err").write_text(out.stderr)
    return lab


def _lab(factory: pytest.TempPathFactory, mode: str) -> Lab:
    return shared(factory, f"r29-foxtrot-{mode}", lambda root: _build(root, mode))


def _broke(why: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason="round 29: " + why)


_CHECK = (
    "after a foxtrot merge on main (a pull on a stale local main, fast-forwarded: the "
    "controller's v2 'record policy' commit is now on the second parent), plangate check "
    "(fresh clone, same config, --as alice) judges a withdrawal by the policy in its "
    "first-parent history (v1) and disagrees with the controller, which judges it by v2: "
)
#: Accepted (round 29): a first-parent swap ("foxtrot": a stale main's commit, `git pull`,
#: then a fast-forward) puts the controller's record on a second parent; the tools that
#: replay history from a clone follow first parents (docs/threat-model.md, "Accepted
#: limits", round 8). The controller held in every variant; branch protection closes it.
#: What round 29 broke (strict xfails).
FOUND: dict[str, pytest.MarkDecorator] = {
    "check-fxmal-fx": _broke(
        _CHECK + "Mallory (removed in v2) rejects on her stale main and pulls: the controller "
        "ignores her veto and starts the plan on Alice's approval, check shows it 'rejected' "
        "with outcome 'none'"
    ),
    "check-fxdave-fx": _broke(
        _CHECK + "Dave (added in v2) rejects on his stale main and pulls: the controller honours "
        "his veto (the plan never runs), check predicts 'start' (Alice counted)"
    ),
    "check-fxmal-after": _broke(
        _CHECK + "after someone's foxtrot, Dave (added in v2) rejects the plan on main itself: "
        "the controller honours it, check predicts 'start'"
    ),
    "check-fxdave-after": _broke(_CHECK + "as check-fxmal-after, the foxtrot made by Dave himself"),
    "audit-fxmal-fx": _broke(
        "the fresh-clone audit judges Mallory's foxtrot rejection (made after her removal, "
        "v2 recorded) by the v1 of its first-parent history: it flags the controller's start "
        "of the plan on Alice's approval as start-without-approval ('no approval request "
        "precedes this start'): audit and controller disagree"
    ),
    "approve-fxmal-fx": _broke(
        "after Mallory's foxtrot rejection (made after her removal), 'plangate approve plans/fx "
        "--config' as Alice refuses with E_ILLEGAL_TRANSITION ('plans/fx is rejected, which is "
        "final') and commits nothing, while the controller ignores her veto and starts the plan "
        "on Alice's approval made by hand"
    ),
}


def _ids(prefix: str = "") -> list[Any]:
    out = []
    for mode, plans in LABS.items():
        for vid in plans["old"] + plans["new"]:
            tid = f"{prefix}{mode}-{vid}"
            out.append(pytest.param(mode, vid, id=tid, marks=[FOUND[tid]] if tid in FOUND else []))
    return out


@pytest.mark.parametrize(("mode", "vid"), _ids())
def test_withdrawal_judged_by_who_made_it_then(
    tmp_path_factory: pytest.TempPathFactory, mode: str, vid: str
) -> None:
    lab = _lab(tmp_path_factory, mode)
    want = 0 if (mode, vid) in WITHDRAWN else 1
    assert len(lab.calls(f"{mode}-{vid}")) == want, lab.codes(vid)


def _json(lab: Lab, name: str) -> Any:
    text = (lab.root / f"{name}.json").read_text()
    assert text.strip(), (lab.root / f"{name}.err").read_text()[-2000:]
    return json.loads(text)


@pytest.mark.parametrize(("mode", "vid"), _ids("check-"))
def test_check_predicts_the_controller(
    tmp_path_factory: pytest.TempPathFactory, mode: str, vid: str
) -> None:
    lab = _lab(tmp_path_factory, mode)
    report = _json(lab, "check")
    rows = report if isinstance(report, list) else report.get("plans", [])
    row = [r for r in rows if r.get("plan") == f"plans/{vid}"]
    starts = (mode, vid) not in WITHDRAWN
    assert row and (row[0].get("outcome") == "start") == starts, json.dumps(row)[:2000]


@pytest.mark.parametrize(("mode", "vid"), _ids("audit-"))
def test_fresh_clone_audit_agrees(
    tmp_path_factory: pytest.TempPathFactory, mode: str, vid: str
) -> None:
    lab = _lab(tmp_path_factory, mode)
    report = _json(lab, "audit")
    found = [
        f
        for f in report.get("findings", [])
        if f.get("plan") == f"plans/{vid}" and f.get("kind") == "start-without-approval"
    ]
    assert found == [], json.dumps(found)[:2000]


HUMAN = [("plain", "reject", "main-dave"), ("fxmal", "reject", "after"),
         ("fxdave", "reject", "after"), ("fxmal", "approve", "fx")]  # fmt: skip


@pytest.mark.parametrize(
    ("mode", "verb", "vid"),
    [
        pytest.param(m, v, p, id=f"{v}-{m}-{p}", marks=[FOUND[f"{v}-{m}-{p}"]]
                     if f"{v}-{m}-{p}" in FOUND else [])
        for m, v, p in HUMAN
    ],
)  # fmt: skip
def test_human_command_with_config_agrees(
    tmp_path_factory: pytest.TempPathFactory, mode: str, verb: str, vid: str
) -> None:
    """``reject``/``approve --config`` commit what the controller then honours (Dave's
    rejection stands; Mallory's ignored veto leaves fx approvable)."""
    lab = _lab(tmp_path_factory, mode)
    text = (lab.root / f"{verb}-{vid}.rc").read_text()
    assert text.split("\n", 1)[0] == "0", text[-2000:]
