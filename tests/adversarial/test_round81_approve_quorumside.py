"""Round 81, approval side: side-branch take-backs and withdrawals under a quorum rule and
across a policy change, and the recorded policy (``.plangate/policy.json``) changed on the
branch a merge brings (docs/approvals.md, "Policy: quorum, groups, risk": votes "accumulate
across approval commits by distinct people", "Each collected vote is judged again ... under
the policy in force"; "Withdrawals are judged by the controller's last own record before
them"; "A withdrawn version stays withdrawn"; "The recorded policy": "The file is a record,
not an input").

Lab (one, local mode, fake dates). Config: approvers Alice, ``*@ops.example.com`` (Bob,
Carol) and, at first, DAVE; group ``ops`` = all of them; every ``plans/q-*`` needs 2 of
``ops``. The agent writes ``plans/<id>`` per id (its tag, ``rec`` records it); P0 freezes.
Gap 1 (main): Alice votes on every ``q-*`` but ``q-rm*``/``q-add*``; Dave votes on
``q-rmvote`` and ``q-rmctl``, Bob on ``q-rmctl`` too; Erin (no approver) on ``q-addvote``.
P1 (quorums partial; ``q-rmctl`` runs). Then, by id:

- ``q-ffvote`` (control): Carol approves on her branch cut at main's tip; main
  fast-forwards onto it (her commit is first-parent): Alice + Carol, runs once;
- ``q-ctlpr`` (control): Bob approves on his branch and merges it ``--no-ff`` himself (the
  merge is the request): Alice + Bob, runs once; ``check --as bob`` predicts ``start``;
- ``q-ctl`` (control): Bob approves on main at gap 2: runs once;
- ``q-rmctl`` (control): Dave + Bob at gap 1 while Dave is allowed: runs once at P1;
- ``q-sidetake``: ALICE rejects on a branch (her vote taken back), the agent writes
  ``pending_approval`` back there, merged ``--no-ff``; Bob approves on main at gap 2: the
  version is withdrawn (an approver's reject), never runs;
- ``q-bobside``: BOB rejects on a branch, the agent writes pending back, merged; Carol
  approves at gap 2 (Alice + Carol would be a quorum): never runs;
- ``q-before``: Bob approves on main FIRST (quorum met on the line), then a branch holding
  Alice's reject and pending back (net diff: nothing) is merged, one pass: never runs
  (the withdrawal is in history before the pass decides);
- ``q-carolpr``: Carol approves on a branch (unsigned, no trailer), ALICE merges it (her
  request, her second vote): one person once, Carol's inside commit no vote: never runs;
  ``check --as alice`` must not predict ``start``;
- ``q-sidevote``: Carol approves on a branch, the AGENT merges it ``--no-ff``: never runs;
- ``q-rmvote``: Dave's gap-1 vote; Dave then removed from the config (a pass records it);
  Bob approves at gap 2: Dave's vote is judged again and no longer counts: never runs;
- ``q-addvote``: Erin's refused gap-1 vote; Erin then added; Bob approves at gap 2: at most
  once, and a run counts no agent;
- ``rmveto``: DAVE rejects on a branch while allowed, the agent writes pending back; Dave
  removed (recorded by a pass) before the branch is merged; Alice approves at gap 2: either
  reading is fair (0 or 1 run), the fresh clone's audit must agree;
- ``rmvetoold``: Dave's reject on a branch merged BEFORE his removal (a withdrawal then),
  pending back; Alice approves at gap 2 (after the removal): stays withdrawn, never runs;
- ``addveto``: ERIN (no approver then) rejects on a branch, pending back; Erin added before
  the merge; Alice approves at gap 2: 0 or 1, audit agrees;
- ``q-polside``: the agent's branch rewrites ``.plangate/policy.json`` without the quorum
  rule and sets ``approved``; Alice merges it (her second vote): never runs (the file is a
  record, not an input); ``check --as alice`` must not predict ``start``;
- ``polagent``: the agent's branch rewrites the policy file naming itself an approver and
  allowing self-approval, sets ``approved`` and merges it itself: never runs;
- ``polforge``: on the agent's branch a commit under the CONTROLLER's identity (author and
  committer ``plangate@localhost``), ``plangate: record policy`` with a ``Policy-Hash:``
  trailer naming the bytes it writes: a policy without Alice; the agent sets ``approved``;
  ALICE merges (an honest approval): runs once, and the fresh clone's audit (no config, no
  record of the controller's commits) must still call her run valid; ``q-polforge``: the
  same forged record dropping the quorum rule, Alice's second vote by merge: never runs.

P1.5 (after Dave's removal / Erin's addition), merges, gap 2, P2, P3; the controller's audit
and a fresh clone's.

What must hold: each id's tag runs as ``WANT`` says, every counted run's approver is allowed
(never the agent, Erin for a run she alone would make, or Dave after his removal), and the
fresh clone's audit agrees with the controller on every run.

Seen (round 81): no break; every id held and the fresh clone's audit agreed on each. Under
the quorum rule an approver's reject on a merged branch with ``pending_approval`` written
back kept the version ``rejected`` (effective status, "set status rejected on a merged
branch") whether the other vote came after the merge (``q-sidetake``, ``q-bobside``) or
before it on the line in the same pass (``q-before``). Carol's unsigned approval inside a
branch counted nothing, merged by Alice (``q-carolpr``: still partial, Alice once) or by the
agent (``q-sidevote``: ``E_APPROVER_NOT_ALLOWED``, Alice's vote kept). Dave's vote was judged
again after his removal (``q-rmvote``: partial); Erin's refused vote stayed uncounted after
her addition (``q-addvote``). Withdrawals on a branch are judged at the merge by the record
then in force: Dave's reject merged after his removal withdrew nothing (``rmveto`` ran on
Alice), Erin's reject (made before she was added) merged after her addition withdrew the
version (``addveto``), and Dave's reject merged before his removal stayed a withdrawal
(``rmvetoold``: ``E_ILLEGAL_TRANSITION``); both readings agree with the audit. A policy file
rewritten on a branch (``q-polside``, ``polagent``) or forged as a ``plangate: record
policy`` commit under the controller's identity with a matching ``Policy-Hash:``
(``polforge``, ``q-polforge``) changed no decision, and the fresh clone's audit (no config)
still judged ``polforge``'s run by the policy its ``start`` names. ``check`` agreed with the
pass on every checked id.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, APPROVERS, BOB, BOT, CAROL, Lab, cases, clone_audit
from policykit import agent_plan as plan
from policykit import set_approvers
from test_round2_execution_kit import shared
from test_round73_approve_ownedbytes import Clock

DAVE = ("Dave", "dave@example.com")
ERIN = ("Erin", "erin@example.com")

APPROVAL = """\
groups:
  ops: ["alice@example.com", "*@ops.example.com", "dave@example.com", "erin@example.com"]
