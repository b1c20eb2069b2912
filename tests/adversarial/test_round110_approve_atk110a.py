"""Round 110, approval and policy (atk110a): quorum and group edge cases, identity variants of
one person, co-author trailers, approvals made before a re-freeze, the recorded policy edited
in or beside an approval, gates answered or aborted by the wrong hands, octopus and criss-cross
merges bringing votes; LOCAL and REMOTE mode (a bare repository served over ``file://``).

Lab (two, built at once: ``local``, ``remote``; approvers Alice and ``*@ops.example.com``;
groups ``ops: *@ops.example.com``, ``sec: alice, carol@ops, mallory`` (Mallory is no
approver); aliases ``plus_tags: *@ops.example.com`` and ``people: [alice, carol@ops]``;
``plans/q*/**`` need two approvals, ``plans/k*/**`` one of ops and one of sec, the rest one).
The Owner (no approver) writes the plans, the agent ``rja``, Alice ``gs`` and ``sav``'s v1;
``sa``/``sal`` are added in Owner commits with ``Co-authored-by: Alice`` (``sal``: the key
and address in other cases). A pass freezes them; rounds A, B, C of commits, each followed
by a ``run --once`` pass (remote: pushed first, pulled after), one second apart.

- controls: ``c1`` (Alice), ``qc`` (Alice, Bob), ``kok`` (Alice, Bob), ``kcb`` (Carol, who
  is in both groups, then Bob: she is placed in sec), ``oa`` (Alice's approval branch and two
  note branches octopus-merged by Bob): each runs once.
- one person twice on a quorum: ``qcase`` (``alice@EXAMPLE.com``), ``qplus``
  (``bob+x@ops``), ``qalias`` (Alice then Carol, declared one person), ``qmailto``
  (``mailto:bob@ops.example.com``), ``qco`` (Alice's vote with ``Co-authored-by: Bob``), and
  on groups ``kc1`` (Carol alone, in both groups), ``kc2`` (Carol, ``carol@OPS``), ``kac``
  (Alice, Carol), ``km`` (Alice, Mallory: a sec member who is no approver): never run.
- ``qpre``: the Owner edits to v2 and Alice votes before a pass freezes v2; Bob votes v2:
  never runs. ``qpol``: Alice's vote commit also lowers the q rule to one in
  ``.plangate/policy.json``: never runs. ``pja``: the agent adds Mallory to the file's
  approvers, Mallory approves: never runs. ``pj``: Alice's approval commit also empties the
  file's approvers: runs once, and the fresh-clone audit calls it valid.
- self-approval: ``sa``/``sal`` (co-author trailer), ``sav`` (Alice wrote v1, the Owner
  rewrote it): never run. ``rjm``: Mallory rejects (ignored), Alice approves: runs once.
  ``rja``: the agent rejects its own plan (counts), Alice approves: never runs.
- gates (action 2 ``requires_approval``): ``gs`` (Alice's plan, Bob starts, Alice answers
  the gate), ``gm`` (Mallory answers), ``gco`` (Bob answers in a commit that edits action 2),
  ``gao`` (the Owner, an author, aborts; Alice answers): action 2 never runs; ``gab``
  (Mallory aborts, ignored; Alice answers) and ``qg`` (quorum start, Carol answers): once.
- merges: ``ov`` (Bob octopus-merges the agent's v2 edit, Alice's v1 approval and a note),
  ``qo`` (the agent octopus-merges Alice's and Carol's vote branches), ``qob`` (Bob does),
  ``qx`` (Alice's and Carol's vote branches criss-crossed by the agent, merged by Bob one
  after the other): never run.
- ``claim*``: after the last pass, a commit of ``.plangate/policy.json`` changing
  ``identity.email``: the agent naming itself (``claim``, then a pass), naming Mallory
  (``claim-other``), the agent with subject ``plangate: record policy`` and no seal
  (``claim-look``), the name ``plangate <plangate@localhost>`` naming the agent
  (``claim-botname``); a fresh clone's ``audit --json`` must reach the verdicts it reached
  before that commit (``c1``, ``qc``, ``kok``, ``pj`` valid).

Ids ``<mode>:<vid>`` (``rec`` calls of the watched tag, the status row and the file agree,
and a fresh clone's ``audit --json`` without config calls the runs valid or none; for gates
one valid start and a valid gate answer only where action 2 ran), ``<mode>:passes`` (every
pass exit 0, no traceback, the policy recorded), ``<mode>:claim*``.

Seen (round 110, 76 ids, ~30 s wall): 8 broke, one class (late-policy-claim-stops-audit);
68 held.

- **late-policy-claim-stops-audit** (``{local,remote}:claim{,-other,-look,-botname}``, 8
  ids): long after the controller's sealed ``plangate: record policy`` commits, the agent
  edits ``identity.email`` in ``.plangate/policy.json`` (to ``mallory@example.com``, or to
  itself) and commits it as itself (``git commit -m "agent: policy names mallory"``, no
  seal, no trailer); ``git clone`` + ``plangate audit --json`` (no config) exits 2,
  ``E_CONFIG_INVALID: the recorded policies name more than one controller identity:
  plangate@localhost (first at ...), mallory@example.com (first at <the agent's commit>)``,
  and reports no verdict at all (before the commit: ``c1``, ``qc``, ``kok``, ``pj`` valid).
  docs/approvals.md says a policy is recorded only by the controller's sealed record commit
  ("an unsealed look-alike ... never read as the policy") and threat-model.md row 161 that
  "a version committed by anyone but the identity it names is never in force"; the
  documented refusal to guess is for a claim made before the controller's first pass. Any
  agent that can push one commit blinds every later fresh-clone audit (fail-closed: no
  false verdict; ``--controller`` or ``--config`` settles it).

Held: every quorum, group and identity-variant case; co-author trailers (neither a second
vote nor a way around self-approval); an approval before the re-freeze; policy edits in or
beside an approval (the controller decides by its config, the audit by its records); gates
answered or aborted by the wrong hands; octopus and criss-cross merges bringing votes.
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
    MALLORY,
    Lab,
    brief,
    build_all,
    plan_text,
    valid_runs,
)

OWNER = ("Owner", "owner@example.com")
POLICY = """\
groups:
  ops: ["*@ops.example.com"]
  sec: ["alice@example.com", "carol@ops.example.com", "mallory@example.com"]
