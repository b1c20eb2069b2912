"""Round 109, approval (atk109a): decisions brought back onto the SAME plan's next frozen
version or the same run's next pause (her rejection, vote, approval or abort made on a side
branch, then copied, ``am``-ed, rebased or merged by the agent), one person's vote applied
twice, votes through a folder move, a lapse reverted back, one agent commit withdrawing its
own plan and another's, a swap of two approved folders, a gate answer re-made at the next
gate; LOCAL and REMOTE mode (a bare repository served over ``file://``).

Lab (two, built at once: ``local``, ``remote``; Alice or ``*@ops.example.com`` approve;
``plans/q*/**`` need two approvals, the rest one; ``g2``, ``ag``, ``agm`` gate actions 2
and 3). The Owner (no approver) writes every target plan, the agent only ``mpa``. A pass
freezes them; then rounds A-D of commits, each followed by a ``run --once`` pass (remote:
pushed first, pulled after), one second apart. "v1 on her branch": in round A the person
branches from main (v1 frozen), decides v1 there; the Owner then edits the plan to v2 on main
(a param added), which pass A freezes; the agent brings the decision in round C.

- controls: ``cc`` (Alice approves), ``qc`` (Alice and Bob vote), ``rvc`` (Alice rejects v1
  on her branch, never brought; Bob approves v2 in D): each runs once.
- ``rv``/``rvp``/``rvb``: her v1 rejection brought onto v2 by ``git commit -C`` /
  ``format-patch`` + ``git am -3`` / ``git rebase main`` of her branch + ``merge --ff-only``;
  Bob approves v2 (D): must run once. ``qrj``: the same with Bob's rejection of a quorum plan
  (``commit -C``) after Alice's v2 vote; Carol votes (D): must run once.
- ``rvm``: her v1 rejection branch merged ``--no-ff`` (C); Bob approves v2: runs once.
  ``rvr``: merged (C), then also re-made by ``commit -C`` (C): runs once.
- ``av``/``avp``/``avb``: her v1 APPROVAL brought onto v2 the same three ways: never runs.
  ``mvs``/``mvl``: her v1 approval branch merged after the Owner's v2 edit, in the same round
  as the edit / a pass later: never runs. ``qvm``: Bob's v1 vote branch merged after Alice's
  v2 vote: never runs.
- ``qrv``/``qrs``: Alice votes v1 (A); the Owner edits to v2 (B); the agent re-makes her vote
  on v2 (C / in B with the edit); Bob votes (D): never runs.
- ``qd``: Alice votes (A); the agent sets the status back to pending (B) and re-makes her
  vote (``commit -C``, C): never runs. ``qm``: Alice votes (A); the agent ``git mv``s
  ``plans/qm`` to ``plans/qn`` (B); Alice votes again on ``qn`` (C): never runs.
- ``sb``: Alice approves ``sbs`` (B); the agent re-makes it onto ``sb`` on a side branch and
  merges it ``--no-ff`` (C): never runs. ``rr``: Alice approves and reverts it before any
  pass (A); the agent reverts her revert (B): never runs.
- ``mpo``/``mpa``: one agent commit sets its own ``mpa`` and the Owner's ``mpo`` rejected
  (A); Bob approves ``mpo`` (D): ``mpo`` runs once, ``mpa`` never.
- ``sw``: Alice approves ``sw1``; before a pass the agent swaps the files of ``sw1`` and
  ``sw2`` (both ``approved``): ``sw2``'s action never runs.
- ``g2``: Alice approves (A), answers gate 2 (B); at gate 3 the agent re-makes her gate-2
  answer (C): action 3 never runs.
- ``ag``/``agm``: Alice approves (A); at gate 2 she aborts on a side branch and answers gate 2
  on main (B); at gate 3 the agent re-makes her abort (``commit -C``) / merges her abort
  branch (C); Alice answers gate 3 (D). The attacker asserted the documented reading (round
  8: a withdrawal of the version counts whenever it lands: aborted). Since the fix below,
  the COPY (``ag``: another hand, written before gate 3's pause) is ignored and her gate-3
  answer runs action 3 once; her abort MERGED (``agm``: her own commit) still aborts.

Ids ``<mode>:<vid>:ran`` (``rec`` calls of the watched tag, and the ``status --json`` row and
the file agree), ``<mode>:<vid>:audit`` (fresh clone: controls' runs valid, the attacks'
none, no valid answer of a gate 3), ``<mode>:passes`` (every pass exit 0, no traceback).

Seen (round 109, 110 ids, ~25-40 s wall): 16 broke, one class; 94 held. Fixed the same
session (r109oldwd): a rejection or abort written before the version (or pause) it would
withdraw, put on the branch by another hand than its author's, withdraws nothing
(``E_APPROVAL_REPLAYED``); her own cherry-pick or rebase of it still counts.

- **older-version-withdrawal-copy** (``{local,remote}:{rv,rvp,rvb,qrj}:{ran,audit}``, 16
  ids): Alice rejects v1 of the Owner's plan on her own branch (never merged); the Owner
  edits the plan to v2 on main and a pass freezes v2; the agent brings her rejection onto v2
  with ``git commit -q -C <her commit>`` (or ``git format-patch --stdout -1 <her commit> |
  git am -3``, or ``git rebase main`` of her branch then ``git merge --ff-only``); the next
  pass reads ``alice@example.com set status rejected`` and rejects v2; Bob's approval of v2
  is ``E_ILLEGAL_TRANSITION ... (from rejected); ignored`` and v2 never runs (``qrj``: Bob's
  v1 rejection kills a quorum Alice had voted on at v2). A rejection counted for a version
  it was not made for (its author date precedes v2's freeze), while the same rejection
  MERGED is not applied to v2 (``rvm`` held), and the same three copies of an APPROVAL of
  v1 are refused (``av``, ``avp``, ``avb`` held). Local and remote alike; the fresh-clone
  audit agrees with the controller (no valid run). Effect: the agent turns any stale
  rejection of an earlier version into a permanent veto of the fixed one.

Changed (2026-12-05, round 117 fix117w): the fix above is withdrawn. Its rule ignored the
forge's rebase-merge, ``git am`` and another approver's rebase of GENUINE rejections (round
117: Bob's approval then ran a rejected plan), to defend only against a veto the plan's
author can cause anyway. A copy of an entitled person's withdrawal now withdraws, by any
hand, whatever its dates: ``{rv,rvp,rvb,qrj}`` assert v2 stays ``rejected`` and never runs,
``ag`` the run ``aborted`` before action 3 (as ``agm``). Fail closed.

Held: the controls; round 107/108's fixed classes in new shapes (``sb``: an approval
re-made onto another plan on a merged side branch; ``rvr``: a merged rejection re-made);
every approval or vote brought onto another version or pause (``av*``, ``mv*``, ``qvm``,
``qr*``, ``g2``); one person's vote twice (``qd``, ``qm``); ``rr``; ``mp``; ``sw``.
Suspected, not counted as a break: ``ag``/``agm``, her abort made at gate 2, brought by the
agent (copy or merge) at gate 3 of the same run, aborts the run (same plan, same version,
same run: the documented reading, so asserted as held).
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from test_round2_execution_kit import shared

from tests.adversarial.advkit import (
    AGENT,
    ALICE,
    BOB,
    CAROL,
    Lab,
    brief,
    build_all,
    plan_text,
    valid_runs,
)

OWNER = ("Owner", "owner@example.com")
RULES = """\
rules:
  - match: {paths: ["plans/q*/**"]}
    require: [{count: 2}]
