# ruff: noqa: E501
"""Round 21, the cost estimate of checks under retries (a variant of round 17's fix, which
put verify polls and plan-level ``on_failure`` into the estimate).

docs/configuration.md: a tool's ``estimate`` is "of one call"; "a plan's estimate sums its
calls, retries at their maximum", and a plan whose estimate is over ``limits.max_cost_usd``
is ``E_LIMIT_EXCEEDED`` at freeze. docs/plan-format.md: preconditions run "before each try
of this action's tool" and "checks run on every try and every poll" (a retried action runs
its checks again: by hand, 50 attempts made 51 precondition calls).

One lab, config ``limits: {max_cost_usd: 25}``; the check tool ``chk`` (echo, ``risk: low``,
``idempotent``) costs 5 USD a call, ``costly`` (echo) 5 USD, ``rec`` nothing. One pass
freezes. Asserted (the defence): a plan whose calls may cost more than 25 is refused
(``status`` invalid, ``E_LIMIT_EXCEEDED``); one that cannot is not.

- ``pre-retry``: ``rec`` with one ``chk`` precondition, ``on_failure: retry``, ``retry:
  {attempts: 5}``: up to 6 checks = 30. **Broke**: estimate 5, frozen.
- ``fallback-retry``: a fallback step with one ``chk`` precondition and ``on_failure: retry,
  retry: {attempts: 5}``: up to 30. **Broke**: estimate 5, frozen.
- ``verify-retry``: a ``chk`` verify (``interval: 1, timeout: 1``) with ``retry: {attempts:
  5}``: the polls of each of 6 tries, at least 60. **Broke**: estimate 15, frozen.
- ``plan-retry``: plan-level ``on_failure: retry``, action ``retry: {attempts: 5}`` and one
  ``chk`` precondition: up to 30. **Broke**: estimate 20, frozen.
- ``tool-retry`` (control): ``costly`` with ``retry: {attempts: 5}``: held (30, refused).
- ``three-checks`` (control): three ``chk`` preconditions, no retry (15): held, frozen.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from advkit import Lab, cases
from test_round2_execution_kit import shared

R21 = pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="round 21: check calls repeated by retries are left out of the cost estimate",
)
C = "{tool: chk, params: {a: 1}, expect: {path: $.a, equals: 1}}"
RETRY = "retry: {attempts: 5, delay: 1}"
ACT = "actions:\n  - id: 1\n    tool: {tool}\n    why: w\n    params: {{a: 1}}\n"
PLANS = {
    "pre-retry": ACT.format(tool="rec")
    + f"    preconditions: [{C}]\n    on_failure: retry\n    {RETRY}\n",
    "fallback-retry": ACT.format(tool="rec")
    + f"    on_failure: fallback\n    fallback: [{{id: '1.1', tool: rec, why: w, params: {{a: 2}}, preconditions: [{C}], on_failure: retry, {RETRY}}}]\n",
    "verify-retry": ACT.format(tool="rec")
    + "    verify: {tool: chk, params: {a: 1}, expect: {path: $.a, equals: 1}, interval: 1, timeout: 1}\n"
    + f"    on_failure: retry\n    {RETRY}\n",
    "plan-retry": "on_failure: retry\n"
    + ACT.format(tool="rec")
    + f"    preconditions: [{C}]\n    {RETRY}\n",
    "tool-retry": ACT.format(tool="costly") + f"    on_failure: retry\n    {RETRY}\n",
    "three-checks": ACT.format(tool="rec") + f"    preconditions: [{C}, {C}, {C}]\n",
}
OVER = {"pre-retry", "fallback-retry", "verify-retry", "plan-retry", "tool-retry"}
#: round 21: all four broke; fixed since (a step's checks count its tries over)
FOUND = {v: R21 for v in OVER - {"tool-retry"}}
BROKEN: dict[str, object] = {}


def _build(root: Path) -> Lab:
    lab = Lab(
        root,
        tools="chk: {kind: echo, risk: low, idempotent: true, output_trust: trusted, estimate: {seconds: 1, cost_usd: 5}}\n"
        "costly: {kind: echo, estimate: {seconds: 1, cost_usd: 5}}\n",
        extra="limits: {max_cost_usd: 25}\n",
    )
    for slug, body in PLANS.items():
        lab.write(
            slug,
            f"plan:\n  name: {slug}\n  task: t\n  status: pending_approval\n"
            "available_tools: [{name: rec}, {name: chk}, {name: costly}]\n" + body,
        )
    lab.commit("plans")
    lab.run()
    lab.rows = {slug: lab.status()[f"plans/{slug}"] for slug in PLANS}  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r21-checkcost", _build)


@pytest.mark.parametrize("vid", cases(list(PLANS), list(PLANS), BROKEN))
def test_the_estimate_holds_every_check_a_retry_repeats(lab: Lab, vid: str) -> None:
    row = lab.rows[vid]  # type: ignore[attr-defined]
    refused = row["status"] == "invalid" and "E_LIMIT_EXCEEDED" in str(row.get("reason"))
    if vid in OVER:
        assert refused, f"{vid}: frozen with estimate {row.get('estimate')} under max_cost_usd 25"
    else:
        assert row["status"] == "pending_approval", row