identity_aliases:
  plus_tags: ["*@ops.example.com"]
  people: [["alice@example.com", "carol@ops.example.com"]]
rules:
  - match: {paths: ["plans/q*/**"]}
    require: [{count: 2}]
  - match: {paths: ["plans/k*/**"]}
    require: [{group: ops, count: 1}, {group: sec, count: 1}]
"""
#: vid -> (slug, tag counted, calls wanted); a gate plan's ``<slug>-2`` is its gated action
VIDS: dict[str, tuple[str, str, int]] = {
    "c1": ("c1", "c1", 1),
    "qc": ("qc", "qc", 1),
    "qcase": ("qcase", "qcase", 0),
    "qplus": ("qplus", "qplus", 0),
    "qalias": ("qalias", "qalias", 0),
    "qmailto": ("qmailto", "qmailto", 0),
    "qco": ("qco", "qco", 0),
    "qpre": ("qpre", "qpre", 0),
    "qpol": ("qpol", "qpol", 0),
    "kc1": ("kc1", "kc1", 0),
    "kc2": ("kc2", "kc2", 0),
    "km": ("km", "km", 0),
    "kok": ("kok", "kok", 1),
    "kcb": ("kcb", "kcb", 1),
    "kac": ("kac", "kac", 0),
    "pj": ("pj", "pj", 1),
    "pja": ("pja", "pja", 0),
    "sa": ("sa", "sa", 0),
    "sal": ("sal", "sal", 0),
    "sav": ("sav", "sav", 0),
    "rjm": ("rjm", "rjm", 1),
    "rja": ("rja", "rja", 0),
    "gs": ("gs", "gs-2", 0),
    "gm": ("gm", "gm-2", 0),
    "gab": ("gab", "gab-2", 1),
    "gao": ("gao", "gao-2", 0),
    "qg": ("qg", "qg-2", 1),
    "gco": ("gco", "gco-2", 0),
    "oa": ("oa", "oa", 1),
    "ov": ("ov", "ov", 0),
    "qo": ("qo", "qo", 0),
    "qob": ("qob", "qob", 0),
    "qx": ("qx", "qx", 0),
}
GATED = {"gs", "gm", "gab", "gao", "qg", "gco"}
MODES = ["local", "remote"]
#: a later agent commit of the policy file: (key, its author, the identity it names, subject)
CLAIMS = [
    ("other", AGENT, "mallory@example.com", "agent: policy names mallory"),
    ("look", AGENT, "agent@example.com", "plangate: record policy"),
    ("botname", ("plangate", "plangate@localhost"), "agent@example.com", "agent: policy"),
]


def _gate(slug: str) -> str:
    return f"""\
  - id: 2
    tool: rec
    why: "step 2 of {slug}"
    requires_approval: true
    params:
      tag: "{slug}-2"
