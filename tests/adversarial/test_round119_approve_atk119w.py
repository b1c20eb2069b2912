"""Round 119, approval side (atk119w): WITHDRAWALS after round 117's fix (fix117w).

DOCSTRING-PLACEHOLDER
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from test_round2_execution_kit import shared

from tests.adversarial.advkit import (
    AGENT,
    ALICE,
    BenchError,
    BOB,
    CAROL,
    MALLORY,
    Lab,
    brief,
    clone_audit_got,
    plan_text,
)

FORGE = ("GitHub", "noreply@github.com")

#: gate plans: action 2 ``requires_approval``
GATES = {"gateab", "gateabm", "gateabrev", "gateabrb"}


def _config(lab: Lab) -> None:
    rec = json.dumps([sys.executable, str(lab.recorder), "{tag}"])
    env = f"env: {{REC_LOG: {json.dumps(str(lab.log))}}}"
    lab.config.write_text(
        f"repo: {lab.repo}\nstate_dir: {lab.state}\n"
        "identity: {name: plangate, email: plangate@localhost}\n"
        "approval:\n"
        '  approvers: ["alice@example.com", "*@ops.example.com"]\n'
        "  rules:\n"
        '    - match: {paths: ["plans/q*/**"]}\n      require: [{count: 2}]\n'
        "tools:\n"
        f"  rec: {{kind: exec, argv: {rec}, {env}}}\n"
        "  echo: {kind: echo}\n"
    )


def _plan(slug: str, tag: str | None = None, status: str = "pending_approval") -> str:
    tag = tag or slug
    gate = (
        '  - id: 2\n    tool: rec\n    why: "second, gated"\n    requires_approval: true\n'
        f'    params:\n      tag: "{tag}-2"\n'
    )
    return plan_text(tag, status=status, extra_actions=gate if slug in GATES else "")


LEGACY = """\
plan:
  name: "{tag}"
  task: "attack variant {tag}"
  status: pending_approval
inputs:
  who: ops
available_tools:
  - name: rec
actions:
  - id: 1
    tool: rec
    why: "record that variant {tag} ran"
    params:
      tag: "{tag}"
      who: "{ref}"
"""

#: the same plan as ``_plan(tag)``, written otherwise: keys reordered, flow style, quoting,
#: comments, ``created`` and ``metadata`` (none of them hashed)
RESPELLED = """\
# a fresh plan, nothing to see
metadata: {{ticket: OPS-1}}
actions:
  - {{why: 'record that variant {tag} ran', tool: rec, id: 1, params: {{tag: {tag}}}}}
available_tools: [{{name: rec}}]
plan: {{status: pending_approval, task: 'attack variant {tag}', name: {tag},
  created: "2026-12-06T00:00:00Z"}}
