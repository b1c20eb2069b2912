"""Round 81, approval side: a second author of a plan on a side commit merged by Alice
(docs/approvals.md, "Who changed the content": the history index records "the author,
committer and every ``Co-authored-by:`` person (any spelling of the key, anywhere in the
message) of every commit that changed the plan's hashed content", "For a merge, these are
the identities of the commits the merge brought in through its second parent"; identities
"are compared as the mailbox they name": NFKC, case-insensitive, RFC 5322's other
spellings), and ``plangate check`` of the approving pull request against what the pass then
did ("the prediction is the controller's decision").

Lab (one, local mode, fake dates). Config: approvers Alice and ``*@ops.example.com`` (Bob,
Carol); every ``plans/q-*`` needs 2 of group ``ops`` (all three). Per id the agent writes
``plans/<id>`` on its branch ``w-<id>`` in a commit whose message is the id's (below); Alice
merges every ``w-`` branch ``--no-ff`` (the plans are ``pending_approval``: no request). P0
freezes. Alice votes on every ``q-*`` on main; P1 (partial). Then per id a pull request
``pr-<id>`` by BOB (CAROL for ``q-*``) sets ``approved``; ``plangate check --as`` him or her
predicts its merge; he or she merges it ``--no-ff`` (the merge is the request). P2, P3; the
controller's audit and a fresh clone's. By id, the writing commit:

- ``ctl`` (control): the agent's, plain: Bob's approval runs once;
- ``coother`` (control): ``Co-authored-by: Carol <carol@...>``: Bob's runs once;
- ``q-ctl`` (control): plain; Alice + Carol: runs once;
- ``costd``: ``Co-authored-by: Bob <bob@ops.example.com>``: Bob is a producer, his approval
  ``E_SELF_APPROVAL``, never runs; the same for ``colower`` (``co-authored-by:``),
  ``coupper`` (``CO-AUTHORED-BY:``), ``comail`` (``<BOB@OPS.EXAMPLE.COM>``), ``cobare``
  (``Co-authored-by: bob@ops.example.com``, no name, no brackets), ``coname`` (another
  name, Bob's address), ``cospace`` (``Co-authored-by:Bob<bob@...>``), ``comid`` (the
  trailer in a middle paragraph), ``cotwo`` (Carol's then Bob's), ``coindent`` (the line
  indented), ``coquote`` (``<"bob"@ops.example.com>``), ``cocomment``
  (``<bob(pair)@ops.example.com>``), ``cofull`` (a fullwidth ``ｂob``), ``codot``
  (``<bob@ops.example.com.>``), ``cofold`` (the key folded: ``Co-Authored-By:``);
- ``bobedit``: BOB authors a first version on the branch, the agent rewrites it: Bob wrote
  a version in the folder (a writer), never runs;
- ``bobcommit``: authored by the agent, COMMITTED by Bob: never runs;
- ``comerge``: plain agent commit; Alice's merge of ``w-comerge`` carries
  ``Co-authored-by: Bob`` (a merge that writes nothing of its own): 0 or 1, audit agrees;
- ``comment``: written plain; a later agent commit on a branch co-authored by Bob changes
  only a comment (not hashed), merged by Alice: 0 or 1, audit agrees;
- ``q-costd``: ``Co-authored-by: Carol``: Alice + Carol, Carol a producer: never runs.

What must hold: the tag runs as ``WANT`` says; a counted run's approvers are none of the
writers; ``check`` predicted ``start`` exactly when the plan then ran; the fresh clone's audit
agrees with the controller.

Seen (round 81): no break. Every spelling of Bob as a co-author of the writing commit on a
side branch merged by Alice made him a producer and his pull request's merge was refused
(``costd``, ``colower``, ``coupper``, ``cofold``, ``comail``, ``cobare``, ``coname``,
``cospace``, ``comid``, ``cotwo``, ``coindent``, ``coquote``, ``cocomment``, ``cofull``,
``codot``), and so were Bob as the earlier version's author (``bobedit``) and as committer
(``bobcommit``); Carol as co-author could not make Alice's quorum (``q-costd``). Within 0..1,
the audit agreeing: ``comerge`` (Bob co-author of Alice's merge that writes nothing) ran once
on Bob; ``comment`` (Bob co-author of a comment-only commit, no new version) was refused
``E_SELF_APPROVAL``: conservative, not a break (the comment edit makes him a writer of the
folder: "the writers of its folder ... the safe direction", docs/approvals.md, "Who wrote a
plan, and who only carried it"). ``check --as`` the merger predicted each outcome; the
controls ran once.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, CAROL, Lab, cases, clone_audit
from policykit import agent_plan as plan
from test_round2_execution_kit import shared
from test_round73_approve_ownedbytes import Clock

APPROVAL = """\
groups:
  ops: ["alice@example.com", "*@ops.example.com"]
