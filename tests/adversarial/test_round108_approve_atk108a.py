"""Round 108, approval (atk108a): decisions re-made by the agent in a LATER pass or of
another KIND (rejections, aborts, gate answers, the controller's own start), the ABA edit
of a quorum plan, and a revert of a rejection; each in LOCAL mode and in REMOTE mode (a
bare repository served over ``file://``).

Lab (two, built at once: ``local``, ``remote``; policy: Alice or ``*@ops.example.com``;
``plans/q*/**`` need two approvals, the rest one; ``g*`` and ``a*`` plans gate action 2).
The Owner (no approver) writes the target plans the agent attacks, so the agent is no
author of them and may withdraw nothing; the agent writes the rest. A pass freezes them;
then four rounds of commits, each followed by a ``run --once`` pass (remote: pushed first,
pulled after), one second apart:

- ``cc`` (control): Alice approves: runs once.
- ``qc`` (control): Alice votes, Bob votes: runs once.
- ``gc`` (control): Alice approves, gate; Alice answers the gate: action 2 once.
- ``rj``: Alice rejects ``rs`` (round B); the agent re-makes her rejection on ``rj`` (an
  Owner plan, ``commit -C``) in the same pass; Bob approves ``rj`` (round D): runs once.
- ``rk``: as ``rj`` with the copy of her ``rks`` rejection one pass later (round C).
- ``ab``: Alice aborts ``as`` at its gate (round B); the agent re-makes her abort at
  ``ab``'s gate (round C); Alice answers ``ab``'s gate (round D): action 2 once.
- ``rc``: as ``rk`` with the copy made by ``format-patch`` of her ``rks`` rejection, the path
  rewritten to ``plans/rc/``, applied with ``git am -C0`` (round C).
- ``ax``: at ``ax``'s gate the agent re-makes her ``rks`` REJECTION as an abort
  (``commit -C``, status ``aborted``, round C); Alice answers the gate (D): action 2 once.
- ``qr``: a two-approval Owner plan; Alice votes (A); the agent re-makes her ``rks``
  rejection on it (C); Bob votes (D): runs once.
- ``qa`` (ABA): Alice votes v1 (A); the agent edits to v2 (B), back to v1 (C); Bob votes
  (D): never runs (her vote was voided by the change).
- ``rb``: Alice rejects (B); the agent ``git revert``s her rejection (C); Bob approves (D):
  never runs.
- ``gl``: at ``gl``'s gate the agent re-makes (``commit -C``, round D) Alice's answer of
  ``gc``'s gate (round C): action 2 never runs.
- ``al``: Alice approves ``als`` (B); the agent re-makes it on the Owner's ``al`` (C):
  never runs.
- ``fs``: the agent re-makes the controller's ``start`` commit of ``cc`` on ``fs`` (author
  ``plangate``, date and message kept with the path rewritten, ``executing``, round B):
  never runs, and the fresh-clone audit calls no run of it valid.

Ids ``<mode>:<vid>:ran`` (``rec`` calls of the last action), ``<mode>:<vid>:row``
(``status --json``: the plan's status agrees), ``<mode>:<vid>:audit`` (fresh clone:
controls' runs valid, attacks' none), ``<mode>:passes`` (every pass exit 0, no traceback).

Seen (round 108, 86 ids, ~12-50 s wall): 36 broke, two classes; 50 held. Both fixed the
same session: a withdrawal's identity is remembered as an approval's, so a copy of it onto
another plan is ``E_APPROVAL_REPLAYED`` (``Lifecycle._withdrawal_replay``, also for a
withdrawal on a merged branch), and the same-pass form fell with round 107's fix.

- **laterpass-withdrawal-copy** (``{local,remote}:{rk,rc,qr,ab,ax}:{ran,row,audit}``;
  30 ids): Alice rejects ``rks`` (or aborts ``as`` at
  its gate); a pass reads it; in the NEXT round the agent sets another plan (the Owner's, the
  agent no author of it) ``rejected``/``aborted`` and commits it with ``git commit -q -C
  <her commit>`` (or ``git format-patch --stdout -1 <her commit>`` with ``plans/rks/`` ->
  ``plans/rc/``, ``git am -C0``); the pass reads it as ``alice@example.com set status
  rejected`` / ``abort requested by alice@example.com`` and applies it: ``rk``, ``rc``,
  ``qr`` (a quorum with her vote in) stay ``rejected``, Bob's approval
  ``E_ILLEGAL_TRANSITION ... (from rejected); ignored``; ``ab``'s paused run is ``aborted``
  (also ``ax``: her REJECTION of another plan re-made as an abort), her gate approval
  ignored. A rejection/abort counted that no allowed approver or author made (SPEC §4),
  while the same copy of an APPROVAL is refused ``E_APPROVAL_REPLAYED`` (``al``, ``gl``
  held). Local and remote mode alike.
- **samepass-crossplan-copy** (already known; its rejection form: ``{local,remote}:rj:*``,
  6 ids): the copy of her ``rs`` rejection on ``rj`` read in the same pass as the original.

Changed (2026-12-05, round 117 fix117w): a copy of an entitled person's withdrawal now
withdraws, whatever hand re-made it (round 117's forge flows have the same shape): the
``{rj,rk,rc,qr}`` ids assert the plan stays ``rejected`` and never runs, ``{ab,ax}`` the run
``aborted`` with action 2 never run; the worst such a copy does is stop a plan (fail closed).

Held: the controls; ``al``/``gl`` (an approval or gate answer re-made a pass later:
``E_APPROVAL_REPLAYED``); ``qa`` (the ABA edit voids Alice's vote: ``partial``); ``rb`` (a
revert of her rejection: ``E_ILLEGAL_TRANSITION``); ``fs`` (the controller's start, its seal
kept, re-made on ``fs`` under ``plangate``: ignored, no valid run in the audit). Aside (not
an id): a first try of ``fs`` copied the controller's BATCHED start (``plangate: 8 plan
events``) with one path renamed; every plan that message named (Alice's approved, gated
``gc`` among them) then waited for good as "another controller or a lost key" (a liveness
wedge by one unsigned agent commit; docs/approvals.md describes the wait as designed).
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
CONTROLS = ["cc", "qc", "gc"]
ATTACKS = ["rj", "rk", "rc", "ab", "ax", "qr", "qa", "rb", "gl", "al", "fs"]
VIDS = CONTROLS + ATTACKS
SOURCES = ["rs", "rks", "as", "als"]
OWNED = {"rj", "rk", "rc", "ab", "ax", "qr", "al", "fs", "rs", "rks", "as", "als"}
GATED = {"gc", "gl", "ab", "ax", "as"}
#: variants whose last action must run once (the controls)
RUNS = {"cc", "qc", "gc"}
#: the copied withdrawals: since round 117 (fix117w) a copy of Alice's withdrawal withdraws
#: (fail closed), whatever hand re-made it: the status each plan holds at the end
WITHDRAWN = {"rj": "rejected", "rk": "rejected", "rc": "rejected", "qr": "rejected"}
WITHDRAWN |= {"ab": "aborted", "ax": "aborted"}
MODES = ["local", "remote"]


def _gate(vid: str) -> str:
    if vid not in GATED:
        return ""
    return f"""\
  - id: 2
    tool: rec
    why: "step 2 of {vid}"
    requires_approval: true
    params:
      tag: "{vid}-2"
