"""Round 112, approval and policy (atk112a): look-alike policy records replayed, reverted
and forged around withdrawals, unsigned ``Plan-Approved:`` trailers and tags, producers of
the exact content, a tool set changed under collected votes, gates answered by a plan's
author or a removed approver, aborts and rejections by non-approvers and authors.

Lab (one, local mode): approvers Alice, ``*@ops.example.com`` and, in P1 only, Dave;
``plans/q*/**`` needs two approvals. The Owner writes every plan (Carol writes ``gsa`` and
``gsc``); pass A freezes them and records P1; the operator removes Dave (P2), pass B
records it. Rounds C-L of commits, each followed by one ``run --once`` pass.

- ``c1`` (control): Alice approves, runs once. ``trs``: an unsigned empty commit "by
  Alice" with ``Plan-Approved: plans/trs <hash>`` on a branch the agent merges: never runs.
  ``qtrq``: Bob's status vote plus such a trailer "by Carol": partial. ``tgd``: an
  annotated tag by Alice with the trailer: nothing.
- ``qbrv``: Bob edits the plan and ``git revert``s it (so he produced the exact frozen
  content), Alice and Bob vote: never runs; ``qbrvc`` (control): Carol votes instead: runs.
- ``qats``: Alice votes, the agent adds ``echo`` to ``available_tools``, Bob votes: partial.
- ``gsa``: Carol's plan, Alice starts it, Carol answers the gate: step 2 never runs;
  ``gsc`` (control): Bob answers: runs. ``dgt``: Dave (removed) answers a gate after the
  agent replayed the P1 record: step 2 never runs.
- ``gco``: Mallory's approval with ``Co-authored-by: Alice``: never runs. ``qpcm``: Alice
  edits ``.plangate/policy.json`` to add Mallory, Bob and Mallory vote: partial. ``qpm``:
  Alice votes, then sets ``approved`` again on a branch Mallory merges: partial.
- ``aut``: the Owner (author) rejects, Alice approves: never runs. ``mrj``: Mallory rejects
  (ignored), Alice approves: runs. ``mab``: Mallory aborts a paused run (ignored), Bob
  answers: runs. ``oab``: the Owner aborts it, Bob answers: never runs.
- Dave (removed in P2) rejects after P1's exact bytes come back in ``.plangate/policy.json``,
  then Alice approves; the controller ignores Dave each time and runs the plan: ``drj``
  (control, no bytes back), ``xpr`` (the agent's plain commit), ``zpr`` (the agent's
  ``git revert`` of the controller's last record), ``ypr`` (Dave's rejecting commit writes
  them), ``rpc`` (the P1 record commit replayed, author plangate, committer the agent),
  ``wpr`` (on a side branch Bob merges: the merge's rejection is Bob's, an approver: the plan
  stays rejected), ``xpl`` (Dave approves after the plain bytes: never runs); ``rpl``: the
  P1 record commit replayed under the controller's full identity (seal copied), Dave
  approves: never runs.
- ``rpr`` / ``rpf`` / ``rpg``: the P1 record replayed under the controller's full identity
  (``rpr``, ``rpg``: ``git checkout <P1 record> -- .plangate/policy.json`` and the record's
  message, seal and all; ``rpf``: a made-up ``Controller-Seal:`` of the right shape), then
  Dave rejects (``rpr``, ``rpf``) or aborts a paused run (``rpg``); Alice approves (Bob
  answers the gate). The controller ignores Dave and runs each plan once.

Ids: ``<vid>`` (``rec`` calls of the vid's tag at the end), ``<vid>:audit`` (the fresh-clone
``audit --json``, no config, and ``audit --json --config`` agree: the runs valid, or none;
a gate id counts valid gate starts), ``<r>:clone`` and ``<r>:config`` for the three look-alike
records, ``passes``, ``replay-flagged`` (``controller-unexplained`` in ``audit --config``),
``alice-policy-flagged`` (``policy-changed`` in both audits), ``audit-agrees``.

Seen (round 112, 64 ids, ~6 s wall): 3 broke (one class, replayed-record-withdrawal), 61
held. Fixed the same session: ``audit --config`` reads a record commit its state directory's
record of the controller's commits lacks as anyone's (flagged, never in force), as the
controller does; the three ids pass, and ``audit-agrees`` compares the audits outside them.

Break, replayed-record-withdrawal (``rpr:config``, ``rpf:config``, ``rpg:config``): after
the controller recorded P2 (Dave removed), the agent commits as ``plangate
<plangate@localhost>`` ``git checkout <P1 record> -- .plangate/policy.json`` with the P1
record's message (``plangate: record policy``, its ``Policy-Hash:`` and ``Controller-Seal:``;
or any 64-hex seal), and Dave sets ``rejected`` (or ``aborted`` on a paused run). The
controller ignores Dave (its record lacks the look-alike) and runs the plan on Alice's
approval. ``plangate audit --json --config plangate.yml``, which knows the controller's
commits and flags the look-alike ``controller-unexplained`` itself, still lists Dave's
rejection under ``decisions``, flags Alice's approval ``illegal`` (from ``rejected``) and the
controller's honest start ``start-without-approval`` (``rpg``: also ``started-twice``):
withdrawals are judged by a policy the controller never recorded, so the audit's verdicts
differ from the controller's. The look-alike is not listed under ``policies``. The
fresh-clone audit does the same; by git alone a seal-shaped line is the documented limit
("Commits under the controller's name read by git alone"), so its ids assert only that the
look-alike is never listed as a recorded policy (held).

Noted, not counted (may be the same git-alone limit): with the same replay and Dave's
rejection read by a pass (the status row ``pending_approval``), ``plangate check --config
plangate.yml --base main --head <Alice's approval branch> --as alice@example.com`` reported
the plan ``status: rejected``, ``outcome: none``, while merging that branch made the
controller run it (``check`` scans history into its own in-memory index, by git alone).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from test_round2_execution_kit import shared

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
DAVE = ("Dave", "dave@example.com")


def _config(lab: Lab, dave: bool) -> None:
    """P1 (Dave an approver) or P2 (Dave removed); ``plans/q*/**`` needs two approvals."""
    rec = json.dumps([sys.executable, str(lab.recorder), "{tag}"])
    env = f"env: {{REC_LOG: {json.dumps(str(lab.log))}}}"
    approvers = ["alice@example.com", "*@ops.example.com"] + (["dave@example.com"] if dave else [])
    lab.config.write_text(
        f"repo: {lab.repo}\nstate_dir: {lab.state}\n"
        "identity: {name: plangate, email: plangate@localhost}\n"
        "approval:\n"
        f"  approvers: {json.dumps(approvers)}\n"
        "  rules:\n"
        '    - match: {paths: ["plans/q*/**"]}\n      require: [{count: 2}]\n'
        "tools:\n"
        f"  rec: {{kind: exec, argv: {rec}, {env}}}\n"
        "  echo: {kind: echo}\n"
    )