rules:
  - match: {paths: ["plans/q-*"]}
    require: [{group: ops, count: 2}]
"""

B = "bob@ops.example.com"
C = "carol@ops.example.com"
#: id -> the writing commit's message
MSG: dict[str, str] = {
    "ctl": "agent: plan ctl",
    "coother": f"agent: plan\n\nCo-authored-by: Carol <{C}>\n",
    "q-ctl": "agent: plan q-ctl",
    "costd": f"agent: plan\n\nCo-authored-by: Bob <{B}>\n",
    "colower": f"agent: plan\n\nco-authored-by: Bob <{B}>\n",
    "coupper": f"agent: plan\n\nCO-AUTHORED-BY: Bob <{B}>\n",
    "comail": "agent: plan\n\nCo-authored-by: Bob <BOB@OPS.EXAMPLE.COM>\n",
    "cobare": f"agent: plan\n\nCo-authored-by: {B}\n",
    "coname": f"agent: plan\n\nCo-authored-by: Someone Else <{B}>\n",
    "cospace": f"agent: plan\n\nCo-authored-by:Bob<{B}>\n",
    "comid": f"agent: plan\n\nfirst part\nCo-authored-by: Bob <{B}>\nmore words\n\nlast part\n",
    "cotwo": f"agent: plan\n\nCo-authored-by: Carol <{C}>\nCo-authored-by: Bob <{B}>\n",
    "coindent": f"agent: plan\n\n    Co-authored-by: Bob <{B}>\n",
    "coquote": 'agent: plan\n\nCo-authored-by: Bob <"bob"@ops.example.com>\n',
    "cocomment": "agent: plan\n\nCo-authored-by: Bob <bob(pair)@ops.example.com>\n",
    "cofull": "agent: plan\n\nCo-authored-by: Bob <\uff42ob@ops.example.com>\n",
    "codot": f"agent: plan\n\nCo-authored-by: Bob <{B}.>\n",
    "cofold": f"agent: plan\n\nCo-Authored-By: Bob <{B}>\n",
    "bobedit": "agent: rewrite",
    "bobcommit": "agent: plan (committed by bob)",
    "comerge": "agent: plan comerge",
    "comment": "agent: plan comment",
    "q-costd": f"agent: plan\n\nCo-authored-by: Carol <{C}>\n",
}
ALL = list(MSG)
CONTROLS = ["ctl", "coother", "q-ctl"]
WANT: dict[str, tuple[int, int]] = {v: (0, 0) for v in ALL}
WANT.update({v: (1, 1) for v in CONTROLS})
WANT.update({"comerge": (0, 1), "comment": (0, 1)})
#: the writers a counted run must not rest on
WRITERS: dict[str, set[str]] = {v: {AGENT[1]} for v in ALL}
for _v in ALL:
    if _v not in ("ctl", "q-ctl", "coother", "q-costd", "comerge", "comment"):
        WRITERS[_v].add(B)
WRITERS["q-costd"].add(C)
WRITERS["coother"].add(C)

RUNS_BROKEN: dict[str, Any] = {}
BROKEN: dict[str, Any] = {}
CHECK_BROKEN: dict[str, Any] = {}


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=APPROVAL)
    c = Clock(lab)
    base = lab.head()
    for v in ALL:
        c.git("checkout", "-q", "-b", f"w-{v}", base)
        if v == "bobedit":
            lab.write(v, plan(v).replace("agent task", "bob's first task"))
            c.commit("bob: first version", who=BOB)
        lab.write(v, plan(v))
        lab.git("add", "-A")
        if v == "bobcommit":
            lab.extra_env = {"GIT_COMMITTER_NAME": BOB[0], "GIT_COMMITTER_EMAIL": B}  # type: ignore[attr-defined]
            lab.git("commit", "-q", "-m", MSG[v], who=AGENT)
            lab.extra_env = {}  # type: ignore[attr-defined]
        else:
            c.git("commit", "-q", "-m", MSG[v], who=AGENT)
    c.git("checkout", "-q", "main")
    for v in ALL:
        msg = f"alice: merge w-{v}"
        if v == "comerge":
            msg += f"\n\nCo-authored-by: Bob <{B}>\n"
        c.git("merge", "-q", "--no-ff", "-m", msg, f"w-{v}", who=ALICE)
    c.run()  # P0
    c.git("checkout", "-q", "-b", "w2-comment")
    path = lab.repo / "plans" / "comment" / "PLAN.yml"
    path.write_text("# a note\n" + path.read_text())
    c.commit(f"agent: a comment\n\nCo-authored-by: Bob <{B}>\n")
    c.git("checkout", "-q", "main")
    c.git("merge", "-q", "--no-ff", "-m", "alice: merge w2-comment", "w2-comment", who=ALICE)
    for v in ALL:
        if v.startswith("q-"):
            lab.set_status(v, "approved")
    c.commit("alice: votes", who=ALICE)
    c.run()  # P1
    lab.p1 = {v: len(lab.calls(v)) for v in ALL}  # type: ignore[attr-defined]
    tip = lab.head()
    checks: dict[str, Any] = {}
    for v in ALL:
        who = CAROL if v.startswith("q-") else BOB
        c.git("checkout", "-q", "-b", f"pr-{v}", tip)
        lab.set_status(v, "approved")
        c.commit(f"approve {v}", who=who)
    c.git("checkout", "-q", "main")
    for v in ALL:
        who = CAROL if v.startswith("q-") else BOB
        out = lab.cli(
            "check", "--config", str(lab.config), "--base", "main", "--head", f"pr-{v}",
            "--as", who[1], "--format", "json", cwd=lab.repo,
        )  # fmt: skip
        checks[v] = {"out": out.stdout, "err": out.stderr[-2000:]}
        c.git("merge", "-q", "--no-ff", "-m", f"merge pr-{v}", f"pr-{v}", who=who)
    lab.checks = checks  # type: ignore[attr-defined]
    c.run()  # P2
    c.run()  # P3
    st = lab.status()  # one status call for every id
    lab.final = {v: json.dumps(st.get(f"plans/{v}", {})) for v in ALL}  # type: ignore[attr-defined]
    _code, lab.report = lab.audit("--config", str(lab.config))  # type: ignore[attr-defined]
    lab.fresh, _valid = clone_audit(lab, root)  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r81-coauthors", _build)


def runs_of(report: dict[str, Any], v: str) -> list[dict[str, Any]]:
    return [
        e
        for e in report.get("executions", [])
        if e.get("plan") == f"plans/{v}" and e.get("approval_valid")
    ]


def said(lab: Lab, v: str) -> str:
    return str(lab.final[v])[:3000]  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(ALL, ALL, RUNS_BROKEN))
def test_the_version_runs_as_often_as_its_approvals_allow(lab: Lab, vid: str) -> None:
    least, most = WANT[vid]
    n = len(lab.calls(vid))
    assert least <= n <= most, (n, lab.p1[vid], said(lab, vid))  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(ALL, ALL, BROKEN))
def test_no_counted_run_rests_on_a_writer(lab: Lab, vid: str) -> None:
    runs = runs_of(lab.report, vid)  # type: ignore[attr-defined]
    for r in runs:
        text = json.dumps(r).lower()
        approvals = [str(r.get("approver"))] + [
            str(a.get("by")) for a in r.get("approvals") or [] if isinstance(a, dict)
        ]
        assert not set(approvals) & WRITERS[vid], (runs, text[:1500])
    assert len(runs) == len(lab.calls(vid)), (runs, said(lab, vid))


@pytest.mark.parametrize("vid", cases(ALL, ALL, CHECK_BROKEN))
def test_check_predicted_what_the_pass_then_did(lab: Lab, vid: str) -> None:
    row = lab.checks[vid]  # type: ignore[attr-defined]
    assert row["out"].strip(), row["err"]
    report = json.loads(row["out"])
    rows = report if isinstance(report, list) else report.get("plans", [])
    mine = [r for r in rows if r.get("plan") == f"plans/{vid}"]
    predicted = bool(mine) and mine[0].get("outcome") == "start"
    assert predicted == (len(lab.calls(vid)) > 0), (json.dumps(mine)[:3000], said(lab, vid))


@pytest.mark.parametrize("vid", cases(ALL, ALL, BROKEN))
def test_a_fresh_clone_agrees_with_the_controller(lab: Lab, vid: str) -> None:
    fresh = runs_of(lab.fresh, vid)  # type: ignore[attr-defined]
    mine = runs_of(lab.report, vid)  # type: ignore[attr-defined]
    assert sorted(str(e.get("approver")) for e in mine) == sorted(
        str(e.get("approver")) for e in fresh
    ), (mine, fresh)
    assert len(fresh) == len(lab.calls(vid)), (fresh, said(lab, vid))


REFUSED = [v for v in ALL if WANT[v] == (0, 0)]


@pytest.mark.parametrize("vid", cases(REFUSED, REFUSED, BROKEN))
def test_a_writers_approval_is_refused_as_self_approval(lab: Lab, vid: str) -> None:
    assert "E_SELF_APPROVAL" in lab.final[vid], said(lab, vid)  # type: ignore[attr-defined]
