"""Round 104, approval and policy (atk104a): features combined, and commits that share
one second.

Three labs (advkit ``Lab``), built once per module (``shared``, ``build_all``). Policy:
``risk: high`` -> ``{count: 2}``, ``plans/q/**`` -> ``{count: 2}``, else one approval; a
catalog tool ``hot`` (echo, ``risk: high``); every plan is the agent's. Lab ``tie``: every
commit of the lab, the controller's too (``Lab.git_date``), carries ONE date, so everything
the controller orders by time ties. Lab ``tick``: the same history with a new minute for
each step (the control: what ``tie`` changes is the tie alone). Lab ``real``: the real clock.

Variants in ``tie`` and ``tick`` (``plans/<group>/<name>``; four passes):

- ``d/c1``: Alice approves (control, runs). ``d/cp``: Alice approves version 1 on a review
  branch never merged; the agent changes a param (version 2, frozen) and cherry-picks her
  commit onto main (``-X theirs``). ``d/bd``: the same, the agent's own change dated as her
  approval. ``d/gate``: a gate on action 2; Alice approves, action 1 runs, the plan pauses;
  the agent cherry-picks Alice's first approval as a gate approval. ``d/res``: action 1's
  ``verify`` never holds (the plan fails after one call); the agent cherry-picks Alice's
  approval as a resume.
- ``q/*`` (``{count: 2}``): ``c2`` Alice then Bob (control, runs); ``c1`` Alice alone;
  ``same`` Alice twice; ``case`` Alice then ``ALICE@EXAMPLE.COM``; ``bobcase`` Bob then
  ``BOB@OPS.EXAMPLE.COM``; ``ts`` Alice votes version 1, the agent changes a param and
  cherry-picks her vote back, then Bob votes version 2 (ONE real vote of version 2);
  ``bd`` the same with the agent's change dated as her vote; ``gate`` Alice and Bob start a
  gated plan, at the gate the agent cherry-picks Bob's vote; ``res`` Alice and Bob start a
  plan that fails, the agent cherry-picks Bob's vote as a resume; ``tu`` Alice votes, Bob's
  UNSIGNED empty ``Plan-Approved:`` trailer commit on a branch Mallory merges setting
  ``approved``.
- ``r/fb``: action 1's fallback step calls ``hot`` (risk high), Alice alone; ``r/nest``: a
  nested plan pinned by action 2 calls ``hot``, Alice alone; ``r/fb2``, ``r/nest2``: Alice
  and Bob (controls).
- ``m/mm``: Bob's param change reaches main through a merge of merges (Carol merges Bob's
  branch into ``b1``, Alice merges ``b1``), then Bob approves the new version on a branch
  (``check --as bob``, fast-forwarded); ``m/oc``: through Alice's octopus merge of Bob's
  branch and a note branch; ``m/co``: the agent's commit with ``Co-authored-by: Bob``
  through a merge of merges; ``m/ctl``: ``m/mm``'s shape, Dave (ops) approves (control,
  runs); ``m/rp``: Bob's change on main, then the agent ``git replace``s that commit with a
  copy authored by itself, and Bob approves.

Lab ``real``: each try starts at the top of a second; Alice approves the gated ``g<n>`` on
main and version 1 of ``c<n>`` on a review branch, the agent at once commits version 2 of
``c<n>``, and one pass starts ``g<n>`` (action 1 runs, it pauses) and freezes ``c<n>`` v2.
Where the pause (freeze) fell in the second of Alice's commit, the agent cherry-picks her
commit; ``real/gate``, ``real/cp`` judge the first tie of each (skipped if none in 4 tries).

Ids ``<lab>/<plan>:<what>``: ``ran`` (the recording tool's calls: action 1, and ``~2`` for a
gate's action 2, equal what the promise allows); ``audit`` (``tie``, ``real``: ``plangate
audit --json`` in a fresh clone, no config: it reads the records, and calls valid exactly the
approvals the promise allows: a first approval where the plan may run, a gate approval only
where action 2 may run, no resume); ``check`` (``plangate check`` said ``start`` exactly when
the plan then ran).

Seen (round 104): 82 ids, 20 broke in 1 class (fixed the same session, r104tie); 62 held.
Wall ~14 s.

- BROKE ``same-second-replay`` (20 ids: ``tie/{d/cp,d/bd,q/bd,q/ts,d/gate,q/gate,d/res,
  q/res}`` and ``real/{gate,cp}``, each ``:ran`` and ``:audit``). An approval commit whose
  author date is the SAME SECOND as the controller's commit that began the version's life
  (its freeze), the pause (``await-approval``) or the failure, brought back by the agent
  with ``git cherry-pick``, is taken as new: ``d/cp``/``d/bd`` run version 2 on Alice's
  approval of version 1; ``q/ts``/``q/bd`` run under ``{count: 2}`` on Bob's one vote plus
  Alice's replayed vote of version 1; ``d/gate``/``q/gate`` run the gated action 2 on a copy
  of the FIRST approval (Alice never approved the gate); ``d/res``/``q/res`` call the failed
  action again on a copy of the start's approval. The fresh-clone audit calls every one of
  these approvals valid (``approval_kind`` ``approve``/``gate``/``resume``), no finding. In
  ``tick`` (a minute apart) all are ``E_APPROVAL_REPLAYED`` and nothing runs; the agent
  dating its own change (``bd``) changes nothing: the tie with the controller's commit is
  what counts. ``real`` shows it needs no forged date: with the real clock, Alice's approval,
  the start and the pause of a quick action 1 fall in one second on the first try, and so do
  her review-branch approval and the freeze of the agent's version 2 pushed at once. Likely
  root: "written before this version existed" compares whole-second git dates with a strict
  ``<`` (an author date equal to the birth counts as after it).
- Held: quorum by one person twice, by case variants of Alice's and Bob's addresses (one
  vote); an unsigned ``Plan-Approved:`` trailer inside a merged branch (not counted, the
  merger Mallory refused ``E_APPROVER_NOT_ALLOWED``); risk ``high`` from a fallback step's
  tool and from a pinned nested plan's tool (one vote: partial; two: ran); Bob's authorship
  through a merge of merges, an octopus, a ``Co-authored-by:`` inside a merge of merges, and
  behind a ``git replace`` (``E_SELF_APPROVAL``; ``check`` agreed: ``refuse``, though in
  ``tie`` it gave ``E_APPROVAL_REPLAYED`` where the controller said ``E_SELF_APPROVAL``);
  every control ran once and the audit called it valid. Not asserted: Carol, who only merged
  Bob's branch ``--no-ff`` into a side branch (a clean join, ``m/ctl``'s shape), is refused
  ``E_SELF_APPROVAL`` for that version, in ``tie`` and ``tick`` alike (a merge's author
  counts as a writer of what its first-parent diff changes: strict, safe; Dave is the
  control).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import (
    AGENT,
    ALICE,
    BOB,
    CAROL,
    MALLORY,
    Lab,
    Labs,
    build_all,
    cases,
    clone_audit_got,
    plan_text,
)
from test_round2_execution_kit import shared

DATE = "@1800000000 +0000"
POLICY = """\
groups: {ops: ["alice@example.com", "*@ops.example.com"]}
rules:
  - match: {risk: high}
    require: [{count: 2}]
  - match: {paths: ["plans/q/**"]}
    require: [{count: 2}]
