"""Round 107, approval (atk107a): REMOTE mode over a real ``git daemon`` on 127.0.0.1
combined with a ``{count: 2}`` quorum and gates.

Lab (one, ``writerkit.served``; policy: Alice or ``*@ops.example.com``; ``plans/q*/**`` need
two approvals, the rest one; ``g*`` plans gate action 2 (``gt``: actions 2 and 3)). The agent
pushes one ``rec`` plan per variant; a pass freezes them; then three rounds of pushes, each
followed by a ``run --once`` pass (and the local checkout pulled):

- ``qc`` (control): Alice, then Bob: runs once.
- ``qx``: Alice votes, the agent (no approver) votes: one of two.
- ``qw``: Alice votes; the agent re-creates Bob's vote on ``qc`` (``commit -C``: his author,
  date, subject) as a vote on ``qw``.
- ``sb`` (control) / ``sp``: Bob approves ``sb`` (pushed); the agent re-makes it on ``sp``
  (``commit -C``, a second push); one pass reads both.
- ``sx``: the agent's ``commit -C`` of Bob's ``qc`` vote on ``sx`` 1.1 s after the original,
  in the same push.
- ``qy``: ``qw`` with the copy pushed one pass after Bob's original was seen.
- ``sw``/``sa``: a one-approval plan; the agent re-makes Bob's ``qc`` vote on it
  (``commit -C``; ``format-patch`` with the path rewritten, ``git am -C0``), in the push that
  brings Bob's original.
- ``gw``: a gate; the agent re-makes Bob's gate approval of ``gc`` (``commit -C``) at ``gw``'s
  gate, in the push that brings Bob's original.
- ``qs`` (same second): the agent edits ``qs`` (v2), the pass freezes v2 in second S; Alice,
  on a stale checkout at v1, approves v1 on a review branch, her commit dated S; the agent
  re-makes it on main (``commit -C``: her author and date S, the agent committer, no
  trailer); Bob votes.
- ``qt``: ``qs`` with the agent's copy carrying a ``Plan-Approved: plans/qt <v2 hash>``
  trailer it wrote itself (unsigned).
- ``qu`` (control): the v2 freeze second S; Alice commits her own approval dated S; Bob
  votes: runs once (her own hand counts in that second).
- ``qj`` (control): Alice votes, Mallory (no approver, no author) rejects (ignored), Bob
  votes: runs once. (The agent is the plan's author: its rejection counts, SPEC §7.)
- ``qr``: Alice votes, Bob rejects (the version withdrawn), Carol votes: never runs.
- ``qp``: Alice votes; the agent commits ``.plangate/policy.json`` with the ``q*`` rule
  removed (one approval enough): never runs, the audit flags the edit.
- ``gc`` (control): Alice approves, action 1 runs, gate; Bob approves the gate: action 2 once.
- ``gx``: the agent approves the gate: action 2 never runs.
- ``gr``: the agent re-makes Alice's first approval (``commit -C``) at the gate.
- ``gt``: two gates; Alice approves gate 1 (action 2 runs); the agent re-makes her gate-1
  approval (``commit -C``) at gate 2: action 3 never runs.
- ``ga`` (control): Mallory aborts at the gate (ignored); Alice approves it: action 2 once.
- ``gb``: Bob aborts at the gate; Alice approves it after: action 2 never runs.

``check`` predictions (``check --as agent@...``: the agent merges) over the second round's
commits, before its pass.
A fresh ``git clone git://...`` of the served main is audited at the end (history alone).

Ids ``<vid>:ran`` (``rec`` calls of the last action: controls once, attacks never),
``<vid>:audit`` (fresh clone: controls' runs all valid, attacks: no valid run reaching the
attacked action), ``<vid>:row`` (``status --json``), ``check:<vid>`` (no ``start`` predicted
for an attack), ``passes:<phase>`` (exit 0, no traceback), ``audit:policy`` (the policy edit
flagged).

Seen (round 107): 84 ids, 15 broke (strict xfail), one class, **samesecond-crossplan-copy**
(``{qw,sw,sa,sp,gw}:{ran,audit,row}``): the agent re-makes Bob's decision about ``qc`` (his
approval), ``sb`` or ``gc`` (his gate approval) on another plan, keeping his author, author
date and subject (``git commit -C``, or ``format-patch`` + ``git am -C0`` with the path
rewritten: round 4's ``am-c0`` shape), COMMITTED IN THE SAME SECOND as Bob's original (the
lab pins both commits' dates to one second; unpinned, a fast script hit it about 3 runs in
4), read in one pass with it (one push, or two pushes: ``sp``): it counts as Bob's
("approval request (approve) by bob@ops.example.com"): ``sw``/``sa``/``sp`` run on it alone,
``qw`` completes a ``{count: 2}`` quorum with Alice's one real vote, ``gw``'s gated action
runs; the fresh-clone audit calls each run valid (approver bob). The same copy committed one
second later (``sx``, same pass) or read one pass later (``qy``) is ``E_APPROVAL_REPLAYED``.
Should (docs/threat-model.md "Replays judged by the hand that committed them", round 62): a
decision about another plan with his author, author date and subject is his only when the
hand that committed it put his first decision of that second on the branch: the agent's
hand did not (Bob committed his own). ``check --as agent`` predicted no start for them
(disagreeing with the controller). Fixed since (the same session's successor): another
hand's copy is a replay whatever its committer date (``Lifecycle._replayed``).
Not remote-specific: a hand probe in LOCAL mode (not in this module) did the same (the
``commit -C`` copy read in the original's pass ran; one pass later, ``E_APPROVAL_REPLAYED``).

Held: one voter and a non-approver (``qx``), a rejection by an approver (``qr``:
withdrawn), a policy.json edit dropping the quorum rule (``qp``: not run, the audit says
``policy-changed``), same-second replays of her v1 approval into v2's freeze second carried
by the agent (``qs``), even with an unsigned ``Plan-Approved:`` trailer for v2 written by the
agent (``qt``: refused), gate approvals by the agent (``gx``), her first approval re-made at
the gate (``gr``), her gate-1 approval re-made at gate 2 (``gt``), an approver's abort
(``gb``: aborted, her later approval ignored); controls ran once (``qu``: her own approval in
the freeze second counts).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import (
    AGENT,
    BOB,
    CAROL,
    MALLORY,
    Lab,
    brief,
    cases,
    plan_text,
    served_audit,
    valid_runs,
)
from test_round2_execution_kit import shared
from writerkit import served

RULES = """\
rules:
  - match: {paths: ["plans/q*/**"]}
    require: [{count: 2}]