def _gate(slug: str) -> str:
    return plan_text(slug) + (
        f'  - id: 2\n    tool: rec\n    why: "step 2 of {slug}"\n    requires_approval: true\n'
        f'    params:\n      tag: "{slug}-2"\n'
    )


#: vid -> (tag counted, calls wanted at the end)
VIDS: dict[str, tuple[str, int]] = {
    "c1": ("c1", 1),  # control: Alice approves
    "trs": ("trs", 0),  # unsigned Plan-Approved trailer "by Alice" merged by the agent
    "qtrq": ("qtrq", 0),  # Bob's status vote + unsigned trailer "by Carol": quorum 2
    "qbrv": ("qbrv", 0),  # Bob edits and reverts (produces the exact content); Alice+Bob
    "qbrvc": ("qbrvc", 1),  # control: Bob edits and reverts; Alice+Carol
    "qats": ("qats", 0),  # Alice votes; the agent adds a tool to available_tools; Bob votes
    "gsa": ("gsa-2", 0),  # Carol's plan; Alice starts it; Carol answers the gate
    "gsa@1": ("gsa", 1),
    "gsc": ("gsc-2", 1),  # control: Carol's plan; Bob answers the gate
    "gco": ("gco", 0),  # Mallory's approval with Co-authored-by: Alice
    "rpl": ("rpl", 0),  # a genuine P1 record replayed by the agent; Dave (removed) approves
    "rpr": ("rpr", 1),  # same push: Dave rejects; Alice approves later: runs
    "tgd": ("tgd", 0),  # an annotated tag by "Alice" with Plan-Approved
    "qpcm": ("qpcm", 0),  # Alice's own edit of policy.json adds Mallory; Bob + Mallory
    "aut": ("aut", 0),  # the Owner (author) rejects; Alice approves
    "mrj": ("mrj", 1),  # Mallory rejects (ignored); Alice approves
    "mab": ("mab-2", 1),  # paused: Mallory's abort ignored; Bob answers the gate
    "oab": ("oab-2", 0),  # paused: the Owner (author) aborts; Bob answers the gate
    "dgt": ("dgt-2", 0),  # paused; Dave (removed) answers the gate after the replay
    "qpm": ("qpm", 0),  # Alice's vote, then Alice's second vote on a branch Mallory merges
    "drj": ("drj", 1),  # control: Dave (removed, P2 recorded) rejects; Alice approves
    "xpr": ("xpr", 1),  # the agent's PLAIN commit of P1's bytes; Dave rejects; Alice approves
    "zpr": ("zpr", 1),  # the agent reverts the controller's last record; Dave rejects; Alice
    "ypr": ("ypr", 1),  # Dave's rejection commit itself restores P1's bytes; Alice approves
    # P1's bytes + Dave's rejection on a branch Bob (approver) merges: Dave's, not Bob's
    # (round 120: a merged commit's rejection is its maker's; before, 0 as Bob's)
    "wpr": ("wpr", 1),
    "rpf": ("rpf", 1),  # a record under the controller's name, P1's bytes, a MADE-UP seal;
    # Dave rejects; Alice approves
    "rpc": ("rpc", 1),  # the P1 record replayed, author plangate, committer the agent
    "rpg": ("rpg-2", 1),  # paused; the P1 record replayed (seal copied); Dave aborts; Bob gate
    "xpl": ("xpl", 0),  # the agent's plain P1 bytes; Dave approves (removed): never runs
}
GATED = {"gsa", "gsc", "mab", "oab", "dgt", "rpg"}
PLANS = ["c1", "trs", "qtrq", "qbrv", "qbrvc", "qats", "gsa", "gsc", "gco", "rpl", "rpr"]
PLANS += ["tgd", "qpcm", "aut", "mrj", "mab", "oab", "dgt", "qpm", "drj", "xpr", "zpr"]
PLANS += ["ypr", "wpr", "xpl", "rpf", "rpg", "rpc"]