"""
ALICE_UP = ("Alice", "ALICE@EXAMPLE.COM")
BOB_UP = ("Bob", "BOB@OPS.EXAMPLE.COM")
DAVE = ("Dave", "dave@ops.example.com")
MODES = ["tie", "tick"]


def gate_text(slug: str) -> str:
    return plan_text(
        slug,
        extra_actions=(
            "  - id: 2\n    tool: rec\n    why: gated\n    requires_approval: true\n"
            f'    params:\n      tag: "{slug}~2"\n'
        ),
    )


def fb_text(slug: str) -> str:
    return (
        plan_text(slug)
        .replace(
            "    params:",
            "    on_failure: fallback\n    fallback:\n"
            "      - {id: '1.1', tool: hot, why: w, params: {x: 1}}\n    params:",
        )
        .replace("  - name: rec\n", "  - name: rec\n  - name: hot\n")
    )


def res_text(slug: str) -> str:
    """Action 1 calls ``rec`` and its ``verify`` never holds: the plan fails after one call."""
    return plan_text(slug).replace(
        "    params:", '    verify: {expect: {path: "$.json.ok", equals: false}}\n    params:', 1
    )


def edit(lab: Lab, slug: str, value: str) -> None:
    path = lab.repo / "plans" / slug / "PLAN.yml"
    text = path.read_text()
    path.write_text(text.replace(f'tag: "{slug}"\n', f'tag: "{slug}"\n      v: "{value}"\n', 1))


def pick(lab: Lab, sha: str, *opts: str) -> None:
    lab.git("cherry-pick", *opts, sha, who=AGENT)


def _build(root: Path, mode: str = "tie") -> dict[str, Any]:
    lab = Lab(root / mode, approval=POLICY, tools="hot: {kind: echo, risk: high}\n")
    clock = [1700000000]

    def tick() -> None:
        """``tie``: one date for everything; ``tick``: a new minute for each step."""
        clock[0] += 60
        lab.git_date = DATE if mode == "tie" else f"@{clock[0]} +0000"

    tick()
    got: dict[str, Any] = {"checks": {}, "notes": {}}
    lab.write("common/hk", "plan:\n  name: hk\n  task: t\n  status: draft\n"
              "available_tools: [{name: hot}]\nactions:\n"
              "  - {id: 1, tool: hot, why: w, params: {x: 1}}\n")  # fmt: skip
    pin = lab.cli("hash", str(lab.repo / "plans/common/hk/PLAN.yml")).stdout.split()[0]
    nest = f'  - id: 2\n    plan: {{path: plans/common/hk, hash: "{pin}"}}\n    why: nested\n'
    for s in ["d/c1", "d/cp", "d/bd", "q/bd", "q/c2", "q/c1", "q/same", "q/case",
              "q/bobcase", "q/ts", "q/tu", "m/mm", "m/oc", "m/co", "m/ctl", "m/rp"]:  # fmt: skip
        lab.write(s, plan_text(s))
    for s in ["d/gate", "q/gate"]:
        lab.write(s, gate_text(s))
    for s in ["r/fb", "r/fb2"]:
        lab.write(s, fb_text(s))
    for s in ["d/res", "q/res"]:
        lab.write(s, res_text(s))
    for s in ["r/nest", "r/nest2"]:
        lab.write(s, plan_text(s, extra_actions=nest))
    lab.commit("plans", AGENT)
    tick()
    lab.run()
    tick()

    # -- pass 1: first votes, side branches -------------------------------------------
    lab.branch("rev-cp")
    lab.approve("d/cp", ALICE)
    cp = lab.head()
    lab.git("checkout", "-q", "main")
    lab.branch("rev-bd")
    lab.approve("d/bd", ALICE)
    bd = lab.head()
    born = lab.git_date
    lab.git("checkout", "-q", "main")
    # m/mm and m/ctl: Bob's change -> bb, Carol merges bb into b1, Alice merges b1
    for s in ["m/mm", "m/ctl"]:
        lab.branch(f"b1-{s[2:]}")
        lab.branch(f"bb-{s[2:]}")
        edit(lab, s, "bob")
        lab.commit(f"bob: tune {s}", BOB)
        lab.git("checkout", "-q", f"b1-{s[2:]}")
        lab.note(f"b1-{s[2:]}", CAROL)
        lab.git("merge", "-q", "--no-ff", "-m", "carol merges", f"bb-{s[2:]}", who=CAROL)
        lab.git("checkout", "-q", "main")
        lab.git("merge", "-q", "--no-ff", "-m", "alice merges", f"b1-{s[2:]}", who=ALICE)
    # m/co: the agent's commit with Co-authored-by: Bob, through a merge of merges
    lab.branch("b1-co")
    lab.branch("bb-co")
    edit(lab, "m/co", "pair")
    lab.commit("tune m/co\n\nCo-authored-by: Bob <bob@ops.example.com>", AGENT)
    lab.git("checkout", "-q", "b1-co")
    lab.note("b1-co", CAROL)
    lab.git("merge", "-q", "--no-ff", "-m", "carol merges", "bb-co", who=CAROL)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "alice merges", "b1-co", who=ALICE)
    # m/oc: Alice's octopus merge of Bob's branch and a note branch
    lab.branch("oc-bob")
    edit(lab, "m/oc", "bob")
    lab.commit("bob: tune m/oc", BOB)
    lab.branch("oc-note", "main")
    lab.note("oc-note", CAROL)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "alice octopus", "oc-bob", "oc-note", who=ALICE)
    # m/rp: Bob's change on main
    edit(lab, "m/rp", "bob")
    rp = lab.commit("bob: tune m/rp", BOB)
    # first votes
    for s, who in [("d/c1", ALICE), ("d/gate", ALICE), ("q/c2", ALICE), ("q/c1", ALICE),
                   ("q/same", ALICE), ("q/case", ALICE), ("q/bobcase", BOB), ("q/ts", ALICE),
                   ("q/bd", ALICE), ("q/gate", ALICE), ("d/res", ALICE), ("q/res", ALICE),
                   ("q/tu", ALICE), ("r/fb", ALICE), ("r/nest", ALICE),
                   ("r/fb2", ALICE), ("r/nest2", ALICE)]:  # fmt: skip
        lab.approve(s, who)
        got["notes"][f"vote1-{s}"] = lab.head()
    tick()
    lab.run()
    tick()

    # -- pass 2: second votes, edits ----------------------------------------------------
    edit(lab, "d/cp", "v2")
    lab.commit("agent: v2 d/cp", AGENT)
    edit(lab, "q/ts", "v2")
    lab.commit("agent: v2 q/ts", AGENT)
    # the agent dates its own change of d/bd and q/bd as Alice's approval of version 1
    now, lab.git_date = lab.git_date, born
    for s in ["d/bd", "q/bd"]:
        edit(lab, s, "v2")
        lab.commit(f"agent: v2 {s}", AGENT)
    lab.git_date = now
    for s, who in [("q/c2", BOB), ("q/same", ALICE), ("q/case", ALICE_UP),
                   ("q/bobcase", BOB_UP), ("q/gate", BOB), ("q/res", BOB), ("r/fb2", BOB),
                   ("r/nest2", BOB), ("m/ctl", DAVE)]:  # fmt: skip
        lab.approve(s, who)
        got["notes"][f"vote2-{s}"] = lab.head()
    # the agent hides Bob's authorship of m/rp's change behind a replace ref
    raw = lab.git("cat-file", "commit", rp)
    fake = raw.replace("Bob <bob@ops.example.com>", "Agent <agent@example.com>")
    new = subprocess.run(
        ["git", "hash-object", "-t", "commit", "-w", "--stdin"], cwd=lab.repo,
        env=lab.env(), input=fake, capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    lab.git("replace", rp, new)
    lab.approve("m/rp", BOB)
    # Bob approves m/mm and m/oc and m/co on branches, checked, fast-forwarded
    for s in ["m/mm", "m/oc", "m/co"]:
        br = f"ap-{s[2:]}"
        lab.branch(br)
        lab.approve(s, BOB)
        told = lab.check(br, "bob@ops.example.com")
        got["checks"][s] = told.stdout + told.stderr
        lab.git("checkout", "-q", "main")
        lab.git("merge", "-q", "--ff-only", br)
    # q/tu: Bob's unsigned Plan-Approved trailer, Mallory merges it setting approved
    hq = lab.plan("q/tu")["frozen"]["hash"]
    lab.branch("tu")
    lab.git("commit", "-q", "--allow-empty", "-m",
            f"approve plans/q/tu (trailer)\n\nPlan-Approved: plans/q/tu {hq}", who=BOB)  # fmt: skip
    lab.git("checkout", "-q", "main")
    lab.rmerge(MALLORY, ["tu"], lambda: lab.set_status("q/tu", "approved"))
    tick()
    lab.run()
    tick()

    # -- pass 3: replays ------------------------------------------------------------------
    pick(lab, cp, "-X", "theirs")
    pick(lab, bd, "-X", "theirs")
    pick(lab, got["notes"]["vote1-q/bd"], "-X", "theirs")
    pick(lab, got["notes"]["vote1-q/ts"], "-X", "theirs")
    pick(lab, got["notes"]["vote1-d/gate"], "-X", "theirs")
    pick(lab, got["notes"]["vote2-q/gate"], "-X", "theirs")
    pick(lab, got["notes"]["vote1-d/res"], "-X", "theirs")
    pick(lab, got["notes"]["vote2-q/res"], "-X", "theirs")
    got["notes"]["authors"] = lab.git("log", "-4", "--format=%an %ae %ad %cn")
    tick()
    lab.run()
    tick()

    # -- pass 4 ---------------------------------------------------------------------------
    lab.approve("q/ts", BOB)
    lab.approve("q/bd", BOB)
    tick()
    lab.run()
    tags = [r for r in (lab.log.read_text().splitlines() if lab.log.exists() else [])]
    calls: dict[str, int] = {}
    for line in tags:
        tag = json.loads(line)["argv"][0]
        calls[tag] = calls.get(tag, 0) + 1
    got["calls"] = calls
    got["rows"] = {k: (v.get("status"), v.get("reason")) for k, v in lab.rows().items()}
    got.update(clone_audit_got(lab, root / mode))
    return got


def _subject_date(lab: Lab, subject: str) -> int:
    """The committer date of the newest commit whose subject is ``subject`` (0: none)."""
    for line in lab.git("log", "--format=%ct %s").splitlines():
        date, _, subj = line.partition(" ")
        if subj == subject:
            return int(date)
    return 0


def _build_real(root: Path) -> dict[str, Any]:
    """The real clock (no ``git_date``): each try starts at the top of a second, Alice
    approves gated ``g<n>`` on main and version 1 of ``c<n>`` on a review branch, the agent
    at once changes ``c<n>`` (version 2), and the pass starts ``g<n>`` (action 1 runs, the
    plan pauses) and freezes ``c<n>`` v2. When the pause (or freeze) fell in the second of
    Alice's commit, the agent cherry-picks her commit back; the first tie of each is kept."""
    lab = Lab(root / "real", approval=POLICY, tools="hot: {kind: echo, risk: high}\n")
    tries = 4
    for n in range(tries):
        lab.write(f"g{n}", gate_text(f"g{n}"))
        lab.write(f"c{n}", plan_text(f"c{n}"))
    lab.commit("plans", AGENT)
    lab.run()
    got: dict[str, Any] = {"tie": {}, "tries": []}
    for n in range(tries):
        if "g" in got["tie"] and "c" in got["tie"]:
            break
        time.sleep(1.0 - (time.time() % 1.0) + 0.01)
        lab.branch(f"rev{n}")
        lab.approve(f"c{n}", ALICE)
        c_vote = lab.head()
        lab.git("checkout", "-q", "main")
        g_vote = lab.approve(f"g{n}", ALICE)
        edit(lab, f"c{n}", "v2")
        lab.commit(f"agent: v2 c{n}", AGENT)
        lab.run()
        at = {v: int(lab.git("log", "-1", "--format=%at", v).strip()) for v in (c_vote, g_vote)}
        pause = _subject_date(lab, f"plangate: await-approval plans/g{n}")
        freeze = _subject_date(lab, f"plangate: freeze plans/c{n}")
        got["tries"].append({"n": n, "at": at, "pause": pause, "freeze": freeze})
        if "g" not in got["tie"] and pause == at[g_vote]:
            pick(lab, g_vote, "-X", "theirs")
            got["tie"]["g"] = f"g{n}"
        if "c" not in got["tie"] and freeze == at[c_vote]:
            pick(lab, c_vote, "-X", "theirs")
            got["tie"]["c"] = f"c{n}"
        lab.run()
    calls: dict[str, int] = {}
    for line in lab.log.read_text().splitlines():
        tag = json.loads(line)["argv"][0]
        calls[tag] = calls.get(tag, 0) + 1
    got["calls"] = calls
    got["rows"] = {k: (v.get("status"), v.get("reason")) for k, v in lab.rows().items()}
    got.update(clone_audit_got(lab, root / "real"))
    return got


