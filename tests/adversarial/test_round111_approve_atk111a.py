"""Round 111, approval and policy (atk111a): the policy in force changed under
collected votes, risk hidden in fallbacks and pinned plans, the recorded policy forged,
reverted and replaced, gates answered by a removed approver, rejections erased by history
rewrites; LOCAL and REMOTE mode (a bare repository served by ``git daemon`` on 127.0.0.1,
pushes and force-pushes over ``git://``, the branch deleted and re-created on the server).

Lab (two, built at once: ``local``, ``remote``): approvers Alice and ``*@ops.example.com``;
rules ``risk: high`` and ``plans/q*/**`` need two approvals; tools ``rec`` (medium), ``hot``
(high), ``warm`` (medium in P1). The Owner writes every plan; a pass freezes them, then the
operator switches to P2 (``warm`` high, a new ``plans/r2*/**`` count-2 rule). Rounds A-F of
commits, each followed by a ``run --once`` pass (remote: pushed first, pulled after).

- ``c1`` (control, Alice): runs once. ``hf``: ``hot`` only as a fallback step; ``hn``: a
  parent pinning ``hchild`` that calls ``hot``; ``rk``: ``warm`` raised to high after the
  freeze (Alice's approval decided under P2); Alice alone on each: never run (partial).
- ``qrm``: Alice votes, the operator removes Alice, Bob votes: partial (``qrm@bob``, 0
  calls after that pass), Carol votes: runs once, the audit names one valid start.
- ``rjr``: Alice rejects, is removed, Bob approves: the rejection stands. ``rjl``: Mallory
  (no approver) rejects, is added later, Alice approves: runs once.
- ``qpf``: the agent commits ``.plangate/policy.json`` with every count 1 and Mallory an
  approver, subject ``plangate: record policy``, ``Policy-Hash:`` of those bytes and a
  ``Controller-Seal:`` of the right shape; ``qpfb``: the same under the controller's name
  and email; Alice alone approves each: never run. ``r2``: the agent ``git revert``s the
  controller's record of P2; Alice alone: never runs.
- ``qg`` (a q plan with a gate): Alice and Bob start it, the operator removes Alice, Alice
  answers the gate (``qg@alice``: action 2 not run, refused E_APPROVER_NOT_ALLOWED), Bob
  answers: action 2 runs once; the audit: one valid start, Bob's gate valid, Alice's not.
- ``fr``/``fd``: Carol rejects, a pass reads it, then the history is rewritten without the
  rejection (remote: ``fd`` by deleting ``main`` on the server, a pass on no branch, and
  re-creating it; ``fr`` by force-push); Bob approves: never run (E_VERSION_WITHDRAWN).
  ``fr2``: the same with controller commits after the rejection copied: never runs.
- ``audit-flags``: the agent's forged record and its revert are ``policy-changed`` in a
  fresh clone's ``audit --json`` (no config); ``audit-forged-record``: no execution is judged
  by a policy the agent wrote; ``deleted``: the remote branch deletion was real and the pass
  on no branch exited without a traceback, nothing ran on the re-created branch.

Ids ``<mode>:<vid>`` (``rec`` calls of the watched tag at the end or the named pass, the
status row, and the fresh-clone audits after round D and at the end call the runs valid or
none), ``<mode>:passes``, ``<mode>:audit-flags``, ``<mode>:audit-forged-record``,
``<mode>:deleted``.

Seen (round 111, 40 ids, ~21 s wall): 0 broke, 40 held.

Noted, not a break (documented limit, "sign the controller's commits"): the ``qpfb`` look-
alike record under the controller's name and email, unsealed in truth but of the seal's
shape, is listed under the fresh-clone audit's ``policies`` as a policy the controller
recorded and gets no ``policy-changed`` finding; no execution was judged by it here (every
start names the controller's real record), and the controller never decided by it.
"""

from __future__ import annotations

import hashlib
import json
import socket
import subprocess
import sys
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
    MALLORY,
    Lab,
    brief,
    build_all,
    plan_text,
    valid_runs,
)

OWNER = ("Owner", "owner@example.com")
BOTID = ("plangate", "plangate@localhost")
MODES = ["local", "remote"]
ALICE_E, MALLORY_E = ALICE[1], MALLORY[1]