def _hash(lab: Lab, slug: str) -> str:
    return str(lab.plan(slug)["frozen"]["hash"])


def _trailer_merge(lab: Lab, slug: str, who: tuple[str, str], branch: str) -> None:
    lab.branch(branch)
    msg = f"approve {slug}\n\nPlan-Approved: plans/{slug} {_hash(lab, slug)}\n"
    lab.git("commit", "-q", "--allow-empty", "-m", msg, who=who)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", f"merge {branch}", branch, who=AGENT)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    got: dict[str, Any] = {}
    lab.got = got  # type: ignore[attr-defined]
    passes: list[tuple[str, int, bool, str]] = []
    lab.passes = passes  # type: ignore[attr-defined]

    def step(phase: str) -> None:
        res = lab.run(check=False)
        passes.append((phase, res.returncode, "Traceback" in res.stderr, res.stderr[-900:]))
        got[f"log@{phase}"] = lab.log.read_text() if lab.log.exists() else ""

    _config(lab, dave=True)
    for slug in PLANS:
        if slug in ("gsa", "gsc"):
            continue
        lab.write(slug, _gate(slug) if slug in GATED else plan_text(slug))
    lab.commit("owner: plans", OWNER)
    for slug in ("gsa", "gsc"):
        lab.write(slug, _gate(slug))
    lab.commit("carol: plans", CAROL)
    step("a")
    rows = lab.log_rows("%H%x00%an%x00%ae%x00%s%x00%B%x01")
    p1 = [r for r in rows if r[2] == BOT[1] and r[3].startswith("plangate: record policy")]
    got["p1"] = p1[0][0] if p1 else ""
    _config(lab, dave=False)
    step("b")

    # -- C ------------------------------------------------------------------------------
    lab.approve("c1", ALICE)
    _trailer_merge(lab, "trs", ALICE, "tr-alice")
    lab.approve("qtrq", BOB)
    _trailer_merge(lab, "qtrq", CAROL, "tr-carol")
    for slug in ("qbrv", "qbrvc"):
        lab.write(slug, lab.read(slug).replace(f'tag: "{slug}"', f'tag: "{slug}-x"'))
        sha = lab.commit(f"bob: tweak {slug}", BOB)
        lab.git("revert", "--no-edit", sha, who=BOB)
    lab.approve("qats", ALICE)
    for slug in ("gsa", "gsc", "mab", "oab", "dgt", "rpg"):
        lab.approve(slug, ALICE)
    lab.set_status("gco", "approved")
    lab.git("add", "-A")
    lab.git(
        "commit", "-q", "-m", "approve gco\n\nCo-authored-by: Alice <alice@example.com>\n",
        who=MALLORY,
    )  # fmt: skip
    lab.git(
        "tag", "-a", "approve-tgd", "-m",
        f"approve tgd\n\nPlan-Approved: plans/tgd {_hash(lab, 'tgd')}\n", who=ALICE,
    )  # fmt: skip
    lab.approve("qpcm", BOB)
    pol = lab.repo / ".plangate" / "policy.json"
    data = json.loads(pol.read_text())
    data["approval"]["approvers"].append(MALLORY[1])
    pol.write_text(json.dumps(data, sort_keys=True, separators=(",", ":")))
    got["alice_policy"] = lab.commit("alice: let mallory approve", ALICE)
    lab.set_status("aut", "rejected")
    lab.commit("owner: reject aut", OWNER)
    lab.set_status("mrj", "rejected")
    lab.commit("mallory: reject mrj", MALLORY)
    lab.approve("qpm", ALICE)
    lab.set_status("drj", "rejected")
    lab.commit("dave: reject drj", DAVE)
    step("c")

    # -- D ------------------------------------------------------------------------------
    # the agent replays the controller's genuine P1 record (Dave an approver), seal and all
    if got["p1"]:
        msg = lab.git("log", "-1", "--format=%B", got["p1"])
        lab.git("checkout", got["p1"], "--", ".plangate/policy.json")
        lab.git("add", "-A")
        lab.git("commit", "-q", "--allow-empty", "-m", msg, who=BOT)
        got["replay"] = lab.head()
    lab.approve("rpl", DAVE)
    lab.set_status("rpr", "rejected")
    lab.commit("dave: reject rpr", DAVE)
    lab.approve("dgt", DAVE)
    for slug in ("qbrv", "qbrvc"):
        lab.approve(slug, ALICE)
    text = lab.read("qats").replace("  - name: rec\n", "  - name: rec\n  - name: echo\n", 1)
    lab.write("qats", text)
    lab.commit("agent: qats may echo", AGENT)
    lab.approve("gsa", CAROL)
    lab.approve("gsc", BOB)
    lab.approve("qpcm", MALLORY)
    lab.approve("aut", ALICE)
    lab.approve("mrj", ALICE)
    lab.set_status("mab", "aborted")
    lab.commit("mallory: abort mab", MALLORY)
    lab.set_status("oab", "aborted")
    lab.commit("owner: abort oab", OWNER)
    # qpm: Alice's vote counted (partial); a branch where Alice and Bob each set approved,
    # merged by Bob: one new person
    lab.branch("qpm-votes")
    lab.approve("qpm", ALICE, "alice: approve qpm again")
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge qpm votes", "qpm-votes", who=MALLORY)
    step("d")

    # -- E ------------------------------------------------------------------------------
    lab.approve("rpr", ALICE)
    lab.approve("qbrv", BOB)
    lab.approve("qbrvc", CAROL)
    lab.approve("qats", BOB)
    lab.approve("mab", BOB)
    lab.approve("oab", BOB)
    lab.approve("drj", ALICE)
    # xpr, xpl: the agent's plain commit of P1's exact bytes (Dave an approver), then Dave
    p1_bytes = lab.git("show", f"{got['p1']}:.plangate/policy.json") if got["p1"] else ""
    pol.write_text(p1_bytes)
    got["xreplay"] = lab.commit("agent: the old policy back", AGENT)
    lab.set_status("xpr", "rejected")
    lab.commit("dave: reject xpr", DAVE)
    lab.approve("xpl", DAVE)
    step("e")

    # -- F ------------------------------------------------------------------------------
    lab.approve("xpr", ALICE)
    rows = lab.log_rows("%H%x00%an%x00%ae%x00%s%x00%B%x01")
    last = [r for r in rows if r[2] == BOT[1] and r[3].startswith("plangate: record policy")]
    got["last_record"] = last[0][0] if last else ""
    if last:
        lab.git("revert", "--no-edit", last[0][0], who=AGENT)
    got["zreplay"] = lab.head()
    lab.set_status("zpr", "rejected")
    lab.commit("dave: reject zpr", DAVE)
    step("f")

    # -- G ------------------------------------------------------------------------------
    lab.approve("zpr", ALICE)
    pol.write_text(p1_bytes)
    lab.set_status("ypr", "rejected")
    got["yreplay"] = lab.commit("dave: reject ypr (and the old policy)", DAVE)
    lab.branch("wpr-side")
    pol.write_text(p1_bytes)
    lab.commit("agent: old policy on a side", AGENT)
    lab.set_status("wpr", "rejected")
    lab.commit("dave: reject wpr", DAVE)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge wpr-side", "wpr-side", who=BOB)
    step("g")

    # -- H ------------------------------------------------------------------------------
    lab.approve("ypr", ALICE)
    lab.approve("wpr", ALICE)
    pol.write_text(p1_bytes)
    lab.git("add", "-A")
    digest = "sha256:" + hashlib.sha256(p1_bytes.encode()).hexdigest()
    seal = hashlib.sha256(b"made up").hexdigest()
    lab.git(
        "commit", "-q", "--allow-empty", "-m",
        f"plangate: record policy\n\nPolicy-Hash: {digest}\nController-Seal: {seal}\n",
        who=BOT,
    )  # fmt: skip
    got["freplay"] = lab.head()
    lab.set_status("rpf", "rejected")
    lab.commit("dave: reject rpf", DAVE)
    step("h")

    # -- I ------------------------------------------------------------------------------
    lab.approve("rpf", ALICE)
    lab.git("checkout", got["p1"], "--", ".plangate/policy.json")
    lab.git("add", "-A")
    lab.git("commit", "-q", "--allow-empty", "-m", msg, who=BOT)
    got["greplay"] = lab.head()
    lab.set_status("rpg", "aborted")
    lab.commit("dave: abort rpg", DAVE)
    step("i")

    # -- J ------------------------------------------------------------------------------
    lab.approve("rpg", BOB)
    lab.git("checkout", got["p1"], "--", ".plangate/policy.json")
    lab.git("add", "-A")
    env = {"GIT_AUTHOR_NAME": BOT[0], "GIT_AUTHOR_EMAIL": BOT[1]}
    lab.extra_env = env  # type: ignore[attr-defined]
    lab.git("commit", "-q", "--allow-empty", "-m", msg, who=AGENT)
    lab.extra_env = {}  # type: ignore[attr-defined]
    got["creplay"] = lab.head()
    got["creplay_who"] = lab.git("log", "-1", "--format=%ae %ce")
    lab.set_status("rpc", "rejected")
    lab.commit("dave: reject rpc", DAVE)
    step("j")

    # -- K ------------------------------------------------------------------------------
    lab.approve("rpc", ALICE)
    step("k")
    step("l")

    ran: dict[str, int] = {v: len(lab.calls(tag)) for v, (tag, _w) in VIDS.items()}
    lab.ran = ran  # type: ignore[attr-defined]
    lab.got_rows = lab.rows()  # type: ignore[attr-defined]
    got["clone"] = clone_audit_got(lab, root)
    rc, rep = lab.audit(config=lab.config)
    got["withcfg"] = (rc, rep)
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return shared(tmp_path_factory, "r112-approve-atk112a", _build)