def _build_all(root: Path) -> Labs:
    builders = {m: (lambda r, m=m: _build(r.parent, m)) for m in MODES}
    builders["real"] = lambda r: _build_real(r.parent)
    return build_all(root, builders, workers=3)


#: plan -> (action 1 calls, action 2 calls or None) allowed by the promise
WANT: dict[str, tuple[int, int | None]] = {
    "d/c1": (1, None), "d/cp": (0, None), "d/bd": (0, None), "q/bd": (0, None), "d/gate": (1, 0),
    "q/c2": (1, None), "q/c1": (0, None), "q/same": (0, None), "q/case": (0, None),
    "q/bobcase": (0, None), "q/ts": (0, None), "q/gate": (1, 0), "q/tu": (0, None),
    "d/res": (1, None), "q/res": (1, None),
    "r/fb": (0, None), "r/nest": (0, None), "r/fb2": (1, None), "r/nest2": (1, None),
    "m/mm": (0, None), "m/oc": (0, None), "m/co": (0, None), "m/ctl": (1, None),
    "m/rp": (0, None),
}  # fmt: skip
CHECKED = ["m/mm", "m/oc", "m/co"]
VALUES = [(m, s, "ran") for m in MODES for s in WANT]
VALUES += [("tie", s, "audit") for s in WANT] + [(m, s, "check") for m in MODES for s in CHECKED]
VALUES += [("real", s, w) for s in ("gate", "cp") for w in ("ran", "audit")]
IDS = [f"{m}/{s}:{w}" for m, s, w in VALUES]
#: round 104's one class (same-second-replay, 20 ids) was fixed the same session (r104tie:
#: an approval authored in the second its version or pause came to be counts only when
#: committed by its author): no id is expected to break
BROKEN: dict[str, Any] = {}


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return shared(tmp_path_factory, "r104-atk104a", _build_all)