def _config(lab: Lab, url: str, approvers: list[str], p2: bool) -> None:
    """The operator's config: P1 (``warm`` medium, no ``r2`` rule) or P2 (``warm`` high, the
    ``plans/r2*/**`` rule); ``approvers`` as given."""
    rec = json.dumps([sys.executable, str(lab.recorder), "{tag}"])
    env = f"env: {{REC_LOG: {json.dumps(str(lab.log))}}}"
    where = (
        f"remote: {{url: {json.dumps(url)}, branch: main, poll_interval: 0.2}}\n"
        if url
        else f"repo: {lab.repo}\n"
    )
    rules = "    - match: {risk: high}\n      require: [{count: 2}]\n"
    rules += '    - match: {paths: ["plans/q*/**"]}\n      require: [{count: 2}]\n'
    if p2:
        rules += '    - match: {paths: ["plans/r2*/**"]}\n      require: [{count: 2}]\n'
    lab.config.write_text(
        where + f"state_dir: {lab.state}\n"
        "identity: {name: plangate, email: plangate@localhost}\n"
        "approval:\n"
        f"  approvers: {json.dumps(approvers)}\n"
        "  rules:\n" + rules + "tools:\n"
        f"  rec: {{kind: exec, argv: {rec}, {env}}}\n"
        f"  hot: {{kind: exec, argv: {rec}, {env}, risk: high}}\n"
        f"  warm: {{kind: exec, argv: {rec}, {env}, risk: {'high' if p2 else 'medium'}}}\n"
        "  echo: {kind: echo}\n"
    )


def _gate(slug: str) -> str:
    return f"""\
  - id: 2
    tool: rec
    why: "step 2 of {slug}"
    requires_approval: true
    params:
      tag: "{slug}-2"
"""


def _fallback(slug: str) -> str:
    # the fallback's tool alone makes the plan high risk, whether or not it ever runs
    return plan_text(slug).replace(
        "available_tools:\n  - name: rec\n",
        "available_tools:\n  - name: rec\n  - name: hot\n",
    ) + (
        "    on_failure: fallback\n"
        "    fallback:\n"
        f'      - {{id: "1.1", tool: hot, why: "fallback of {slug}",\n'
        f'          params: {{tag: "{slug}-fb"}}}}\n'
    )


def _uses(slug: str, tool: str) -> str:
    return (
        plan_text(slug)
        .replace("- name: rec", f"- name: {tool}")
        .replace("tool: rec", f"tool: {tool}")
    )


