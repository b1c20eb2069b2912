"""Round 71, bursts: round 70's renames (a plan file removed with its folder's other name added
in the same commit is a rename, ``PLAN.yml`` <-> ``PLAN.yaml``; the plan's state goes on) in
bursts: one commit renaming many plans in every state, approvals made with a rename in one
merge, a rename racing the controller's own commit, renames across a crash mid-burst.

Lab (one, local mode, fake commit dates, ``run --once`` passes). The agent adds ``r-01``..``r-20``,
gated ``rg-01``..``rg-03`` and ``k-01``..``k-06`` (``k-03`` calls ``boom``, which records its
call and, the first time only, SIGKILLs the controller: a crash mid-burst); a pass freezes.
Alice's merge approves ``r-01``..``r-10`` and the gated three: ``r-01``..``r-10`` complete, the
gates pause.

- ``mass``: ONE agent commit renames all twenty ``r-*`` and the three gates to ``PLAN.yaml``
  (completed, pending and paused plans alike; ``r-20`` also gets an edit); a pass.
- ``burst``: Alice's review branch approves ``r-11``..``r-14`` as they are (``PLAN.yaml``),
  approves ``r-15``/``r-16`` AND renames them back to ``PLAN.yml`` in the same commit,
  approves the gates of ``rg-01``/``rg-02`` (``PLAN.yaml``) and of ``rg-03`` with a rename
  back; merged ``--no-ff`` (one merge approving nine); a pass.
  Controls in the same burst, on main: ``r-21`` approved and renamed back in one commit of
  hers; ``r-22`` renamed back by her, then approved in her next commit.
- ``race``: Alice approves ``r-17``/``r-18`` on main; the agent branches there and renames both
  back to ``PLAN.yml``; a pass runs them (the controller's commits write ``PLAN.yaml``); the
  agent then merges its branch (git carries the controller's changes onto the renamed file);
  a pass.
- ``redit``: Alice approves ``r-19``; the agent renames it back with its ``tag`` edited (status
  still ``approved``) in one commit; a pass. ``r-20`` (renamed with an edit while pending in
  ``mass``): Alice approves it; a pass.
- ``crash``: Alice's merge approves ``k-01``..``k-06``; the pass is killed in ``k-03``; the agent's
  one commit renames all six to ``PLAN.yaml``; the restart pass; one more.

Asserted per id: what Alice approved ran exactly once, nothing ran twice, nothing the agent
edited ran; the ``status`` row shows the state the controller wrote (completed plans stay
``completed`` with approver alice, pending stay ``pending_approval``); ``audit-*``: ``plangate
audit --config`` lists one valid run per plan that ran (a gate's resume one more).

Seen. BROKEN (6 ids, 2 classes). ``rename-approve`` (``burst-renamed-*``): Alice's review
branch approves ``r-15``/``r-16`` and renames them back to ``PLAN.yml`` in the same commit,
merged ``--no-ff`` with seven other approvals: ``E_SELF_APPROVAL`` ("alice wrote or changed
this plan's content"), never run, no valid run; the same on main (``main-renamed``: approve and
rename in one commit; ``main-renamed-later``: rename, then approve) ran once. ``rename-gate``
(``burst-gate-renamed-*``): her gate approval of the paused ``rg-03`` made with a rename back,
in the same merge: refused ``E_ALREADY_EXECUTED`` ("this exact plan already ran here as
plans/rg-03 ... a copy, move or rewritten history of it does not run again") and the controller
COMMITS the paused run as ``pending_approval`` (row pending_approval, approver alice); action 2
never runs (``rg-01``/``rg-02``, approved in place in the same merge, ran action 2 once).
HELD: the agent's one commit renaming 22 plans (ten completed, pending, three paused) changed
no state (completed rows stay completed/alice, pending stay ``pending_approval``, paused
``awaiting_approval``), nothing ran again; her plain approvals in ``PLAN.yaml`` ran once;
``race`` (the agent's rename branch forked before the controller's outcome commits, merged
after them: git carried the completed file onto ``PLAN.yml``) no rerun, rows completed/alice;
``redit`` (the agent's rename with an edit of an approved plan) ``E_PLAN_HASH_MISMATCH``,
nothing ran; ``r-20`` (renamed with an edit while pending) ran its edited content once on her
approval; ``crash``: the burst killed in ``k-03``, all six renamed before the restart: the
other five ran once each, ``k-03`` ``failed`` ``E_ACTION_IN_DOUBT`` (never twice); ``plangate
audit --config`` lists one valid run per plan that ran.

Fixed (2026-11-30): ``burst-renamed-*``, ``burst-gate-renamed-*``. A merge's diff against its
first parent is read with no rename pairing, and the move a commit on the line is read as
(``Lifecycle._move_source``) was never asked of a merge: the ``PLAN.yml`` it adds was a new
file the merger touched (her name among the plan's changers: ``E_SELF_APPROVAL``) and a new
plan "from nothing", whose approval met the run of its version already recorded
(``E_ALREADY_EXECUTED``, the paused run committed ``pending_approval``; so did a gate approval
made with a rename and a comment, on the line too). A rename between the folder's two names
is the edit in place it is in any commit, a merge's included, with or without an edit
(``Lifecycle._rename_edit``): the same plan, its state going on, never a new plan; one that
keeps the bytes (all, or all but a plain status line) is no one's writing
(``Lifecycle._kept_rename``); one with a comment of hers is still her touch
(``E_SELF_APPROVAL``, the paused run left paused: tests/approval/test_kept_moves.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from advkit import ALICE, Lab, cases, plan_text
from burstkit import boom_lab, boom_plan, date_steps, gated
from test_round2_execution_kit import shared

R = [f"r-{i:02d}" for i in range(1, 23)]
RG = ["rg-01", "rg-02", "rg-03"]
K = [f"k-{i:02d}" for i in range(1, 7)]
BOOM = "k-03"
BROKEN: dict[str, object] = {}


TAGS = [*R, *(f"{g}-{n}" for g in RG for n in (1, 2)), *K, "r-19x", "r-20x"]


def _counts(lab: Lab) -> dict[str, int]:
    return {t: len(lab.calls(t)) for t in TAGS}


def _rows(lab: Lab) -> dict[str, dict]:
    out = lab.cli("status", "--json", "--config", str(lab.config)).stdout
    return {
        r["plan"][len("plans/") :]: {
            k: r.get(k) for k in ("status", "approver", "last_event", "waiting", "reason")
        }
        for r in json.loads(out)
    }


def _mv(lab: Lab, slug: str, to: str) -> None:
    src = "PLAN.yaml" if to == "PLAN.yml" else "PLAN.yml"
    lab.git("mv", f"plans/{slug}/{src}", f"plans/{slug}/{to}")


def _build(root: Path) -> Lab:
    lab = boom_lab(root)
    date = date_steps(lab, 1790000000)
    date()
    for v in R:
        lab.write(v, plan_text(v))
    for g in RG:
        lab.write(g, gated(g))
    for k in K:
        lab.write(k, boom_plan(k) if k == BOOM else plan_text(k))
    lab.commit("agent plans")
    lab.run()
    date()
    lab.git("checkout", "-q", "-b", "alice/one")
    for v in [*R[:10], *RG]:
        lab.set_status(v, "approved")
    lab.commit("approve ten and three gated", ALICE)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge alice/one", "alice/one", who=ALICE)
    lab.run()
    lab.first = _counts(lab)  # type: ignore[attr-defined]
    lab.rows0 = _rows(lab)  # type: ignore[attr-defined]
    # mass: one commit renames every r-* and rg-* (r-20 also edited)
    date()
    for v in [*R, *RG]:
        _mv(lab, v, "PLAN.yaml")
    path = lab.repo / "plans" / "r-20" / "PLAN.yaml"
    path.write_text(path.read_text().replace('tag: "r-20"', 'tag: "r-20x"'))
    lab.commit("rename every plan to PLAN.yaml")
    lab.run()
    lab.mass = _counts(lab)  # type: ignore[attr-defined]
    lab.rows_mass = _rows(lab)  # type: ignore[attr-defined]
    # burst: one merge approving nine, three of them with a rename back
    date()
    lab.git("checkout", "-q", "-b", "alice/two")
    for v in ["r-11", "r-12", "r-13", "r-14", "r-15", "r-16", *RG]:
        lab.set_status(v, "approved", filename="PLAN.yaml")
    for v in ["r-15", "r-16", "rg-03"]:
        lab.git("add", "-A")
        _mv(lab, v, "PLAN.yml")
    lab.commit("approve nine, three renamed back", ALICE)
    lab.git("checkout", "-q", "main")
    date()  # controls on main, same burst: approve+rename in one commit; rename, then approve
    lab.set_status("r-21", "approved", filename="PLAN.yaml")
    lab.git("add", "-A")
    _mv(lab, "r-21", "PLAN.yml")
    lab.commit("approve r-21, renamed back", ALICE)
    _mv(lab, "r-22", "PLAN.yml")
    lab.commit("rename r-22 back", ALICE)
    lab.set_status("r-22", "approved")
    lab.commit("approve r-22", ALICE)
    lab.git("merge", "-q", "--no-ff", "-m", "merge alice/two", "alice/two", who=ALICE)
    lab.run()
    # race: the agent's rename branch forked before the controller's commits, merged after
    date()
    for v in ["r-17", "r-18"]:
        lab.set_status(v, "approved", filename="PLAN.yaml")
    lab.commit("approve r-17 r-18", ALICE)
    lab.git("checkout", "-q", "-b", "agent/ren")
    for v in ["r-17", "r-18"]:
        _mv(lab, v, "PLAN.yml")
    lab.commit("rename back")
    lab.git("checkout", "-q", "main")
    lab.run()
    date()
    lab.git("merge", "-q", "--no-ff", "-m", "merge agent/ren", "agent/ren", who=AGENT_)
    lab.merged_race = lab.git("ls-files", "plans/r-17", "plans/r-18")  # type: ignore[attr-defined]
    lab.run()
    # redit: her approval, then the agent's rename with an edit; r-20 approved as edited
    date()
    lab.set_status("r-19", "approved", filename="PLAN.yaml")
    lab.commit("approve r-19", ALICE)
    date()
    _mv(lab, "r-19", "PLAN.yml")
    path = lab.repo / "plans" / "r-19" / "PLAN.yml"
    path.write_text(path.read_text().replace('tag: "r-19"', 'tag: "r-19x"'))
    lab.commit("rename r-19 back (and a small fix)")
    lab.run()
    date()
    lab.set_status("r-20", "approved", filename="PLAN.yaml")
    lab.commit("approve r-20", ALICE)
    lab.run()
    # crash: a burst killed in k-03, the six renamed, the restart
    date()
    lab.git("checkout", "-q", "-b", "alice/k")
    for k in K:
        lab.set_status(k, "approved")
    lab.commit("approve the k burst", ALICE)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge alice/k", "alice/k", who=ALICE)
    killed = lab.run(check=False)
    lab.killed = {"rc": killed.returncode, "mid": _counts(lab)}  # type: ignore[attr-defined]
    lab.git("reset", "-q", "--hard")
    date()
    for k in K:
        _mv(lab, k, "PLAN.yaml")
    lab.commit("rename the k burst")
    restart = lab.run(check=False)
    lab.restart = {"rc": restart.returncode, "err": restart.stderr[-1500:]}  # type: ignore[attr-defined]
    date()
    lab.run(check=False)
    lab.after = _counts(lab)  # type: ignore[attr-defined]
    lab.rows = _rows(lab)  # type: ignore[attr-defined]
    _, report = lab.audit(config=lab.config)
    lab.valid = {  # type: ignore[attr-defined]
        s: sum(
            1
            for e in report.get("executions", [])
            if e.get("plan") == f"plans/{s}" and e.get("approval_valid")
        )
        for s in [*R, *RG, *K]
    }
    (root / "out.json").write_text(
        json.dumps(
            {
                k: getattr(lab, k)
                for k in (
                    "first",
                    "mass",
                    "rows_mass",
                    "killed",
                    "restart",
                    "after",
                    "rows",
                    "valid",
                    "merged_race",
                )
            },
            indent=1,
            default=str,
        )
    )
    return lab


AGENT_ = ("Agent", "agent@example.com")


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r71-burst-renames", _build)


def test_the_lab(lab: Lab) -> None:
    first = lab.first  # type: ignore[attr-defined]
    assert all(first[v] == 1 for v in R[:10]), first
    assert all(first[f"{g}-1"] == 1 and first[f"{g}-2"] == 0 for g in RG), first
    assert lab.killed["rc"] != 0, lab.killed  # type: ignore[attr-defined]


#: id -> (plans, what each must have run in all, the row status)
EXPECT: dict[str, tuple[list[str], int, str]] = {
    "mass-done": (R[:10], 1, "completed"),
    "mass-pending": (["r-09"], 1, "completed"),
    "burst-plain": (["r-11", "r-12", "r-13", "r-14"], 1, "completed"),
    "burst-renamed": (["r-15", "r-16"], 1, "completed"),
    "burst-gate": (["rg-01", "rg-02"], 1, "completed"),
    "burst-gate-renamed": (["rg-03"], 1, "completed"),
    "main-renamed": (["r-21"], 1, "completed"),
    "main-renamed-later": (["r-22"], 1, "completed"),
    "race": (["r-17", "r-18"], 1, "completed"),
    "redit": (["r-19"], 0, ""),
    "edited-pending": (["r-20"], 0, "completed"),
    "crash-others": (["k-01", "k-02", "k-04", "k-05", "k-06"], 1, "completed"),
    "crash-boom": ([BOOM], 1, ""),
}
IDS = [f"{v}-{what}" for v in EXPECT for what in ("run", "row", "audit")]


def _ran(lab: Lab, slug: str) -> int:
    after = lab.after  # type: ignore[attr-defined]
    if slug.startswith("rg-"):
        return after[f"{slug}-2"] if after[f"{slug}-1"] == 1 else 99
    return after[slug]


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))  # type: ignore[arg-type]
def test_renames_in_a_burst(lab: Lab, vid: str) -> None:
    v, what = vid.rsplit("-", 1)
    slugs, want, status = EXPECT[v]
    rows = lab.rows  # type: ignore[attr-defined]
    said = {s: rows.get(s) for s in slugs}
    if what == "run":
        got = {s: _ran(lab, s) for s in slugs}
        assert got == {s: want for s in slugs}, (got, said)
        if v == "redit":
            assert lab.after["r-19x"] == 0, said  # type: ignore[attr-defined]
        if v == "edited-pending":
            assert lab.after["r-20x"] == 1, said  # type: ignore[attr-defined]
    elif what == "row":
        if v == "mass-pending":
            mass = lab.rows_mass  # type: ignore[attr-defined]
            got = {s: (mass.get(s) or {}).get("status") for s in R[10:19]}
            assert set(got.values()) == {"pending_approval"}, got
            gates = {g: (mass.get(g) or {}).get("status") for g in RG}
            assert set(gates.values()) == {"awaiting_approval"}, gates
            done = {s: (mass.get(s) or {}).get("approver") for s in R[:10]}
            assert set(done.values()) == {"alice@example.com"}, done
            return
        if v == "crash-boom":
            assert (rows.get(BOOM) or {}).get("status") in ("failed", "completed"), said
            return
        if v == "redit":
            assert (rows.get("r-19") or {}).get("status") not in ("executing", "completed"), said
            return
        for s in slugs:
            assert (rows.get(s) or {}).get("status") == status, said
            assert (rows.get(s) or {}).get("approver") == "alice@example.com", said
    else:
        valid = lab.valid  # type: ignore[attr-defined]
        extra = {s: (2 if s.startswith("rg-") else want) for s in slugs}
        if v == "crash-boom":
            extra = {BOOM: 1}
        if v == "edited-pending":
            extra = {"r-20": 1}
        got = {s: valid[s] for s in slugs}
        assert got == extra, (got, said)