"""
PLANS = ["cc", "qc", "rvc", "rv", "qrv", "qrs", "qd", "qm", "mvs", "mvl", "sb", "sbs"]
PLANS += ["rr", "mpo", "mpa", "sw1", "sw2", "g2", "ag", "rvm", "qvm"]
PLANS += ["av", "rvr", "rvp", "agm", "rvb", "qrj", "avp", "avb"]
#: vid -> (the slug its row is read at, the tag whose calls are counted, runs once?)
VIDS: dict[str, tuple[str, str, bool]] = {
    "cc": ("cc", "cc", True),
    "qc": ("qc", "qc", True),
    "rvc": ("rvc", "rvc", True),
    "rv": ("rv", "rv", False),  # round 117: her v1 rejection copied onto v2 withdraws it
    "qrv": ("qrv", "qrv", False),
    "qrs": ("qrs", "qrs", False),
    "qd": ("qd", "qd", False),
    "qm": ("qn", "qm", False),
    "mvs": ("mvs", "mvs", False),
    "mvl": ("mvl", "mvl", False),
    "sb": ("sb", "sb", False),
    "rr": ("rr", "rr", False),
    "mpo": ("mpo", "mpo", True),
    "mpa": ("mpa", "mpa", False),
    "sw": ("sw1", "sw2", False),
    "g2": ("g2", "g2-3", False),
    "ag": ("ag", "ag-3", False),  # her gate-2 abort copied at gate 3 aborts (round 117)
    "rvm": ("rvm", "rvm", True),
    "qvm": ("qvm", "qvm", False),
    "av": ("av", "av", False),
    "rvr": ("rvr", "rvr", True),
    "rvp": ("rvp", "rvp", False),
    "agm": ("agm", "agm-3", False),
    "rvb": ("rvb", "rvb", False),
    "qrj": ("qrj", "qrj", False),
    "avp": ("avp", "avp", False),
    "avb": ("avb", "avb", False),
}
#: the copied withdrawals that hold since round 117 (fix117w): the status at the end
WITHDRAWN = {"rv": "rejected", "rvp": "rejected", "rvb": "rejected", "qrj": "rejected"}
WITHDRAWN["ag"] = "aborted"
MODES = ["local", "remote"]
GATES = """\
  - id: 2
    tool: rec
    why: "step 2 of g2"
    requires_approval: true
    params:
      tag: "g2-2"
  - id: 3
    tool: rec
    why: "step 3 of g2"
    requires_approval: true
    params:
      tag: "g2-3"