"""
CONTROLS = ["qc", "qu", "qj", "gc", "ga", "sb"]
ATTACKS = [
    "qx",
    "qw",
    "qy",
    "sw",
    "sa",
    "sp",
    "sx",
    "gw",
    "qs",
    "qt",
    "qr",
    "qp",
    "gx",
    "gr",
    "gt",
    "gb",
]
VIDS = CONTROLS + ATTACKS
GATED = {"gc": 2, "gx": 2, "gr": 2, "gt": 3, "ga": 2, "gb": 2, "gw": 2}
CHECKED = ["qx", "qw", "sw", "sa", "sp", "sx", "gw", "qs", "qt", "gx", "gr"]


def _gate(vid: str, n: int) -> str:
    return "".join(
        f"""\
  - id: {i}
    tool: rec
    why: "step {i} of {vid}"
    requires_approval: true
    params:
      tag: "{vid}-{i}"
"""
        for i in range(2, n + 1)
    )


def _last(vid: str) -> str:
    return f"{vid}-{GATED[vid]}" if vid in GATED else vid


def _v2(lab: Lab, vid: str) -> None:
    lab.write(vid, lab.read(vid).replace(f'tag: "{vid}"', f'tag: "{vid}"\n      v: 2'))


def _hash(lab: Lab, vid: str) -> str:
    frozen = lab.plan(vid).get("frozen") or {}
    return str(frozen.get("hash") or "")


def _remake(lab: Lab, vid: str, src: str, extra: str = "") -> str:
    """The agent sets ``vid`` approved and commits it re-using ``src``'s author, date and
    message (``commit -C``); with ``extra``, the message gets that text appended."""
    lab.set_status(vid, "approved")
    lab.git("add", "-A")
    if extra:
        msg = lab.git("log", "-1", "--format=%B", src).rstrip() + "\n\n" + extra + "\n"
        author = lab.git("log", "-1", "--format=%an <%ae>", src).strip()
        date = lab.git("log", "-1", "--format=%ad", "--date=raw", src).strip()
        lab.git(
            "commit", "-q", "--allow-empty", f"--author={author}", f"--date={date}", "-m", msg,
            who=AGENT,
        )  # fmt: skip
    else:
        lab.git("commit", "-q", "--allow-empty", "-C", src, who=AGENT)
    return lab.head()


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=RULES)
    for vid in VIDS:
        lab.write(vid, plan_text(vid, extra_actions=_gate(vid, GATED.get(vid, 1))))
    lab.commit("agent: plans", AGENT)
    passes: list[tuple[str, int, bool, str]] = []
    got: dict[str, Any] = {}
    with served(lab) as url:

        def run(phase: str) -> None:
            res = lab.run(check=False)
            passes.append((phase, res.returncode, "Traceback" in res.stderr, res.stderr[-600:]))

        def pull() -> None:
            lab.git("fetch", "-q", "origin", "refs/heads/main")
            lab.git("reset", "-q", "--hard", "FETCH_HEAD")

        def step(phase: str) -> None:
            lab.git("push", "-q", "origin", "HEAD:refs/heads/main")
            run(phase)
            pull()

        step("freeze")
        v1 = lab.head()
        # round A: first votes, first approvals, v2 of the same-second plans
        first: dict[str, str] = {}
        for vid in VIDS:
            if vid in ("qs", "qt", "qu", "sw", "sa", "sb", "sp", "sx"):
                continue
            first[vid] = lab.approve(vid)
        for vid in ("qs", "qt", "qu"):
            _v2(lab, vid)
        lab.commit("agent: qs qt qu v2", AGENT)
        step("a")
        time.sleep(1.1)  # round B authored after the second of pass a's pauses
        got["status_a"] = {v: lab.plan(v).get("plan", {}).get("status") for v in VIDS}
        # the v2 freeze seconds
        sec: dict[str, str] = {}
        for vid in ("qs", "qt", "qu"):
            sec[vid] = lab.git(
                "log",
                "-1",
                "--format=%ct",
                "--author=plangate@localhost",
                "main",
                "--",
                f"plans/{vid}",
            ).strip()
        got["sec"] = sec
        got["v2hash"] = {v: _hash(lab, v) for v in ("qs", "qt", "qu")}
        base_b = lab.head()
        # round B
        lab.git_date = f"@{int(time.time())} +0000"  # the original and its copies: one second
        bob_qc = lab.approve("qc", BOB)
        lab.approve("qx", AGENT)
        _remake(lab, "qw", bob_qc)
        _remake(lab, "sw", bob_qc)
        patch = lab.git("format-patch", "--stdout", "-1", bob_qc).replace("plans/qc/", "plans/sa/")
        lab.git("am", "-q", "-C0", who=AGENT, input=patch)
        lab.git_date = None
        # her stale-checkout approvals of v1, dated the v2 freeze second
        review: dict[str, str] = {}
        for vid in ("qs", "qt"):
            lab.git("checkout", "-q", "-b", f"review-{vid}", v1)
            lab.git_date = f"@{sec[vid]} +0000"
            review[vid] = lab.approve(vid)
            lab.git_date = None
            lab.git("checkout", "-q", "main")
        _remake(lab, "qs", review["qs"])
        _remake(lab, "qt", review["qt"], f"Plan-Approved: plans/qt {got['v2hash']['qt']}")
        lab.git_date = f"@{sec['qu']} +0000"
        lab.approve("qu")
        lab.git_date = None
        lab.set_status("qj", "rejected")
        lab.commit("reject qj", MALLORY)
        lab.set_status("qr", "rejected")
        lab.commit("reject qr", BOB)
        pol = lab.repo / ".plangate" / "policy.json"
        got["policy_before"] = pol.read_text() if pol.exists() else None
        if pol.exists():
            data = json.loads(pol.read_text())
            text = json.dumps(data)
            if '"plans/q*/**"' in text:
                _drop_q(data)
                pol.write_text(json.dumps(data, indent=2) + "\n")
                lab.commit("agent: tidy policy", AGENT)
        lab.git_date = f"@{int(time.time())} +0000"
        bob_gc = lab.approve("gc", BOB)
        _remake(lab, "gw", bob_gc)
        lab.git_date = None
        lab.approve("gx", AGENT)
        _remake(lab, "gr", first["gr"])
        gate1 = lab.approve("gt")
        lab.set_status("ga", "aborted")
        lab.commit("abort ga", MALLORY)
        lab.set_status("gb", "aborted")
        lab.commit("abort gb", BOB)
        time.sleep(1.1)  # sx: the copy committed in a later second than the original
        _remake(lab, "sx", bob_qc)
        got["check"] = lab.check_plans(lab.head(), AGENT[1], base=base_b)
        step("b")
        got["status_b"] = {v: lab.plan(v).get("plan", {}).get("status") for v in VIDS}
        # round C
        lab.approve("qj", BOB)
        lab.git_date = f"@{int(time.time())} +0000"
        bob_sb = lab.approve("sb", BOB)
        lab.git("push", "-q", "origin", "HEAD:refs/heads/main")
        _remake(lab, "sp", bob_sb)
        lab.git_date = None
        _remake(lab, "qy", bob_qc)
        for vid in ("qs", "qt", "qu"):
            lab.approve(vid, BOB)
        lab.approve("qr", CAROL)
        _remake(lab, "gt", gate1)
        lab.approve("ga")
        lab.approve("gb")
        step("c")
        run("last")
        pull()
        served_audit(lab, url, root / "fresh")
        got["remote_log"] = lab.git("log", "--format=%h %an|%cn %s", "main")[:4000]
    lab.passes = passes  # type: ignore[attr-defined]
    lab.got = got  # type: ignore[attr-defined]
    lab.ran = {v: len(lab.calls(_last(v))) for v in VIDS}  # type: ignore[attr-defined]
    lab.first_ran = {v: len(lab.calls(v)) for v in VIDS}  # type: ignore[attr-defined]
    lab.got_rows = lab.rows()  # type: ignore[attr-defined]
    return lab


def _drop_q(node: Any) -> None:
    """Remove, in place, every rule whose text names ``plans/q*/**``."""
    if isinstance(node, dict):
        for value in node.values():
            if isinstance(value, list):
                value[:] = [x for x in value if '"plans/q*/**"' not in json.dumps(x)]
            _drop_q(value)
    elif isinstance(node, list):
        for value in node:
            _drop_q(value)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r107-approve-atk107a", _build)


