"""Round 47, what ``show`` displays vs what runs: a parent pins a nested draft by hash; the
nested plan's file then changes (``child-SAFE`` becomes ``child-EVIL``), committed on the
branch (``committed``) or only in the reviewer's checkout (``worktree``). ``plangate show``
lists a nested plan's actions read from the plans repository; it must never print the
changed actions as the pinned version's.

Lab ``sn`` (local mode, no controller pass needed: ``show`` is the reviewer's view).
Asserted per variant: ``show plans/<parent>`` does not print ``child-EVIL`` as a step of
the pinned plan without saying the pin no longer matches (E_PLAN_HASH_MISMATCH). Both held
(round 47): show refuses with E_PLAN_HASH_MISMATCH naming both hashes.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from advkit import Lab
from test_round2_execution_kit import shared

CHILD = """plan:
  name: {slug}
  task: nested
  status: draft
available_tools: [{{name: rec}}]
actions:
  - id: 1
    tool: rec
    why: child step
    params: {{tag: child-SAFE}}
"""
PARENT = """plan:
  name: {slug}
  task: t
  status: pending_approval
available_tools: [{{name: rec}}]
actions:
  - id: 1
    plan: {{path: plans/{child}, hash: "{h}"}}
    why: nested
"""


def _build(root: Path) -> Lab:
    lab = Lab(root / "sn")
    for v in ("committed", "worktree"):
        lab.write(f"child-{v}", CHILD.format(slug=f"child-{v}"))
    lab.commit("children")
    for v in ("committed", "worktree"):
        h = lab.cli("hash", str(lab.repo / "plans" / f"child-{v}")).stdout.strip().split()[-1]
        lab.write(f"parent-{v}", PARENT.format(slug=f"parent-{v}", child=f"child-{v}", h=h))
    lab.commit("parents")
    for v in ("committed", "worktree"):
        lab.write(f"child-{v}", CHILD.format(slug=f"child-{v}").replace("child-SAFE", "child-EVIL"))
    lab.git("add", "plans/child-committed")
    lab.git("commit", "-q", "-m", "edit child", who=("Agent", "agent@example.com"))
    lab.shown = {  # type: ignore[attr-defined]
        v: lab.cli("show", f"plans/parent-{v}", cwd=lab.repo) for v in ("committed", "worktree")
    }
    lab.shown = {k: r.stdout + r.stderr for k, r in lab.shown.items()}  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r47-shownested", _build)


@pytest.mark.parametrize("variant", ["committed", "worktree"])
def test_show_never_presents_changed_steps_as_the_pinned_plan(lab: Lab, variant: str) -> None:
    text = lab.shown[variant]  # type: ignore[attr-defined]
    if "child-EVIL" in text:
        assert "E_PLAN_HASH_MISMATCH" in text, text[-2000:]
    assert "child-EVIL" in text or "E_PLAN_HASH_MISMATCH" in text or "child-SAFE" in text, text