EXTRA = ["passes", "replay-flagged", "alice-policy-flagged", "audit-agrees"]
#: the look-alike records under the controller's name (P1's bytes: Dave an approver) and the
#: commit each vid's withdrawal followed
REPLAYED = {"rpr": "replay", "rpf": "freplay", "rpg": "greplay"}
AUDITED = [v for v in VIDS if "@" not in v and v not in REPLAYED]
IDS = [*VIDS, *[f"{v}:audit" for v in AUDITED]]
IDS += [f"{v}:{k}" for v in REPLAYED for k in ("clone", "config")] + EXTRA
BROKEN: dict[str, Any] = {}  # the three ``:config`` breaks, fixed the same session


def _starts(report: dict[str, Any], slug: str) -> list[dict[str, Any]]:
    return [e for e in report.get("executions", []) if e.get("plan") == f"plans/{slug}"]


def _judged(name: str, rep: dict[str, Any], v: str) -> None:
    _tag, want = VIDS[v]
    valid = valid_runs(rep, v)
    if v in GATED:
        gates = [e for e in valid if e.get("approval_kind") == "gate"]
        assert len(gates) == want, (name, _starts(rep, v), rep.get("findings"))
    elif want:
        assert valid, (name, _starts(rep, v), rep.get("findings"))
    else:
        assert not valid, (name, _starts(rep, v))


