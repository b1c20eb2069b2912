"""Round 83, approval and policy: more routes into the twin-folder writer gap
(``test_round83_approve_twinwriters``): other spellings of the plan's folder on some
checkout, a note brought by a merge, a note deeper down, a parent folder's twin, and Bob's
approval made with ``plangate approve`` itself.

Lab (one, built once, four ``run --once`` passes). The agent commits its plans (frozen in
pass 1); Bob (an approver) commits one review note per plan, each in a folder that is the
plan's folder (or one above it) on some checkout but spelled otherwise; then Bob approves
each plan (a one-line status edit, or ``plangate approve`` for ``pa``), Alice the control.

Variants (``<slug>:ran`` Bob's approval ran nothing, the control ran once; ``<slug>:audit``
the fresh clone's ``plangate audit`` calls no run on Bob's approval valid and agrees with
``status``):
- ``rr``: the note at ``PLANS/rr/NOTES.md`` (the plans folder's case twin at the root).
- ``mg``: ``plans/MG/NOTES.md`` on Bob's branch, merged ``--no-ff`` by the agent.
- ``dp``: ``plans/DP/deep/NOTES.md`` (a folder below the twin).
- ``dq`` (control of the rule): ``plans/dq/deep/NOTES.md`` (below the plan's own folder).
- ``dt``: ``plans/dt./NOTES.md`` (Windows drops a trailing dot).
- ``sp``: ``plans/sp /NOTES.md`` (Windows drops a trailing blank).
- ``gp``: the child plan ``plans/grp/ch``; the note at ``plans/GRP/ch/NOTES.md`` (a twin of
  the folder above).
- ``pa``: ``plans/PA/NOTES.md``; Bob approves with ``plangate approve plans/pa``.
- ``ok`` (control): the agent's plan approved by Alice runs once.

Seen (round 83), fixed (2026-12-01, r83twinwriter): a folder's writers are keyed by its place
on a checkout (``folder_key`` folds every part by ``names.fold_path``, the backslash split of
``path_parts``; an 8.3 short-named writer folder is matched against the plan's folder by
``same_path``; the plans folder's case twins are read by the history walk), so a file in a twin
folder is exactly what the same file in the plan's folder is: its committer is refused
``E_SELF_APPROVAL`` by the controller, ``check`` and the fresh-clone audit alike. Before the
fix: 14 ids broke, the one class of ``test_round83_approve_twinwriters`` (twin-folder writer):
``rr``, ``mg``, ``dp``, ``dt``, ``sp``, ``gp``, ``pa`` (``:ran`` and ``:audit``); ``dq`` held
(``E_SELF_APPROVAL``: a note below the plan's own folder makes Bob its writer) and ``ok`` ran
once. Every twin-spelled note left Bob no writer: ``plangate status`` ``completed plans/dp ...
bob@ops.example.com ... plangate: complete plans/dp`` beside ``pending_approval plans/dq ...
approval refused: E_SELF_APPROVAL: bob@ops.example.com wrote or changed this plan's content and
cannot approve it``; the fresh clone's ``plangate audit`` called each of the seven runs valid.
``plangate approve plans/pa`` (Bob, his note in ``plans/PA/``) printed ``approved plans/pa in
105cdaf98d89 on main`` with no warning and the plan ran. docs/plan-format.md counts every one
of these spellings one name with the plan's folder ("NTFS makes more names one ... trailing
dots and spaces", case, ``names.same_name``, "compared at every level", ``names.path_twins``);
docs/approvals.md: "Whoever commits any file into a plan's folder ... is a writer of the plan
that folder holds or will hold", and a merge's brought file is its branch's makers' writing.
``rr`` is the weakest: round 80 kept ``Plans/`` "no plans folder" for holding plans, but on a
case-insensitive checkout ``PLANS/rr/NOTES.md`` is the file ``plans/rr/NOTES.md``."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, Lab, cases, clone_audit, plan_text
from mcpkit import PLANGATE
from test_round2_execution_kit import shared

# slug -> (the plan's folder under plans/, the note's path)
SHAPES: dict[str, tuple[str, str]] = {
    "rr": ("rr", "PLANS/rr/NOTES.md"),
    "mg": ("mg", "plans/MG/NOTES.md"),
    "dp": ("dp", "plans/DP/deep/NOTES.md"),
    "dq": ("dq", "plans/dq/deep/NOTES.md"),
    "dt": ("dt", "plans/dt./NOTES.md"),
    "sp": ("sp", "plans/sp /NOTES.md"),
    "gp": ("grp/ch", "plans/GRP/ch/NOTES.md"),
    "pa": ("pa", "plans/PA/NOTES.md"),
    "ok": ("ok", ""),
}


def _put(lab: Lab, rel: str, text: str) -> None:
    path = lab.repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))


def _build(root: Path) -> Lab:
    lab = Lab(root)
    got: dict[str, Any] = {}
    for slug, (folder, _) in SHAPES.items():
        lab.write(folder, plan_text(slug))
    lab.commit("agent: plans", AGENT)
    lab.run()
    note = "Reviewed. Run it with care.\n"
    lab.git("checkout", "-q", "-b", "bobside")
    _put(lab, SHAPES["mg"][1], note)
    lab.commit("bob: note on a branch", BOB)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge bobside", "bobside", who=AGENT)
    for slug, (_, rel) in SHAPES.items():
        if rel and slug != "mg":
            _put(lab, rel, note)
    lab.commit("bob: notes", BOB)
    lab.run()
    for slug, (folder, _) in SHAPES.items():
        if slug not in ("ok", "pa"):
            lab.set_status(folder, "approved")
    lab.commit("bob: approve", BOB)
    done = subprocess.run(
        [PLANGATE, "approve", "--config", str(lab.config), "plans/pa"],
        cwd=lab.repo, env=lab.env(BOB), capture_output=True, text=True, check=False,
    )  # fmt: skip
    got["approve-pa"] = f"{done.returncode} {done.stdout}{done.stderr}"[-800:]
    lab.approve("ok", ALICE)
    lab.run()
    lab.run()
    got["calls"] = {s: len(lab.calls(s)) for s in SHAPES}
    got["rows"] = {
        r["plan"]: r
        for r in json.loads(lab.cli("status", "--json", "--config", str(lab.config)).stdout)
    }
    _report, valid = clone_audit(lab, root)
    got["valid"] = sorted(valid)
    got["log"] = lab.git("log", "--format=%an %s", "-12")
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r83-approve-twinroutes", _build)


IDS = [f"{s}:{w}" for s in SHAPES for w in ("ran", "audit")]
_WHAT = {
    "rr": "Bob's note at PLANS/rr/ (the plans folder's case twin) let his approval run",
    "mg": "Bob's twin note brought by a merge let his approval of plans/mg run",
    "dp": "Bob's note below the twin plans/DP/deep/ let his approval of plans/dp run",
    "dt": "Bob's note in plans/dt./ (NTFS drops the dot) let his approval run",
    "sp": "Bob's note in 'plans/sp /' (NTFS drops the blank) let his approval run",
    "gp": "Bob's note in plans/GRP/ch/ let his approval of plans/grp/ch run",
    "pa": "plangate approve by Bob, his note in plans/PA/, ran plans/pa",
}
BROKEN: dict[str, Any] = {}  # the 14 ids fixed (2026-12-01, r83twinwriter)


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_bobs_note_by_another_route(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    slug, what = vid.split(":")
    plan = f"plans/{SHAPES[slug][0]}"
    if what == "ran":
        want = 1 if slug == "ok" else 0
        assert got["calls"][slug] == want, (got["calls"], got["rows"].get(plan))
    else:
        assert (plan in got["valid"]) == (slug == "ok"), got["valid"]
        ran = sorted(p for p, r in got["rows"].items() if r.get("status") == "completed")
        assert got["valid"] == ran, (got["valid"], ran)


if __name__ == "__main__":
    import tempfile

    os.makedirs("/tmp/atk83a", exist_ok=True)
    out = Path(tempfile.mkdtemp(prefix="r83tr-", dir="/tmp/atk83a"))
    print(json.dumps(_build(out).got, indent=1, ensure_ascii=False, default=str))  # type: ignore[attr-defined]