"""

#: vid -> (calls of its tag wanted at the end, statuses accepted for plans/<vid> at the end)
REJ = (0, {"rejected"})
ABO = (1, {"aborted"})
RUN = (1, {"completed"})
WANT: dict[str, tuple[int, set[str]]] = {
    # -- an allowed approver's rejection, then the rejected version brought back -----------
    "rvrev": REJ,  # Alice rejects; the agent `git revert`s her commit; Bob approves
    "rvrevf": REJ,  # the same revert rebase-merged by the forge; Bob approves
    "cpslug": REJ,  # Alice rejects; the agent adds the same text at plans/cpslug-2
    "cpfull": REJ,  # ... the whole rejected file (frozen:, status) copied, set pending
    "cpresp": REJ,  # ... respelled: flow style, key order, comments, created, metadata
    "cplegacy": REJ,  # ... the `$<inputs.who>` written `${inputs.who}` (converted at freeze)
    "cpmd": REJ,  # ... as plans/cpmd-2/PLAN.md (one yaml block), converted by the daemon
    "cpdeep": REJ,  # ... moved with `git mv` to plans/deep/a/cpdeep as PLAN.yaml, pending
    "rename": REJ,  # ... PLAN.yml renamed PLAN.yaml in place, pending
    "readd": (0, {"rejected", "pending_approval"}),  # ... folder deleted (pass), then the same text re-added at the slug
    "mergeback": REJ,  # ... the agent's merge of a branch forked before, resolved to pending
    "brrev": REJ,  # Alice rejects on her branch, the agent reverts it there, Bob merges
    "pushrjok": REJ,  # one push: Carol rejects, Bob approves
    "pushrjpend": REJ,  # one push: Carol rejects, Carol sets pending again, Bob approves
    "flipself": REJ,  # one push: Alice rejects, then Alice approves
    "rjedit": REJ,  # Alice rejects; the agent edits (v2) and sets pending; Bob approves v2
    "rjdraft": REJ,  # Alice rejects; the agent sets draft, then pending; Bob approves
    # -- the plan's author withdraws ----------------------------------------------------------
    "authrj": REJ,  # the agent rejects its own plan, reverts that; Bob approves
    "sqcarol": REJ,  # a squash by the forge adding the plan `rejected`, author Carol; copied
    # -- quorum --------------------------------------------------------------------------------
    "qpart": REJ,  # Bob votes; the agent (author) rejects; Carol votes
    "qpartc": REJ,  # Bob votes; Bob rejects his own vote's plan; Carol votes
    "qpartm": RUN,  # control: Bob votes; Mallory rejects (ignored); Carol votes
    # -- not entitled -------------------------------------------------------------------------
    "mrj": RUN,  # Mallory rejects (ignored, reported); Bob approves: runs once
    "notesrj": RUN,  # Mallory writes NOTES.md in the folder, then rejects; Bob approves
    "cmtrj": RUN,  # Mallory adds a YAML comment (hash kept), then rejects; Bob approves
    "fgrj": RUN,  # the forge (noreply) authors a web-editor rejection; Bob approves
    # -- aborts ---------------------------------------------------------------------------------
    "gateab": ABO,  # paused at the gate; the agent (author) aborts; Bob answers the gate
    "gateabm": (1, {"completed"}),  # paused; Mallory aborts (ignored); Bob answers: runs
    "gateabrev": ABO,  # paused; Carol aborts, the agent reverts it in the same push; Bob
    "gateabrb": ABO,  # paused; Carol's abort on her branch rebase-merged by the forge; Bob
    "abfirst": (0, {"aborted"}),  # one push: Alice approves, Carol aborts; later Bob approves
}
#: vids whose gated action 2 counts separately (its tag ``<vid>-2``): runs wanted
GATE2 = {"gateab": 0, "gateabm": 1, "gateabrev": 0, "gateabrb": 0}
VIDS = list(WANT)
#: copies: the other plan folder each vid puts its version in
COPY = {
    "cpslug": "cpslug-2",
    "cpfull": "cpfull-2",
    "cpresp": "cpresp-2",
    "cplegacy": "cplegacy-2",
    "cpmd": "cpmd-2",
    "cpdeep": "deep/a/cpdeep",
    "sqcarol": "sqcarol-2",
}


def _c2(lab: Lab, msg: str, author: tuple[str, str], committer: tuple[str, str]) -> str:
    lab.git("add", "-A")
    lab.extra_env = {"GIT_COMMITTER_NAME": committer[0], "GIT_COMMITTER_EMAIL": committer[1]}
    try:
        lab.git("commit", "-q", "--allow-empty", "-m", msg, who=author)
    finally:
        lab.extra_env = {}
    return lab.head()


def _set(lab: Lab, slug: str, status: str, fname: str = "PLAN.yml") -> None:
    """Set the status as an editor would: the status line, or in a flow mapping its value."""
    try:
        lab.set_status(slug, status, fname)
    except BenchError:
        path = lab.repo / "plans" / slug / fname
        text = path.read_text(encoding="utf-8")
        new = re.sub(r'status: ("?)\w+("?)', rf"status: \g<1>{status}\g<2>", text, count=1)
        if new == text:
            raise
        path.write_text(new)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    _config(lab)
    got: dict[str, Any] = {}
    lab.got = got  # type: ignore[attr-defined]
    passes: list[tuple[str, int, bool, str]] = []
    lab.passes = passes  # type: ignore[attr-defined]
    sha: dict[str, str] = {}

    def step(phase: str) -> None:
        res = lab.run(check=False)
        passes.append((phase, res.returncode, "Traceback" in res.stderr, res.stderr[-900:]))

    def setc(slug: str, status: str, who: tuple[str, str], fname: str = "PLAN.yml") -> str:
        _set(lab, slug, status, fname)
        return lab.commit(f"{who[0]}: {status} {slug}", who)

    # -- A: the agent writes every plan; the controller freezes them ---------------------------
    original: dict[str, str] = {}
    for v in VIDS:
        if v == "sqcarol":
            continue
        if v == "cplegacy":
            text = LEGACY.format(tag=v, ref="$<inputs.who>")
        else:
            text = _plan(v)
        original[v] = text
        lab.write(v, text)
    lab.commit("agent: plans", AGENT)
    step("a")
    got["frozen"] = {v: (lab.plan(v).get("frozen") or {}).get("hash") for v in original}

    # -- B: first decisions ---------------------------------------------------------------------
    # branches forked at the frozen plan (before any rejection)
    lab.branch("mb-mergeback")
    lab.note("mergeback-branch", AGENT)
    lab.git("checkout", "-q", "main")
    # Alice's rejections on the line
    for v in ("rvrev", "rvrevf", "cpslug", "cpfull", "cpresp", "cplegacy", "cpmd", "cpdeep",
              "rename", "readd", "mergeback", "rjedit", "rjdraft"):  # fmt: skip
        sha[v] = setc(v, "rejected", ALICE)
    # Alice rejects on her branch, the agent reverts it there, Bob merges with a merge commit
    lab.branch("brrev-review")
    sha["brrev"] = setc("brrev", "rejected", ALICE)
    lab.git("revert", "--no-edit", sha["brrev"], who=AGENT)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge brrev-review", "brrev-review", who=BOB)
    # one push, several decisions
    setc("pushrjok", "rejected", CAROL)
    setc("pushrjok", "approved", BOB)
    setc("pushrjpend", "rejected", CAROL)
    setc("pushrjpend", "pending_approval", CAROL)
    setc("pushrjpend", "approved", BOB)
    setc("flipself", "rejected", ALICE)
    setc("flipself", "approved", ALICE)
    # the author's own rejection
    sha["authrj"] = setc("authrj", "rejected", AGENT)
    # a PR adding a plan with Carol's rejection, squash-merged: author Carol
    lab.branch("pr-sqcarol")
    lab.write("sqcarol", _plan("sqcarol"))
    lab.commit("agent: add sqcarol", AGENT)
    setc("sqcarol", "rejected", CAROL)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--squash", "pr-sqcarol", who=FORGE)
    _c2(lab, "Add sqcarol (#7)\n\nCo-authored-by: Agent <agent@example.com>\n", CAROL, FORGE)
    original["sqcarol"] = _plan("sqcarol")
    # quorum first votes
    for v in ("qpart", "qpartc", "qpartm"):
        setc(v, "approved", BOB)
    # not entitled
    setc("mrj", "rejected", MALLORY)
    lab.put("plans/notesrj/NOTES.md", "review notes\n")
    lab.commit("mallory: notes", MALLORY)
    text = lab.read("cmtrj").replace("available_tools:", "# looked at it\navailable_tools:")
    lab.write("cmtrj", text)
    lab.commit("mallory: comment", MALLORY)
    lab.set_status("fgrj", "rejected")
    _c2(lab, "Update PLAN.yml", FORGE, FORGE)
    # gates: Alice approves, action 1 runs, the run pauses
    for v in GATES:
        setc(v, "approved", ALICE)
    # an abort of an approval not acted on yet
    setc("abfirst", "approved", ALICE)
    setc("abfirst", "aborted", CAROL)
    step("b")
    got["rows_b"] = lab.rows()

    # -- C: the rejected versions brought back; second steps ---------------------------------
    lab.git("revert", "--no-edit", sha["rvrev"], who=AGENT)
    lab.branch("rv-f")
    lab.git("revert", "--no-edit", sha["rvrevf"], who=AGENT)
    rv = lab.head()
    lab.git("checkout", "-q", "main")
    lab.git("cherry-pick", rv, who=FORGE)
    lab.write(COPY["cpslug"], original["cpslug"])
    lab.commit("agent: cpslug again", AGENT)
    full = lab.read("cpfull")
    lab.write(COPY["cpfull"], full)
    lab.set_status(COPY["cpfull"], "pending_approval")
    lab.commit("agent: cpfull again", AGENT)
    lab.write(COPY["cpresp"], RESPELLED.format(tag="cpresp"))
    lab.commit("agent: cpresp again", AGENT)
    lab.write(COPY["cplegacy"], LEGACY.format(tag="cplegacy", ref="${inputs.who}"))
    lab.commit("agent: cplegacy again", AGENT)
    lab.write(COPY["cpmd"], original["cpmd"], "PLAN.md")
    lab.commit("agent: cpmd again", AGENT)
    (lab.repo / "plans/deep/a").mkdir(parents=True)
    lab.git("mv", "plans/cpdeep", "plans/deep/a/cpdeep")
    lab.git("mv", "plans/deep/a/cpdeep/PLAN.yml", "plans/deep/a/cpdeep/PLAN.yaml")
    lab.set_status("deep/a/cpdeep", "pending_approval", "PLAN.yaml")
    lab.commit("agent: move cpdeep", AGENT)
    lab.git("mv", "plans/rename/PLAN.yml", "plans/rename/PLAN.yaml")
    lab.set_status("rename", "pending_approval", "PLAN.yaml")
    lab.commit("agent: rename", AGENT)
    lab.git("rm", "-q", "-r", "plans/readd")
    lab.commit("agent: drop readd", AGENT)

    def resolve_back() -> None:
        lab.write("mergeback", lab.git("show", "mb-mergeback:plans/mergeback/PLAN.yml"))

    lab.rmerge(AGENT, ["mb-mergeback"], resolve_back)
    lab.write("rjedit", lab.read("rjedit").replace('tag: "rjedit"', 'tag: "rjedit"\n      v: 2'))
    lab.set_status("rjedit", "pending_approval")
    lab.commit("agent: rjedit v2", AGENT)
    setc("rjdraft", "draft", AGENT)
    lab.git("revert", "--no-edit", sha["authrj"], who=AGENT)
    lab.write(COPY["sqcarol"], original["sqcarol"])
    lab.commit("agent: sqcarol again", AGENT)
    setc("qpart", "rejected", AGENT)
    setc("qpartc", "rejected", BOB)
    setc("qpartm", "rejected", MALLORY)
    setc("notesrj", "rejected", MALLORY)
    setc("cmtrj", "rejected", MALLORY)
    got["pause"] = {
        v: (lab.plan(v).get("plan") or {}).get("status") == "awaiting_approval" for v in GATES
    }
    setc("gateab", "aborted", AGENT)
    setc("gateabm", "aborted", MALLORY)
    ab = setc("gateabrev", "aborted", CAROL)
    lab.git("revert", "--no-edit", ab, who=AGENT)
    lab.branch("gateabrb-review")
    ab = setc("gateabrb", "aborted", CAROL)
    lab.git("checkout", "-q", "main")
    lab.git("cherry-pick", ab, who=FORGE)
    step("c")
    got["rows_c"] = lab.rows()

    # -- D: Bob (Carol for a quorum) approves what must stay stopped ---------------------------
    lab.write("readd", original["readd"])
    lab.commit("agent: readd", AGENT)
    setc("rjdraft", "pending_approval", AGENT)
    for v in ("rvrev", "rvrevf", "mergeback", "brrev", "rjedit", "authrj", "pushrjok",
              "pushrjpend", "flipself", "mrj", "notesrj", "cmtrj", "fgrj", "abfirst"):  # fmt: skip
        setc(v, "approved", BOB)
    for v in ("cpslug", "cpfull", "cpresp", "cplegacy", "cpmd", "sqcarol"):
        slug = COPY[v]
        if (lab.repo / "plans" / slug / "PLAN.yml").exists():
            setc(slug, "approved", BOB)
    setc("deep/a/cpdeep", "approved", BOB, "PLAN.yaml")
    setc("rename", "approved", BOB, "PLAN.yaml")
    for v in ("qpart", "qpartc", "qpartm"):
        setc(v, "approved", CAROL)
    for v in GATES:
        setc(v, "approved", BOB)
    step("d")
    # E: Bob approves again what reads pending_approval (a refusal sent it back), and the
    # re-added and re-drafted plans
    again = []
    for v in ("readd", "rjdraft", *VIDS):
        try:
            st = (lab.plan(v).get("plan") or {}).get("status")
        except Exception:
            continue
        if st == "pending_approval" and v not in again and WANT[v] == REJ:
            again.append(v)
    for v, slug in COPY.items():
        for fname in ("PLAN.yml", "PLAN.yaml"):
            if (lab.repo / "plans" / slug / fname).exists():
                data = lab.plan(slug, filename=fname)
                if (data.get("plan") or {}).get("status") == "pending_approval":
                    again.append(slug)
                    setc(slug, "approved", BOB, fname)
    for v in again:
        if v in WANT:
            setc(v, "approved", BOB)
    got["again"] = again
    step("e")
    lab.ran = {v: len(lab.calls(v)) for v in VIDS}  # type: ignore[attr-defined]
    got["gate_ran"] = {v: len(lab.calls(f"{v}-2")) for v in GATES}
    lab.got_rows = lab.rows()  # type: ignore[attr-defined]
    got["codes"] = {v: lab.codes(v) for v in VIDS}
    got["copies"] = {}
    for v, slug in COPY.items():
        row = lab.got_rows.get(f"plans/{slug}", {})
        got["copies"][v] = {"row": row, "codes": lab.codes(slug)}
    lab.subjects_of = {v: lab.subjects(v) for v in VIDS}  # type: ignore[attr-defined]
    lab.subjects_of.update({f"copy:{v}": lab.subjects(s) for v, s in COPY.items()})
    got["clone"] = clone_audit_got(lab, root)
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return shared(tmp_path_factory, "r119-approve-atk119w", _build)


WITHDRAWN = [v for v in VIDS if WANT[v] in (REJ, ABO)]
IDS = [*VIDS, *[f"{v}:status" for v in VIDS], *[f"{v}:audit" for v in VIDS]]
IDS += [f"{v}:agree" for v in VIDS] + ["passes"]
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize(
    "vid", [pytest.param(i, id=i, marks=[BROKEN[i]] if i in BROKEN else []) for i in IDS]
)
def test_round119_atk119w(lab: Any, vid: str) -> None:
    got = lab.got
    clone = got["clone"]["report"]
    if vid == "passes":
        bad = [p for p in lab.passes if p[1] != 0 or p[2]]
        assert not bad, bad
        return
    v, _, kind = vid.partition(":")
    row = lab.got_rows.get(f"plans/{v}", {})
    want_runs, want_status = WANT[v]
    ran = lab.ran.get(v, 0)
    slugs = {f"plans/{v}"} | ({f"plans/{COPY[v]}"} if v in COPY else set())
    valid = [
        e
        for e in clone.get("executions", [])
        if e.get("plan") in slugs and e.get("approval_valid")
    ]
    if kind == "status":
        if v in COPY and v not in ("sqcarol",):
            return
        assert row.get("status") in want_status, brief(row, 5)
        return
    if kind == "agree":
        starts = [s for s in lab.subjects_of.get(v, []) if s.startswith("plangate: start ")]
        starts += [s for s in lab.subjects_of.get(f"copy:{v}", []) if s.startswith("plangate: start ")]
        assert len(valid) == len(starts), (starts, valid, clone.get("findings"))
        return
    if kind == "audit":
        if v in GATES:
            gate = [e for e in valid if e.get("approval_kind") == "gate"]
            assert len(gate) == GATE2[v], (valid, clone.get("findings"))
            return
        assert len(valid) == want_runs, (ran, valid, clone.get("findings"))
        return
    if v in GATES:
        assert got["pause"].get(v), ("never paused", brief(got["rows_b"].get(f"plans/{v}", {})))
        assert ran == 1 and got["gate_ran"][v] == GATE2[v], (ran, got["gate_ran"][v], brief(row))
        return
    assert ran == want_runs, (ran, brief(row, 5), got["copies"].get(v))
