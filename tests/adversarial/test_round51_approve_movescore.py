"""Round 51, self-approval: an approver's plan moved with an edit in ONE commit where git's
rename score and a count of lines disagree.

docs/approvals.md: "A plan moved with an edit in the same commit keeps its source's writers
when git would call it a move (a file arriving with the same bytes, or at least half the
same lines)". git's similarity is by bytes: a plan holding one long line (a long ``note``
param) and many short ones keeps most of its bytes when every short line is edited.

Config: the bench's. Alice (an allowed approver) commits each ``plans/s/<vid>/PLAN.yml``
(``draft``): one ``rec`` action with a ``note`` param of ``N`` characters and twenty short
params ``pNN: "a"``. Then the agent, in ONE commit, ``git mv``s the folder to
``plans/s/<vid>2`` and edits every short param (``"a"`` to ``"b"``), the task and the why:

- ``long-note``: ``N`` = 3000 (git pairs it ``R088`` while 23 of its 34 lines changed);
- ``few-edits`` (control): ``N`` = 3000, only the task edited (``R098``).

The controller freezes ``<vid>2``; Alice approves; two passes.

Asserted (the defence): git pairs each as a rename; ``E_SELF_APPROVAL`` and ``rec`` never
runs; the fresh-clone audit lists no run.

Seen: both held (the controller follows git's pairing, not a count of lines).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, plan_text
from test_round2_execution_kit import shared

NOTE = {"long-note": 3000, "few-edits": 3000}
CASES = list(NOTE)
FOUND: dict[str, pytest.MarkDecorator] = {}


def _text(vid: str, n: int) -> str:
    params = f'note: "{"n" * n}"\n' + "".join(f'p{i:02d}: "a"\n' for i in range(20))
    return plan_text(vid, status="draft", params=params)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for vid, n in NOTE.items():
        lab.write(f"s/{vid}", _text(vid, n))
    lab.commit("alice writes her plans", ALICE)
    lab.run()
    for vid in CASES:
        lab.git("mv", f"plans/s/{vid}", f"plans/s/{vid}2")
        file = lab.repo / f"plans/s/{vid}2/PLAN.yml"
        text = file.read_text(encoding="utf-8").replace("status: draft", "status: pending_approval")
        text = text.replace(f"attack variant {vid}", f"tidied attack variant {vid}")
        if vid != "few-edits":
            text = text.replace(': "a"\n', ': "b"\n').replace("record that", "note that")
        file.write_text(text, encoding="utf-8")
        lab.commit(f"agent moves {vid}", AGENT)
        lab.pairs = getattr(lab, "pairs", {})  # type: ignore[attr-defined]
        lab.pairs[vid] = lab.git("diff-tree", "-r", "-M", "--name-status", "HEAD").split("\n")[1]  # type: ignore[attr-defined]
    lab.run()
    time.sleep(1.05)
    for vid in CASES:
        lab.set_status(f"s/{vid}2", "approved")
    lab.commit("alice approves", ALICE)
    lab.run()
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r51-movescore", _build)


def _p(vids: list[str]) -> list[object]:
    return [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in vids]


@pytest.mark.parametrize("vid", CASES)
def test_git_pairs_the_move(lab: Lab, vid: str) -> None:
    assert lab.pairs[vid].startswith("R"), lab.pairs  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", _p(CASES))
def test_her_moved_plan_is_not_hers_to_approve(lab: Lab, vid: str) -> None:
    slug = f"s/{vid}2"
    assert lab.calls(vid) == [], lab.codes(slug)
    assert "E_SELF_APPROVAL" in lab.codes(slug), lab.codes(slug)


@pytest.mark.parametrize("vid", _p(CASES))
def test_the_audit_lists_no_run(lab: Lab, vid: str) -> None:
    _code, report = lab.audit()
    runs = [e for e in report.get("executions", []) if e.get("plan") == f"plans/s/{vid}2"]
    assert runs == [], runs