PHASES = ["freeze", "a", "b", "c", "last"]
IDS = [f"{v}:{w}" for v in VIDS for w in ("ran", "audit", "row")]
IDS += [f"check:{v}" for v in CHECKED]
IDS += [f"passes:{p}" for p in PHASES]
IDS += ["audit:policy", "lab:same-second"]
#: samesecond-crossplan-copy (qw, sw, sa, sp, gw) broke in round 107; fixed since
#: (``Lifecycle._replayed``): another hand's copy of her decision onto another plan is a replay
#: whatever its committer date, so read in the original's pass it binds nothing
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_round107_atk107a(lab: Lab, vid: str) -> None:
    slug, what = vid.split(":")
    got = lab.got  # type: ignore[attr-defined]
    if slug == "passes":
        mine = [p for p in lab.passes if p[0] == what]  # type: ignore[attr-defined]
        assert mine, lab.passes  # type: ignore[attr-defined]
        for name, code, tb, err in mine:
            assert not tb and code == 0, (name, code, err)
        return
    if slug == "lab":  # the bench did what it says: the copies carry the freeze second
        assert all(got["sec"].values()) and all(got["v2hash"].values()), got
        return
    if slug == "check":
        outcome, codes = got["check"].get(f"plans/{what}", (None, []))
        assert outcome != "start", (what, outcome, codes, got["check"])
        return
    if slug == "audit":
        report = lab.report  # type: ignore[attr-defined]
        assert "policy-changed" in json.dumps(report), (got["policy_before"], report)
        return
    row = lab.got_rows.get(f"plans/{slug}", {})  # type: ignore[attr-defined]
    want = 1 if slug in CONTROLS else 0
    if what == "ran":
        assert lab.ran[slug] == want, (lab.ran, brief(row), got["remote_log"][:1500])  # type: ignore[attr-defined]
        assert lab.first_ran[slug] <= 1, lab.first_ran  # type: ignore[attr-defined]
        return
    if what == "audit":
        assert "Traceback" not in lab.audit_err, lab.audit_err  # type: ignore[attr-defined]
        runs = valid_runs(lab.report, slug)  # type: ignore[attr-defined]
        if want:
            assert runs, (runs, lab.audit_err)  # type: ignore[attr-defined]
            return
        # an attack: at most the honest first run (gated plans) is valid
        allowed = GATED[slug] - 1 if slug in GATED else 0
        assert len(runs) <= allowed, runs
        return
    assert what == "row"
    if want:
        assert row.get("status") == "completed", brief(row)
        return
    assert row and row.get("status") != "completed", brief(row)
