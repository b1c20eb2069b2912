"""Round 113, approval and policy (atk113a): per-group quorum and risk rules under octopus
merges, merges whose parents disagree on a plan's version, ``frozen.risk`` edited down, a
group changed in the config (recorded) under collected votes, a tool's risk raised or
lowered between votes, ``.mailmap`` identity folding, cherry-picks with ``-x`` and reset
authors (one brought in by an ``-s ours`` merge), approvals dated before the freeze or in
the future, a rebased approval branch, commits committed as the controller, rejections on
merged branches, and what ``plangate check`` predicts for such branches.

Lab (one build, module scope; the same play twice: local mode, then REMOTE mode against a
bare ``origin.git`` served by ``git daemon`` on 127.0.0.1, ``writerkit.served``): approvers
Alice and ``*@ops.example.com``; groups ``ops`` (Bob, Carol, Dan) and ``sec`` (Sec); tool
``hrec`` is ``risk: high`` (rule: two of ops and one of sec), ``mrec`` medium and ``lrec``
high (changed by the operator mid-play), ``plans/q*/**`` needs two approvals, anything
else one. The Owner writes the plans (Bob writes ``hba``; ``cpx``/``cpr``/``cpm`` are Bob's,
cherry-picked by the agent; ``mma``'s last edit is ``alice.alt@example.net``'s, folded into
Alice by the agent's ``.mailmap``). Pass A freezes; then rounds of actions per variant
(``PLAY``), one ``run --once`` pass after each round (remote: push, pass, fetch + reset).

Ids: ``<vid>`` (calls of the vid's tag at the end, ``VIDS``), ``<vid>:audit`` (the
fresh-clone ``audit --json`` with no config and ``audit --json --config`` both call the run
valid, or none), ``<vid>:check`` (``plangate check --as <merger>`` on the branch before it
landed: the exact outcome and codes, and it agrees with what the controller did; ``qrb``:
its ``fast_forward`` prediction), ``dat:refused`` (``E_APPROVAL_REPLAYED``),
``qrk:not-on-carol`` (no run in the pass that read Carol's vote after the risk was raised),
``passes``, ``agent-policy-flagged`` (``policy-changed`` in both audits for the agent's
edit of ``.plangate/policy.json`` adding Mallory to ``sec``), ``mailmap-authors``,
``audit-agrees``; each again as ``R:<id>`` for remote mode.

Seen (round 113, 152 ids, 28-77 s wall on a busy machine): 0 broke, 152 held.

Held: high-risk quorum needs two distinct ops and one sec: Alice or Eve (approvers in no
group) do not fill a group, Bob twice counts once, Bob's own plan does not count his vote;
``frozen.risk`` (and ``frozen.policy``) edited down by the agent changes nothing (partial);
octopus merges of three vote branches count only the first-parent vote (merged by the
agent: ``E_APPROVER_NOT_ALLOWED``; by Bob: his one vote, partial), and unsigned
``Plan-Approved:``/``Co-authored-by:`` trailers in an octopus merge's message by Sec count
nothing for Carol; Mallory added to ``sec`` in ``policy.json`` by the agent: ignored and
flagged ``policy-changed``; Dan removed from ``ops`` after his vote: his vote no longer counts
(re-judged, round 15's rule), and his vote after removal never counts; ``.mailmap`` folds
nothing (Mallory mapped to Alice: not allowed; the plan's alt author mapped to Alice: Alice
may approve); a cherry-pick keeping Bob's authorship and one of his commit merged in with
``-s ours``: ``E_SELF_APPROVAL`` (never runs); a merge whose sides disagree on
the version (main changed the content, Carol's side approved v1): never runs; Carol's
side approving and changing content in one commit: ``E_PLAN_HASH_MISMATCH`` (check said so);
an approval dated years before the freeze: ``E_APPROVAL_REPLAYED``; a future author date:
counts once; a status commit by the controller's identity: ignored; Sec's rejection
vetoes, Mallory's does not, Eve's on a branch the agent merges does (her own commit);
a tool's risk raised between votes: the next vote is judged under the high rule (ran only
after Sec); lowered: runs once on the next approval; a rebased and fast-forwarded approval
branch: Carol's vote counts (check's ``fast_forward`` said ``start``, its merge-commit
outcome ``refuse`` for the agent's merge). Remote mode: the same verdicts, audits and
check predictions.

Noted, not counted (by the SPEC's letter, not breaks): ``cpx``: Bob's plan on a branch never
merged, cherry-picked by the agent with ``-x`` and ``--reset-author``: Bob's approval runs it
(no commit of Bob's changed the plan in the branch's history; the ``(cherry picked from
commit ...)`` line is not read as authorship). ``qbo``: a commit with author Carol and
committer ``plangate <plangate@localhost>`` setting ``approved`` counts as Carol's vote
(the approver is the author, §5; the controller's name as committer gives no more than any
author line an agent can write).

Suspected, not confirmed (display only): after the agent edits ``frozen.risk: high`` to
``low`` in ``hfr``, ``plangate status --json`` shows the row's ``risk: low`` (the file's
unhashed block), while the controller still judges it by the high rule (Alice: "in none of
the groups this plan needs").

Not tried: signed approvals (``require_signed``, trailer approvals with real signatures),
``identity: committer``, gates inside high-risk plans, ``max_age``, the web page and MCP.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from test_round2_execution_kit import shared
from writerkit import served

from tests.adversarial.advkit import (
    AGENT,
    ALICE,
    BOB,
    BOT,
    CAROL,
    MALLORY,
    Lab,
    brief,
    clone_audit_got,
    plan_text,
    valid_runs,
)

OWNER = ("Owner", "owner@example.com")
DAN = ("Dan", "dan@ops.example.com")
SEC = ("Sec", "sec@ops.example.com")
EVE = ("Eve", "eve@ops.example.com")  # an approver by the wildcard, in no group


def _config(lab: Lab) -> None:
    dan_in_ops = getattr(lab, "dan", True)
    mrisk, lrisk = getattr(lab, "mrisk", "medium"), getattr(lab, "lrisk", "high")
    rec = json.dumps([sys.executable, str(lab.recorder), "{tag}"])
    env = f"env: {{REC_LOG: {json.dumps(str(lab.log))}}}"
    ops = [BOB[1], CAROL[1]] + ([DAN[1]] if dan_in_ops else [])
    url = getattr(lab, "url", "")
    where = (
        f"remote: {{url: {json.dumps(url)}, branch: main, poll_interval: 0.2}}\n"
        if url
        else f"repo: {lab.repo}\n"
    )
    lab.config.write_text(
        f"{where}state_dir: {lab.state}\n"
        "identity: {name: plangate, email: plangate@localhost}\n"
        "approval:\n"
        '  approvers: ["alice@example.com", "*@ops.example.com"]\n'
        f"  groups: {{ops: {json.dumps(ops)}, sec: [{json.dumps(SEC[1])}]}}\n"
        "  rules:\n"
        "    - match: {risk: high}\n"
        "      require: [{group: ops, count: 2}, {group: sec, count: 1}]\n"
        '    - match: {paths: ["plans/q*/**"]}\n      require: [{count: 2}]\n'
        "tools:\n"
        f"  rec: {{kind: exec, argv: {rec}, {env}}}\n"
        f"  hrec: {{kind: exec, argv: {rec}, {env}, risk: high}}\n"
        f"  mrec: {{kind: exec, argv: {rec}, {env}, risk: {mrisk}}}\n"
        f"  lrec: {{kind: exec, argv: {rec}, {env}, risk: {lrisk}}}\n"
        "  echo: {kind: echo}\n"
    )


def _high(slug: str) -> str:
    return plan_text(slug).replace("name: rec", "name: hrec").replace("tool: rec", "tool: hrec")


#: vid -> calls wanted at the end (tag = vid)
VIDS: dict[str, int] = {
    "c1": 1,  # control: Alice approves a plain plan
    "hc": 1,  # control: high: Bob, Carol, Sec (one commit each)
    "h2": 0,  # high: Bob + Carol (no sec)
    "hal": 0,  # high: Bob + Sec + Alice (Alice in no group)
    "hev": 0,  # high: Bob + Sec + Eve (approver by wildcard, in no group)
    "hdu": 0,  # high: Bob twice (second on a branch Bob merges) + Sec
    "hba": 0,  # high, Bob's plan: Bob + Carol + Sec
    "hfr": 0,  # high: the agent edits frozen.risk to low; Alice approves
    "hfm": 0,  # high: the agent edits frozen.risk and frozen.policy; Alice + Bob
    "hoc": 0,  # high: Bob/Carol/Sec votes on three branches, octopus merged by the agent
    "hob": 0,  # high: the same, octopus merged by Bob
    "hmt": 0,  # high: Bob votes; an octopus merge by Sec whose message carries unsigned
    # Plan-Approved trailers for Carol and Sec (no status change)
    "hgm": 0,  # high: the agent adds Mallory to ``sec`` in policy.json; Bob+Carol+Mallory
    "hdn": 0,  # high: Dan (ops) and Sec vote; the operator then removes Dan (recorded);
    # Bob votes: every collected vote is judged again under the policy in force (round 15)
    "hdl": 0,  # high: the operator removes Dan first (recorded); Dan + Bob + Sec
    "mmp": 0,  # .mailmap folds Mallory into Alice; Mallory approves
    "mma": 1,  # .mailmap folds the plan's author (alice.alt@example.net) into Alice; Alice
    # approves: the agent's .mailmap makes nobody anybody: runs
    "cpx": 1,  # Bob's plan (on a branch never merged) cherry-picked -x, the author reset to
    # the agent; Bob approves: the branch's history has no commit of Bob's: runs
    "cpm": 0,  # the same, Bob's branch then merged ``-s ours`` by the agent; Bob approves
    "cpr": 0,  # Bob's plan cherry-picked (author Bob, committer agent); Bob approves
    "qmv": 0,  # q: Bob votes v1; a merge whose parents disagree: side sets approved (Carol)
    # while main changed the content; Carol merges
    "qmw": 0,  # q: Bob on main, Carol on a side branch that edits the content; Bob merges
    "dat": 0,  # Alice's approval with author and committer dates years before the freeze:
    # E_APPROVAL_REPLAYED (an approval must follow its version's freeze)
    "dad": 1,  # Alice's approval, author date in the future, committer date now
    "bot": 0,  # a commit under the controller's identity sets approved
    "qbo": 1,  # q: Bob votes; a commit committed as the controller, authored by Carol: the
    # approver is the author (§5), so Carol's vote: runs
    "srj": 0,  # Sec (approver) rejects a plain plan; Alice approves: stays rejected
    "mrj": 1,  # Mallory (not an approver) rejects; Alice approves: runs
    "erj": 0,  # Eve (an approver) rejects on a side branch the agent merges: her own commit
    # withdraws the version; Alice approves: stays rejected
    "qrk": 1,  # q, tool mrec (medium): Bob votes; the operator raises mrec to high (recorded);
    # Carol votes (never runs on her vote: ops 2 + sec 1 now); Sec votes: runs
    "lrl": 1,  # tool lrec (high): Bob votes (partial); the operator lowers lrec to medium;
    # Alice votes: one approval needed now: runs once
    "qrb": 1,  # q: Bob votes; Carol's approval on her branch rebased by the agent and
    # fast-forwarded (author Carol, committer the agent): her vote: runs
}
PLANS = [v for v in VIDS if v not in ("hba", "cpx", "cpr", "cpm", "mma")]
HIGH = {v for v in VIDS if v.startswith("h")}
#: vid -> what ``check`` must say for the branch (outcome, refusal codes)
CHECKED = {
    "hoc": ("refuse", ["E_APPROVER_NOT_ALLOWED"]),
    "hob": ("partial", []),
    "mmp": ("refuse", ["E_APPROVER_NOT_ALLOWED"]),
    "qmw": ("refuse", ["E_PLAN_HASH_MISMATCH"]),
    "erj": ("none", []),
    "qrb": ("refuse", ["E_APPROVER_NOT_ALLOWED"]),  # as the agent's merge commit; its
    # fast-forward (what was done) is predicted ``start``
}


def _hash(lab: Lab, slug: str) -> str:
    return str(lab.plan(slug)["frozen"]["hash"])


def _vote(slug: str, who: tuple[str, str]) -> Any:
    return lambda lab: lab.approve(slug, who, f"{who[0]}: approve {slug}")


def _octo(vid: str, merger: tuple[str, str]) -> list[Any]:
    """Bob, Carol and Sec vote on three branches; ``merger`` octopus-merges them (a check
    first, on ``<vid>-side``, the octopus as it would land)."""

    def make(lab: Lab) -> None:
        names = []
        for who in (BOB, CAROL, SEC):
            name = f"{vid}-{who[0].lower()}"
            lab.branch(name)
            lab.approve(vid, who, f"{who[0]}: approve {vid}")
            lab.git("checkout", "-q", "main")
            names.append(name)
        lab.branch(f"{vid}-side")
        lab.got[f"{vid}-merge"] = lab.git(  # type: ignore[attr-defined]
            "merge", "--no-ff", "-m", f"octopus {vid}", *names, who=merger, check=False
        )
        lab.git("merge", "--abort", check=False)
        lab.git("checkout", "-q", "-f", "main")
        lab.checks[vid] = lab.check_plans(f"{vid}-side", merger[1])  # type: ignore[attr-defined]
        lab.git("merge", "-q", "--ff-only", f"{vid}-side", check=False)

    return [make]


def _frozen_edit(slug: str, policy: bool) -> Any:
    def edit(lab: Lab) -> None:
        text = re.sub(r"risk: *high", "risk: low", lab.read(slug))
        if policy:
            text = re.sub(r"(policy: *)(\S+)", r"\1sha256:" + "0" * 64, text)
        lab.write(slug, text)
        lab.commit(f"agent: {slug} is low risk", AGENT)

    return edit


def _status(slug: str, status: str, who: tuple[str, str]) -> Any:
    def do(lab: Lab) -> None:
        lab.set_status(slug, status)
        lab.commit(f"{who[0]}: {status} {slug}", who)

    return do


def _hmt(lab: Lab) -> None:
    for b in ("hmt-a", "hmt-b"):
        lab.branch(b)
        lab.note(b)
        lab.git("checkout", "-q", "main")
    lab.checks["hmt"] = lab.check_plans("hmt-a", SEC[1])  # type: ignore[attr-defined]
    msg = (
        f"octopus hmt\n\nPlan-Approved: plans/hmt {_hash(lab, 'hmt')}\n"
        f"Co-authored-by: Carol <{CAROL[1]}>\nSigned-off-by: Carol <{CAROL[1]}>\n"
    )
    lab.git("merge", "-q", "--no-ff", "-m", msg, "hmt-a", "hmt-b", who=SEC)


def _mallory_sec(lab: Lab) -> None:
    pol = lab.repo / ".plangate" / "policy.json"
    data = json.loads(pol.read_text())
    data["approval"].setdefault("groups", {}).setdefault("sec", []).append(MALLORY[1])
    pol.write_text(json.dumps(data, sort_keys=True, separators=(",", ":")))
    lab.got["agent_policy"] = lab.commit("agent: mallory in sec", AGENT)  # type: ignore[attr-defined]


def _side(vid: str, who: tuple[str, str], merger: tuple[str, str], status: str = "approved"):
    def do(lab: Lab) -> None:
        lab.branch(f"{vid}-side")
        lab.set_status(vid, status)
        lab.commit(f"{who[0]}: {status} {vid}", who)
        lab.git("checkout", "-q", "main")
        lab.checks[vid] = lab.check_plans(f"{vid}-side", merger[1])  # type: ignore[attr-defined]
        lab.git("merge", "-q", "--no-ff", "-m", f"merge {vid}-side", f"{vid}-side", who=merger)

    return do


def _qmv(lab: Lab) -> None:
    # a side branch where Carol approves v1 while main changes the content; Carol merges
    lab.branch("qmv-side")
    lab.approve("qmv", CAROL)
    lab.git("checkout", "-q", "main")
    lab.write("qmv", lab.read("qmv").replace('tag: "qmv"', 'tag: "qmv"\n      extra: "v2"'))
    lab.commit("agent: qmv v2", AGENT)
    out = lab.git("merge", "--no-ff", "-m", "merge qmv-side", "qmv-side", who=CAROL, check=False)
    lab.got["qmv_merge"] = out + lab.git("status", "--porcelain")  # type: ignore[attr-defined]
    if lab.git("status", "--porcelain").strip():
        lab.git("checkout", "--theirs", "plans/qmv/PLAN.yml", check=False)
        lab.git("add", "-A")
        lab.git("commit", "-q", "--no-edit", who=CAROL)


def _rbs(lab: Lab) -> None:
    # Carol approves on her branch; main moves on; the agent rebases her branch (committer
    # the agent) and fast-forwards main to it
    lab.branch("rbs-side")
    lab.approve("qrb", CAROL)
    lab.git("checkout", "-q", "main")
    lab.note("rbs-main")
    lab.git("checkout", "-q", "rbs-side")
    lab.git("rebase", "-q", "main", who=AGENT)
    lab.git("checkout", "-q", "main")
    lab.checks["qrb"] = lab.check_plans("rbs-side", AGENT[1])  # type: ignore[attr-defined]
    told = lab.check("rbs-side", AGENT[1])
    lab.got["qrb_check"] = (told.returncode, told.stdout)  # type: ignore[attr-defined]
    lab.git("merge", "-q", "--ff-only", "rbs-side")


def _qmw(lab: Lab) -> None:
    # Carol's side branch approves and edits the content in one commit; Bob merges
    lab.branch("qmw-side")
    text = lab.read("qmw").replace("  status: pending_approval", "  status: approved")
    lab.write("qmw", text.replace('tag: "qmw"', 'tag: "qmw"\n      extra: "v2"'))
    lab.commit("carol: approve qmw (and a tweak)", CAROL)
    lab.git("checkout", "-q", "main")
    lab.checks["qmw"] = lab.check_plans("qmw-side", BOB[1])  # type: ignore[attr-defined]
    lab.git("merge", "-q", "--no-ff", "-m", "merge qmw-side", "qmw-side", who=BOB)


def _dated(slug: str, env: dict[str, str]) -> Any:
    def do(lab: Lab) -> None:
        lab.extra_env = env  # type: ignore[attr-defined]
        lab.approve(slug, ALICE)
        lab.extra_env = {}  # type: ignore[attr-defined]

    return do


def _qbo(lab: Lab) -> None:
    lab.set_status("qbo", "approved")
    lab.extra_env = {"GIT_AUTHOR_NAME": CAROL[0], "GIT_AUTHOR_EMAIL": CAROL[1]}  # type: ignore[attr-defined]
    lab.commit("approve qbo", BOT)
    lab.extra_env = {}  # type: ignore[attr-defined]


def _dan_out(lab: Lab) -> None:
    lab.dan = False  # type: ignore[attr-defined]
    _config(lab)


def _risk(attr: str, level: str) -> Any:
    def do(lab: Lab) -> None:
        setattr(lab, attr, level)
        _config(lab)

    return do


OLD = {"GIT_AUTHOR_DATE": "@1000000000 +0000", "GIT_COMMITTER_DATE": "@1000000000 +0000"}
#: vid -> the rounds of actions (one ``run --once`` pass after each round)
PLAY: dict[str, list[Any]] = {
    "c1": [_vote("c1", ALICE)],
    "hc": [_vote("hc", BOB), _vote("hc", CAROL), _vote("hc", SEC)],
    "h2": [_vote("h2", BOB), _vote("h2", CAROL)],
    "hal": [_vote("hal", BOB), _vote("hal", SEC), _vote("hal", ALICE)],
    "hev": [_vote("hev", BOB), _vote("hev", SEC), _vote("hev", EVE)],
    "hdu": [_vote("hdu", BOB), _vote("hdu", SEC), _vote("hdu", BOB)],
    "hba": [_vote("hba", BOB), _vote("hba", CAROL), _vote("hba", SEC)],
    "hfr": [_frozen_edit("hfr", False), _vote("hfr", ALICE)],
    "hfm": [_frozen_edit("hfm", True), _vote("hfm", ALICE), _vote("hfm", BOB)],
    "hoc": _octo("hoc", AGENT),
    "hob": _octo("hob", BOB),
    "hmt": [_vote("hmt", BOB), _hmt],
    "hgm": [_mallory_sec, _vote("hgm", BOB), _vote("hgm", CAROL), _vote("hgm", MALLORY)],
    "hdn": [_vote("hdn", DAN), _vote("hdn", SEC), _dan_out, _vote("hdn", BOB)],
    "hdl": [None, None, None, _vote("hdl", DAN), _vote("hdl", BOB), _vote("hdl", SEC)],
    "mmp": [_side("mmp", MALLORY, MALLORY)],
    "mma": [_vote("mma", ALICE)],
    "cpx": [_vote("cpx", BOB)],
    "cpr": [_vote("cpr", BOB)],
    "cpm": [_vote("cpm", BOB)],
    "qmv": [_vote("qmv", BOB), _qmv, _vote("qmv", CAROL)],
    "qmw": [_vote("qmw", BOB), _qmw],
    "dat": [_dated("dat", OLD)],
    "dad": [_dated("dad", {"GIT_AUTHOR_DATE": "@4000000000 +0000"})],
    "bot": [_status("bot", "approved", BOT)],
    "qbo": [_vote("qbo", BOB), _qbo],
    "srj": [_status("srj", "rejected", SEC), _vote("srj", ALICE)],
    "mrj": [_status("mrj", "rejected", MALLORY), _vote("mrj", ALICE)],
    "qrk": [_vote("qrk", BOB), _risk("mrisk", "high"), _vote("qrk", CAROL), _vote("qrk", SEC)],
    "lrl": [_vote("lrl", BOB), _risk("lrisk", "medium"), _vote("lrl", ALICE)],
    "qrb": [_vote("qrb", BOB), _rbs],
    "erj": [_side("erj", EVE, AGENT, "rejected"), _vote("erj", ALICE)],
}


def _play(lab: Lab, remote: bool) -> None:
    got: dict[str, Any] = {}
    lab.got = got  # type: ignore[attr-defined]
    passes: list[tuple[str, int, bool, str]] = []
    lab.passes = passes  # type: ignore[attr-defined]
    lab.checks = {}  # type: ignore[attr-defined]

    def step(phase: str) -> None:
        if remote:
            lab.git("push", "-q", "origin", "main")
        res = lab.run(check=False)
        passes.append((phase, res.returncode, "Traceback" in res.stderr, res.stderr[-900:]))
        got[f"ran@{phase}"] = {v: len(lab.calls(v)) for v in VIDS}
        if remote:
            lab.git("fetch", "-q", "origin", "refs/heads/main")
            lab.git("reset", "-q", "--hard", "FETCH_HEAD")

    _config(lab)
    for slug in PLANS:
        text = _high(slug) if slug in HIGH else plan_text(slug)
        if slug in ("qrk", "lrl"):
            tool = "mrec" if slug == "qrk" else "lrec"
            text = text.replace("name: rec", f"name: {tool}").replace("tool: rec", f"tool: {tool}")
        lab.write(slug, text)
    lab.write("mma", plan_text("mma"))
    lab.commit("owner: plans", OWNER)
    lab.write("mma", plan_text("mma") + "# by alt\n")
    lab.commit("alt: mma", ("Alice Alt", "alice.alt@example.net"))
    lab.write("hba", _high("hba"))
    lab.commit("bob: hba", BOB)
    lab.branch("bob-plans")
    lab.write("cpx", plan_text("cpx"))
    cpx = lab.commit("bob: cpx", BOB)
    lab.write("cpr", plan_text("cpr"))
    cpr = lab.commit("bob: cpr", BOB)
    lab.git("checkout", "-q", "main")
    lab.git("cherry-pick", "-x", cpx, who=AGENT)
    lab.git("commit", "-q", "--amend", "--no-edit", "--reset-author", who=AGENT)
    lab.git("cherry-pick", cpr, who=AGENT)
    lab.git("checkout", "-q", "-b", "bob-cpm", "main~3")
    lab.write("cpm", plan_text("cpm"))
    cpm = lab.commit("bob: cpm", BOB)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "-s", "ours", "-m", "merge bob-cpm (ours)", "bob-cpm", who=AGENT)
    lab.git("cherry-pick", "-x", cpm, who=AGENT)
    lab.git("commit", "-q", "--amend", "--no-edit", "--reset-author", who=AGENT)
    lab.put(".mailmap", "Alice <alice@example.com> <mallory@example.com>\n"
            "Alice <alice@example.com> <alice.alt@example.net>\n")  # fmt: skip
    lab.commit("agent: mailmap", AGENT)
    step("a")
    rounds = max(len(v) for v in PLAY.values())
    for i in range(rounds):
        for acts in PLAY.values():
            if i < len(acts) and acts[i] is not None:
                acts[i](lab)
        step(f"r{i}")
    step("last")
    lab.ran = {v: len(lab.calls(v)) for v in VIDS}  # type: ignore[attr-defined]
    lab.got_rows = lab.rows()  # type: ignore[attr-defined]
    got["clone"] = clone_audit_got(lab, lab.root)
    got["withcfg"] = lab.audit(config=lab.config)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    _play(lab, remote=False)
    # the same play in remote mode: a bare origin served by ``git daemon`` on 127.0.0.1
    far = Lab(root / "R")
    with served(far) as url:
        far.url = url  # type: ignore[attr-defined]
        far.git("push", "-q", "origin", "main")
        _play(far, remote=True)
        far.got["served"] = _served_audit(far, url)  # type: ignore[attr-defined]
    lab.far = {  # type: ignore[attr-defined]
        "ran": far.ran,  # type: ignore[attr-defined]
        "rows": far.got_rows,  # type: ignore[attr-defined]
        "got": far.got,  # type: ignore[attr-defined]
        "passes": far.passes,  # type: ignore[attr-defined]
        "checks": far.checks,  # type: ignore[attr-defined]
    }
    return lab


def _served_audit(far: Lab, url: str) -> dict[str, Any]:
    clone = far.root / "served-clone"
    far.git("clone", "-q", "-b", "main", url, str(clone))
    result = far.cli("audit", "--json", cwd=clone)
    try:
        report = json.loads(result.stdout)
    except ValueError:
        report = {"raw": result.stdout[-600:], "stderr": result.stderr[-600:]}
    return {"rc": result.returncode, "report": report, "err": result.stderr[-600:]}


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return shared(tmp_path_factory, "r113-approve-atk113a", _build)


EXTRA = ["passes", "agent-policy-flagged", "mailmap-authors", "audit-agrees"]
IDS = [*VIDS, *[f"{v}:audit" for v in VIDS], *[f"{v}:check" for v in CHECKED], *EXTRA]
IDS += ["dat:refused", "qrk:not-on-carol"]
IDS += [f"R:{i}" for i in IDS]
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize(
    "vid", [pytest.param(i, id=i, marks=[BROKEN[i]] if i in BROKEN else []) for i in IDS]
)
def test_round113_atk113a(lab: Any, vid: str) -> None:
    if vid.startswith("R:"):  # remote mode: the same play against a served origin
        vid = vid[2:]
        far = lab.far
        lab = SimpleNamespace(
            got=far["got"], ran=far["ran"], got_rows=far["rows"], passes=far["passes"],
            checks=far["checks"],
        )  # fmt: skip
        lab.got["clone"] = lab.got["served"]
    got = lab.got
    clone = got["clone"]["report"]
    withcfg = got["withcfg"][1]
    if vid == "passes":
        bad = [p for p in lab.passes if p[1] != 0 or p[2]]
        assert not bad, bad
        return
    if vid == "agent-policy-flagged":
        for rep in (clone, withcfg):
            flagged = {
                f.get("commit")
                for f in rep.get("findings", [])
                if f.get("kind") == "policy-changed"
            }
            assert got["agent_policy"] in flagged, rep.get("findings")
        return
    if vid == "mailmap-authors":
        # the .mailmap folds Mallory into Alice: neither audit lists an approval "by Alice"
        # for mmp
        for rep in (clone, withcfg):
            blob = json.dumps([d for d in rep.get("decisions", []) if "mmp" in json.dumps(d)])
            assert ALICE[1] not in blob, blob[:1500]
        return
    if vid == "audit-agrees":
        cv = {e["plan"] for e in clone.get("executions", []) if e.get("approval_valid")}
        wv = {e["plan"] for e in withcfg.get("executions", []) if e.get("approval_valid")}
        assert cv == wv, (sorted(cv ^ wv), clone.get("findings"))
        return
    if ":" in vid:
        v, kind = vid.split(":")
        want = VIDS[v]
        if kind == "not-on-carol":
            # Carol's vote was read in pass r2 under the raised risk: ops 2 + sec 1 needed
            assert got["ran@r2"]["qrk"] == 0, (got["ran@r2"]["qrk"], lab.got_rows.get("plans/qrk"))
            return
        if kind == "refused":
            assert "E_APPROVAL_REPLAYED" in json.dumps(lab.got_rows.get(f"plans/{v}")), v
            return
        if kind == "audit":
            for name, rep in (("clone", clone), ("config", withcfg)):
                valid = valid_runs(rep, v)
                assert bool(valid) == bool(want) and len(valid) <= 1, (name, valid, want)
            return
        # check predicted the controller: the plan did not run <=> check says it would not
        told = lab.checks.get(v, {})
        row = told.get(f"plans/{v}")
        assert row is not None, told
        assert (row[0], row[1]) == CHECKED[v], (row, lab.ran[v])
        said = row[0]
        if v == "qrb":  # main was fast-forwarded: check's ``fast_forward`` is the prediction
            plans = json.loads(got["qrb_check"][1])["plans"]
            said = next(p for p in plans if p["plan"] == "plans/qrb")["fast_forward"]["outcome"]
        assert (lab.ran[v] > 0) == (said == "start"), (row, said, lab.ran[v])
        return
    want = VIDS[vid]
    row = lab.got_rows.get(f"plans/{vid}", {})
    assert lab.ran[vid] == want, (lab.ran[vid], brief(row))
