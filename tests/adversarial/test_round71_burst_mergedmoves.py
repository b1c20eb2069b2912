"""Round 71, bursts: round 70's merged moves (a merge's commits asked with their whole plans
folder, ``Lifecycle._merged_move``) and swaps, in bursts: one merge moving and approving many
plans at once, a writer's plans moved in the same merge, completed and approved plans moved
by the agent's merge.

Lab (one, local mode, fake commit dates, ``run --once`` passes). The agent adds ``m-01``..``m-12``,
``a-01``..``a-04`` and ``c-01``..``c-04``; Bob (an approver, ``*@ops.example.com``) adds
``b-01``..``b-04``; a pass freezes. Alice approves ``c-01``..``c-04``: they complete.

- ``burst``: Alice's review branch, merged ``--no-ff`` (one merge approving thirteen):
  ``mvs`` ``m-01``..``m-04`` moved to ``n-01``..``n-04`` and approved in the move's commit;
  ``mvl`` ``m-05``/``m-06`` moved in one commit, approved in the next; ``swap`` ``m-07`` <->
  ``m-08`` (``PLAN.yml`` bytes traded) and both approved in that commit; ``rot`` ``m-09`` ->
  ``m-10`` -> ``m-11`` -> ``m-09`` in one commit, the three approved in the next; ``mvyaml``
  ``m-12`` moved to ``n-12/PLAN.yaml`` and approved with the move; ``bob`` Bob's ``b-01``..``b-04``
  moved to ``o-01``..``o-04`` byte for byte; ``mvl-alone`` ``m-13`` moved alone in its own
  commit of the branch, approved in the next; ``mvl-main`` ``m-14`` moved by her on main and
  approved on main after the merge (same pass). A pass; Bob then approves ``o-01``..``o-04``
  himself; a pass.
- ``cm``: the agent's branch moves the completed ``c-01``..``c-04`` (folder and log) to
  ``d-01``..``d-04``, ``c-01``/``c-02`` with ``status: approved`` written back; merged; a pass.
- ``am``: Alice approves ``a-01``..``a-04`` on main; before a pass the agent's merge moves them
  byte for byte to ``e-01``..``e-04``; a pass.

Asserted per id: what Alice approved ran exactly once (at its new path), Bob's plans never
(``E_SELF_APPROVAL``), completed plans never again, ``am`` at most once; ``audit``: ``plangate
audit --config`` lists as valid exactly the runs that happened.

Seen. BROKEN (9 ids, 1 class, ``move-later``): a byte-exact move made on Alice's review
branch and approved in a LATER commit of that branch is refused ``E_SELF_APPROVAL`` ("alice
wrote or changed this plan's content") once merged ``--no-ff``: ``mvl`` (``git mv`` of two in a
crowded commit), ``rot`` (a rotation of three written in place), ``mvl-alone`` (one ``git mv``
alone in its commit); each never ran, rows ``pending_approval``, no valid run in the audit.
HELD: moves and swaps approved IN the move's commit on the same branch (``mvs``, ``swap``,
``mvyaml``: a move plus a rename to ``PLAN.yaml``) ran once at the new path, approver alice,
one valid run each; ``mvl-main`` (her move on main, approved on main after the merge, same
pass) ran; Bob's plans moved by Alice and approved by Bob: ``E_SELF_APPROVAL``, never ran;
completed plans moved by the agent's merge never ran again (re-marked ``approved``:
``E_ALREADY_EXECUTED``; kept ``completed``: an ignored illegal transition, no valid run);
``am`` (her approved plans moved by the agent's merge before a pass): refused
``E_APPROVER_NOT_ALLOWED`` (the agent's commit carries the approved status), never ran.

Fixed (2026-11-30): ``mvl-*``, ``rot-*``, ``mvl-alone-*``. The merge that brings a plan to a
new path asks who produced its content in the merged branch's history
(``Lifecycle._producers``), and counted every commit whose file there holds that content:
her approval in the NEXT commit, a status change of the moved bytes, was taken for a commit
that made them. A commit produces a content only where it changed the content at that path
(not its status alone) and is no move (``_merged_move``): a move writes nothing wherever and
whenever it is approved (in the move's commit, a later commit of the branch, the merge, on
the line). Bob's plans she moved stay his (``bob-*`` held), and the agent's bytes its own.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, cases, plan_text
from burstkit import date_steps
from test_round2_execution_kit import shared

M = [f"m-{i:02d}" for i in range(1, 15)]
A = [f"a-{i:02d}" for i in range(1, 5)]
C = [f"c-{i:02d}" for i in range(1, 5)]
B = [f"b-{i:02d}" for i in range(1, 5)]
BROKEN: dict[str, object] = {}
TAGS = [*M, *A, *C, *B]


def _rows(lab: Lab) -> dict[str, dict]:
    out = lab.cli("status", "--json", "--config", str(lab.config)).stdout
    return {
        r["plan"][len("plans/") :]: {
            k: r.get(k) for k in ("status", "approver", "last_event", "reason")
        }
        for r in json.loads(out)
    }


def _appr(lab: Lab, folder: str, filename: str = "PLAN.yml") -> None:
    lab.set_status(folder, "approved", filename=filename)


def _build(root: Path) -> Lab:
    lab = Lab(root / "lab")
    date = date_steps(lab, 1790000000)
    date()
    for v in [*M, *A, *C]:
        lab.write(v, plan_text(v))
    lab.commit("agent plans")
    for v in B:
        lab.write(v, plan_text(v))
    lab.commit("bob's plans", BOB)
    lab.run()
    date()
    for v in C:
        _appr(lab, v)
    lab.commit("approve c", ALICE)
    lab.run()
    lab.first = {t_: len(lab.calls(t_)) for t_ in TAGS}  # type: ignore[attr-defined]
    # burst
    date()
    lab.git("checkout", "-q", "-b", "alice/moves")
    for i in range(1, 5):
        lab.git("mv", f"plans/m-{i:02d}", f"plans/n-{i:02d}")
        _appr(lab, f"n-{i:02d}")
    lab.git("mv", "plans/m-12", "plans/n-12")
    lab.git("mv", "plans/n-12/PLAN.yml", "plans/n-12/PLAN.yaml")
    _appr(lab, "n-12", "PLAN.yaml")
    lab.commit("move and approve five", ALICE)
    for i in (5, 6):
        lab.git("mv", f"plans/m-{i:02d}", f"plans/n-{i:02d}")
    s7, s8 = lab.read("m-07"), lab.read("m-08")
    lab.write("m-07", s8)
    lab.write("m-08", s7)
    _appr(lab, "m-07")
    _appr(lab, "m-08")
    r9, r10, r11 = lab.read("m-09"), lab.read("m-10"), lab.read("m-11")
    lab.write("m-10", r9)
    lab.write("m-11", r10)
    lab.write("m-09", r11)
    for i, v in enumerate(B, 1):
        lab.git("mv", f"plans/{v}", f"plans/o-{i:02d}")
    lab.commit("move two, swap two (approved), rotate three, move bob's four", ALICE)
    lab.git("mv", "plans/m-13", "plans/n-13")
    lab.commit("move m-13 alone", ALICE)
    for v in ("n-05", "n-06", "m-09", "m-10", "m-11", "n-13"):
        _appr(lab, v)
    lab.commit("approve the moved three and the rotated three", ALICE)
    lab.git("checkout", "-q", "main")
    date()
    lab.git("mv", "plans/m-14", "plans/n-14")
    lab.commit("move m-14 on main", ALICE)
    lab.git("merge", "-q", "--no-ff", "-m", "merge alice/moves", "alice/moves", who=ALICE)
    _appr(lab, "n-14")
    lab.commit("approve n-14", ALICE)
    lab.run()
    date()
    for i in range(1, 5):
        _appr(lab, f"o-{i:02d}")
    lab.commit("bob approves the moved four", BOB)
    lab.run()
    # cm: the agent moves completed plans, two re-marked approved
    date()
    lab.git("checkout", "-q", "-b", "agent/cm")
    for i, v in enumerate(C, 1):
        lab.git("mv", f"plans/{v}", f"plans/d-{i:02d}")
    for v in ("d-01", "d-02"):
        _appr(lab, v)
    lab.commit("tidy: move c to d")
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge agent/cm", "agent/cm", who=AGENT)
    lab.run()
    # am: her approvals moved by the agent's merge before a pass
    date()
    for v in A:
        _appr(lab, v)
    lab.commit("approve a", ALICE)
    lab.git("checkout", "-q", "-b", "agent/am")
    for i, v in enumerate(A, 1):
        lab.git("mv", f"plans/{v}", f"plans/e-{i:02d}")
    lab.commit("tidy: move a to e")
    lab.git("checkout", "-q", "main")
    date()
    lab.git("merge", "-q", "--no-ff", "-m", "merge agent/am", "agent/am", who=AGENT)
    lab.run()
    date()
    lab.run()
    lab.after = {t_: len(lab.calls(t_)) for t_ in TAGS}  # type: ignore[attr-defined]
    lab.rows = _rows(lab)  # type: ignore[attr-defined]
    _, report = lab.audit(config=lab.config)
    valid: dict[str, int] = {}
    for e in report.get("executions", []):
        if e.get("approval_valid"):
            valid[e["plan"][len("plans/") :]] = valid.get(e["plan"][len("plans/") :], 0) + 1
    lab.valid = valid  # type: ignore[attr-defined]
    (root / "out.json").write_text(
        json.dumps({k: getattr(lab, k) for k in ("first", "after", "rows", "valid")}, indent=1)
    )
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r71-mergedmoves", _build)


def test_the_lab(lab: Lab) -> None:
    first = lab.first  # type: ignore[attr-defined]
    assert all(first[c] == 1 for c in C) and sum(first.values()) == 4, first


#: id -> [(tag, folder now, runs wanted)]; folder None: no row asserted
EXPECT: dict[str, list[tuple[str, str, int]]] = {
    "mvs": [(f"m-{i:02d}", f"n-{i:02d}", 1) for i in range(1, 5)],
    "mvl": [("m-05", "n-05", 1), ("m-06", "n-06", 1)],
    "mvl-alone": [("m-13", "n-13", 1)],
    "mvl-main": [("m-14", "n-14", 1)],
    "swap": [("m-07", "m-08", 1), ("m-08", "m-07", 1)],
    "rot": [("m-09", "m-10", 1), ("m-10", "m-11", 1), ("m-11", "m-09", 1)],
    "mvyaml": [("m-12", "n-12", 1)],
    "bob": [(b, f"o-{i:02d}", 0) for i, b in enumerate(B, 1)],
    "cm-appr": [("c-01", "d-01", 1), ("c-02", "d-02", 1)],
    "cm-kept": [("c-03", "d-03", 1), ("c-04", "d-04", 1)],
}
IDS = [f"{v}-{w}" for v in EXPECT for w in ("run", "row", "audit")] + ["am-run", "am-audit"]


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))  # type: ignore[arg-type]
def test_moves_in_one_merge(lab: Lab, vid: str) -> None:
    v, w = vid.rsplit("-", 1)
    after, rows, valid = lab.after, lab.rows, lab.valid  # type: ignore[attr-defined]
    if v == "am":
        got = {a: after[a] for a in A}
        said = {f: rows.get(f) for f in [*A, "e-01", "e-02", "e-03", "e-04"]}
        assert all(n <= 1 for n in got.values()), (got, said)
        if w == "audit":
            runs = {f"e-{i:02d}": after[a] for i, a in enumerate(A, 1)}
            got_v = {f: valid.get(f, 0) + valid.get(a, 0) for (f, a) in zip(runs, A, strict=True)}
            assert got_v == runs, (got_v, runs, said)
        return
    spec = EXPECT[v]
    said = {f: rows.get(f) for _, f, _ in spec}
    if w == "run":
        got = {tag: after[tag] for tag, _, _ in spec}
        assert got == {tag: n for tag, _, n in spec}, (got, said)
    elif w == "row":
        for _, folder, _n in spec:
            row = rows.get(folder) or {}
            if v == "bob":
                assert "E_SELF_APPROVAL" in json.dumps(row), said
            elif v == "cm-appr":  # a ran plan moved and re-marked approved: refused
                assert "E_ALREADY_EXECUTED" in json.dumps(row), said
            elif v.startswith("cm"):
                assert row.get("status") in ("completed", None), said
                assert (
                    row.get("status") != "completed" or row.get("approver") == "alice@example.com"
                ), said
            else:
                assert row.get("status") == "completed", said
                assert row.get("approver") == "alice@example.com", said
    else:
        want = {folder: (0 if v.startswith("cm") else n) for _, folder, n in spec}
        got = {folder: valid.get(folder, 0) for _, folder, _ in spec}
        assert got == want, (got, said)
