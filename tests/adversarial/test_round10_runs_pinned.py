# ruff: noqa: E501  (plan texts are kept on one line as written)
"""Round 10, how often: a plan that already ran (or was rejected), run again as a pinned
nested plan of a new parent.

docs/threat-model.md: "the controller records every frozen hash it started ...; a new
approval of a recorded hash is refused, whoever made it" (E_ALREADY_EXECUTED; round 1's
copies, moves, re-adds and ``copy-nested`` — a copy deeper in the plans folder — all run
once). A nested action runs a pinned plan *by its hash*. So:

- ``pin-done``: ``plans/once`` ran and completed; the agent writes ``plans/wrap`` whose one
  action pins ``plans/once`` with its frozen hash; Alice approves the wrapper. Defence
  asserted: the recorded hash does not run a second time (``once`` tool calls stay 1).
- ``pin-rejected``: Alice rejected ``plans/rej``; the agent pins it from ``plans/wrap-rej``;
  Bob approves the wrapper. Asserted (documented as: a rejected plan never runs): the
  rejected version's actions do not run.

Observed (both **broke**): ``wrap`` completes and ``once`` is called a second time (the
hash recorded as executed runs again); ``wrap-rej`` completes and runs ``rej``'s action.
Whether a knowingly approved pin of an executed/rejected hash should run is a policy
question, but copies of an executed hash are refused "whoever made it", and the wrapper's
reviewer is not told (the pinned plan's own record says ``completed`` / ``rejected``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, plan_text
from test_round2_execution_kit import shared


def _wrapper(slug: str, target: str, pin: str) -> str:
    return f'plan:\n  name: "{slug}"\n  task: "wrap {target}"\n  status: pending_approval\navailable_tools: [{{name: rec}}]\nactions:\n  - {{id: 1, why: "run {target}", plan: {{path: "plans/{target}", hash: "{pin}"}}}}\n'


def _build_lab(root: Path) -> Lab:
    lab = Lab(root)
    lab.write("once", plan_text("once"))
    lab.write("rej", plan_text("rej"))
    lab.commit("two plans", AGENT)
    lab.run()
    lab.approve("once")
    lab.set_status("rej", "rejected")
    lab.commit("reject rej", ALICE)
    lab.run()
    lab.ran_once = len(lab.calls("once"))  # type: ignore[attr-defined]
    for slug, target in (("wrap", "once"), ("wrap-rej", "rej")):
        lab.write(slug, _wrapper(slug, target, lab.plan(target)["frozen"]["hash"]))
    lab.commit("wrappers", AGENT)
    lab.run()
    lab.approve("wrap", ALICE)
    lab.approve("wrap-rej", BOB)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "adv-r10-pinned", _build_lab)


def test_bench_the_plan_ran_once_first(lab: Lab) -> None:
    assert lab.ran_once == 1  # type: ignore[attr-defined]
    assert lab.plan("once")["plan"]["status"] == "completed"
    assert lab.plan("rej")["plan"]["status"] == "rejected"


@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="by design (SPEC §12, docs/threat-model.md 'Accepted limits'): a pinned plan runs as part of every parent its approvers approve (a shared sub-plan such as plans/common/notify); runs-once binds a plan's own runs, and `show` lists the pinned actions the approver approves",
)
def test_a_plan_that_ran_does_not_run_again_as_a_pinned_nested_plan(lab: Lab) -> None:
    assert len(lab.calls("once")) == 1, lab.codes("wrap")[-600:]


def test_a_rejected_plan_does_not_run_as_a_pinned_nested_plan(lab: Lab) -> None:
    assert lab.calls("rej") == [], lab.codes("wrap-rej")[-600:]
