"""Round 79, approval side: an approval carried by a byte-exact move (round 77,
r77movedappr; docs/approvals.md, moves) across a POLICY change made before any pass read it:
the approver removed, a quorum raised (docs/approvals.md, "Judged again": "each collected
vote is judged again, from its commit, under the policy in force when the next approval is
decided"). Does the carried request keep the policy it was made under, or a policy record
the fresh clone's audit reads differently?

Lab (one, local mode, fake dates, ``require_signed`` with signkit's keys; every approval
below is SSH-signed by its maker unless said, the controller signs its commits). The config
starts with the lab's approvers (Alice and ``*@ops.example.com``: Carol is one) and no
rules. The agent writes ``plans/<v>`` per id. P0 freezes. Gap 1: Alice approves ``alice-*``
and ``rq-*``, Carol approves ``carol-*``; the agent then (next commit) ``git mv``s every
``*-mv`` plan to ``<v>-d``, ``*-mv2`` twice (``-d``, then ``-e`` in a second commit). The
operator then narrows the config: the approvers are Alice and ``bob@ops.example.com`` only
(Carol removed), and a rule asks two approvals for ``plans/rq*/**``. P1. Gap 2: Bob approves
every ``rq-*`` plan where it now is. P2. Gap 3: the operator restores Carol (every id sees
it; ``carol-back`` is one more ``git mv`` into ``-d``). P3.

- ``alice-stay``, ``alice-mv``, ``alice-mv2`` (controls): run once at P1, approver alice;
- ``carol-stay``, ``carol-mv``, ``carol-mv2``, ``carol-back``: Carol is no approver when the
  first pass decides: ``E_APPROVER_NOT_ALLOWED``, never run, not after she is restored
  either (a refused request is no open vote);
- ``rq-stay``, ``rq-mv``, ``rq-mv2``: two approvals needed when decided: Alice's (carried)
  vote is ``partial`` at P1, Bob's makes two at P2: run once, after P1.
- ``forge-mv``, ``forge-alicemv``, ``forge-bobmv``: the agent commits an UNSIGNED approval
  under Alice's name (gap 1); the agent moves it byte-exact (unsigned), or ALICE, or BOB,
  moves it byte-exact in a commit they SIGN: the carried request is the forged commit's, so
  ``E_SIGNATURE_INVALID``, never run (a signed move must not lend its signature to the
  approval it carries).

What must hold: the runs as above; every counted run's approver allowed under the policy in
force; the fresh clone's audit (which reads the controller's policy records) agrees with the
controller's audit on every id.

Seen (round 79): no break; every id held. A carried request is judged when a pass decides
it, under the policy then in force, wherever it moved: Carol's approvals, moved once or
twice before the narrowed config's first pass, were ``E_APPROVER_NOT_ALLOWED`` naming her,
never ran, and her later restoration ran nothing (the refusal took the request back); Alice's
moved approvals under the raised quorum were ``partial`` at P1 and Bob's vote made two at
P2 (one run each); the controller's audit and the fresh clone's (which reads the policy
records the narrowing committed) agreed on every id. A forged unsigned approval carried by
a byte-exact move, whoever signed the move (the agent unsigned, Alice, Bob), was
``E_SIGNATURE_INVALID`` naming the forged commit ("no signature"), never ran.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, APPROVERS, BOB, CAROL, Lab, cases, clone_audit
from policykit import agent_plan as plan
from signkit import sign, signed_lab, signed_run
from test_round2_execution_kit import shared
from test_round73_approve_ownedbytes import Clock

ALL = [
    "alice-stay",
    "alice-mv",
    "alice-mv2",
    "carol-stay",
    "carol-mv",
    "carol-mv2",
    "carol-back",
    "rq-stay",
    "rq-mv",
    "rq-mv2",
    "forge-mv",
    "forge-alicemv",
    "forge-bobmv",
]
RULE = """\
rules:
  - match: {paths: ["plans/rq*/**"]}
    require: [{count: 2}]