"""


def _last(vid: str) -> str:
    return f"{vid}-2" if vid in GATED else vid


def _remake(lab: Lab, vid: str, src: str, status: str) -> str:
    """The agent sets ``vid`` to ``status`` and commits it re-using ``src``'s author, date
    and message (``git commit -C``), the agent as committer."""
    lab.set_status(vid, status)
    lab.git("add", "-A")
    lab.git("commit", "-q", "--allow-empty", "-C", src, who=AGENT)
    return lab.head()


def _one_start(msg: str, src: str, dst: str) -> str:
    """The controller's (possibly batched) start message cut to ``src``'s one group, its
    plan renamed ``dst``, with the ``Controller:``/``Controller-Seal:`` lines kept."""
    lines = msg.strip("\n").split("\n")
    groups: list[list[str]] = []
    tail = [x for x in lines if x.startswith(("Controller:", "Controller-Seal:"))]
    for line in lines[2:]:
        if line.startswith("Plan: "):
            groups.append([])
        if groups and not line.startswith(("Controller:", "Controller-Seal:")):
            groups[-1].append(line)
    mine = next((g for g in groups if g[0] == f"Plan: plans/{src}"), [f"Plan: plans/{src}"])
    body = "\n".join(mine + tail).replace(f"plans/{src}", f"plans/{dst}")
    return f"plangate: start plans/{dst}\n\n{body}\n"


def _build(root: Path, mode: str) -> Lab:
    lab = Lab(root, approval=RULES)
    for vid in VIDS + SOURCES:
        if vid not in OWNED:
            lab.write(vid, plan_text(vid, extra_actions=_gate(vid)))
    lab.commit("agent: plans", AGENT)
    for vid in VIDS + SOURCES:
        if vid in OWNED:
            lab.write(vid, plan_text(vid, extra_actions=_gate(vid)))
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
    for vid in ("cc", "qc", "gc", "gl", "ab", "ax", "as", "qa", "qr"):
        lab.approve(vid)
    step("a")
    got["status_a"] = {v: lab.plan(v)["plan"]["status"] for v in VIDS + SOURCES}
    # round B
    start_cc = lab.git(
        "log", "-1", "--format=%H", "--author=plangate@localhost", "--grep=start", "--", "plans/cc"
    ).strip()
    got["start_cc"] = start_cc
    lab.approve("qc", BOB)
    lab.set_status("as", "aborted")
    lab.commit("abort as", ALICE)
    abort_as = lab.head()
    lab.set_status("rs", "rejected")
    rej_rs = lab.commit("reject rs", ALICE)
    _remake(lab, "rj", rej_rs, "rejected")
    lab.set_status("rks", "rejected")
    rej_rks = lab.commit("reject rks", ALICE)
    lab.write("qa", lab.read("qa").replace('tag: "qa"', 'tag: "qa"\n      v: 2'))
    lab.commit("agent: qa v2", AGENT)
    lab.set_status("rb", "rejected")
    rej_rb = lab.commit("reject rb", ALICE)
    als = lab.approve("als")
    if start_cc:
        msg = _one_start(lab.git("log", "-1", "--format=%B", start_cc), "cc", "fs")
        date = lab.git("log", "-1", "--format=%ad", "--date=raw", start_cc).strip()
        lab.set_status("fs", "executing")
        lab.git("add", "-A")
        lab.git(
            "commit", "-q", "--allow-empty", "--author=plangate <plangate@localhost>",
            f"--date={date}", "-m", msg, who=AGENT,
        )  # fmt: skip
    step("b")
    # round C
    lab.approve("gc")
    gate_gc = lab.head()
    _remake(lab, "rk", rej_rks, "rejected")
    _remake(lab, "ab", abort_as, "aborted")
    _remake(lab, "ax", rej_rks, "aborted")
    _remake(lab, "qr", rej_rks, "rejected")
    patch = lab.git("format-patch", "--stdout", "-1", rej_rks).replace("plans/rks/", "plans/rc/")
    lab.git("am", "-q", "-C0", who=AGENT, input=patch)
    lab.write("qa", lab.read("qa").replace('tag: "qa"\n      v: 2', 'tag: "qa"'))
    lab.commit("agent: qa back to v1", AGENT)
    lab.git("revert", "--no-edit", rej_rb, who=AGENT)
    _remake(lab, "al", als, "approved")
    step("c")
    # round D
    _remake(lab, "gl", gate_gc, "approved")
    lab.approve("rj", BOB)
    lab.approve("rk", BOB)
    lab.approve("rc", BOB)
    lab.approve("ab")
    lab.approve("ax")
    lab.approve("qr", BOB)
    lab.approve("qa", BOB)
    lab.approve("rb", BOB)
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
    lab.ran = {v: len(lab.calls(_last(v))) for v in VIDS}  # type: ignore[attr-defined]
    lab.got_rows = lab.rows()  # type: ignore[attr-defined]
    lab.final = {v: lab.plan(v)["plan"]["status"] for v in VIDS}  # type: ignore[attr-defined]
    return lab


def _both(root: Path) -> Any:
    return build_all(root, {m: (lambda r, m=m: _build(r, m)) for m in MODES}, workers=2)


@pytest.fixture(scope="module")
def labs(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return shared(tmp_path_factory, "r108-approve-atk108a", _both)


IDS = [f"{m}:{v}:{w}" for m in MODES for v in VIDS for w in ("ran", "row", "audit")]
IDS += [f"{m}:passes" for m in MODES]
#: both classes "fixed" the same session by ignoring copied withdrawals; round 117 (fix117w)
#: reversed that: a copy of an entitled person's withdrawal withdraws (fail closed), and its
#: identity is remembered (``Lifecycle._remember_withdrawal``) so no copy of it approves
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize(
    "vid", [pytest.param(i, id=i, marks=[BROKEN[i]] if i in BROKEN else []) for i in IDS]
)
def test_round108_atk108a(labs: Any, vid: str) -> None:
    parts = vid.split(":")
    lab = labs.got[parts[0]]
    got = lab.got
    if parts[1] == "passes":
        bad = [p for p in lab.passes if p[1] != 0 or p[2]]
        assert not bad, bad
        return
    v, what = parts[1], parts[2]
    slug = f"plans/{v}"
    row = lab.got_rows.get(slug, {})
    want = 1 if v in RUNS else 0
    if what == "ran":
        assert lab.ran[v] == want, (lab.ran, brief(row), lab.final, got["log"][:1500])
    elif what == "row":
        final = "completed" if v in RUNS else None
        if final:
            assert lab.final[v] == final and row.get("status") == final, (brief(row), lab.final)
        else:
            if v != "fs":  # fs: the agent's own commit wrote `executing` in the file
                assert lab.final[v] not in ("completed", "executing"), (brief(row), lab.final)
            assert row.get("status") not in ("completed", "executing"), brief(row)
            if v in WITHDRAWN:  # the copied withdrawal holds
                assert row.get("status") == WITHDRAWN[v], (brief(row), lab.final)
    else:
        report = got["report"]
        assert report, got["audit_err"]
        valid = valid_runs(report, v)
        kinds = {e.get("approval_kind") for e in valid}
        if want:
            # a gated plan's last action ran on a valid answer of its gate
            assert valid and (v not in GATED or "gate" in kinds), (valid,)
        elif v in GATED:
            # the start is Alice's and valid; no valid answer of the gate may be reported
            assert "gate" not in kinds, valid
        else:
            assert not valid, valid
