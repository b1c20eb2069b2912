"""Round 48, who may make a plan run past a gate: round 47's stale gate approval (a branch
whose ``approved`` was written over an EARLIER pause) merged with a CONFLICT elsewhere in the
same plan file, or with ``-X ours``, so that re-merging the parents (``git merge-tree``) no
longer gives the merge's own blob and the stale status might read as one the merger wrote.

Config: the bench's. Each plan ``plans/one/<vid>`` is the agent's: action 1 ``rec`` (tag
``<vid>``), action 2 ``rec`` (tag ``<vid>-2``) and action 3 ``rec`` (tag ``<vid>-3``), both
``requires_approval: true``. The controller freezes; Alice approves; the run does action 1 and
pauses at gate 2. The agent cuts ``pr-<vid>`` from main, sets ``status: approved`` there (a
pull request "approve gate 2") and, for every variant but the control, appends a YAML comment
line ``# agent: please approve gate 2`` at the end of the file (comments are not hashed). On
main Carol approves gate 2; the controller runs action 2 and pauses at gate 3 (rewriting the
``execution:`` block at the end of the file: the comment now conflicts with it). Bob merges:

- ``conflict-ours``: ``git merge --no-ff pr-<vid>``: the end of the file conflicts; Bob
  resolves that hunk keeping main's side (drops the comment); the status line came cleanly
  from the branch (``approved``, held over gate 2);
- ``conflict-both``: the same, Bob keeps main's side of the conflicting hunk and the
  branch's comment after it;
- ``xours``: ``git merge --no-ff -X ours pr-<vid>``: no conflict shown to Bob; git's merge
  brings the branch's ``approved`` and keeps main's side of the conflicting hunk;
- ``xtheirs``: ``git merge --no-ff -X theirs pr-<vid>``: the conflicting hunk takes the
  branch's side: the result's ``execution.gate.params`` shows the gate-2 preview
  (``tag: <vid>-2``) under ``gate: {action: 3}``, plus the comment;
- ``other-file``: no comment in the plan file; the branch and main (the agent, after the cut)
  both edit the one line of ``NOTES.md`` at the repository's root: Bob's merge conflicts
  there only, he keeps main's line; the plan file merged cleanly;
- ``octo-side``: no comment; Bob makes an octopus merge of the stale ``pr-<vid>`` and an
  unrelated branch cut from main at the gate-3 pause (adds ``docs/<vid>.md``);
- ``octo-side-first``: the same, the unrelated branch named first;
- ``ver-xours`` (a first approval, no gate): a one-action plan ``n: 1``; the agent's stale
  ``pr-ver-xours`` sets ``approved`` and appends the comment; on main the agent edits
  ``n: 2`` (the controller freezes it again: the ``frozen:`` block at the end conflicts with
  the comment); Bob merges with ``-X ours``: the result is the NEW version, approved;
- ``fresh`` (control, no comment): the agent merges main into ``pr-fresh`` first (the branch
  then holds the gate-3 pause with ``approved``); Bob merges: a legitimate gate-3 approval.

Asserted (the defence): no merged branch held ``approved`` over the gate-3 pause, so action 3
(tag ``<vid>-3``) never runs for the three attacks, whatever the conflict did to the rest of
the file; action 2 ran exactly once (Carol's gate). The control runs action 3 once. And a
fresh clone's ``plangate audit`` agrees with the controller: a gate approval it calls valid
exists exactly when action 3 ran. ``ver-xours``: ``rec`` never runs (the result is a version
the merged branch never held).

Seen: BROKE (strict xfails): ``conflict-ours``, ``conflict-both``, ``xours``, ``xtheirs``: the
controller recorded each merge as Bob's gate approval (``approval: {by: bob, gate: true}``) of
the gate-3 pause and ran action 3 once; the merged branch held ``approved`` only over the
gate-2 pause (another ``execution:`` block). ``xtheirs`` also accepted a merge that rewrote
the controller's ``execution.gate`` preview (the approver was shown ``tag: xtheirs-2``; the
run called ``rec`` with ``xtheirs-3``). A fresh clone's ``plangate audit`` calls Bob's four
approvals valid (it agrees with the controller: both wrong). The re-merge of the parents
(``git merge-tree``) conflicts for these merges, so the status reads as one the merger wrote
himself, although git's merge brought the status line cleanly from the stale branch (only the
last lines conflicted, or ``-X`` chose a side for them without showing Bob anything). Held:
``other-file`` (``E_APPROVAL_REPLAYED``: the re-merge conflicts only outside the plan file),
``octo-side``, ``octo-side-first`` (action 3 never ran), ``ver-xours`` (``E_PLAN_HASH_MISMATCH``:
the content check does not depend on the re-merge), the control ``fresh`` (ran once).

Fixed (round 48): a merge that changes a plan's status to S brought it whenever any merged
branch holds S for that plan in a plan file it changed since the merge base (at the plan's
path, at a path the merge does not hold, or with the merged version), whatever the merger
resolved; no re-merge of the parents (``git merge-tree``) decides it. The stale branch holds
``approved`` over the gate-2 pause only: ``conflict-ours``, ``conflict-both``, ``xours`` and
``xtheirs`` are refused ``E_APPROVAL_REPLAYED`` (action 3 never runs; the audit calls no
approval of Bob's valid); the held ids hold as before. ``Lifecycle._merged_another_version``;
docs/approvals.md "Merges".
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, CAROL, Lab, plan_text
from test_round2_execution_kit import shared

ATTACKS = [
    "conflict-ours",
    "conflict-both",
    "xours",
    "xtheirs",
    "other-file",
    "octo-side",
    "octo-side-first",
]
OCTO = ["octo-side", "octo-side-first"]
CASES = [*ATTACKS, "fresh"]
COMMENT = "# agent: please approve gate 2\n"

#: Open finds (strict xfails): none left.
FOUND: dict[str, pytest.MarkDecorator] = {}  # fixed in round 48 (see the docstring)


def _slug(vid: str) -> str:
    return f"one/{vid}"


def _text(vid: str) -> str:
    return plan_text(
        vid,
        extra_actions=(
            '  - id: 2\n    tool: rec\n    why: "second"\n    requires_approval: true\n'
            f'    params:\n      tag: "{vid}-2"\n'
            '  - id: 3\n    tool: rec\n    why: "third"\n    requires_approval: true\n'
            f'    params:\n      tag: "{vid}-3"\n'
        ),
    )


_CONFLICT = re.compile(r"<<<<<<< [^\n]*\n(.*?)=======\n(.*?)>>>>>>> [^\n]*\n", re.S)


def _resolve(lab: Lab, vid: str, keep: str) -> None:
    path = lab.repo / "plans" / _slug(vid) / "PLAN.yml"
    text = path.read_text(encoding="utf-8")
    assert "<<<<<<<" in text, text[-600:]
    if keep == "ours":
        text = _CONFLICT.sub(lambda m: m.group(1), text)
    else:
        text = _CONFLICT.sub(
            lambda m: (
                m.group(1)
                + "".join(
                    line for line in m.group(2).splitlines(keepends=True) if line.startswith("#")
                )
            ),
            text,
        )
    path.write_text(text, encoding="utf-8")
    lab.git("add", str(path))
    lab.git("commit", "-q", "--no-edit", who=BOB)


VER = "ver-xours"


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for vid in CASES:
        lab.write(_slug(vid), _text(vid))
    lab.write(_slug(VER), plan_text(VER, params="n: 1\n"))
    (lab.repo / "NOTES.md").write_text("status: draft\n")
    lab.commit("agent adds plans", AGENT)
    lab.run()  # freeze
    time.sleep(1.05)
    for vid in CASES:
        lab.set_status(_slug(vid), "approved")
    lab.commit("alice approves", ALICE)
    lab.run()  # start, action 1, pause at gate 2
    time.sleep(1.05)
    trace: dict[str, Any] = {}
    for vid in CASES:
        trace[vid] = [lab.plan(_slug(vid))["plan"]["status"]]
        lab.git("checkout", "-q", "-b", f"pr-{vid}", "main")
        lab.set_status(_slug(vid), "approved")
        if vid == "other-file":  # a conflict in a file outside the plans folder
            (lab.repo / "NOTES.md").write_text("status: gate 2 please\n")
        elif vid not in OCTO and vid != "fresh":
            path = lab.repo / "plans" / _slug(vid) / "PLAN.yml"
            text = path.read_text(encoding="utf-8")
            path.write_text(text + ("" if text.endswith("\n") else "\n") + COMMENT)
        lab.commit(f"agent asks gate 2 of {vid}", AGENT)
        lab.git("checkout", "-q", "main")
    lab.git("checkout", "-q", "-b", f"pr-{VER}", "main")
    lab.set_status(_slug(VER), "approved")
    path = lab.repo / "plans" / _slug(VER) / "PLAN.yml"
    path.write_text(path.read_text(encoding="utf-8").rstrip("\n") + "\n" + COMMENT)
    lab.commit(f"agent asks approval of {VER}", AGENT)
    lab.git("checkout", "-q", "main")
    path.write_text(path.read_text(encoding="utf-8").replace("n: 1", "n: 2"))
    lab.commit(f"agent edits {VER}", AGENT)
    for vid in CASES:
        lab.set_status(_slug(vid), "approved")
    lab.commit("carol approves gate 2", CAROL)
    (lab.repo / "NOTES.md").write_text("status: gate 2 done\n")
    lab.commit("agent notes", AGENT)
    lab.run()  # action 2, pause at gate 3
    time.sleep(1.05)
    for vid in CASES:
        trace[vid].append(lab.plan(_slug(vid))["plan"]["status"])
    lab.git("checkout", "-q", "pr-fresh")
    lab.git("merge", "--no-ff", "-q", "-m", "agent merges main", "main", who=AGENT)
    lab.git("checkout", "-q", "main")
    for vid in OCTO:  # a side branch cut from main now (at the gate-3 pause)
        lab.git("checkout", "-q", "-b", f"side-{vid}", "main")
        (lab.repo / "docs").mkdir(exist_ok=True)
        (lab.repo / "docs" / f"{vid}.md").write_text(f"notes for {vid}\n")
        lab.commit(f"docs for {vid}", AGENT)
        lab.git("checkout", "-q", "main")
    merged: dict[str, str] = {}
    for vid in CASES:
        msg = f"merge pr-{vid}"
        opts = {"xours": ["-X", "ours"], "xtheirs": ["-X", "theirs"]}.get(vid, [])
        heads = [f"pr-{vid}", f"side-{vid}"] if vid in OCTO else [f"pr-{vid}"]
        if vid == "octo-side-first":
            heads.reverse()
        out = lab.git("merge", "--no-ff", "-q", *opts, "-m", msg, *heads, who=BOB, check=False)
        conflicted = bool(lab.git("diff", "--name-only", "--diff-filter=U").strip())
        merged[vid] = f"conflicted={conflicted} {out[-200:]}"
        if vid.startswith("conflict-"):
            _resolve(lab, vid, "ours" if vid == "conflict-ours" else "both")
        if vid == "other-file":
            assert "<<<<<<<" in (lab.repo / "NOTES.md").read_text(), out
            (lab.repo / "NOTES.md").write_text("status: gate 2 done\n")
            lab.git("add", "NOTES.md")
            lab.git("commit", "-q", "--no-edit", who=BOB)
        trace[vid].append(lab.plan(_slug(vid))["plan"]["status"])
        # git's own re-merge of the parents: does it give the merge's blob?
        mt = lab.git("merge-tree", "--write-tree", "HEAD^1", "HEAD^2", check=False)
        merged[vid] += f" merge-tree-clean={not mt.strip().count(chr(10))}"
        merged[vid] += f" parents={len(lab.git('log', '-1', '--format=%P').split())}"
    out = lab.git(
        "merge", "--no-ff", "-q", "-X", "ours", "-m", f"merge pr-{VER}", f"pr-{VER}",
        who=BOB, check=False,
    )  # fmt: skip
    merged[VER] = out[-200:] + " " + lab.plan(_slug(VER))["plan"]["status"]
    lab.trace = trace  # type: ignore[attr-defined]
    lab.merged = merged  # type: ignore[attr-defined]
    lab.run()
    lab.run()
    lab.audit_report = lab.audit()  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r48-conflictgate", _build)


def _p(vids: list[str], prefix: str = "") -> list[Any]:
    return [
        pytest.param(v, id=prefix + v, marks=[FOUND[prefix + v]] if prefix + v in FOUND else [])
        for v in vids
    ]


def test_the_bench_reached_gate_three_and_merged_approved(lab: Lab) -> None:
    for vid, row in lab.trace.items():  # type: ignore[attr-defined]
        assert row[0] == "awaiting_approval", (vid, row)
        assert row[1] == "awaiting_approval", (vid, row)
        assert row[2] == "approved", (vid, row, lab.merged[vid])  # type: ignore[attr-defined]
        assert len(lab.calls(f"{vid}-2")) == 1, (vid, lab.codes(_slug(vid)))
    for vid in ATTACKS:  # the attacks' merges did not re-merge cleanly / are octopus merges
        if vid in OCTO:
            assert "parents=3" in lab.merged[vid], lab.merged  # type: ignore[attr-defined]
            continue
        assert "merge-tree-clean=False" in lab.merged[vid], lab.merged  # type: ignore[attr-defined]


def test_control_runs_gate_three_once(lab: Lab) -> None:
    assert len(lab.calls("fresh-3")) == 1, lab.codes(_slug("fresh"))


@pytest.mark.parametrize("vid", _p(ATTACKS))
def test_a_stale_gate_approval_is_not_laundered_by_a_conflict(lab: Lab, vid: str) -> None:
    assert lab.calls(f"{vid}-3") == [], (lab.merged[vid], lab.codes(_slug(vid)))  # type: ignore[attr-defined]


def _valid_gate_approvals(lab: Lab, vid: str) -> list[dict[str, Any]]:
    _rc, report = lab.audit_report  # type: ignore[attr-defined]
    rows = report.get("executions", []) if isinstance(report, dict) else []
    return [
        r
        for r in rows
        if r.get("plan") == f"plans/{_slug(vid)}"
        and r.get("approver") == BOB[1]
        and r.get("approval_valid")
    ]


@pytest.mark.parametrize("vid", CASES)
def test_the_fresh_clone_audit_agrees_with_the_controller(lab: Lab, vid: str) -> None:
    assert bool(_valid_gate_approvals(lab, vid)) == bool(lab.calls(f"{vid}-3")), (
        lab.audit_report  # type: ignore[attr-defined]
    )


def test_a_stale_version_approval_merged_with_x_ours_runs_nothing(lab: Lab) -> None:
    assert "approved" in lab.merged[VER], lab.merged[VER]  # type: ignore[attr-defined]
    assert lab.calls(VER) == [], lab.codes(_slug(VER))