def _nested(slug: str, child: str, digest: str) -> str:
    return (
        f'plan:\n  name: "{slug}"\n  task: "parent {slug}"\n  status: pending_approval\n'
        "available_tools:\n  - name: rec\n"
        "actions:\n"
        f'  - id: 1\n    tool: rec\n    why: "first of {slug}"\n    params:\n      tag: "{slug}"\n'
        f'  - id: 2\n    plan: {{path: plans/{child}, hash: "{digest}"}}\n'
        f'    why: "the child {child}"\n'
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _policy_bytes(lab: Lab, edit: Any) -> bytes:
    path = lab.repo / ".plangate" / "policy.json"
    data = json.loads(path.read_text())
    edit(data)
    raw = json.dumps(data, sort_keys=True, separators=(",", ":")).encode()
    path.write_bytes(raw)
    return raw


def _lower_q(data: dict[str, Any]) -> None:
    for rule in data["approval"]["rules"]:
        for req in rule["require"]:
            req["count"] = 1
    data["approval"]["approvers"].append(MALLORY_E)


def _forge_record(lab: Lab, who: tuple[str, str], slug: str) -> str:
    raw = _policy_bytes(lab, _lower_q)
    seal = hashlib.sha256(f"forged {slug}".encode()).hexdigest()
    digest = "sha256:" + hashlib.sha256(raw).hexdigest()
    lab.git("add", "-A")
    msg = f"plangate: record policy\n\nPolicy-Hash: {digest}\nController-Seal: {seal}\n"
    lab.git("commit", "-q", "-m", msg, who=who)
    return lab.head()


VIDS: dict[str, tuple[str, int]] = {
    # vid -> (tag counted, calls wanted at the end)
    "c1": ("c1", 1),
    "hf": ("hf", 0),  # high-risk tool only in a fallback step: Alice alone
    "hn": ("hn", 0),  # high-risk tool only in a pinned child: Alice alone on the parent
    "rk": ("rk", 0),  # tool's risk raised by the operator after the freeze: Alice alone
    "qrm": ("qrm", 1),  # Alice votes, Alice removed, Bob votes (partial), Carol votes (runs)
    "qrm@bob": ("qrm", 0),  # ...not before Carol's vote
    "rjr": ("rjr", 0),  # Alice rejects, then is removed; Bob approves: the rejection stands
    "rjl": ("rjl", 1),  # Mallory rejects (no approver), is added later; Alice approves: runs
    "qpf": ("qpf", 0),  # agent's sealed look-alike record lowering the quorum; Alice alone
    "qpfb": ("qpfb", 0),  # the same under the controller's name and email
    "r2": ("r2", 0),  # P2's rule; the agent reverts P2's record commit; Alice alone
    "qg": ("qg-2", 1),  # Alice+Bob start; Alice removed; Alice answers the gate; Bob does
    "qg@alice": ("qg-2", 0),  # ...action 2 not on Alice's answer
    "fr": ("fr", 0),  # Alice rejects; the rejection erased by a force-push; Bob approves
    "fd": ("fd", 0),  # the same through a deleted and re-created branch
    "fr2": ("fr2", 0),  # Alice rejects; erased by reset after a pass with later commits
}
SLUGS = ["c1", "hf", "hchild", "rk", "qrm", "rjr", "rjl", "qpf", "qpfb", "r2", "qg"]
SLUGS += ["fr", "fd", "fr2"]


def _text(slug: str) -> str:
    if slug == "hf":
        return _fallback(slug)
    if slug == "hchild":
        return _uses(slug, "hot")
    if slug == "rk":
        return _uses(slug, "warm")
    if slug == "qg":
        return plan_text(slug, extra_actions=_gate(slug))
    return plan_text(slug)


def _build(root: Path, mode: str) -> Lab:
    lab = Lab(root)
    url = ""
    daemon = None
    approvers = [ALICE_E, "*@ops.example.com"]
    for slug in SLUGS:
        lab.write(slug, _text(slug))
    lab.commit("owner: plans", OWNER)
    if mode == "remote":
        served = root / "served"
        served.mkdir()
        subprocess.run(
            ["git", "clone", "-q", "--bare", str(lab.repo), str(served / "plans.git")], check=True
        )
        subprocess.run(
            ["git", "-C", str(served / "plans.git"), "config", "receive.denyDeleteCurrent",
             "ignore"], check=True,
        )  # fmt: skip
        port = _free_port()
        daemon = subprocess.Popen(
            ["git", "daemon", "--reuseaddr", "--export-all", "--enable=receive-pack",
             f"--base-path={served}", "--listen=127.0.0.1", f"--port={port}", str(served)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        url = f"git://127.0.0.1:{port}/plans.git"
        lab.git("remote", "add", "origin", url)
        for _ in range(100):
            if subprocess.run(["git", "ls-remote", url], capture_output=True).returncode == 0:
                break
            time.sleep(0.1)
    passes: list[tuple[str, int, bool, str]] = []
    got: dict[str, Any] = {}
    try:
        _config(lab, url, approvers, p2=False)

        def step(phase: str, force: bool = False) -> None:
            if url:
                lab.git("push", "-q", *(["--force"] if force else []), "origin", "HEAD:main")
            res = lab.run(check=False)
            passes.append((phase, res.returncode, "Traceback" in res.stderr, res.stderr[-900:]))
            if url:
                lab.git("fetch", "-q", "origin", "refs/heads/main")
                lab.git("reset", "-q", "--hard", "FETCH_HEAD")
            got[f"ran@{phase}"] = {v: len(lab.calls(t)) for v, (t, _) in VIDS.items()}
            time.sleep(1.05)

        def vote(slug: str, who: tuple[str, str], status: str = "approved") -> str:
            lab.set_status(slug, status)
            return lab.commit(f"{status} {slug}", who)

        def audit(phase: str) -> None:
            clone = root / f"fresh-{phase}"
            src = url or str(lab.repo)
            subprocess.run(["git", "clone", "-q", src, str(clone)], env=lab.env(), check=True)
            out = lab.cli("audit", "--json", cwd=clone)
            report = json.loads(out.stdout) if out.stdout.strip() else {}
            got[f"audit@{phase}"] = (out.returncode, report, out.stderr[-2000:])

        step("freeze")
        digest = lab.cli("hash", str(lab.repo / "plans/hchild/PLAN.yml")).stdout.strip()
        got["child_hash"] = digest
        lab.write("hn", _nested("hn", "hchild", digest.split()[0] if digest else ""))
        lab.commit("owner: hn parent", OWNER)
        _config(lab, url, approvers, p2=True)  # warm high, the r2 rule
        # round A
        for slug in ("c1", "hf", "rk", "qrm", "qg", "r2"):
            vote(slug, ALICE)
        vote("rjr", ALICE, "rejected")
        vote("rjl", MALLORY, "rejected")
        got["forge_agent"] = _forge_record(lab, AGENT, "qpf")
        vote("qpf", ALICE)
        got["forge_bot"] = _forge_record(lab, BOTID, "qpfb")
        vote("qpfb", ALICE)
        step("a")
        # round B
        rec2 = [
            r[0]
            for r in lab.log_rows("%H%x00%an%x00%ae%x00%s%x00%B%x01")
            if r[3] == "plangate: record policy"
            and r[2] == BOTID[1]
            and r[0] not in (got["forge_agent"], got["forge_bot"])
        ]
        got["records"] = rec2
        if rec2:
            res = subprocess.run(
                ["git", "revert", "--no-edit", rec2[0]], cwd=lab.repo, env=lab.env(AGENT),
                capture_output=True, text=True, check=False,
            )  # fmt: skip
            got["revert"] = (res.returncode, res.stderr[-300:])
            if res.returncode:
                lab.git("revert", "--abort", check=False)
        vote("hn", ALICE)
        vote("qg", BOB)
        vote("rjl", ALICE)
        approvers.append(MALLORY_E)
        _config(lab, url, approvers, p2=True)
        step("b")
        # round C: Alice removed
        approvers.remove(ALICE_E)
        _config(lab, url, approvers, p2=True)
        vote("qrm", BOB)
        vote("rjr", BOB)
        vote("qg", ALICE)  # the gate, answered by a removed approver
        step("c")
        # round D
        vote("qrm", CAROL)
        vote("qg", BOB)
        # the rejections to erase
        got["fr_rej"] = vote("fr", CAROL, "rejected")
        got["fd_rej"] = vote("fd", CAROL, "rejected")
        step("d")
        audit("d")
        # round E: the rejections erased from history, then approved by Bob
        rej = got["fr_rej"]
        base = lab.head(f"{rej}^")
        keep = lab.git("rev-list", "--reverse", f"{got['fd_rej']}..HEAD").split()
        lab.git("reset", "-q", "--hard", base)
        if mode == "remote":
            # fd: the branch deleted on the server, then re-created without the rejections
            lab.git("push", "-q", "origin", ":main", check=False)
            got["deleted"] = lab.git("ls-remote", "origin", "main").strip()
            res = lab.run(check=False)
            passes.append(("deleted", 0, "Traceback" in res.stderr, res.stderr[-900:]))
            got["deleted_pass"] = (res.returncode, res.stderr[-600:])
        for c in keep:
            lab.git("cherry-pick", "--allow-empty", "--keep-redundant-commits", c, who=AGENT)
        vote("fr", BOB)
        vote("fd", BOB)
        vote("fr2", CAROL, "rejected")
        step("e", force=True)
        # round F: fr2's rejection erased after a pass that read it (reset + force push)
        rej2 = lab.git("log", "-1", "--format=%H", "--grep", "^rejected fr2").strip()
        keep2 = lab.git("rev-list", "--reverse", f"{rej2}..HEAD").split()
        lab.git("reset", "-q", "--hard", f"{rej2}^")
        for c in keep2:
            lab.git("cherry-pick", "--allow-empty", "--keep-redundant-commits", c, who=AGENT)
        vote("fr2", BOB)
        step("f", force=True)
        step("last")
        audit("last")
        got["log"] = lab.git("log", "--format=%h %an <%ae> %s", "main")[:5000]
        lab.passes = passes  # type: ignore[attr-defined]
        lab.got = got  # type: ignore[attr-defined]
        lab.got_rows = lab.rows()  # type: ignore[attr-defined]
        lab.ran = {v: len(lab.calls(t)) for v, (t, _) in VIDS.items()}  # type: ignore[attr-defined]
        return lab
    finally:
        if daemon is not None:
            daemon.terminate()
            daemon.wait(timeout=180)


def _both(root: Path) -> Any:
    return build_all(root, {m: (lambda r, m=m: _build(r, m)) for m in MODES}, workers=2)


@pytest.fixture(scope="module")
def labs(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return shared(tmp_path_factory, "r111-approve-atk111a", _both)


EXTRA = ["passes", "audit-flags", "audit-forged-record", "deleted"]
IDS = [f"{m}:{v}" for m in MODES for v in [*VIDS, *EXTRA]]
BROKEN: dict[str, Any] = {}
#: the phase whose ``rec`` calls a vid is judged by (default: the end)
AT = {"qrm@bob": "c", "qg@alice": "c"}


def _starts(report: dict[str, Any], slug: str) -> list[dict[str, Any]]:
    return [e for e in report.get("executions", []) if e.get("plan") == f"plans/{slug}"]


@pytest.mark.parametrize(
    "vid", [pytest.param(i, id=i, marks=[BROKEN[i]] if i in BROKEN else []) for i in IDS]
)
def test_round111_atk111a(labs: Any, vid: str) -> None:
    mode, v = vid.split(":")
    lab = labs.got[mode]
    got = lab.got
    _rc, report, err = got["audit@d"]
    assert report, err
    last = got["audit@last"][1]
    if v == "passes":
        bad = [p for p in lab.passes if p[1] != 0 or p[2]]
        assert not bad, bad
        assert got.get("revert", (0,))[0] == 0, got.get("revert")
        return
    if v == "audit-flags":
        # the agent's sealed look-alike record and its revert of the controller's record:
        # each a policy-changed finding, in every fresh clone
        for rep in (report, last):
            flagged = {
                f.get("commit")
                for f in rep.get("findings", [])
                if f.get("kind") == "policy-changed"
            }
            assert got["forge_agent"] in flagged, flagged
            assert len(flagged) >= 2, rep.get("findings")
        return
    if v == "audit-forged-record":
        # no execution is judged by a policy the agent wrote (count 1, Mallory an approver)
        hashes = {p.get("hash") for p in report.get("policies", [])}
        used = {e.get("policy_hash") for e in report.get("executions", [])}
        assert used <= hashes, (used, hashes)
        for slug in ("qpf", "qpfb"):
            assert not valid_runs(report, slug), _starts(report, slug)
        return
    if v == "deleted":
        if mode == "local":
            assert got.get("deleted") is None
            return
        # the branch really was deleted on the server, and the pass on no branch did not
        # crash; nothing ran after the re-created branch brought Bob's approvals
        assert got["deleted"] == "", got["deleted"]
        assert "Traceback" not in got["deleted_pass"][1], got["deleted_pass"]
        assert got["ran@e"] == got["ran@d"], (got["ran@e"], got["ran@d"])
        return
    _tag, want = VIDS[v]
    slug = v.split("@")[0]
    row = lab.got_rows.get(f"plans/{slug}", {})
    ran = got[f"ran@{AT[v]}"][v] if v in AT else lab.ran[v]
    assert ran == want, (ran, brief(row), got["log"][:2000])
    if v == "qg@alice":
        # the fresh-clone audit: one valid start (Alice and Bob), the gate answered by Alice
        # (removed by then) not valid, Bob's valid
        ex = _starts(report, "qg")
        kinds = [(e.get("approval_kind"), e.get("approver"), e.get("approval_valid")) for e in ex]
        assert ("approve", BOB[1], True) in kinds or ("approve", ALICE_E, True) in kinds, kinds
        assert not [k for k in kinds if k[0] == "gate" and k[1] == ALICE_E and k[2]], kinds
        return
    if v == "qrm@bob":
        ex = _starts(report, "qrm")
        assert len(valid_runs(report, "qrm")) == 1, ex
        return
    if v == "qg":
        kinds = [e.get("approval_kind") for e in valid_runs(report, "qg")]
        assert kinds.count("gate") == 1 and kinds.count("approve") == 1, kinds
        return
    if want:
        assert row.get("status") == "completed", brief(row)
        assert valid_runs(report, slug), (_starts(report, slug), report.get("findings"))
    else:
        assert row.get("status") not in ("completed", "executing"), brief(row)
        assert not valid_runs(report, slug), _starts(report, slug)
        assert not valid_runs(last, slug), _starts(last, slug)