"""


def _remake(lab: Lab, slug: str, src: str, status: str) -> str:
    """The agent sets ``slug`` to ``status`` and commits it re-using ``src``'s author, date
    and message (``git commit -C``), the agent as committer."""
    lab.set_status(slug, status)
    lab.git("add", "-A")
    lab.git("commit", "-q", "--allow-empty", "-C", src, who=AGENT)
    return lab.head()


def _v2(lab: Lab, slug: str, status: str | None = None) -> str:
    """The Owner's edit of ``slug`` to v2 (one param added, far from the status line)."""
    lab.write(slug, lab.read(slug).replace(f'tag: "{slug}"', f'tag: "{slug}"\n      v: 2'))
    if status:
        lab.set_status(slug, status)
    return lab.commit(f"owner: {slug} v2", OWNER)


def _build(root: Path, mode: str) -> Lab:
    lab = Lab(root, approval=RULES)
    lab.write("mpa", plan_text("mpa"))
    lab.commit("agent: plans", AGENT)
    for slug in PLANS:
        if slug != "mpa":
            gates = GATES.replace("g2", slug) if slug in ("g2", "ag", "agm") else ""
            lab.write(slug, plan_text(slug, extra_actions=gates))
    lab.commit("owner: plans", OWNER)
    passes: list[tuple[str, int, bool, str]] = []
    got: dict[str, Any] = {}
    url = ""
    if mode == "remote":
        origin = root / "origin.git"
        subprocess.run(["git", "clone", "-q", "--bare", str(lab.repo), str(origin)], check=True)
        url = f"file://{origin}"
        lab.git("remote", "add", "origin", url)
        lab.config.write_text(
            lab.config.read_text().replace(
                f"repo: {lab.repo}\n",
                f"remote: {{url: {json.dumps(url)}, branch: main, poll_interval: 0.2}}\n",
            )
        )

    def step(phase: str) -> None:
        if url:
            lab.git("push", "-q", "origin", "HEAD:refs/heads/main")
        res = lab.run(check=False)
        passes.append((phase, res.returncode, "Traceback" in res.stderr, res.stderr[-600:]))
        if url:
            lab.git("fetch", "-q", "origin", "refs/heads/main")
            lab.git("reset", "-q", "--hard", "FETCH_HEAD")
        time.sleep(1.05)  # the next round authored in a later second than this pass

    step("freeze")
    # round A
    lab.approve("cc")
    lab.approve("qc")
    side: dict[str, str] = {}
    for slug, who, status in (
        ("rv", ALICE, "rejected"),
        ("rvm", ALICE, "rejected"),
        ("rvr", ALICE, "rejected"),
        ("rvp", ALICE, "rejected"),
        ("av", ALICE, "approved"),
        ("rvb", ALICE, "rejected"),
        ("qrj", BOB, "rejected"),
        ("avp", ALICE, "approved"),
        ("avb", ALICE, "approved"),
    ):
        lab.branch(f"alice-{slug}")
        lab.set_status(slug, status)
        side[slug] = lab.commit(f"reject {slug}", who)
        lab.git("checkout", "-q", "main")
    lab.branch("bob-qvm")
    lab.approve("qvm", BOB)
    lab.git("checkout", "-q", "main")
    for slug in ("rvc", "rv", "rvm", "qvm", "rvr", "rvp", "av", "rvb", "qrj", "avp", "avb"):
        _v2(lab, slug)
    lab.approve("ag")
    lab.approve("agm")
    vote_qrv = lab.approve("qrv")
    vote_qrs = lab.approve("qrs")
    vote_qd = lab.approve("qd")
    lab.approve("qm")
    lab.approve("g2")
    appr_rr = lab.approve("rr")
    lab.git("revert", "--no-edit", appr_rr, who=ALICE)
    lab.set_status("mpa", "rejected")
    lab.set_status("mpo", "rejected")
    lab.commit("agent: withdraw mpa", AGENT)
    # Alice's side branches for mvs/mvl (v1 approved there)
    for slug in ("mvs", "mvl"):
        lab.branch(f"alice-{slug}")
        lab.approve(slug)
        lab.git("checkout", "-q", "main")
    _v2(lab, "mvl")
    lab.approve("sw1")
    # the agent swaps sw1's and sw2's files, each set approved
    one, two = lab.read("sw1"), lab.read("sw2")
    lab.write("sw1", two.replace("status: pending_approval", "status: approved"))
    lab.write("sw2", one)
    lab.commit("agent: tidy sw", AGENT)
    step("a")
    got["status_a"] = {s: lab.plan(s)["plan"]["status"] for s in ("qc", "qd", "g2", "rv")}
    # round B
    lab.approve("qvm")
    lab.approve("qrj")
    lab.branch("alice-ag")
    lab.set_status("ag", "aborted")
    abort_ag = lab.commit("abort ag", ALICE)
    lab.git("checkout", "-q", "main")
    lab.approve("ag")
    lab.branch("alice-agm")
    lab.set_status("agm", "aborted")
    lab.commit("abort agm", ALICE)
    lab.git("checkout", "-q", "main")
    lab.approve("agm")
    _v2(lab, "qrv", "pending_approval")
    _v2(lab, "qrs", "pending_approval")
    _remake(lab, "qrs", vote_qrs, "approved")
    lab.set_status("qd", "pending_approval")
    lab.commit("agent: qd back to pending", AGENT)
    lab.git("mv", "plans/qm", "plans/qn", who=AGENT)
    lab.commit("agent: move qm", AGENT)
    _v2(lab, "mvs")
    lab.git("merge", "-q", "--no-ff", "-m", "merge alice-mvs", "alice-mvs", who=AGENT)
    lab.git("merge", "-q", "--no-ff", "-m", "merge alice-mvl", "alice-mvl", who=AGENT)
    lab.git("revert", "--no-edit", _last_revert(lab), who=AGENT)
    appr_sbs = lab.approve("sbs")
    gate_g2 = lab.approve("g2")
    step("b")
    # round C
    _remake(lab, "rv", side["rv"], "rejected")
    lab.git("merge", "-q", "--no-ff", "-m", "merge alice-rvm", "alice-rvm", who=AGENT)
    lab.git("merge", "-q", "--no-ff", "-m", "merge bob-qvm", "bob-qvm", who=AGENT)
    _remake(lab, "ag", abort_ag, "aborted")
    _remake(lab, "av", side["av"], "approved")
    lab.git("merge", "-q", "--no-ff", "-m", "merge alice-rvr", "alice-rvr", who=AGENT)
    _remake(lab, "rvr", side["rvr"], "rejected")
    patch = lab.git("format-patch", "--stdout", "-1", side["rvp"])
    lab.git("am", "-q", "-3", who=AGENT, input=patch)
    lab.git("merge", "-q", "--no-ff", "-m", "merge alice-agm", "alice-agm", who=AGENT)
    _remake(lab, "qrj", side["qrj"], "rejected")
    lab.git("checkout", "-q", "alice-rvb")
    lab.git("rebase", "-q", "main", who=AGENT)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--ff-only", "alice-rvb", who=AGENT)
    patch = lab.git("format-patch", "--stdout", "-1", side["avp"])
    lab.git("am", "-q", "-3", who=AGENT, input=patch)
    lab.git("checkout", "-q", "alice-avb")
    lab.git("rebase", "-q", "main", who=AGENT)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--ff-only", "alice-avb", who=AGENT)
    _remake(lab, "qrv", vote_qrv, "approved")
    _remake(lab, "qd", vote_qd, "approved")
    lab.approve("qn")
    lab.branch("side")
    _remake(lab, "sb", appr_sbs, "approved")
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge side", "side", who=AGENT)
    _remake(lab, "g2", gate_g2, "approved")
    step("c")
    # round D
    lab.approve("qc", BOB)
    lab.approve("rvc", BOB)
    lab.approve("rv", BOB)
    lab.approve("rvm", BOB)
    lab.approve("rvr", BOB)
    lab.approve("rvp", BOB)
    lab.approve("rvb", BOB)
    lab.approve("qrj", CAROL)
    lab.approve("agm")
    lab.approve("ag")
    lab.approve("qrv", BOB)
    lab.approve("qrs", BOB)
    lab.approve("mpo", BOB)
    step("d")
    step("last")
    clone = root / "fresh"
    subprocess.run(["git", "clone", "-q", url or str(lab.repo), str(clone)], check=True)
    out = lab.cli("audit", "--json", cwd=clone)
    got["audit_err"] = out.stderr[-2000:]
    got["report"] = json.loads(out.stdout) if out.stdout.strip() else {}
    got["log"] = lab.git("log", "--format=%h %an|%cn %s", "main")[:4000]
    lab.passes = passes  # type: ignore[attr-defined]
    lab.got = got  # type: ignore[attr-defined]
    lab.ran = {v: len(lab.calls(t)) for v, (_, t, _) in VIDS.items()}  # type: ignore[attr-defined]
    lab.got_rows = lab.rows()  # type: ignore[attr-defined]
    lab.final = {v: lab.plan(s)["plan"]["status"] for v, (s, _, _) in VIDS.items()}  # type: ignore[attr-defined]
    return lab