"""


def _text(slug: str) -> str:
    return plan_text(slug, extra_actions=_gate(slug) if slug in GATED else "")


def _v2(lab: Lab, slug: str, who: tuple[str, str] = OWNER) -> str:
    lab.write(slug, lab.read(slug).replace(f'tag: "{slug}"', f'tag: "{slug}"\n      v: 2'))
    return lab.commit(f"{who[0].lower()}: {slug} v2", who)


def _policy(lab: Lab, edit: Any) -> None:
    path = lab.repo / ".plangate" / "policy.json"
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data, sort_keys=True, separators=(",", ":")))


def _vote(
    lab: Lab, slug: str, who: tuple[str, str], status: str = "approved", msg: str = ""
) -> str:
    lab.set_status(slug, status)
    return lab.commit(msg or f"{status} {slug}", who)


def _build(root: Path, mode: str) -> Lab:
    lab = Lab(root, approval=POLICY)
    lab.write("rja", _text("rja"))
    lab.commit("agent: rja", AGENT)
    lab.write("gs", _text("gs"))
    lab.write("sav", _text("sav"))
    lab.commit("alice: gs and sav v1", ALICE)
    lab.write("sav", _text("sav").replace("attack variant sav", "sav rewritten by the owner"))
    lab.write("sa", _text("sa"))
    lab.commit("owner: sav v2, sa\n\nCo-authored-by: Alice <alice@example.com>", OWNER)
    lab.write("sal", _text("sal"))
    lab.commit("owner: sal\n\nco-authored-by: ALICE <Alice@Example.COM>", OWNER)
    for slug, _, _ in VIDS.values():
        if slug not in ("rja", "gs", "sav", "sa", "sal"):
            lab.write(slug, _text(slug))
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
        time.sleep(1.05)

    def side(name: str, slug: str, who: tuple[str, str], status: str = "approved") -> None:
        lab.branch(name)
        _vote(lab, slug, who, status)
        lab.git("checkout", "-q", "main")

    def notes(name: str) -> None:
        lab.branch(name)
        lab.note(name)
        lab.git("checkout", "-q", "main")

    step("freeze")
    got["policy_file"] = (lab.repo / ".plangate" / "policy.json").exists()
    # round A
    _vote(lab, "c1", ALICE)
    _vote(lab, "qc", ALICE)
    _vote(lab, "qcase", ALICE)
    _vote(lab, "qplus", BOB)
    _vote(lab, "qalias", ALICE)
    _vote(lab, "qmailto", BOB)
    _vote(lab, "qco", ALICE, msg="approve qco\n\nCo-authored-by: Bob <bob@ops.example.com>")
    _v2(lab, "qpre")
    _vote(lab, "qpre", ALICE)
    _policy(lab, lambda d: d["approval"]["rules"][0]["require"][0].update(count=1))
    _vote(lab, "qpol", ALICE)
    for slug, who in (("kc1", CAROL), ("kc2", CAROL), ("km", ALICE), ("kok", ALICE)):
        _vote(lab, slug, who)
    _vote(lab, "kcb", CAROL)
    _vote(lab, "kac", ALICE)
    _policy(lab, lambda d: d["approval"]["approvers"].append("mallory@example.com"))
    lab.commit("agent: policy for mallory", AGENT)
    _vote(lab, "pja", MALLORY)
    _policy(lab, lambda d: d["approval"].update(approvers=[]))
    _vote(lab, "pj", ALICE)
    _vote(lab, "sa", ALICE)
    _vote(lab, "sal", ALICE)
    _vote(lab, "sav", ALICE)
    _vote(lab, "rjm", MALLORY, "rejected")
    _vote(lab, "rja", AGENT, "rejected")
    _vote(lab, "gs", BOB)
    for slug in ("gm", "gab", "gao", "gco"):
        _vote(lab, slug, ALICE)
    _vote(lab, "qg", ALICE)
    side("alice-oa", "oa", ALICE)
    notes("n-oa1")
    notes("n-oa2")
    lab.branch("agent-ov")
    _v2(lab, "ov", AGENT)
    lab.git("checkout", "-q", "main")
    side("alice-ov", "ov", ALICE)
    notes("n-ov")
    side("alice-qo", "qo", ALICE)
    side("carol-qo", "qo", CAROL)
    notes("n-qo")
    side("alice-qob", "qob", ALICE)
    side("carol-qob", "qob", CAROL)
    side("x", "qx", ALICE)
    side("y", "qx", CAROL)
    lab.git("checkout", "-q", "x")
    x1_base = lab.head("x")
    y0 = lab.head("y")
    lab.git("merge", "-q", "--no-ff", "-m", "merge y into x", y0, who=AGENT)
    lab.git("checkout", "-q", "y")
    lab.git("merge", "-q", "--no-ff", "-m", "merge x into y", x1_base, who=AGENT)
    lab.git("checkout", "-q", "main")
    step("a")
    # round B
    _vote(lab, "qc", BOB)
    _vote(lab, "qcase", ("Alice", "alice@EXAMPLE.com"))
    _vote(lab, "qplus", ("Bob", "bob+x@ops.example.com"))
    _vote(lab, "qalias", CAROL)
    _vote(lab, "qmailto", ("Bob", "mailto:bob@ops.example.com"))
    _vote(lab, "qpre", BOB)
    _vote(lab, "kc2", ("Carol", "carol@OPS.example.com"))
    _vote(lab, "km", MALLORY)
    _vote(lab, "kok", BOB)
    _vote(lab, "kcb", BOB)
    _vote(lab, "kac", CAROL)
    _vote(lab, "rjm", ALICE)
    _vote(lab, "rja", ALICE)
    _vote(lab, "qg", BOB)
    _vote(lab, "gs", ALICE)
    _vote(lab, "gm", MALLORY)
    _vote(lab, "gab", MALLORY, "aborted")
    _vote(lab, "gao", OWNER, "aborted")
    lab.write("gco", lab.read("gco").replace('tag: "gco-2"', 'tag: "gco-2"\n      v: 2'))
    _vote(lab, "gco", BOB)
    for refs, who, msg in (
        (["alice-oa", "n-oa1", "n-oa2"], BOB, "octopus oa"),
        (["agent-ov", "alice-ov", "n-ov"], BOB, "octopus ov"),
        (["alice-qo", "carol-qo", "n-qo"], AGENT, "octopus qo"),
        (["alice-qob", "carol-qob"], BOB, "octopus qob"),
        (["x"], BOB, "merge x"),
    ):
        res = subprocess.run(
            ["git", "merge", "-q", "--no-ff", "-m", msg, *refs],
            cwd=lab.repo, env=lab.env(who), capture_output=True, text=True, check=False,
        )  # fmt: skip
        got[f"merge:{msg}"] = (res.returncode, res.stderr[-300:])
        if res.returncode:
            lab.git("merge", "--abort", check=False)
    step("b")
    # round C
    _vote(lab, "gab", ALICE)
    _vote(lab, "gao", ALICE)
    _vote(lab, "qg", CAROL)
    res = subprocess.run(
        ["git", "merge", "-q", "--no-ff", "-m", "merge y", "y"],
        cwd=lab.repo, env=lab.env(BOB), capture_output=True, text=True, check=False,
    )  # fmt: skip
    got["merge:y"] = (res.returncode, res.stderr[-300:])
    if res.returncode:
        lab.git("merge", "--abort", check=False)
    step("c")
    step("last")

    def audit(name: str) -> tuple[int, dict[str, Any], str]:
        clone = root / name
        subprocess.run(["git", "clone", "-q", url or str(lab.repo), str(clone)], check=True)
        out = lab.cli("audit", "--json", cwd=clone)
        report = json.loads(out.stdout) if out.stdout.strip() else {}
        return out.returncode, report, out.stderr[-2000:]

    got["audit_rc"], got["report"], got["audit_err"] = audit("fresh")
    pre = lab.head()
    for key, who, email, subject in CLAIMS:
        work = root / f"work-{key}"
        subprocess.run(["git", "clone", "-q", str(lab.repo), str(work)], check=True)
        path = work / ".plangate" / "policy.json"
        data = json.loads(path.read_text())
        data["identity"]["email"] = email
        path.write_text(json.dumps(data, sort_keys=True, separators=(",", ":")))
        for args in (["add", "-A"], ["commit", "-q", "-m", subject]):
            subprocess.run(["git", *args], cwd=work, env=lab.env(who), check=True)
        clone = root / f"fresh-{key}"
        subprocess.run(["git", "clone", "-q", str(work), str(clone)], check=True)
        out = lab.cli("audit", "--json", cwd=clone)
        report = json.loads(out.stdout) if out.stdout.strip() else {}
        got[f"claim-{key}"] = (out.returncode, report, out.stderr[-2000:])
    assert lab.head() == pre
    # the agent's own commit of the policy file naming another controller identity
    _policy(lab, lambda d: d["identity"].update(email="agent@example.com"))
    lab.commit("agent: policy identity", AGENT)
    step("post")
    got["claim"] = audit("fresh-claim")
    got["log"] = lab.git("log", "--format=%h %an|%cn %s", "main")[:4000]
    lab.passes = passes  # type: ignore[attr-defined]
    lab.got = got  # type: ignore[attr-defined]
    lab.ran = {v: len(lab.calls(t)) for v, (_, t, _) in VIDS.items()}  # type: ignore[attr-defined]
    lab.ran1 = {v: len(lab.calls(s)) for v, (s, _, _) in VIDS.items()}  # type: ignore[attr-defined]
    lab.got_rows = lab.rows()  # type: ignore[attr-defined]
    lab.final = {v: lab.plan(s)["plan"]["status"] for v, (s, _, _) in VIDS.items()}  # type: ignore[attr-defined]
    return lab


def _both(root: Path) -> Any:
    return build_all(root, {m: (lambda r, m=m: _build(r, m)) for m in MODES}, workers=2)


@pytest.fixture(scope="module")
def labs(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return shared(tmp_path_factory, "r110-approve-atk110a", _both)


IDS = [f"{m}:{v}" for m in MODES for v in VIDS]
IDS += [f"{m}:{w}" for m in MODES for w in ("passes", "claim")]
IDS += [f"{m}:claim-{c[0]}" for m in MODES for c in CLAIMS]
#: late-policy-claim-stops-audit (fixed in round 110's session: a version no identity sealed
#: as its own record names nobody, controller.approval.timeline): held since
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize(
    "vid", [pytest.param(i, id=i, marks=[BROKEN[i]] if i in BROKEN else []) for i in IDS]
)
def test_round110_atk110a(labs: Any, vid: str) -> None:
    mode, v = vid.split(":")
    lab = labs.got[mode]
    got = lab.got
    if v == "passes":
        bad = [p for p in lab.passes if p[1] != 0 or p[2]]
        assert not bad, bad
        assert got["policy_file"]
        return
    if v.startswith("claim"):
        # an unsealed agent commit naming itself in the file after the controller's records:
        # the fresh-clone audit still reaches the verdicts it reached before that commit
        rc, report, err = got[v]
        before = {s for s in ("c1", "qc", "kok", "pj") if valid_runs(got["report"], s)}
        after = {s for s in ("c1", "qc", "kok", "pj") if valid_runs(report, s)}
        assert report and after == before, (rc, err[-800:], before, after)
        return
    slug, _, want = VIDS[v]
    row = lab.got_rows.get(f"plans/{slug}", {})
    # what ran (``rec`` calls of the watched tag)
    assert lab.ran[v] == want, (lab.ran[v], brief(row), lab.final[v], got["log"][:1500])
    report = got["report"]
    assert report, got["audit_err"]
    valid = valid_runs(report, slug)
    kinds = [e.get("approval_kind") for e in valid]
    if v in GATED:
        # action 1 ran once on a valid start; gate answers valid only where action 2 ran
        assert lab.ran1[v] == 1, (lab.ran1[v], brief(row))
        assert kinds.count("approve") == 1, valid
        assert kinds.count("gate") == want, valid
    elif want:
        assert (lab.final[v], row.get("status")) == ("completed", "completed"), brief(row)
        assert valid, (report.get("findings"), got["audit_err"])
    else:
        assert row.get("status") not in ("completed", "executing"), brief(row)
        assert not valid, valid