@pytest.mark.parametrize(
    "vid", [pytest.param(i, id=i, marks=[BROKEN[i]] if i in BROKEN else []) for i in IDS]
)
def test_round112_atk112a(lab: Any, vid: str) -> None:
    got = lab.got
    clone = got["clone"]["report"]
    withcfg = got["withcfg"][1]
    if vid == "passes":
        bad = [p for p in lab.passes if p[1] != 0 or p[2]]
        assert not bad, bad
        assert got["p1"] and got.get("replay"), got.get("p1")
        return
    if vid == "replay-flagged":
        # the look-alike records are not the controller's: audit --config (its record) says so
        flagged = {
            f.get("commit")
            for f in withcfg.get("findings", [])
            if f.get("kind") == "controller-unexplained"
        }
        for key in REPLAYED.values():
            assert got[key] in flagged, (key, withcfg.get("findings"))
        return
    if vid == "alice-policy-flagged":
        for rep in (clone, withcfg):
            flagged = {
                f.get("commit")
                for f in rep.get("findings", [])
                if f.get("kind") == "policy-changed"
            }
            for key in ("alice_policy", "xreplay", "zreplay", "yreplay"):
                assert got[key] in flagged, (key, rep.get("findings"))
        return
    if vid == "audit-agrees":
        # the look-alike records aside: by git alone a seal of the right shape is taken at
        # its word (the documented limit), with the controller's record they are nobody's
        limit = {f"plans/{v}" for v in REPLAYED}
        cv = {e["plan"] for e in clone.get("executions", []) if e.get("approval_valid")}
        wv = {e["plan"] for e in withcfg.get("executions", []) if e.get("approval_valid")}
        assert cv - limit == wv - limit, (sorted(cv ^ wv), clone.get("findings"))
        assert limit <= wv, sorted(wv)  # each run on Alice's (or Bob's) approval: valid
        return
    if ":" in vid:
        v, kind = vid.split(":")
        if kind == "clone":
            # by git alone a seal of the right shape is taken at its word (the documented
            # limit, "Commits under the controller's name read by git alone"): what must
            # hold is that the look-alike is never listed as a policy the controller recorded
            hashes = {p.get("commit") for p in clone.get("policies", [])}
            assert got[REPLAYED[v]] not in hashes, clone.get("policies")
            return
        reps = {"audit": [("clone", clone), ("config", withcfg)], "config": [("config", withcfg)]}
        for name, rep in reps[kind]:
            _judged(name, rep, v)
        return
    _tag, want = VIDS[vid]
    slug = vid.split("@")[0]
    row = lab.got_rows.get(f"plans/{slug}", {})
    assert lab.ran[vid] == want, (lab.ran[vid], brief(row))
