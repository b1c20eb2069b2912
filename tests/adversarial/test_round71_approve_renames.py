"""Round 71, approval side: round 70's renames (``lifecycle._renamed``,
``ownrecord._renamed_from``: a plan file removed with its folder's other name added in the same
commit is a rename, the plan's state and approver go on). Does the frozen version still bind
across a rename that also edits, a rename and back through a merge, and a rename that crosses
folders (two plans trading folders while both change name)? Is an approval made with a rename
hers, and is a writer's rename on a merged branch still refused?

Lab (one, local mode, fake dates). The agent commits every plan (``rec`` tag = the folder it
was first written in). P0 freezes. Gap 1 (no pass): Alice approves ``<v>`` where said, then
the agent, Alice or Bob act. P1. Gap 2: approvals after the freeze where said. P2, P3.

The agent after her approval of ``<v>/PLAN.yml`` (F), before the pass (asserted: no edited
bytes and no plan she did not approve ran):

- ``ren-edit``: the agent renames it ``PLAN.yaml`` and edits its tag (``<v>-x``) in one commit,
  ``status: approved`` kept.
- ``ren-edit-back``: renamed ``PLAN.yaml`` byte for byte, then back to ``PLAN.yml`` with the
  edit, two commits.
- ``ren-merge-edit``: the rename with the edit on the agent's branch, merged ``--no-ff``.
- ``ren-mergeback``: the agent renames it ``PLAN.yaml`` byte for byte on main, then merges its
  branch (forked at her approval) that edits ``PLAN.yml``: git carries the edit into
  ``PLAN.yaml``.
- ``rx-cross``: ``<v>`` and ``<v>-o`` (G) trade content while both become ``PLAN.yaml``, each
  folder keeping its status line: ``<v>/PLAN.yaml`` holds G with ``status: approved``.
- ``rx-cross-both``: the same trade byte for byte (F says ``approved`` in ``<v>-o``).

Not hers (asserted: nothing ran):

- ``ren-appr-agent``: the agent renames the plan and sets ``approved`` in one commit
  (``E_APPROVER_NOT_ALLOWED``).
- ``ren-edit-appr``: the agent renames with an edit (the tag ``<v>-x``); Alice approves the
  renamed file before any pass (a version never frozen: ``E_PLAN_NOT_FROZEN``).
- ``b-ren-merge``: Bob's ``NOTES.md`` in the folder; Alice renames the plan ``PLAN.yaml`` on
  her branch, merged ``--no-ff``; Bob approves (``E_SELF_APPROVAL``).
- ``b-ren-cmt-appr``: Bob renames the agent's plan ``PLAN.yaml``, adds a comment line and
  approves, one commit (``E_SELF_APPROVAL``).

Honest (asserted: ran once, approver alice, both audits valid):

- ``h-ren-appr``: Alice renames ``PLAN.yaml`` and approves in one commit.
- ``h-ren-merge-appr``: the same on her branch, merged ``--no-ff`` by Bob: a status a merge
  brings is the merger's approval (docs, "Approvals inside a pull request"), so asserted: ran
  once, approver bob. Controls, merged by Bob too (approver bob): ``h-appr-merge`` (her plain
  approval on her branch), ``h-mv-merge-appr`` (her folder move approving in its commit).
- ``h-ren-yaml-merge``: her rename on her branch, Bob merges ``--no-ff``; she approves after P1.
- ``h-cross-appr``: Alice makes ``<v>`` and ``<v>-o`` trade content byte for byte while both
  become ``PLAN.yaml``, approving ``<v>`` (now G) in that commit: G runs.
- ``h-ren-back-merge``: she renames ``PLAN.yaml`` on main; her branch renames it back, Bob
  merges ``--no-ff``; she approves after P1.
- ``h-ren-after``: she approves F, then renames it ``PLAN.yaml`` byte for byte before the pass.

Seen (round 71): ``h-ren-merge-appr`` BROKE (honest work refused): Alice's byte-exact rename
``PLAN.yml`` -> ``PLAN.yaml`` approving in its commit on her branch, merged ``--no-ff`` by Bob
(the merger's approval): ``E_SELF_APPROVAL`` "bob@ops.example.com wrote or changed this plan's
content", never runs; her plain approval (``h-appr-merge``) or folder move approving in its
commit (``h-mv-merge-appr``) merged by Bob run, approver bob. Should: a rename writes nothing and
the merger is no writer. Held: every agent id (rename with an edit, in two commits, on a merged
branch, the rename on main and the edit merged in through git's rename pairing, both plans
trading folders while becoming ``PLAN.yaml``, with each status line kept or byte-exact): the
edited or other bytes never ran (``E_PLAN_HASH_MISMATCH``, ``E_APPROVER_NOT_ALLOWED``);
``ren-appr-agent``, ``ren-edit-appr``, ``b-ren-merge``, ``b-ren-cmt-appr`` refused, nothing ran;
honest ``h-ren-appr``, ``h-ren-yaml-merge``, ``h-cross-appr``, ``h-ren-back-merge``,
``h-ren-after`` ran, hers. The fresh-clone audit agreed with the controller on every id.

Fixed (2026-11-30, r71merged): ``h-ren-merge-appr``: a rename between ``PLAN.yml`` and
``PLAN.yaml`` that keeps the bytes (all but a plain status line) is no one's writing in any
commit, a merge's included (``Lifecycle._kept_rename``, read by the ambiguity check's
"who touched it"): Bob's merge of her rename-and-approve is his approval, and it runs.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, cases, clone_audit
from pairkit import pair_plan
from policykit import DatedClock
from test_round2_execution_kit import shared

AGENT_IDS = ["ren-edit", "ren-edit-back", "ren-merge-edit", "ren-mergeback", "rx-cross",
             "rx-cross-both"]  # fmt: skip
NOT_HERS = ["ren-appr-agent", "ren-edit-appr", "b-ren-merge", "b-ren-cmt-appr"]
HONEST = ["h-ren-appr", "h-ren-merge-appr", "h-appr-merge", "h-mv-merge-appr",
          "h-ren-yaml-merge", "h-cross-appr", "h-ren-back-merge", "h-ren-after"]  # fmt: skip
#: a status brought by Bob's merge is the merger's approval (docs, "Approvals inside a pull
#: request"); the rest are Alice's
APPROVER = {"h-ren-merge-appr": BOB[1], "h-appr-merge": BOB[1], "h-mv-merge-appr": BOB[1]}
NEVER = {
    **{v: [f"{v}-x"] for v in ("ren-edit", "ren-edit-back", "ren-merge-edit", "ren-mergeback")},
    "rx-cross": ["rx-cross-o"],
    "rx-cross-both": ["rx-cross-both-o"],
    "ren-appr-agent": ["ren-appr-agent"],
    "ren-edit-appr": ["ren-edit-appr", "ren-edit-appr-x"],
    "b-ren-merge": ["b-ren-merge"],
    "b-ren-cmt-appr": ["b-ren-cmt-appr"],
    "h-cross-appr": ["h-cross-appr"],
}
CODE = {
    "ren-appr-agent": "E_APPROVER_NOT_ALLOWED",
    "b-ren-merge": "E_SELF_APPROVAL",
    "b-ren-cmt-appr": "E_SELF_APPROVAL",
}
RUNS = {v: [v] for v in HONEST} | {"h-cross-appr": ["h-cross-appr-o"]}
BROKEN: dict[str, object] = {}


def _p(lab: Lab, slug: str, name: str = "PLAN.yml") -> Path:
    return lab.repo / "plans" / slug / name


def _edit(path: Path, slug: str) -> None:
    text = path.read_text()
    new = text.replace(f'tag: "{slug}"', f'tag: "{slug}-x"')
    assert new != text, text
    path.write_text(new)


def _with_status(text: bytes, status: str) -> bytes:
    lines = text.decode().split("\n")
    for i, line in enumerate(lines[:6]):
        if line.startswith("  status:"):
            lines[i] = f"  status: {status}"
            return "\n".join(lines).encode()
    raise AssertionError(text)


def _cross(lab: Lab, a: str, b: str, keep_status: bool) -> None:
    """``a`` and ``b`` trade content while both become ``PLAN.yaml`` (one commit's work)."""
    ta, tb = _p(lab, a).read_bytes(), _p(lab, b).read_bytes()
    sa, sb = (lab.plan(s)["plan"]["status"] for s in (a, b))
    lab.git("rm", "-q", f"plans/{a}/PLAN.yml", f"plans/{b}/PLAN.yml")
    for s in (a, b):
        _p(lab, s).parent.mkdir(parents=True, exist_ok=True)
    _p(lab, a, "PLAN.yaml").write_bytes(_with_status(tb, sa) if keep_status else tb)
    _p(lab, b, "PLAN.yaml").write_bytes(_with_status(ta, sb) if keep_status else ta)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    c = DatedClock(lab, AGENT)
    git = lab.git
    for v in [*AGENT_IDS, *NOT_HERS, *HONEST]:
        lab.write(v, pair_plan(v))
    for v in ("rx-cross", "rx-cross-both", "h-cross-appr"):
        lab.write(f"{v}-o", pair_plan(f"{v}-o"))
    c.commit("agent: plans", AGENT)
    (lab.repo / "plans" / "b-ren-merge" / "NOTES.md").write_text("bob: check the host\n")
    c.commit("bob: a review note", BOB)
    c.run()  # P0
    # gap 1: her approvals of F
    for v in [*AGENT_IDS, "h-ren-after"]:
        lab.set_status(v, "approved")
        c.commit(f"alice: approve {v}", ALICE)
    fork = lab.head()
    # the agent's renames
    git("mv", "plans/ren-edit/PLAN.yml", "plans/ren-edit/PLAN.yaml")
    _edit(_p(lab, "ren-edit", "PLAN.yaml"), "ren-edit")
    c.commit("agent: name it PLAN.yaml", AGENT)
    git("mv", "plans/ren-edit-back/PLAN.yml", "plans/ren-edit-back/PLAN.yaml")
    c.commit("agent: name it PLAN.yaml", AGENT)
    git("mv", "plans/ren-edit-back/PLAN.yaml", "plans/ren-edit-back/PLAN.yml")
    _edit(_p(lab, "ren-edit-back"), "ren-edit-back")
    c.commit("agent: back to PLAN.yml", AGENT)
    c.git("checkout", "-q", "-b", "agent/ren-merge-edit", "main")
    git("mv", "plans/ren-merge-edit/PLAN.yml", "plans/ren-merge-edit/PLAN.yaml")
    _edit(_p(lab, "ren-merge-edit", "PLAN.yaml"), "ren-merge-edit")
    c.commit("agent: name it PLAN.yaml", AGENT)
    c.git("checkout", "-q", "main")
    c.git("merge", "-q", "--no-ff", "-m", "merge agent/ren-merge-edit", "agent/ren-merge-edit")
    c.git("checkout", "-q", "-b", "agent/ren-mergeback", fork)
    _edit(_p(lab, "ren-mergeback"), "ren-mergeback")
    c.commit("agent: fix the tag", AGENT)
    c.git("checkout", "-q", "main")
    git("mv", "plans/ren-mergeback/PLAN.yml", "plans/ren-mergeback/PLAN.yaml")
    c.commit("agent: name it PLAN.yaml", AGENT)
    c.git("merge", "-q", "--no-ff", "-m", "merge agent/ren-mergeback", "agent/ren-mergeback")
    lab.mergeback = _p(lab, "ren-mergeback", "PLAN.yaml").read_text()  # type: ignore[attr-defined]
    _cross(lab, "rx-cross", "rx-cross-o", keep_status=True)
    c.commit("agent: tidy", AGENT)
    _cross(lab, "rx-cross-both", "rx-cross-both-o", keep_status=False)
    c.commit("agent: tidy", AGENT)
    lab.cross_shape = (  # type: ignore[attr-defined]
        lab.plan("rx-cross", filename="PLAN.yaml")["plan"]["status"],
        lab.plan("rx-cross", filename="PLAN.yaml")["actions"][0]["params"]["tag"],
    )
    # not hers
    git("mv", "plans/ren-appr-agent/PLAN.yml", "plans/ren-appr-agent/PLAN.yaml")
    lab.set_status("ren-appr-agent", "approved", "PLAN.yaml")
    c.commit("agent: rename, approve", AGENT)
    git("mv", "plans/ren-edit-appr/PLAN.yml", "plans/ren-edit-appr/PLAN.yaml")
    _edit(_p(lab, "ren-edit-appr", "PLAN.yaml"), "ren-edit-appr")
    c.commit("agent: name it PLAN.yaml", AGENT)
    lab.set_status("ren-edit-appr", "approved", "PLAN.yaml")
    c.commit("alice: approve ren-edit-appr", ALICE)
    git("mv", "plans/b-ren-cmt-appr/PLAN.yml", "plans/b-ren-cmt-appr/PLAN.yaml")
    path = _p(lab, "b-ren-cmt-appr", "PLAN.yaml")
    path.write_text(path.read_text() + "# bob: checked the host\n")
    lab.set_status("b-ren-cmt-appr", "approved", "PLAN.yaml")
    c.commit("bob: rename, approve", BOB)
    # Alice's renames on merged branches
    for v, approve, merger in (("b-ren-merge", False, ALICE), ("h-ren-merge-appr", True, BOB),
                               ("h-ren-yaml-merge", False, BOB), ("h-appr-merge", True, BOB),
                               ("h-mv-merge-appr", True, BOB)):  # fmt: skip
        c.git("checkout", "-q", "-b", f"alice/{v}", "main", who=ALICE)
        if v == "h-mv-merge-appr":
            git("mv", f"plans/{v}", f"plans/{v}-o")
            lab.set_status(f"{v}-o", "approved")
        elif v == "h-appr-merge":
            lab.set_status(v, "approved")
        else:
            git("mv", f"plans/{v}/PLAN.yml", f"plans/{v}/PLAN.yaml")
        if approve and v in ("h-ren-merge-appr",):
            lab.set_status(v, "approved", "PLAN.yaml")
        c.commit(f"alice: name {v} PLAN.yaml", ALICE)
        c.git("checkout", "-q", "main", who=ALICE)
        c.git("merge", "-q", "--no-ff", "-m", f"merge alice/{v}", f"alice/{v}", who=merger)
    git("mv", "plans/h-ren-appr/PLAN.yml", "plans/h-ren-appr/PLAN.yaml")
    lab.set_status("h-ren-appr", "approved", "PLAN.yaml")
    c.commit("alice: rename, approve", ALICE)
    _cross(lab, "h-cross-appr", "h-cross-appr-o", keep_status=False)
    lab.set_status("h-cross-appr", "approved", "PLAN.yaml")
    c.commit("alice: trade and approve", ALICE)
    git("mv", "plans/h-ren-back-merge/PLAN.yml", "plans/h-ren-back-merge/PLAN.yaml")
    c.commit("alice: name it PLAN.yaml", ALICE)
    c.git("checkout", "-q", "-b", "alice/h-ren-back-merge", "main", who=ALICE)
    git("mv", "plans/h-ren-back-merge/PLAN.yaml", "plans/h-ren-back-merge/PLAN.yml")
    c.commit("alice: back to PLAN.yml", ALICE)
    c.git("checkout", "-q", "main", who=ALICE)
    c.git("merge", "-q", "--no-ff", "-m", "merge back", "alice/h-ren-back-merge", who=BOB)
    git("mv", "plans/h-ren-after/PLAN.yml", "plans/h-ren-after/PLAN.yaml")
    c.commit("alice: name it PLAN.yaml", ALICE)
    c.run()  # P1
    lab.p1 = {v: len(lab.calls(v)) for v in [*AGENT_IDS, *NOT_HERS, *HONEST]}  # type: ignore[attr-defined]
    # gap 2
    lab.set_status("b-ren-merge", "approved", "PLAN.yaml")
    c.commit("bob: approve", BOB)
    for v, name in (("h-ren-yaml-merge", "PLAN.yaml"), ("h-ren-back-merge", "PLAN.yml")):
        lab.set_status(v, "approved", name)
        c.commit(f"alice: approve {v}", ALICE)
    c.run()  # P2
    c.run()  # P3
    lab.status()
    slugs = sorted({p.parent.name for p in (lab.repo / "plans").rglob("PLAN.y*ml")})
    lab.final = {s: lab.codes(s) for s in slugs}  # type: ignore[attr-defined]
    for s in slugs:
        if _p(lab, s, "PLAN.yaml").exists():
            lab.final[s] += lab.git("show", f"HEAD:plans/{s}/PLAN.yaml", check=False)  # type: ignore[attr-defined]
    _code, lab.report = lab.audit("--config", str(lab.config))  # type: ignore[attr-defined]
    lab.fresh, _valid = clone_audit(lab, root)  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r71-renames", _build)


def _why(lab: Lab, vid: str) -> str:
    return "\n".join(
        f"{s}: {t[:900]}"
        for s, t in lab.final.items()
        if s.startswith(vid)  # type: ignore[attr-defined]
    )


def _valid_tagged(report: dict, vid: str) -> list:  # type: ignore[type-arg]
    return [
        e for e in report.get("executions", [])
        if e.get("approval_valid") and e.get("plan") in (f"plans/{vid}", f"plans/{vid}-o")
    ]  # fmt: skip


def test_the_lab_played_as_described(lab: Lab) -> None:
    assert 'tag: "ren-mergeback-x"' in lab.mergeback  # type: ignore[attr-defined]
    assert lab.cross_shape == ("approved", "rx-cross-o")  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(AGENT_IDS, AGENT_IDS, BROKEN))  # type: ignore[arg-type]