def _ran(got: dict[str, Any], slug: str) -> tuple[int, int]:
    return got["calls"].get(slug, 0), got["calls"].get(f"{slug}~2", 0)


def _kinds(report: dict[str, Any], plan: str) -> set[str]:
    """The approval kinds (``approve``, ``gate``, ``resume``) of ``plan``'s executions the
    audit calls valid."""
    return {
        str(e.get("approval_kind"))
        for e in report.get("executions", [])
        if e.get("plan") == plan and e.get("approval_valid")
    }


@pytest.mark.parametrize(("mode", "slug", "what"), cases(IDS, VALUES, BROKEN))
def test_round104_atk104a(lab: Any, mode: str, slug: str, what: str) -> None:
    got = lab.got[mode]
    if mode == "real":  # slug: "gate" / "cp", the plan of the first tie
        name = got["tie"].get(slug[0] if slug == "gate" else "c")
        if name is None:
            pytest.skip(f"no tie in {len(got['tries'])} tries: {got['tries']}")
        slug, (want1, want2) = name, ((1, 0) if slug == "gate" else (0, None))
    else:
        want1, want2 = WANT[slug]
    plan = f"plans/{slug}"
    first, second = _ran(got, slug)
    if what == "ran":
        assert (first, second) == (want1, want2 or 0), (slug, first, second, got["rows"].get(plan))
    elif what == "audit":  # git alone: a start is valid only where the promise allows a run
        report = got["report"]
        assert report.get("code") is None and got["rc"] in (0, 1), (got["rc"], str(report)[:600])
        kinds = _kinds(report, plan)
        allowed = (want1 > 0, bool(want2), False)  # no variant allows a resume
        assert ("approve" in kinds, "gate" in kinds, "resume" in kinds) == allowed, (
            kinds, first, second,
            [f for f in report.get("findings", []) if f.get("plan") == plan],
        )  # fmt: skip
    else:
        out = got["checks"][slug]
        plans = [p for p in json.loads(out[: out.rfind("}") + 1])["plans"] if p["plan"] == plan]
        assert plans, out[-1500:]
        landed = {**plans[0], **plans[0].get("fast_forward", {})}
        assert (landed.get("outcome") == "start") == (first > 0), (plans[0], first)


if __name__ == "__main__":
    import tempfile

    os.makedirs("/tmp/atk104a", exist_ok=True)
    out = Path(tempfile.mkdtemp(prefix="r104a-", dir="/tmp/atk104a"))
    import sys

    mode = sys.argv[1] if len(sys.argv) > 1 else "tie"
    if mode == "real":
        print(json.dumps(_build_real(out), indent=1, default=str)[:6000])
        sys.exit()
    got = _build(out, mode)
    rep = got.pop("report")
    got["findings"] = [(f.get("kind"), f.get("plan"), str(f.get("message"))[:200])
                       for f in rep.get("findings", [])]  # fmt: skip
    for k, c in list(got["checks"].items()):
        try:
            j = json.loads(c[: c.rfind("}") + 1])
            got["checks"][k] = [(p["plan"], p.get("outcome"), p.get("fast_forward"),
                                 p.get("refused")) for p in j["plans"]]  # fmt: skip
        except ValueError:
            got["checks"][k] = c[-500:]
    print(json.dumps(got, indent=1, default=str))
