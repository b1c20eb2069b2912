"""Round 79, approval side: a carried approval (round 77, r77movedappr; docs/approvals.md,
moves: a byte-exact move "carries that approval, request and all ... on the line and in a
merge, whichever side moved it") met by git's clean JOIN of a move on one branch and the
approval on another, by a gate (a run paused mid-plan), by a swap with a plan Alice wrote, by
a folder holding her note, and by what happens to the moved file BEFORE a pass reads it.

Lab (one, local mode, fake dates). Per id the agent writes ``plans/<v>`` (tag ``<v>``; for
``gate*`` a second action tagged ``<v>-2`` needs a gate approval). P0 freezes. Gap 1:
Alice approves the ``gate*`` plans and ``ranback``. P1 runs them (``gate*`` pause at the
gate). Gap 2, by id:

- ``joinab``: Alice's branch ``pa-<v>`` approves ``<v>``; the agent's ``pb-<v>`` does
  ``git mv <v> <v>-d``; Alice merges ``pa`` ``--no-ff``, then the agent merges ``pb``
  (git joins the rename and her status line: ``<v>-d`` says ``approved``);
- ``joinba``: the agent merges ``pb`` first, then Alice merges ``pa`` (her status change
  renamed by git onto ``<v>-d``);
- ``joinagent``: the agent merges ``pb`` and then merges Alice's ``pa`` itself;
- ``gatemv``: the agent moves the paused plan byte-exact; Alice approves the gate there (gap 3);
- ``gatemvappr``: Alice approves the gate, the agent moves it in the next commit (no pass);
- ``gatecopy``: the agent copies the paused plan byte-exact to ``<v>-c``; Alice approves the
  gate at ``<v>``, Bob at ``<v>-c`` (gap 3);
- ``swapalice``: ``<v>-w`` is ALICE's plan; she approves the agent's ``<v>``; the agent swaps
  the two files byte for byte; Bob approves Alice's plan at its new path ``<v>`` (gap 3);
- ``notesinto``: ``<v>-d`` holds only Alice's ``NOTES.md``; she approves ``<v>``; the agent
  ``git mv``s ``<v>/PLAN.yml`` into ``<v>-d``;
- ``cmtmv``: the move adds a YAML comment line (no hashed byte); Alice approves again at the
  new path at gap 3 (the control that the refusal is not for good);
- ``edithen``: a byte-exact move (carrying), then the agent's next commit edits the ``why``;
- ``mvthenrej``: a byte-exact move, then Bob rejects at the new path (no pass between);
- ``mvthenreset``: a byte-exact move, then the agent sets ``pending_approval`` there;
- ``revertmv`` (control): the move, then ``git revert`` of it, no pass;
- ``ranback``: the plan that RAN at P1 moved and moved back, then its status set
  ``approved`` by Bob at gap 3;
- ``chain`` (control): ALICE moves it approving with her move; the agent moves it again
  byte-exact (``-d`` -> ``-c``) next commit;
- ``ontorej``: ``git rm -r <v>-t`` (Alice REJECTED it at gap 1) and ``git mv <v> <v>-t``;
- ``deeper``: ``git mv <v>/PLAN.yml <v>/sub/PLAN.yml`` (a folder inside its own);
- ``parked``: ``git mv plans/<v> drafts/<v>``, next commit ``git mv drafts/<v> plans/<v>-d``.
- ``chkctl`` (control), ``chkmv``, ``chktwo``: Alice approves each on main (gap 2); the
  agent's pull request ``pr`` does ``git mv <v> <v>-d`` (``chkctl``), that plus a byte-exact
  copy to ``<v>-e`` (``chkmv``), two byte-exact copies ``-d``, ``-e`` with the source removed
  (``chktwo``); CI's ``plangate check --as agent --base main --head pr`` is recorded, then
  the agent merges ``pr`` ``--no-ff`` before P2: each prediction must be what P2 did
  (``start`` iff the plan started; docs/approvals.md, ``plangate check``: "the prediction is
  the controller's decision for the history as it is now").

P2, gap 3, P3, P4; the controller's audit and a fresh clone's.

What must hold: see ``WANT`` (runs of the first tag, of the gate's tag): nothing runs twice,
an action before a gate never runs again, every counted run named an allowed approver who
did not write it (never the agent), and the fresh clone's audit agrees with the controller's.

Seen (round 79): 2 ids BROKE (strict xfails), one class, CI's prediction only:
**``plangate check`` predicts ``start`` for both plans of one version a pull request
brings** (``test_check_predicts_what_the_merge_then_did[chkmv]``, ``[chktwo]``): Alice's
approval of ``plans/<v>`` on main, the agent's pull request moving it to ``<v>-d`` with a
byte-exact copy at ``<v>-e`` (or copying it to both and removing the source); ``check --as
agent`` says ``start`` for ``plans/<v>-d`` AND ``plans/<v>-e``; after the merge the pass
starts ``-d`` once on her carried approval and refuses ``-e`` ``E_ALREADY_EXECUTED`` ("this
exact plan ... already ran here as plans/<v>-d (started in the same pass)"). Nothing ran
twice (the controller held); CI told the reviewer two runs would start. Should
(docs/approvals.md, ``plangate check``: "decides with the controller's own function, so the
prediction is the controller's decision"; "A version whose start the controller's commits
published is refused ``E_ALREADY_EXECUTED`` as the controller refuses it"): one plan of a
hash predicted ``start``, each other plan of that hash in the same merge ``refuse``
``E_ALREADY_EXECUTED``, as the pass decides them (``chkctl``'s plain move was predicted
``start`` and started).
Fixed (2026-12-01, r79sidelapse): check decided each plan alone; the pass's claim of a
started version (its ``_claims``, "started in the same pass") was the service's own. The
rule now lives in ``controller.approval.verdicts`` (``claim_start``, ``started_in_pass``),
used by the pass and by check alike: check decides the plans in the pass's order (sorted
ids) and a start claims its version, so ``chkmv-d``/``chktwo-d`` are predicted ``start``
and ``-e`` ``refuse`` ``E_ALREADY_EXECUTED``, as P2 then did (a plan the merge leaves alone
that holds an open request for the same version, a copy's approved source, is decided too,
unreported: tests/commands/test_check.py).

Otherwise no break; every other id held, the fresh clone's audit agreed on each. Git's
clean join of the agent's move and Alice's approval ran once on hers when she merged one
side (``joinab``, ``joinba``); ``joinagent`` (the agent merging her unsigned approval branch
after its move) is the agent's request, ``E_APPROVER_NOT_ALLOWED``, as docs/approvals.md,
"Approvals inside a pull request", says (a branch's commit counts only signed with a
``Plan-Approved:`` trailer; the merger is the approver). A plan paused at a gate and moved
(``gatemv``) or moved after its gate approval (``gatemvappr``: a gate approval is no first
approval and is not carried) never ran its first action again; its gate at the new path is
``E_ALREADY_EXECUTED`` and the run at the old path stays paused ("a started plan moved ...
never runs again"); ``gatecopy`` answered the gate once at its path, the copy
``E_ALREADY_EXECUTED``. ``swapalice`` and ``notesinto``: Alice's carried approval of the
agent's plan moved INTO a folder she wrote (her own plan's, swapped out; her note's) is
``E_SELF_APPROVAL`` ("The path's writers stay"; round 77 saw the same for Bob); her plan,
swapped out, ran once on Bob's. Edits, rejections and resets after the carrying move and
before any pass voided it (``edithen`` ``E_PLAN_HASH_MISMATCH``, ``mvthenrej``,
``mvthenreset``); ``ranback`` never ran again; ``revertmv``, ``chain`` (her approving move,
then the agent's), ``ontorej`` (onto a path Alice rejected) and ``deeper`` (``<v>/sub``) ran
once on hers. Conservative, not a break: ``parked`` (a stop in ``drafts/`` between two
commits) carried nothing, the return read as the agent's request (``E_APPROVER_NOT_ALLOWED``).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, Lab, cases, clone_audit
from policykit import agent_plan as plan
from test_round2_execution_kit import shared
from test_round73_approve_ownedbytes import Clock, _f

ALL = [
    "joinab",
    "joinba",
    "joinagent",
    "gatemv",
    "gatemvappr",
    "gatecopy",
    "swapalice",
    "notesinto",
    "cmtmv",
    "edithen",
    "mvthenrej",
    "mvthenreset",
    "revertmv",
    "ranback",
    "chain",
    "ontorej",
    "deeper",
    "parked",
    "chkctl",
    "chkmv",
    "chktwo",
]
CHECKS = ["chkctl", "chkmv", "chktwo"]
GATES = ["gatemv", "gatemvappr", "gatecopy"]
JOINS = ["joinab", "joinba", "joinagent"]

#: id -> ((least, most) runs of tag <v>, (least, most) runs of tag <v>-2)
WANT: dict[str, tuple[tuple[int, int], tuple[int, int]]] = {
    "joinab": ((1, 1), (0, 0)),
    "joinba": ((1, 1), (0, 0)),
    "joinagent": ((0, 0), (0, 0)),
    "gatemv": ((1, 1), (0, 0)),
    "gatemvappr": ((1, 1), (0, 0)),
    "gatecopy": ((1, 1), (1, 1)),
    "swapalice": ((0, 0), (0, 0)),
    "notesinto": ((0, 0), (0, 0)),
    "cmtmv": ((1, 1), (0, 0)),
    "edithen": ((0, 0), (0, 0)),
    "mvthenrej": ((0, 0), (0, 0)),
    "mvthenreset": ((0, 0), (0, 0)),
    "revertmv": ((1, 1), (0, 0)),
    "ranback": ((1, 1), (0, 0)),
    "chain": ((1, 1), (0, 0)),
    "ontorej": ((1, 1), (0, 0)),
    "deeper": ((1, 1), (0, 0)),
    "parked": ((0, 0), (0, 0)),
    "chkctl": ((1, 1), (0, 0)),
    "chkmv": ((1, 1), (0, 0)),
    "chktwo": ((1, 1), (0, 0)),
}

#: id -> (folder, what the controller's row says of the plan that must not run there)
REFUSED: dict[str, tuple[str, str]] = {
    "joinagent": ("joinagent-d", "E_APPROVER_NOT_ALLOWED"),
    "gatemv": ("gatemv-d", "E_ALREADY_EXECUTED"),
    "gatemvappr": ("gatemvappr-d", "E_ALREADY_EXECUTED"),
    "gatecopy": ("gatecopy-c", "E_ALREADY_EXECUTED"),
    "swapalice": ("swapalice-w", "E_SELF_APPROVAL"),
    "notesinto": ("notesinto-d", "E_SELF_APPROVAL"),
    "edithen": ("edithen-d", "E_PLAN_HASH_MISMATCH"),
    "mvthenrej": ("mvthenrej-d", '"status": "rejected"'),
    "mvthenreset": ("mvthenreset-d", "waiting for an approval"),
    "ranback": ("ranback", "E_ALREADY_EXECUTED"),
    "parked": ("parked-d", "E_APPROVER_NOT_ALLOWED"),
    "chkmv": ("chkmv-e", "E_ALREADY_EXECUTED"),
    "chktwo": ("chktwo-e", "E_ALREADY_EXECUTED"),
}
REF = sorted(REFUSED)

BROKEN: dict[str, Any] = {}


def gated(v: str) -> str:
    return plan(v) + (
        f'  - id: 2\n    tool: rec\n    why: "agent: second {v}"\n'
        f'    requires_approval: true\n    params: {{tag: "{v}-2"}}\n'
    )


def folders(v: str) -> set[str]:
    return {f"plans/{v}", f"plans/{v}/sub"} | {f"plans/{v}-{s}" for s in ("d", "c", "w", "t", "e")}


def _cp(lab: Lab, src: str, dst: str) -> None:
    _f(lab, dst).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(_f(lab, src), _f(lab, dst))


def _check(lab: Lab, head: str, merger: str) -> dict[str, str]:
    """``plangate check --as merger`` of ``head`` into main: outcome by plan."""
    result = lab.cli(
        "check", "--config", str(lab.config), "--base", "main", "--head", head,
        "--as", merger, "--format", "json", cwd=lab.repo,
    )  # fmt: skip
    try:
        report = json.loads(result.stdout)
    except ValueError:
        return {"raw": result.stdout[-2000:] + result.stderr[-2000:]}
    return {row["plan"]: row["outcome"] for row in report.get("plans", [])}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    c = Clock(lab)
    g = lab.git
    lab.write("swapalice-w", plan("swapalice-w"))
    lab.write("notesinto-d", "alice's notes\n", "NOTES.md")
    c.commit("alice: her plan, her notes", who=ALICE)
    for v in ALL:
        lab.write(v, gated(v) if v in GATES else plan(v))
    lab.write("ontorej-t", plan("ontorej-t"))
    c.commit("agent plans")
    c.run()  # P0
    for v in [*GATES, "ranback"]:
        lab.set_status(v, "approved")
    lab.set_status("ontorej-t", "rejected")
    c.commit("alice: approve (gap 1)", who=ALICE)
    c.run()  # P1
    lab.p1 = {v: (len(lab.calls(v)), lab.codes(v)[:600]) for v in ALL}  # type: ignore[attr-defined]
    # the joins' branches
    for v in JOINS:
        c.git("checkout", "-q", "-b", f"pa-{v}", "main")
        lab.set_status(v, "approved")
        c.commit(f"alice: approve {v}", who=ALICE)
        c.git("checkout", "-q", "-b", f"pb-{v}", "main")
        g("mv", f"plans/{v}", f"plans/{v}-d")
        c.commit(f"agent: move {v}")
        c.git("checkout", "-q", "main")
    c.git("merge", "-q", "--no-ff", "-m", "alice merges pa-joinab", "pa-joinab", who=ALICE)
    c.git("merge", "-q", "--no-ff", "-m", "agent merges pb-joinab", "pb-joinab")
    c.git("merge", "-q", "--no-ff", "-m", "agent merges pb-joinba", "pb-joinba")
    c.git("merge", "-q", "--no-ff", "-m", "alice merges pa-joinba", "pa-joinba", who=ALICE)
    c.git("merge", "-q", "--no-ff", "-m", "agent merges pb-joinagent", "pb-joinagent")
    c.git("merge", "-q", "--no-ff", "-m", "agent merges pa-joinagent", "pa-joinagent")
    lab.joined = {v: _f(lab, f"{v}-d").read_text() for v in JOINS}  # type: ignore[attr-defined]
    # Alice's approvals on the line
    for v in ("swapalice", "notesinto", "cmtmv", "edithen", "mvthenrej", "mvthenreset"):
        lab.set_status(v, "approved")
    lab.set_status("revertmv", "approved")
    lab.set_status("gatemvappr", "approved")
    for v in CHECKS:
        lab.set_status(v, "approved")
    for v in ("ontorej", "deeper", "parked"):
        lab.set_status(v, "approved")
    c.commit("alice: approve (gap 2)", who=ALICE)
    g("mv", "plans/chain", "plans/chain-d")
    lab.set_status("chain-d", "approved")
    c.commit("alice: move chain, approving with the move", who=ALICE)
    # agent commit A
    g("mv", "plans/gatemv", "plans/gatemv-d")
    g("mv", "plans/gatemvappr", "plans/gatemvappr-d")
    _cp(lab, "gatecopy", "gatecopy-c")
    a, w = _f(lab, "swapalice").read_bytes(), _f(lab, "swapalice-w").read_bytes()
    _f(lab, "swapalice").write_bytes(w)
    _f(lab, "swapalice-w").write_bytes(a)
    g("mv", "plans/notesinto/PLAN.yml", "plans/notesinto-d/PLAN.yml")
    g("mv", "plans/cmtmv", "plans/cmtmv-d")
    p = _f(lab, "cmtmv-d")
    p.write_text(p.read_text() + "# moved by the agent\n")
    for v in ("edithen", "mvthenrej", "mvthenreset", "ranback"):
        g("mv", f"plans/{v}", f"plans/{v}-d")
    g("rm", "-q", "-r", "plans/ontorej-t")
    g("mv", "plans/ontorej", "plans/ontorej-t")
    (lab.repo / "plans" / "deeper" / "sub").mkdir()
    g("mv", "plans/deeper/PLAN.yml", "plans/deeper/sub/PLAN.yml")
    (lab.repo / "drafts").mkdir()
    g("mv", "plans/parked", "drafts/parked")
    c.commit("agent: moves (A)")
    g("mv", "plans/revertmv", "plans/revertmv-d")
    lab.revert_of = c.commit("agent: move revertmv")  # type: ignore[attr-defined]
    c.git("revert", "--no-edit", lab.revert_of)  # type: ignore[attr-defined]
    # agent commit B
    p = _f(lab, "edithen-d")
    t = p.read_text()
    new, n = re.subn(r'why: "agent: record', 'why: "agent: (edited) record', t, count=1)
    assert n == 1, t
    p.write_text(new)
    lab.set_status("mvthenreset-d", "pending_approval")
    g("mv", "plans/ranback-d", "plans/ranback")
    g("mv", "plans/chain-d", "plans/chain-c")
    g("mv", "drafts/parked", "plans/parked-d")
    c.commit("agent: after the moves (B)")
    lab.set_status("mvthenrej-d", "rejected")
    c.commit("bob: reject mvthenrej-d", who=BOB)
    # the agent's pull request: a plain move, a move with a copy, two copies (source removed)
    c.git("checkout", "-q", "-b", "pr", "main")
    g("mv", "plans/chkctl", "plans/chkctl-d")
    g("mv", "plans/chkmv", "plans/chkmv-d")
    _cp(lab, "chkmv-d", "chkmv-e")
    _cp(lab, "chktwo", "chktwo-d")
    _cp(lab, "chktwo", "chktwo-e")
    g("rm", "-q", "-r", "plans/chktwo")
    c.commit("agent: pull request moving approved plans")
    c.git("checkout", "-q", "main")
    lab.predicted = _check(lab, "pr", AGENT[1])  # type: ignore[attr-defined]
    c.git("merge", "-q", "--no-ff", "-m", "agent merges pr", "pr")
    c.run()  # P2
    lab.p2 = {v: (len(lab.calls(v)), len(lab.calls(f"{v}-2"))) for v in ALL}  # type: ignore[attr-defined]
    # gap 3
    for f in ("gatemv-d", "gatecopy", "cmtmv-d"):
        lab.set_status(f, "approved")
    c.commit("alice: gates, cmtmv-d again", who=ALICE)
    for f in ("gatecopy-c", "swapalice", "ranback"):
        lab.set_status(f, "approved")
    c.commit("bob: gatecopy-c's gate, alice's plan, ranback", who=BOB)
    c.run()  # P3
    c.run()  # P4
    lab.final = {v: {f: lab.codes(f[6:])[:1500] for f in folders(v)} for v in ALL}  # type: ignore[attr-defined]
    _code, lab.report = lab.audit("--config", str(lab.config))  # type: ignore[attr-defined]
    lab.fresh, _valid = clone_audit(lab, root)  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r79-joins", _build)


def runs_of(report: dict[str, Any], v: str) -> list[dict[str, Any]]:
    here = folders(v)
    return [
        e for e in report.get("executions", []) if e.get("plan") in here and e.get("approval_valid")
    ]


def said(lab: Lab, v: str) -> str:
    return str((lab.p1[v], lab.p2[v], lab.final[v]))[:4000]  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(ALL, ALL, BROKEN))
def test_the_first_action_runs_as_its_approvals_allow(lab: Lab, vid: str) -> None:
    least, most = WANT[vid][0]
    assert least <= len(lab.calls(vid)) <= most, said(lab, vid)


@pytest.mark.parametrize("vid", cases(ALL, ALL, BROKEN))
def test_the_gated_action_runs_as_its_gate_approvals_allow(lab: Lab, vid: str) -> None:
    least, most = WANT[vid][1]
    assert least <= len(lab.calls(f"{vid}-2")) <= most, said(lab, vid)


@pytest.mark.parametrize("vid", cases(ALL, ALL, BROKEN))
def test_no_run_is_the_agents_or_an_authors(lab: Lab, vid: str) -> None:
    runs = runs_of(lab.report, vid)  # type: ignore[attr-defined]
    for r in runs:
        assert r.get("approver") not in (AGENT[1], None), runs
    if vid == "swapalice":  # her plan, swapped to <v>, on Bob's approval; nothing on hers
        assert len(lab.calls("swapalice-w")) == 1, said(lab, vid)
        assert [(r.get("plan"), r.get("approver")) for r in runs] == [
            ("plans/swapalice", BOB[1])
        ], runs
    else:
        assert len(runs) == len(lab.calls(vid)) + len(lab.calls(f"{vid}-2")), runs


@pytest.mark.parametrize("vid", cases(REF, REF, BROKEN))
def test_the_plan_that_must_not_run_there_says_why(lab: Lab, vid: str) -> None:
    folder, code = REFUSED[vid]
    assert code in lab.final[vid][f"plans/{folder}"], said(lab, vid)  # type: ignore[attr-defined]


#: round 79 (fixed 2026-12-01, r79sidelapse): check predicted ``start`` for both plans of one
#: version a pull request brings; it now claims each start as the pass does
CHECK_BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(CHECKS, CHECKS, CHECK_BROKEN))
def test_check_predicts_what_the_merge_then_did(lab: Lab, vid: str) -> None:
    predicted = lab.predicted  # type: ignore[attr-defined]
    touched = sorted(f for f in folders(vid) if f in predicted)
    assert touched, predicted
    for f in touched:
        started = '"status": "completed"' in lab.final[vid][f]  # type: ignore[attr-defined]
        assert (predicted[f] == "start") == started, (f, predicted, said(lab, vid))


@pytest.mark.parametrize("vid", cases(ALL, ALL, BROKEN))
def test_a_fresh_clone_agrees_with_the_controller(lab: Lab, vid: str) -> None:
    fresh = runs_of(lab.fresh, vid)  # type: ignore[attr-defined]
    mine = runs_of(lab.report, vid)  # type: ignore[attr-defined]
    assert sorted((e.get("plan"), str(e.get("approver"))) for e in mine) == sorted(
        (e.get("plan"), str(e.get("approver"))) for e in fresh
    ), (mine, fresh)