rules:
  - match: {paths: ["plans/q-*"]}
    require: [{group: ops, count: 2}]
"""

ALL = [
    "q-ffvote",
    "q-ctlpr",
    "q-ctl",
    "q-rmctl",
    "q-sidetake",
    "q-bobside",
    "q-before",
    "q-carolpr",
    "q-sidevote",
    "q-rmvote",
    "q-addvote",
    "rmveto",
    "rmvetoold",
    "addveto",
    "q-polside",
    "polagent",
    "polforge",
    "q-polforge",
]
CONTROLS = ["q-ffvote", "q-ctlpr", "q-ctl", "q-rmctl", "polforge"]

#: id -> (least, most) runs of the id's tag
WANT: dict[str, tuple[int, int]] = {
    "q-ffvote": (1, 1),
    "q-ctlpr": (1, 1),
    "q-ctl": (1, 1),
    "q-rmctl": (1, 1),
    "q-sidetake": (0, 0),
    "q-bobside": (0, 0),
    "q-before": (0, 0),
    "q-carolpr": (0, 0),
    "q-sidevote": (0, 0),
    "q-rmvote": (0, 0),
    "q-addvote": (0, 1),
    "rmveto": (0, 1),
    "rmvetoold": (0, 0),
    "addveto": (0, 1),
    "q-polside": (0, 0),
    "polagent": (0, 0),
    "polforge": (1, 1),
    "q-polforge": (0, 0),
}
#: ids whose ``check`` prediction is recorded just before the merge: (branch, --as)
CHECKS: dict[str, tuple[str, str]] = {
    "q-ctlpr": ("b-q-ctlpr", BOB[1]),
    "q-carolpr": ("b-q-carolpr", ALICE[1]),
    "q-polside": ("b-q-polside", ALICE[1]),
    "q-sidevote": ("b-q-sidevote", AGENT[1]),
    "polagent": ("b-polagent", AGENT[1]),
    "polforge": ("b-polforge", ALICE[1]),
    "q-polforge": ("b-q-polforge", ALICE[1]),
}
#: people a counted run of the id must not rest on
NEVER: dict[str, set[str]] = {
    "q-sidetake": {ALICE[1]},
    "q-bobside": {BOB[1]},
    "q-rmvote": {DAVE[1]},
    "rmveto": {DAVE[1]},
    "rmvetoold": {DAVE[1]},
}

RUNS_BROKEN: dict[str, Any] = {}
BROKEN: dict[str, Any] = {}
CHECK_BROKEN: dict[str, Any] = {}


def _policy(lab: Lab) -> dict[str, Any]:
    return json.loads((lab.repo / ".plangate" / "policy.json").read_text())


def _write_policy(lab: Lab, pol: dict[str, Any]) -> str:
    data = json.dumps(pol, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    (lab.repo / ".plangate" / "policy.json").write_bytes(data)
    import hashlib

    return hashlib.sha256(data).hexdigest()


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=APPROVAL)
    set_approvers(lab, [*APPROVERS, DAVE[1]])
    c = Clock(lab)
    g = lab.git
    for v in ALL:
        lab.write(v, plan(v))
    c.commit("agent plans")
    c.run()  # P0
    lab.record_msg = g("log", "-1", "--format=%B", "--grep=record policy")  # type: ignore[attr-defined]
    for v in ALL:
        if v.startswith("q-") and v not in ("q-rmvote", "q-rmctl", "q-addvote"):
            lab.set_status(v, "approved")
    c.commit("alice: votes (gap 1)", who=ALICE)
    for v in ("q-rmvote", "q-rmctl"):
        lab.set_status(v, "approved")
    c.commit("dave: votes (gap 1)", who=DAVE)
    lab.set_status("q-addvote", "approved")
    c.commit("erin: vote (gap 1)", who=ERIN)
    c.run()  # P1a: partials
    lab.set_status("q-rmctl", "approved")
    c.commit("bob: vote q-rmctl", who=BOB)
    c.run()  # P1b
    lab.p1 = {v: len(lab.calls(v)) for v in ALL}  # type: ignore[attr-defined]
    checks: dict[str, Any] = {}

    def branch(name: str, start: str = "main") -> None:
        c.git("checkout", "-q", "-b", name, start)

    def main() -> None:
        c.git("checkout", "-q", "main")

    def check(v: str) -> None:
        br, who = CHECKS[v]
        out = lab.cli(
            "check", "--config", str(lab.config), "--base", "main", "--head", br,
            "--as", who, "--format", "json", cwd=lab.repo,
        )  # fmt: skip
        checks[v] = {"out": out.stdout, "err": out.stderr[-2000:]}

    # q-ffvote first: main must not move before its fast-forward
    branch("b-q-ffvote")
    lab.set_status("q-ffvote", "approved")
    c.commit("carol: vote q-ffvote on her branch", who=CAROL)
    main()
    c.git("merge", "-q", "--ff-only", "b-q-ffvote")
    tip = lab.head()
    branch("b-q-ctlpr", tip)
    lab.set_status("q-ctlpr", "approved")
    c.commit("bob: vote q-ctlpr on his branch", who=BOB)
    for v in ("q-sidetake", "q-before"):
        branch(f"b-{v}", tip)
        lab.set_status(v, "rejected")
        c.commit(f"alice: take back {v}", who=ALICE)
        lab.set_status(v, "pending_approval")
        c.commit(f"agent: {v} pending again")
    for v, who in (("q-bobside", BOB), ("rmveto", DAVE), ("rmvetoold", DAVE), ("addveto", ERIN)):
        branch(f"b-{v}", tip)
        lab.set_status(v, "rejected")
        c.commit(f"reject {v}", who=who)
        lab.set_status(v, "pending_approval")
        c.commit(f"agent: {v} pending again")
    for v in ("q-carolpr", "q-sidevote"):
        branch(f"b-{v}", tip)
        lab.set_status(v, "approved")
        c.commit(f"carol: vote {v} on a branch", who=CAROL)
    main()
    m = lambda *a, who=AGENT: c.git("merge", "-q", *a, who=who)  # noqa: E731
    # before the policy change
    m("--no-ff", "-m", "merge rmvetoold", "b-rmvetoold")
    lab.set_status("q-before", "approved")
    c.commit("bob: vote q-before on main", who=BOB)
    m("--no-ff", "-m", "merge q-before take-back", "b-q-before")
    c.run()  # P1c
    # Dave removed, Erin added; a pass records it
    set_approvers(lab, [*APPROVERS, ERIN[1]])
    c.run()  # P1.5
    base = lab.head()  # the policy branches are cut at the record of the new policy
    branch("b-q-polside", base)
    pol = _policy(lab)
    pol["approval"]["rules"] = []
    _write_policy(lab, pol)
    lab.set_status("q-polside", "approved")
    c.commit("agent: policy without rules, approve q-polside")
    branch("b-polagent", base)
    pol = _policy(lab)
    pol["approval"]["approvers"] = [*pol["approval"]["approvers"], AGENT[1]]
    pol["approval"]["allow_self_approval"] = True
    _write_policy(lab, pol)
    lab.set_status("polagent", "approved")
    c.commit("agent: policy naming me, approve polagent")
    for v in ("polforge", "q-polforge"):
        branch(f"b-{v}", base)
        pol = _policy(lab)
        if v == "polforge":
            pol["approval"]["approvers"] = [
                a for a in pol["approval"]["approvers"] if a != ALICE[1]
            ] + [AGENT[1]]
        else:
            pol["approval"]["rules"] = []
        digest = _write_policy(lab, pol)
        lab.git("add", "-A")
        c.git(
            "commit", "-q", "-m",
            f"plangate: record policy\n\napproval changed\n\nPolicy-Hash: sha256:{digest}\n",
            who=BOT,
        )  # fmt: skip
        lab.set_status(v, "approved")
        c.commit(f"agent: approve {v}" if v != "polforge" else "agent: ask polforge")
    main()
    for v in CHECKS:
        check(v)
    m("--no-ff", "-m", "bob: merge q-ctlpr", "b-q-ctlpr", who=BOB)
    for v in ("q-sidetake", "q-bobside", "rmveto", "addveto", "q-sidevote"):
        m("--no-ff", "-m", f"merge {v}", f"b-{v}")
    # the policy branches' file wins each merge (they conflict with each other)
    m("--no-ff", "-X", "theirs", "-m", "merge polagent", "b-polagent")
    m("--no-ff", "-m", "alice: merge q-carolpr", "b-q-carolpr", who=ALICE)
    for v in ("q-polside", "polforge", "q-polforge"):
        m("--no-ff", "-X", "theirs", "-m", f"alice: merge {v}", f"b-{v}", who=ALICE)
    lab.checks = checks  # type: ignore[attr-defined]
    for v in ("q-ctl", "q-sidetake", "q-rmvote", "q-addvote"):
        lab.set_status(v, "approved")
    c.commit("bob: votes (gap 2)", who=BOB)
    lab.set_status("q-bobside", "approved")
    c.commit("carol: vote (gap 2)", who=CAROL)
    for v in ("rmveto", "rmvetoold", "addveto"):
        lab.set_status(v, "approved")
    c.commit("alice: approve (gap 2)", who=ALICE)
    c.run()  # P2
    c.run()  # P3
    st = lab.status()  # one status call for every id
    lab.final = {v: json.dumps(st.get(f"plans/{v}", {})) for v in ALL}  # type: ignore[attr-defined]
    _code, lab.report = lab.audit("--config", str(lab.config))  # type: ignore[attr-defined]
    lab.fresh, _valid = clone_audit(lab, root)  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r81-quorumside", _build)


def runs_of(report: dict[str, Any], v: str) -> list[dict[str, Any]]:
    return [
        e
        for e in report.get("executions", [])
        if e.get("plan") == f"plans/{v}" and e.get("approval_valid")
    ]


def said(lab: Lab, v: str) -> str:
    return str(lab.final[v])[:3000]  # type: ignore[attr-defined]


def approvers_of(run: dict[str, Any]) -> set[str]:
    # the approvers' names: an execution's `authors` (who wrote it) are named apart
    text = json.dumps({k: v for k, v in run.items() if k != "authors"})
    return {who[1] for who in (AGENT, ALICE, BOB, CAROL, DAVE, ERIN) if f'"{who[1]}"' in text}


@pytest.mark.parametrize("vid", cases(ALL, ALL, RUNS_BROKEN))
def test_the_version_runs_as_often_as_its_approvals_allow(lab: Lab, vid: str) -> None:
    least, most = WANT[vid]
    n = len(lab.calls(vid))
    assert least <= n <= most, (n, lab.p1[vid], said(lab, vid))  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(ALL, ALL, BROKEN))
def test_every_counted_run_rests_on_allowed_people_who_did_not_write_it(lab: Lab, vid: str) -> None:
    runs = runs_of(lab.report, vid)  # type: ignore[attr-defined]
    for r in runs:
        names = approvers_of(r)
        assert AGENT[1] not in names, runs
        assert not names & NEVER.get(vid, set()), runs
    assert len(runs) == len(lab.calls(vid)), (runs, said(lab, vid))


@pytest.mark.parametrize("vid", cases(ALL, ALL, BROKEN))
def test_a_fresh_clone_agrees_with_the_controller(lab: Lab, vid: str) -> None:
    fresh = runs_of(lab.fresh, vid)  # type: ignore[attr-defined]
    mine = runs_of(lab.report, vid)  # type: ignore[attr-defined]
    assert sorted(str(e.get("approver")) for e in mine) == sorted(
        str(e.get("approver")) for e in fresh
    ), (mine, fresh)
    assert len(fresh) == len(lab.calls(vid)), (fresh, said(lab, vid))


CHECKED = list(CHECKS)


@pytest.mark.parametrize("vid", cases(CHECKED, CHECKED, CHECK_BROKEN))
def test_check_predicted_what_the_pass_then_did(lab: Lab, vid: str) -> None:
    row = lab.checks[vid]  # type: ignore[attr-defined]
    assert row["out"].strip(), row["err"]
    report = json.loads(row["out"])
    rows = report if isinstance(report, list) else report.get("plans", [])
    mine = [r for r in rows if r.get("plan") == f"plans/{vid}"]
    predicted = bool(mine) and mine[0].get("outcome") == "start"
    assert predicted == (len(lab.calls(vid)) > 0), (json.dumps(mine)[:4000], row["out"][:300])