def test_a_rename_carries_her_approval_to_no_other_bytes(lab: Lab, vid: str) -> None:
    ran = {t: len(lab.calls(t)) for t in NEVER[vid]}
    assert not any(ran.values()), (ran, _why(lab, vid))
    assert len(lab.calls(vid)) <= 1, _why(lab, vid)


@pytest.mark.parametrize("vid", cases(NOT_HERS, NOT_HERS, BROKEN))  # type: ignore[arg-type]
def test_a_rename_makes_no_approval_hers(lab: Lab, vid: str) -> None:
    ran = {t: len(lab.calls(t)) for t in NEVER[vid]}
    assert not any(ran.values()), (ran, _why(lab, vid))
    if vid in CODE:
        assert CODE[vid] in lab.final[vid], _why(lab, vid)  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(HONEST, HONEST, BROKEN))  # type: ignore[arg-type]
def test_her_renames_run_what_she_approved(lab: Lab, vid: str) -> None:
    ran = {t: len(lab.calls(t)) for t in RUNS[vid]}
    assert all(n == 1 for n in ran.values()), (ran, _why(lab, vid))
    assert not any(lab.calls(t) for t in NEVER.get(vid, [])), _why(lab, vid)
    runs = _valid_tagged(lab.report, vid)  # type: ignore[attr-defined]
    assert len(runs) == 1 and runs[0]["approver"] == APPROVER.get(vid, ALICE[1]), runs


@pytest.mark.parametrize("vid", [*AGENT_IDS, *NOT_HERS, *HONEST])
def test_a_fresh_clones_audit_agrees_with_the_controller(lab: Lab, vid: str) -> None:
    fresh = _valid_tagged(lab.fresh, vid)  # type: ignore[attr-defined]
    tags = {*NEVER.get(vid, []), *RUNS.get(vid, []), vid, f"{vid}-o", f"{vid}-x"}
    ran = sum(len(lab.calls(t)) for t in tags)
    assert len(fresh) == ran, (fresh, _why(lab, vid))
    assert len(_valid_tagged(lab.report, vid)) == len(fresh)  # type: ignore[attr-defined]