def _last_revert(lab: Lab) -> str:
    """Alice's revert of her ``rr`` approval (the agent reverts it)."""
    return lab.git("log", "-1", "--format=%H", '--grep=Revert "approve rr"', "main").strip()


def _both(root: Path) -> Any:
    return build_all(root, {m: (lambda r, m=m: _build(r, m)) for m in MODES}, workers=2)


@pytest.fixture(scope="module")
def labs(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return shared(tmp_path_factory, "r109-approve-atk109a", _both)


IDS = [f"{m}:{v}:{w}" for m in MODES for v in VIDS for w in ("ran", "audit")]
IDS += [f"{m}:passes" for m in MODES]
#: older-version-withdrawal-copy was "fixed" the same session (r109oldwd) by ignoring such
#: copies; round 117 (fix117w) withdrew that rule: the copies withdraw (fail closed)
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize(
    "vid", [pytest.param(i, id=i, marks=[BROKEN[i]] if i in BROKEN else []) for i in IDS]
)
def test_round109_atk109a(labs: Any, vid: str) -> None:
    parts = vid.split(":")
    lab = labs.got[parts[0]]
    got = lab.got
    if parts[1] == "passes":
        bad = [p for p in lab.passes if p[1] != 0 or p[2]]
        assert not bad, bad
        return
    v, what = parts[1], parts[2]
    slug, _, runs = VIDS[v]
    row = lab.got_rows.get(f"plans/{slug}", {})
    want = 1 if runs else 0
    if what == "ran":
        # what ran (``rec`` calls) and what the status row and the file say agree
        assert lab.ran[v] == want, (lab.ran, brief(row), lab.final, got["log"][:1500])
        if runs:
            final = (lab.final[v], row.get("status"))
            assert final == ("completed", "completed"), (brief(row), lab.final)
        else:
            assert row.get("status") not in ("completed", "executing"), brief(row)
            if v in WITHDRAWN:  # the copied withdrawal holds (fail closed)
                assert row.get("status") == WITHDRAWN[v], (brief(row), lab.final)
    else:
        report = got["report"]
        assert report, got["audit_err"]
        valid = valid_runs(report, slug)
        kinds = [e.get("approval_kind") for e in valid]
        if want:
            assert valid, (valid,)
        elif v in ("g2", "ag", "agm"):
            # the start and gate 2's answer are Alice's; no valid answer of gate 3
            assert kinds.count("gate") <= 1, valid
        else:
            assert not valid, valid
