"""Round 35, who may reject: ``test_round35_approve_preproduce.py``'s race through a
converted source.

The agent's pull-request branch adds ``plans/src/PLAN.yml`` (the conversion of an
ActionPlan, made with ``plangate convert``). Before it is merged, Mallory (no approver)
commits that ActionPlan as a source on main, ``plans/src-m/PLAN.json`` (a source's writers
produce its conversion: docs/approvals.md). The branch is merged in the same push window;
the controller converts her source and freezes both; she rejects her converted copy; Alice
approves ``plans/src`` (variant ``src``).

- ``after`` (control): the agent's ``plans/after/PLAN.yml`` is on main and frozen before
  Mallory commits its source as ``plans/after-m/PLAN.json``; she rejects her converted copy
  and rejects nothing else; Alice approves ``plans/after``.

Asserted: her rejection of her own copy does not withdraw the agent's version: Alice's
approval runs each plan exactly once.

Results: ``after`` held (Mallory's rejection of her copy: ``E_APPROVER_NOT_ALLOWED``).
BROKE (strict xfail): ``src``: Alice's approval is refused ``E_VERSION_WITHDRAWN`` ("plans/src-m
was set rejected by mallory@example.com"), although the agent's PLAN.yml reached the first
parent (the merge) before the controller's ``convert`` commit made her copy a plan.

Fixed (the same session): a content's producers are the people in *every* commit that made
it (a copy landed first, a cherry-pick, a draft or the same edit made on the branch, and the
agent's own commit merged later: only someone in both may withdraw it as its author), so the
order in which two independent makings reach the branch decides nothing.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, MALLORY, Lab
from test_round2_execution_kit import shared
from test_round4_runs_convert import _ap, _lab, _put

FOUND: dict[str, pytest.MarkDecorator] = {}  # fixed: see the docstring


def _set(lab: Lab, slug: str, status: str) -> None:
    text = lab.git("show", f"HEAD:plans/{slug}/PLAN.yml")
    new = text.replace('status: "pending_approval"', f"status: {status}", 1).replace(
        "status: pending_approval", f"status: {status}", 1
    )
    assert new != text, text
    _put(lab, f"plans/{slug}/PLAN.yml", new)


def _pair(lab: Lab, tag: str) -> tuple[str, str]:
    """An ActionPlan source and its conversion (``plangate convert``)."""
    source = json.dumps(_ap(tag), indent=2) + "\n"
    tmp = lab.root / f"{tag}.json"
    tmp.write_text(source)
    converted = lab.cli("convert", str(tmp))
    assert "plan:" in converted.stdout, converted.stderr
    return source, converted.stdout


def _build(root: Path) -> Lab:
    lab = _lab(root)
    lab.run()
    source, converted = _pair(lab, "src")
    after_source, after_converted = _pair(lab, "after")
    _put(lab, "plans/after/PLAN.yml", after_converted)
    lab.commit("agent adds after", AGENT)
    lab.run()
    time.sleep(1.05)
    _put(lab, "plans/after-m/PLAN.json", after_source)
    lab.commit("mallory adds after as a source", MALLORY)
    lab.git("checkout", "-q", "-b", "pr")
    _put(lab, "plans/src/PLAN.yml", converted)
    lab.commit("agent adds src", AGENT)
    lab.git("checkout", "-q", "main")
    time.sleep(1.05)
    _put(lab, "plans/src-m/PLAN.json", source)
    lab.commit("mallory adds the same plan as a source", MALLORY)
    lab.git("merge", "-q", "--no-ff", "-m", "merge pr", "pr", who=AGENT)
    lab.run()
    lab.run()
    time.sleep(1.05)
    _set(lab, "src-m", "rejected")
    _set(lab, "after-m", "rejected")
    lab.commit("mallory rejects her copies", MALLORY)
    lab.run()
    _set(lab, "src", "approved")
    _set(lab, "after", "approved")
    lab.commit("alice approves src and after", ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r35-presource", _build)


@pytest.mark.parametrize(
    "vid", [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in ("src", "after")]
)
def test_a_source_first_withdraws_nothing(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)