"""

BROKEN: dict[str, Any] = {}


def who(v: str) -> str:
    return v.split("-", 1)[0]


def way(v: str) -> str:
    return v.split("-", 1)[1]


def home(v: str) -> str:
    return v if way(v) == "stay" else f"{v}-e" if way(v) == "mv2" else f"{v}-d"


def _narrow(lab: Lab, carol: bool) -> None:
    signers = lab.root / "allowed_signers"
    lab.write_config(approval=f"require_signed: true\nallowed_signers: {signers}\n" + RULE)
    if not carol:
        text = lab.config.read_text()
        old = json.dumps(APPROVERS)
        assert old in text, text
        lab.config.write_text(text.replace(old, json.dumps([ALICE[1], BOB[1]])))


def _run(lab: Lab, c: Clock) -> None:
    c.t += 20
    lab.git_date = f"@{c.t} +0000"
    try:
        signed_run(lab)
    finally:
        lab.git_date = None


def _sign(lab: Lab, c: Clock, folder: str, key: str, person: tuple[str, str]) -> None:
    c.t += 20
    sign(lab, folder, key, person, "approved", when=c.t)


def _signed_move(lab: Lab, c: Clock, v: str, key: str, person: tuple[str, str]) -> None:
    lab.git("mv", f"plans/{v}", f"plans/{v}-d")
    c.t += 20
    path = lab.root / "keys" / key
    lab.extra_env = {"GIT_AUTHOR_DATE": f"@{c.t} +0000", "GIT_COMMITTER_DATE": f"@{c.t} +0000"}  # type: ignore[attr-defined]
    try:
        lab.git(
            "-c", "gpg.format=ssh", "-c", f"user.signingkey={path}",
            "commit", "-q", "-S", "-m", f"move {v}", who=person,
        )  # fmt: skip
    finally:
        lab.extra_env = {}  # type: ignore[attr-defined]


def _build(root: Path) -> Lab:
    lab, _expires = signed_lab(root, 3 * 3600)
    c = Clock(lab)
    for v in ALL:
        lab.write(v, plan(v))
    c.commit("agent plans")
    _run(lab, c)  # P0
    for v in ALL:
        if who(v) in ("alice", "rq"):
            _sign(lab, c, v, "alice", ALICE)
        elif who(v) == "carol":
            _sign(lab, c, v, "carol", CAROL)
        else:  # forged: "Alice", unsigned
            lab.set_status(v, "approved")
    c.commit("alice (forged, unsigned): approve the forge plans", who=ALICE)
    for v in ALL:
        if way(v) in ("mv", "mv2", "back"):
            lab.git("mv", f"plans/{v}", f"plans/{v}-d")
    c.commit("agent: moves")
    for v in ALL:
        if way(v) == "mv2":
            lab.git("mv", f"plans/{v}-d", f"plans/{v}-e")
    c.commit("agent: moves again")
    _signed_move(lab, c, "forge-alicemv", "alice", ALICE)
    _signed_move(lab, c, "forge-bobmv", "bob", BOB)
    _narrow(lab, carol=False)
    _run(lab, c)  # P1
    lab.p1 = {v: (len(lab.calls(v)), lab.codes(home(v))[:1500]) for v in ALL}  # type: ignore[attr-defined]
    for v in ALL:
        if who(v) == "rq":
            _sign(lab, c, home(v), "bob", BOB)
    _run(lab, c)  # P2
    _narrow(lab, carol=True)
    _run(lab, c)  # P3
    lab.final = {v: lab.codes(home(v))[:2500] for v in ALL}  # type: ignore[attr-defined]
    _code, lab.report = lab.audit("--config", str(lab.config))  # type: ignore[attr-defined]
    lab.fresh, _valid = clone_audit(lab, root)  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r79-repolicy", _build)


def runs_of(report: dict[str, Any], v: str) -> list[dict[str, Any]]:
    here = {f"plans/{v}", f"plans/{v}-d", f"plans/{v}-e"}
    return [
        e for e in report.get("executions", []) if e.get("plan") in here and e.get("approval_valid")
    ]


def said(lab: Lab, v: str) -> str:
    return str((lab.p1[v], lab.final[v]))[:4000]  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(ALL, ALL, BROKEN))
def test_the_version_runs_as_the_policy_in_force_allows(lab: Lab, vid: str) -> None:
    want = 0 if who(vid) in ("carol", "forge") else 1
    assert len(lab.calls(vid)) == want, said(lab, vid)
    first = 1 if who(vid) == "alice" else 0
    assert lab.p1[vid][0] == first, said(lab, vid)  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(ALL, ALL, BROKEN))
def test_the_row_says_why(lab: Lab, vid: str) -> None:
    p1 = lab.p1[vid][1]  # type: ignore[attr-defined]
    if who(vid) == "carol":
        assert "E_APPROVER_NOT_ALLOWED" in p1 and CAROL[1] in p1, said(lab, vid)
    elif who(vid) == "forge":
        assert "E_SIGNATURE_INVALID" in p1, said(lab, vid)
    elif who(vid) == "rq":
        assert "more approvals needed" in p1, said(lab, vid)
    else:
        assert '"status": "completed"' in p1, said(lab, vid)


@pytest.mark.parametrize("vid", cases(ALL, ALL, BROKEN))
def test_every_counted_run_names_an_approver_in_force(lab: Lab, vid: str) -> None:
    runs = runs_of(lab.report, vid)  # type: ignore[attr-defined]
    assert len(runs) == len(lab.calls(vid)), runs
    for r in runs:
        assert r.get("approver") in (ALICE[1], BOB[1]), runs


@pytest.mark.parametrize("vid", cases(ALL, ALL, BROKEN))
def test_a_fresh_clone_agrees_with_the_controller(lab: Lab, vid: str) -> None:
    fresh = runs_of(lab.fresh, vid)  # type: ignore[attr-defined]
    mine = runs_of(lab.report, vid)  # type: ignore[attr-defined]
    assert sorted((e.get("plan"), str(e.get("approver"))) for e in mine) == sorted(
        (e.get("plan"), str(e.get("approver"))) for e in fresh
    ), (mine, fresh)
